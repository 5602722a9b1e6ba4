//! `#[export]`: makes a function a C entry point of the library being built, with the symbol
//! version its data gives it. Used through `rocload_ffi::export`.
//!
//! `#[export]` exports the function under its own name (`#[no_mangle]`); `#[export(name =
//! "_Z24hipExtModuleLaunchKernel...")]` under another (a C++-mangled one). Beside the function
//! it places `.symver NAME, NAME@@NODE` (when the build script set `cfg(rocload_symver)`), NODE
//! being what the merged table the build script wrote to `OUT_DIR` says for NAME (see
//! `rocload_ffi::versions`). A name the table has no node for is a compile error, so an entry
//! point can never be exported at a version nobody chose. The directive sits in the same
//! module as the function, hence in the same object file, where the assembler needs it.
//!
//! When the crate's build script also wrote trace tables (`rocload_ffi::trace::build`: HIP
//! 5.2.3's and HIP 5.3+'s tracer tables) and one names the symbol, the body starts with a
//! `rocload_ffi::trace::Call` of a `Site` giving, per table, the symbol's id and each
//! parameter's place in the record, beside a compile-time check that each parameter has the
//! size of its C field in every table; a function whose parameters a table counts otherwise
//! does not compile (a table entry with no parameters stores none). In a tracer table a symbol
//! with no entry of its own takes its `R0000` form's (clr 6's unsuffixed exports, such as
//! `hipGetDeviceProperties`, call the `R0000` function, which is what is traced).

use std::sync::OnceLock;

use proc_macro::{Delimiter, TokenStream, TokenTree};

// The table format is shared with the build scripts that write it.
#[allow(dead_code)]
#[path = "../../src/versions.rs"]
mod versions;

/// See the crate documentation.
#[proc_macro_attribute]
pub fn export(attr: TokenStream, item: TokenStream) -> TokenStream {
    match expand(attr, item.clone()) {
        Ok(tokens) => tokens,
        Err(message) => {
            let error: TokenStream = format!("compile_error!({message:?});")
                .parse()
                .expect("a compile_error! invocation");
            error.into_iter().chain(item).collect()
        }
    }
}

fn expand(attr: TokenStream, item: TokenStream) -> Result<TokenStream, String> {
    let explicit = explicit_name(attr)?;
    let function =
        function_name(&item).ok_or("#[export] applies to a function (`fn NAME(...)`)")?;
    let symbol = explicit.clone().unwrap_or_else(|| function.clone());
    let node = node_of(&symbol)?;
    let attribute = match &explicit {
        Some(name) => format!("#[export_name = {name:?}]"),
        None => "#[no_mangle]".to_owned(),
    };
    let directive = format!(
        "#[cfg({cfg})] ::core::arch::global_asm!({text:?});",
        cfg = versions::CFG,
        text = format!(".symver {symbol}, {symbol}@@{node}")
    );
    let item = match trace_of(&symbol)? {
        Some(site) => traced(item, &symbol, &site)?,
        None => item,
    };
    let mut out: TokenStream = attribute.parse().map_err(|e| format!("{e}"))?;
    out.extend(item);
    out.extend(
        directive
            .parse::<TokenStream>()
            .map_err(|e| format!("{e}"))?,
    );
    Ok(out)
}

/// `name = "SYMBOL"`, or nothing.
fn explicit_name(attr: TokenStream) -> Result<Option<String>, String> {
    let tokens: Vec<TokenTree> = attr.into_iter().collect();
    match tokens.as_slice() {
        [] => Ok(None),
        [TokenTree::Ident(key), TokenTree::Punct(eq), TokenTree::Literal(value)]
            if key.to_string() == "name" && eq.as_char() == '=' =>
        {
            let text = value.to_string();
            text.strip_prefix('"')
                .and_then(|t| t.strip_suffix('"'))
                .filter(|t| !t.is_empty() && !t.contains(['\\', '"', ' ']))
                .map(|t| Some(t.to_owned()))
                .ok_or_else(|| format!("#[export(name = ...)] takes a plain string, not {text}"))
        }
        _ => Err("#[export] takes nothing or `name = \"SYMBOL\"`".to_owned()),
    }
}

