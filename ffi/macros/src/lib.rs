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
//! When the crate's build script also wrote a trace table (`rocload_ffi::trace::build`) and it
//! names the symbol, the body starts with a `rocload_ffi::trace::Call` of the table's id and
//! each parameter's place in the record, beside a compile-time check that each parameter has
//! the size of its C field; a function whose parameters the table counts otherwise does not
//! compile (a table entry with no parameters stores none).

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
        Some((id, fields)) => traced(item, &symbol, id, &fields)?,
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

/// A traced entry point: its id and the `(offset, size)` of each parameter in the record.
type Traced = (u32, Vec<(usize, usize)>);

/// What the trace table gives `symbol`, if the crate has a trace table and it names `symbol`.
fn trace_of(symbol: &str) -> Result<Option<Traced>, String> {
    type Table = std::collections::HashMap<String, Traced>;
    static TABLE: OnceLock<Result<Option<Table>, String>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let Some(dir) = std::env::var_os("OUT_DIR") else {
            return Ok(None);
        };
        let path = std::path::Path::new(&dir).join("api-trace.tsv");
        let Ok(text) = std::fs::read_to_string(&path) else {
            return Ok(None);
        };
        let mut table = Table::new();
        for (n, line) in text.lines().enumerate() {
            if line.starts_with('#') || line.trim().is_empty() {
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
    });
    match table {
        Err(e) => Err(e.clone()),
        Ok(None) => Ok(None),
        Ok(Some(t)) => Ok(t.get(symbol).cloned()),
    }
}

/// `item` with a traced body: `let __rocload_trace = Call::enter(id, || [Arg::of(&p, off),
/// ...]);` first, and a size check per parameter. The parameters' own tokens are reused, so a
/// function a `macro_rules!` expands names them with the macro's hygiene.
fn traced(
    item: TokenStream,
    symbol: &str,
    id: u32,
    fields: &[(usize, usize)],
) -> Result<TokenStream, String> {
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
    let mut params = parameters(params);
    // A record without arguments (`hipGetErrorString[]` in HIP's table): none are stored.
    if fields.is_empty() {
        params.clear();
    }
    if params.len() != fields.len() {
        return Err(format!(
            "{symbol} has {} parameters but HIP's trace table gives its record {} (capi/abi/hip-api-args.tsv): the signature differs from HIP's",
            params.len(),
            fields.len()
        ));
    }
    let Some(TokenTree::Group(body)) = tokens.last() else {
        return Err(format!("{symbol}: #[export] needs the function's body"));
    };
    let mut args = TokenStream::new();
    let mut prologue = TokenStream::new();
    for ((name, ty), (offset, size)) in params.into_iter().zip(fields) {
        let Some(name) = name else { continue };
        // ::rocload_ffi::trace::Arg::of(&NAME, OFFSET),
        args.extend(parse("::rocload_ffi::trace::Arg::of")?);
        let mut call = parse("&")?;
        call.extend([TokenTree::Ident(name.clone())]);
        call.extend(parse(&format!(", {offset}"))?);
        args.extend([TokenTree::Group(proc_macro::Group::new(
            Delimiter::Parenthesis,
            call,
        ))]);
        args.extend(parse(",")?);
        // const _: () = ::core::assert!(::core::mem::size_of::<TYPE>() == SIZE, "...");
        let mut check = parse("::core::mem::size_of::<")?;
        check.extend(ty);
        check.extend(parse(&format!(
            ">() == {size}, {:?}",
            format!("{symbol}: parameter {name} is not the size of HIP's {size}-byte field")
        ))?);
        prologue.extend(parse("const _: () = ::core::assert!")?);
        prologue.extend([TokenTree::Group(proc_macro::Group::new(
            Delimiter::Parenthesis,
            check,
        ))]);
        prologue.extend(parse(";")?);
    }
    // let __rocload_trace = ::rocload_ffi::trace::Call::enter(ID, || [ARGS]);
    let mut enter = parse(&format!("{id}, || "))?;
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