/// The identifier after `fn`, outside any group (so not one in the body).
fn function_name(item: &TokenStream) -> Option<String> {
    let mut tokens = item.clone().into_iter();
    while let Some(token) = tokens.next() {
        match token {
            TokenTree::Ident(ident) if ident.to_string() == "fn" => {
                return match tokens.next()? {
                    TokenTree::Ident(name) => Some(name.to_string()),
                    _ => None,
                };
            }
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => return None,
            _ => {}
        }
    }
    None
}

/// The node of `symbol` in the table the crate's build script wrote.
fn node_of(symbol: &str) -> Result<String, String> {
    static TABLE: OnceLock<Result<versions::VersionTable, String>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let dir = std::env::var_os("OUT_DIR").ok_or(
            "#[export] needs the crate's build script to call rocload_ffi::versions::build::configure (OUT_DIR is not set)",
        )?;
        let path = std::path::Path::new(&dir).join(versions::TABLE_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            format!(
                "#[export] reads {} (written by rocload_ffi::versions::build::configure): {e}",
                path.display()
            )
        })?;
        let mut table = versions::VersionTable::new();
        table
            .parse(&path.display().to_string(), &text)
            .map_err(|e| e.to_string())?;
        Ok(table)
    });
    let table = table.as_ref().map_err(Clone::clone)?;
    table
        .node_of(symbol)
        .map(str::to_owned)
        .ok_or_else(|| format!("{symbol} has no symbol version in the library's export tables: add it to the data its build script reads"))
}

/// One table's entry: an id and the `(offset, size)` of each parameter in the record.
type Entry = (u32, Vec<(usize, usize)>);
/// One table: entries by name.
type Table = std::collections::HashMap<String, Entry>;

/// A traced entry point: its entry in HIP 5.2.3's table and in each tracer table.
struct Site {
    legacy: Option<Entry>,
    tracers: Vec<Option<Entry>>,
}

/// Reads the table `name` in `OUT_DIR` (`None` when it is absent): `name<TAB>id<TAB>
/// offset:size,...` lines, `#` comments and `%` lines skipped.
fn read_table(name: &str) -> Result<Option<Table>, String> {
    let Some(dir) = std::env::var_os("OUT_DIR") else {
        return Ok(None);
    };
    let path = std::path::Path::new(&dir).join(name);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(None);
    };
    let mut table = Table::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with(['#', '%']) || line.trim().is_empty() {
            continue;
        }
        let bad = || {
            format!(
                "{}:{}: not name<TAB>id<TAB>offset:size,...",
                path.display(),
                n + 1
            )
        };
        let mut cols = line.split('\t');
        let (Some(name), Some(id)) = (cols.next(), cols.next()) else {
            return Err(bad());
        };
        let id: u32 = id.parse().map_err(|_| bad())?;
        let mut fields = Vec::new();
        for f in cols
            .next()
            .unwrap_or("")
            .split(',')
            .filter(|f| !f.is_empty())
        {
            let (o, z) = f.split_once(':').ok_or_else(bad)?;
            fields.push((o.parse().map_err(|_| bad())?, z.parse().map_err(|_| bad())?));
        }
        table.insert(name.to_owned(), (id, fields));
    }
    Ok(Some(table))
}

/// What the trace tables give `symbol`, if the crate has them and one names `symbol`.
fn trace_of(symbol: &str) -> Result<Option<Site>, String> {
    struct Tables {
        legacy: Table,
        tracers: Vec<Table>,
    }
    static TABLES: OnceLock<Result<Option<Tables>, String>> = OnceLock::new();
    let tables = TABLES.get_or_init(|| {
        let Some(legacy) = read_table("api-trace.tsv")? else {
            return Ok(None);
        };
        let mut tracers = Vec::new();
        while let Some(t) = read_table(&format!("api-tracer-{}.tsv", tracers.len()))? {
            tracers.push(t);
        }
        Ok(Some(Tables { legacy, tracers }))
    });
    let tables = match tables {
        Err(e) => return Err(e.clone()),
        Ok(None) => return Ok(None),
        Ok(Some(t)) => t,
    };
    let site = Site {
        legacy: tables.legacy.get(symbol).cloned(),
        tracers: tables
            .tracers
            .iter()
            .map(|t| {
                t.get(symbol)
                    .or_else(|| t.get(&format!("{symbol}R0000")))
                    .cloned()
            })
            .collect(),
    };
    Ok((site.legacy.is_some() || site.tracers.iter().any(Option::is_some)).then_some(site))
}

/// `item` with a traced body: `let __rocload_trace = Call::enter(&Site { .. }, ||
/// [Arg::of(&p), ...]);` first, and a size check per parameter and table. The parameters' own
/// tokens are reused, so a function a `macro_rules!` expands names them with the macro's
/// hygiene.
fn traced(item: TokenStream, symbol: &str, site: &Site) -> Result<TokenStream, String> {
    let parse = |text: &str| -> Result<TokenStream, String> {
        text.parse::<TokenStream>()
            .map_err(|e| format!("{symbol}: {e}"))
    };
    let tokens: Vec<TokenTree> = item.into_iter().collect();
    let fn_at = tokens
        .iter()
        .position(|t| matches!(t, TokenTree::Ident(i) if i.to_string() == "fn"))
        .ok_or("no fn")?;
    let params = tokens[fn_at..]
        .iter()
        .find_map(|t| match t {
            TokenTree::Group(g) if g.delimiter() == Delimiter::Parenthesis => Some(g.stream()),
            _ => None,
        })
        .ok_or("no parameter list")?;
    let params = parameters(params);
    // The index of each named parameter among the arguments handed to `Call::enter`.
    let mut arg_index = Vec::with_capacity(params.len());
    let mut named = 0u8;
    for (name, _) in &params {
        arg_index.push(name.as_ref().map(|_| named));
        if name.is_some() {
            named = named
                .checked_add(1)
                .ok_or_else(|| format!("{symbol}: too many parameters to trace"))?;
        }
    }
    let mut checked = std::collections::BTreeSet::new();
    let mut prologue = TokenStream::new();
    let mut layout = |entry: &Option<Entry>, table: &str| -> Result<String, String> {
        let Some((id, fields)) = entry else {
            return Ok("::core::option::Option::None".to_owned());
        };
        // A record without arguments (`hipGetErrorString[]` in HIP's table, or an
        // INIT_*_CB_ARGS_DATA that stores none): none are stored.
        if !fields.is_empty() && params.len() != fields.len() {
            return Err(format!(
                "{symbol} has {} parameters but {table} gives its record {}: the signature differs from HIP's",
                params.len(),
                fields.len()
            ));
        }
        let mut list = String::new();
        for (((name, ty), index), (offset, size)) in params.iter().zip(&arg_index).zip(fields) {
            let (Some(name), Some(index)) = (name, index) else {
                continue;
            };
            list.push_str(&format!("({index}, {offset}),"));
            if !checked.insert((*index, *size)) {
                continue;
            }
            // const _: () = ::core::assert!(::core::mem::size_of::<TYPE>() == SIZE, "...");
            let mut check = parse("::core::mem::size_of::<")?;
            check.extend(ty.clone());
            check.extend(parse(&format!(
                ">() == {size}, {:?}",
                format!("{symbol}: parameter {name} is not the size of the {size}-byte field {table} gives it")
            ))?);
            prologue.extend(parse("const _: () = ::core::assert!")?);
            prologue.extend([TokenTree::Group(proc_macro::Group::new(
                Delimiter::Parenthesis,
                check,
            ))]);
            prologue.extend(parse(";")?);
        }
        Ok(format!(
            "::core::option::Option::Some(::rocload_ffi::trace::Layout {{ id: {id}, fields: &[{list}] }})"
        ))
    };
    let legacy = layout(
        &site.legacy,
        "HIP 5.2.3's trace table (capi/abi/hip-api-args.tsv)",
    )?;
    let mut tracers = Vec::new();
    for (n, entry) in site.tracers.iter().enumerate() {
        tracers.push(layout(
            entry,
            &format!("tracer table {n} (capi/abi/hip-tracer-api-*.tsv)"),
        )?);
    }
    let site_text = format!(
        "&::rocload_ffi::trace::Site {{ legacy: {legacy}, tracer: [{}] }}, || ",
        tracers.join(", ")
    );
    let Some(TokenTree::Group(body)) = tokens.last() else {
        return Err(format!("{symbol}: #[export] needs the function's body"));
    };
    let mut args = TokenStream::new();
    for (name, _) in &params {
        let Some(name) = name else { continue };
        // ::rocload_ffi::trace::Arg::of(&NAME),
        args.extend(parse("::rocload_ffi::trace::Arg::of")?);
        let mut call = parse("&")?;
        call.extend([TokenTree::Ident(name.clone())]);
        args.extend([TokenTree::Group(proc_macro::Group::new(
            Delimiter::Parenthesis,
            call,
        ))]);
        args.extend(parse(",")?);
    }
    // let __rocload_trace = ::rocload_ffi::trace::Call::enter(&Site { .. }, || [ARGS]);
    let mut enter = parse(&site_text)?;
    enter.extend([TokenTree::Group(proc_macro::Group::new(
        Delimiter::Bracket,
        args,
    ))]);
    prologue.extend(parse(
        "let __rocload_trace = ::rocload_ffi::trace::Call::enter",
    )?);
    prologue.extend([TokenTree::Group(proc_macro::Group::new(
        Delimiter::Parenthesis,
        enter,
    ))]);
    prologue.extend(parse(";")?);
    prologue.extend(body.stream());
    let mut group = proc_macro::Group::new(Delimiter::Brace, prologue);
    group.set_span(body.span());
    let mut out: Vec<TokenTree> = tokens[..tokens.len() - 1].to_vec();
    out.push(TokenTree::Group(group));
    Ok(out.into_iter().collect())
}

/// Each parameter's name (`None` for a pattern that binds none, `_`) and type.
fn parameters(list: TokenStream) -> Vec<(Option<proc_macro::Ident>, TokenStream)> {
    let mut params = Vec::new();
    let mut current: Vec<TokenTree> = Vec::new();
    let mut angle = 0i32;
    let mut previous_dash = false;
    for token in list {
        if let TokenTree::Punct(p) = &token {
            match p.as_char() {
                '<' => angle += 1,
                '>' if !previous_dash => angle -= 1,
                ',' if angle == 0 => {
                    params.push(std::mem::take(&mut current));
                    previous_dash = false;
                    continue;
                }
                _ => {}
            }
            previous_dash = p.as_char() == '-' && p.spacing() == proc_macro::Spacing::Joint;
        } else {
            previous_dash = false;
        }
        current.push(token);
    }
    if !current.is_empty() {
        params.push(current);
    }
    params
        .into_iter()
        .filter_map(|p| {
            let colon = p
                .iter()
                .position(|t| matches!(t, TokenTree::Punct(c) if c.as_char() == ':'))?;
            let name = p[..colon]
                .iter()
                .filter_map(|t| match t {
                    TokenTree::Ident(i) if i.to_string() != "mut" => Some(i.clone()),
                    _ => None,
                })
                .next_back()
                .filter(|n| n.to_string() != "_");
            let ty: TokenStream = p[colon + 1..].iter().cloned().collect();
            Some((name, ty))
        })
        .collect()
}
