//! Device `printf`'s formatter: turns one printf message (the format string, then the
//! arguments a kernel sent through hostcall) into text, entirely in Rust.
//!
//! A kernel is untrusted code running in the user's process, and its format string may be
//! built at run time, so the format never reaches the C library's varargs: every conversion is
//! parsed completely (flags `-+ #0'`, width, precision, `*` and `.*` taken from the arguments
//! in order, length `hh h l ll j z t L q`, conversion `d i o u x X f F e E g G a A c s p n %`)
//! and formatted here, matching glibc's output in the C locale for everything a HIP kernel can
//! pass (the `'` flag is accepted and, as in the C locale, groups nothing). How arguments
//! arrive (clang's `AMDGPUEmitPrintf` and ockl): every integer, double and pointer is one
//! 64-bit word (32-bit integers zero-extended; the length modifier truncates or sign-extends
//! the word as C would), each `%s` string is its bytes with a NUL, padded to 8.
//!
//! One deliberate difference: glibc (2.36) prints `%#g` of a value that rounding carries to
//! the next power of ten, switching it to the exponent form, without the precision's zeros
//! (`%#.3g` of 999.5 gives `1.e+03`); this formatter prints what the C standard asks for,
//! `1.00e+03`.
//!
//! What cannot be honoured prints a visible marker instead and reads nothing that was not
//! passed:
//! - `%<unsupported: SPEC>`: positional arguments (`%3$s`), `%n`, `%m`, `%S`, `%C`, wide
//!   `%lc`/`%ls`, a length modifier the conversion does not take (`%Lf`: the kernel passed a
//!   double, not a long double; `%hp`), an unknown conversion or one cut off by the end of the
//!   format, and a width or precision above [`MAX_WIDTH`]. A conversion whose conversion
//!   character is known still consumes its `*` arguments and its argument, so the ones after
//!   it stay in step; an unknown or positional one consumes nothing. SPEC is the conversion's
//!   text: `%` and the run of flag, digit, `*`, `.`, `$` and length characters after it, with
//!   the letter that ends it.
//! - `%<missing argument: SPEC>`: the message holds no more arguments.
//! - `%<output truncated>`: one message's text reached [`MAX_OUTPUT`] bytes; the rest is not
//!   formatted.
//!
//! Not for the hostcall protocol or the output stream (`runtime::hostcall`).

use std::fmt::Write as _;

/// Widths and precisions above this are refused, so one conversion's text stays small.
pub const MAX_WIDTH: usize = 4096;
/// Bytes of text one message may produce; a format of many wide conversions stops here.
pub const MAX_OUTPUT: usize = 1 << 20;

/// The flag characters of a conversion.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Flags {
    /// `-`: pad on the right.
    left: bool,
    /// `+`: a `+` before non-negative signed values.
    plus: bool,
    /// ` `: a space before non-negative signed values (when `+` is absent).
    space: bool,
    /// `#`: the alternative form (`0x`, a leading `0` in octal, always a decimal point).
    alt: bool,
    /// `0`: pad with zeros after the sign and prefix.
    zero: bool,
}

/// A width or precision as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Count {
    /// Digits (saturated at `usize::MAX`).
    Fixed(usize),
    /// `*`: the next argument, a C `int`.
    Star,
}

/// A length modifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Length {
    None,
    Hh,
    H,
    L,
    Ll,
    J,
    Z,
    T,
    /// `L` (long double for floats).
    BigL,
    /// `q` (BSD's `ll`).
    Q,
}

/// One conversion of the format string, parsed completely.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Conversion<'a> {
    /// The conversion's text, `%` to conversion character (for markers).
    text: &'a [u8],
    flags: Flags,
    width: Option<Count>,
    precision: Option<Count>,
    length: Length,
    /// The conversion character, one of `diouxXfFeEgGaAcspn`.
    conv: u8,
}

/// A piece of the format string.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece<'a> {
    /// Text printed as it is.
    Literal(&'a [u8]),
    /// `%%`.
    Percent,
    Conversion(Conversion<'a>),
    /// A conversion that cannot be parsed (positional, unknown, cut off): its text.
    Invalid(&'a [u8]),
}

/// Conversion characters that take an argument.
const CONVERSIONS: &[u8] = b"diouxXfFeEgGaAcspn";

/// Characters that may appear between `%` and the conversion character (what an invalid
/// conversion's text spans).
fn is_spec_char(b: u8) -> bool {
    b"-+ #0'123456789*.$hlLqjzt".contains(&b)
}

/// Splits a format string into pieces.
struct Pieces<'a> {
    fmt: &'a [u8],
    at: usize,
}

impl<'a> Iterator for Pieces<'a> {
    type Item = Piece<'a>;

    fn next(&mut self) -> Option<Piece<'a>> {
        let rest = self.fmt.get(self.at..).filter(|r| !r.is_empty())?;
        if rest[0] != b'%' {
            let len = rest.iter().position(|&b| b == b'%').unwrap_or(rest.len());
            self.at += len;
            return Some(Piece::Literal(&rest[..len]));
        }
        if rest.get(1) == Some(&b'%') {
            self.at += 2;
            return Some(Piece::Percent);
        }
        let (piece, len) = match parse_conversion(rest) {
            Some(c) => {
                let len = c.text.len();
                (Piece::Conversion(c), len)
            }
            None => {
                let text = invalid_text(rest);
                (Piece::Invalid(text), text.len())
            }
        };
        self.at += len;
        Some(piece)
    }
}

/// The text of an invalid conversion at the start of `rest` (which starts with `%`).
fn invalid_text(rest: &[u8]) -> &[u8] {
    let mut end = 1 + rest[1..].iter().take_while(|&&b| is_spec_char(b)).count();
    if rest
        .get(end)
        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'%')
    {
        end += 1;
    }
    &rest[..end]
}

/// Digits at `s[*i..]`, saturated; `None` when there are none.
fn digits(s: &[u8], i: &mut usize) -> Option<usize> {
    let start = *i;
    let mut n: usize = 0;
    while let Some(d) = s.get(*i).filter(|b| b.is_ascii_digit()) {
        n = n.saturating_mul(10).saturating_add(usize::from(d - b'0'));
        *i += 1;
    }
    (*i > start).then_some(n)
}

/// Parses the conversion at the start of `s` (which starts with `%`, not `%%`); `None` when
/// it is positional, unknown or cut off.
fn parse_conversion(s: &[u8]) -> Option<Conversion<'_>> {
    let mut i = 1;
    // `%N$`: positional arguments, refused.
    let mut j = i;
    if digits(s, &mut j).is_some() && s.get(j) == Some(&b'$') {
        return None;
    }
    let mut flags = Flags::default();
    while let Some(&b) = s.get(i) {
        match b {
            b'-' => flags.left = true,
            b'+' => flags.plus = true,
            b' ' => flags.space = true,
            b'#' => flags.alt = true,
            b'0' => flags.zero = true,
            b'\'' => {}
            _ => break,
        }
        i += 1;
    }
    let width = if s.get(i) == Some(&b'*') {
        i += 1;
        Some(Count::Star)
    } else {
        digits(s, &mut i).map(Count::Fixed)
    };
    let precision = if s.get(i) == Some(&b'.') {
        i += 1;
        if s.get(i) == Some(&b'*') {
            i += 1;
            Some(Count::Star)
        } else {
            Some(Count::Fixed(digits(s, &mut i).unwrap_or(0)))
        }
    } else {
        None
    };
    let (length, len) = match (s.get(i), s.get(i + 1)) {
        (Some(b'h'), Some(b'h')) => (Length::Hh, 2),
        (Some(b'l'), Some(b'l')) => (Length::Ll, 2),
        (Some(b'h'), _) => (Length::H, 1),
        (Some(b'l'), _) => (Length::L, 1),
        (Some(b'j'), _) => (Length::J, 1),
        (Some(b'z'), _) => (Length::Z, 1),
        (Some(b't'), _) => (Length::T, 1),
        (Some(b'L'), _) => (Length::BigL, 1),
        (Some(b'q'), _) => (Length::Q, 1),
        _ => (Length::None, 0),
    };
    i += len;
    let conv = *s.get(i).filter(|b| CONVERSIONS.contains(b))?;
    Some(Conversion {
        text: &s[..=i],
        flags,
        width,
        precision,
        length,
        conv,
    })
}

/// The arguments of a message, read in order; nothing past their end.
struct Args<'a> {
    bytes: &'a [u8],
}

impl<'a> Args<'a> {
    /// The next 64-bit word.
    fn word(&mut self) -> Option<u64> {
        let (w, rest) = self.bytes.split_first_chunk::<8>()?;
        self.bytes = rest;
        Some(u64::from_le_bytes(*w))
    }

    /// The next string (its bytes up to the NUL, or to the end of the message), and its
    /// padding to 8 bytes.
    fn string(&mut self) -> Option<&'a [u8]> {
        if self.bytes.is_empty() {
            return None;
        }
        let len = self
            .bytes
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(self.bytes.len());
        let s = &self.bytes[..len];
        let skip = (len + 1).next_multiple_of(8).min(self.bytes.len());
        self.bytes = &self.bytes[skip..];
        Some(s)
    }
}

/// An argument as its conversion takes it.
enum Arg<'a> {
    Word(u64),
    Str(&'a [u8]),
}

/// The text of one printf message body: the format string (NUL-terminated, padded to 8
/// bytes), then the arguments.
pub(crate) fn format(bytes: &[u8]) -> Vec<u8> {
    let nul = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let fmt = &bytes[..nul];
    let mut args = Args {
        bytes: &bytes[(nul + 1).next_multiple_of(8).min(bytes.len())..],
    };
    let mut out = Vec::new();
    let mut cut = false;
    for piece in (Pieces { fmt, at: 0 }) {
        if out.len() >= MAX_OUTPUT {
            cut = true;
            break;
        }
        match piece {
            Piece::Literal(text) => out.extend_from_slice(text),
            Piece::Percent => out.push(b'%'),
            Piece::Invalid(text) => marker(&mut out, "unsupported", text),
            Piece::Conversion(c) => conversion(&mut out, &c, &mut args),
        }
    }
    if cut || out.len() > MAX_OUTPUT {
        out.truncate(MAX_OUTPUT);
        out.extend_from_slice(b"%<output truncated>");
        tracing::debug!(limit = MAX_OUTPUT, "device printf: output truncated");
    }
    out
}

/// `%<what: text>`.
fn marker(out: &mut Vec<u8>, what: &str, text: &[u8]) {
    tracing::debug!(
        conversion = %String::from_utf8_lossy(text),
        what,
        "device printf: conversion not formatted"
    );
    out.extend_from_slice(b"%<");
    out.extend_from_slice(what.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(text);
    out.push(b'>');
}

/// Whether `length` is one `conv` takes from a HIP kernel (every argument is a 64-bit word or
/// a narrow string: no long double, wide character or wide string).
fn length_fits(conv: u8, length: Length) -> bool {
    match conv {
        b'd' | b'i' | b'o' | b'u' | b'x' | b'X' => length != Length::BigL,
        b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => {
            matches!(length, Length::None | Length::L)
        }
        b'c' | b's' | b'p' => length == Length::None,
        _ => false,
    }
}

/// Formats one conversion, taking its arguments.
fn conversion(out: &mut Vec<u8>, c: &Conversion<'_>, args: &mut Args<'_>) {
    let mut missing = false;
    let mut flags = c.flags;
    // Stars come first, in order: width, then precision. Each is a C int.
    let width = match c.width {
        Some(Count::Star) => match args.word() {
            Some(w) => {
                let w = w as u32 as i32;
                // A negative width is the `-` flag and its magnitude.
                flags.left |= w < 0;
                w.unsigned_abs() as usize
            }
            None => {
                missing = true;
                0
            }
        },
        Some(Count::Fixed(w)) => w,
        None => 0,
    };
    let precision = match c.precision {
        Some(Count::Star) => match args.word() {
            // A negative precision is as if none was given.
            Some(p) => usize::try_from(p as u32 as i32).ok(),
            None => {
                missing = true;
                None
            }
        },
        Some(Count::Fixed(p)) => Some(p),
        None => None,
    };
    let arg = match c.conv {
        b's' => args.string().map(Arg::Str),
        _ => args.word().map(Arg::Word),
    };
    if c.conv == b'n' || !length_fits(c.conv, c.length) {
        return marker(out, "unsupported", c.text);
    }
    let Some(arg) = arg.filter(|_| !missing) else {
        return marker(out, "missing argument", c.text);
    };
    if width > MAX_WIDTH || precision.is_some_and(|p| p > MAX_WIDTH) {
        return marker(out, "unsupported", c.text);
    }
    let spec = Spec {
        flags,
        width,
        precision,
    };
    match (c.conv, arg) {
        (b's', Arg::Str(s)) => {
            let s = precision.map_or(s, |p| &s[..p.min(s.len())]);
            pad(out, &spec, b"", s, false);
        }
        (b'c', Arg::Word(w)) => pad(out, &spec, b"", &[w as u8], false),
        (b'p', Arg::Word(w)) => pointer(out, &spec, w),
        (b'd' | b'i', Arg::Word(w)) => signed(out, &spec, c.length, w),
        (b'o' | b'u' | b'x' | b'X', Arg::Word(w)) => unsigned(out, &spec, c.conv, c.length, w),
        (conv, Arg::Word(w)) => float(out, &spec, conv, f64::from_bits(w)),
        (_, Arg::Str(_)) => marker(out, "unsupported", c.text),
    }
}

/// A conversion's flags, width and precision once its stars are resolved.
struct Spec {
    flags: Flags,
    width: usize,
    precision: Option<usize>,
}

/// Writes `prefix` (sign, `0x`) and `body` padded to the width: spaces on the left (or right
/// with `-`), or zeros between prefix and body when `zeros` is allowed and `0` was given.
fn pad(out: &mut Vec<u8>, spec: &Spec, prefix: &[u8], body: &[u8], zeros: bool) {
    let fill = spec.width.saturating_sub(prefix.len() + body.len());
    if spec.flags.left {
        out.extend_from_slice(prefix);
        out.extend_from_slice(body);
        out.extend(std::iter::repeat_n(b' ', fill));
    } else if zeros && spec.flags.zero {
        out.extend_from_slice(prefix);
        out.extend(std::iter::repeat_n(b'0', fill));
        out.extend_from_slice(body);
    } else {
        out.extend(std::iter::repeat_n(b' ', fill));
        out.extend_from_slice(prefix);
        out.extend_from_slice(body);
    }
}

/// The sign character of a signed value.
fn sign(negative: bool, flags: Flags) -> &'static [u8] {
    if negative {
        b"-"
    } else if flags.plus {
        b"+"
    } else if flags.space {
        b" "
    } else {
        b""
    }
}

/// Digits of `value` in `base` (8, 10, 16), at least `precision` of them (C's rule: a zero
/// with precision 0 has none).
fn integer_digits(value: u64, base: u8, upper: bool, precision: Option<usize>) -> Vec<u8> {
    let mut digits = Vec::new();
    if !(value == 0 && precision == Some(0)) {
        let mut v = value;
        loop {
            let d = (v % u64::from(base)) as u8;
            digits.push(match d {
                0..=9 => b'0' + d,
                _ if upper => b'A' + d - 10,
                _ => b'a' + d - 10,
            });
            v /= u64::from(base);
            if v == 0 {
                break;
            }
        }
    }
    let min = precision.unwrap_or(0);
    while digits.len() < min {
        digits.push(b'0');
    }
    digits.reverse();
    digits
}

/// `%d`, `%i`: the word as the length modifier's signed type.
fn signed(out: &mut Vec<u8>, spec: &Spec, length: Length, word: u64) {
    let value = match length {
        Length::Hh => i64::from(word as i8),
        Length::H => i64::from(word as i16),
        Length::None => i64::from(word as i32),
        _ => word as i64,
    };
    let digits = integer_digits(value.unsigned_abs(), 10, false, spec.precision);
    let zeros = spec.precision.is_none();
    pad(out, spec, sign(value < 0, spec.flags), &digits, zeros);
}

/// `%o`, `%u`, `%x`, `%X`: the word as the length modifier's unsigned type.
fn unsigned(out: &mut Vec<u8>, spec: &Spec, conv: u8, length: Length, word: u64) {
    let value = match length {
        Length::Hh => u64::from(word as u8),
        Length::H => u64::from(word as u16),
        Length::None => u64::from(word as u32),
        _ => word,
    };
    let base = match conv {
        b'o' => 8,
        b'u' => 10,
        _ => 16,
    };
    let mut digits = integer_digits(value, base, conv == b'X', spec.precision);
    let mut prefix: &[u8] = b"";
    if spec.flags.alt {
        match conv {
            // `#o`: the first digit is a zero.
            b'o' if digits.first() != Some(&b'0') => digits.insert(0, b'0'),
            b'x' if value != 0 => prefix = b"0x",
            b'X' if value != 0 => prefix = b"0X",
            _ => {}
        }
    }
    let zeros = spec.precision.is_none();
    pad(out, spec, prefix, &digits, zeros);
}

/// `%p` as glibc prints it: `(nil)` for 0, otherwise `%#lx` with the sign flags.
fn pointer(out: &mut Vec<u8>, spec: &Spec, word: u64) {
    if word == 0 {
        return pad(out, spec, b"", b"(nil)", false);
    }
    let digits = integer_digits(word, 16, false, spec.precision);
    let mut prefix = sign(false, spec.flags).to_vec();
    prefix.extend_from_slice(b"0x");
    let zeros = spec.precision.is_none();
    pad(out, spec, &prefix, &digits, zeros);
}

/// `%f %F %e %E %g %G %a %A` of a double.
fn float(out: &mut Vec<u8>, spec: &Spec, conv: u8, value: f64) {
    let upper = conv.is_ascii_uppercase();
    let sign = sign(value.is_sign_negative(), spec.flags);
    if !value.is_finite() {
        let text: &[u8] = match (value.is_nan(), upper) {
            (true, false) => b"nan",
            (true, true) => b"NAN",
            (false, false) => b"inf",
            (false, true) => b"INF",
        };
        return pad(out, spec, sign, text, false);
    }
    let abs = value.abs();
    let alt = spec.flags.alt;
    let (prefix, body) = match conv.to_ascii_lowercase() {
        b'f' => (sign.to_vec(), fixed(abs, spec.precision.unwrap_or(6), alt)),
        b'e' => (
            sign.to_vec(),
            exponential(abs, spec.precision.unwrap_or(6), alt, upper),
        ),
        b'g' => (sign.to_vec(), general(abs, spec.precision, alt, upper)),
        _ => {
            let mut prefix = sign.to_vec();
            prefix.extend_from_slice(if upper { b"0X" } else { b"0x" });
            (prefix, hex_float(abs, spec.precision, alt, upper))
        }
    };
    pad(out, spec, &prefix, &body, true);
}

/// `%f` of a non-negative finite value: Rust's fixed formatting is exact and rounds ties to
/// even, as glibc does in the default rounding mode.
fn fixed(abs: f64, precision: usize, alt: bool) -> Vec<u8> {
    let mut s = format!("{abs:.precision$}");
    if alt && precision == 0 {
        s.push('.');
    }
    s.into_bytes()
}

/// Rust's exact scientific form of a non-negative finite value: the mantissa's text and the
/// decimal exponent.
fn scientific(abs: f64, precision: usize) -> (String, i32) {
    let s = format!("{abs:.precision$e}");
    match s.split_once('e') {
        Some((mantissa, exp)) => (mantissa.to_owned(), exp.parse().unwrap_or(0)),
        None => (s, 0),
    }
}

/// `%e` of a non-negative finite value: `d.ddde+XX`, at least two exponent digits.
fn exponential(abs: f64, precision: usize, alt: bool, upper: bool) -> Vec<u8> {
    let (mut s, exp) = scientific(abs, precision);
    if alt && precision == 0 {
        s.push('.');
    }
    let e = if upper { 'E' } else { 'e' };
    let sign = if exp < 0 { '-' } else { '+' };
    // Writing to a String cannot fail.
    let _ = write!(s, "{e}{sign}{:02}", exp.unsigned_abs());
    s.into_bytes()
}

/// `%g` of a non-negative finite value: C's choice between `%e` and `%f` by the exponent the
/// value has once rounded to the precision, then (without `#`) no trailing zeros.
fn general(abs: f64, precision: Option<usize>, alt: bool, upper: bool) -> Vec<u8> {
    let p = precision.unwrap_or(6).max(1);
    let exp = if abs == 0.0 {
        0
    } else {
        scientific(abs, p - 1).1
    };
    let p_i = i64::try_from(p).unwrap_or(i64::MAX);
    let mut body = if p_i > i64::from(exp) && exp >= -4 {
        let decimals = usize::try_from(p_i - 1 - i64::from(exp)).unwrap_or(0);
        fixed(abs, decimals, alt)
    } else {
        exponential(abs, p - 1, alt, upper)
    };
    if !alt {
        strip_fraction_zeros(&mut body);
    }
    body
}

/// Removes trailing zeros of the fraction (before any exponent) and a decimal point left
/// alone.
fn strip_fraction_zeros(body: &mut Vec<u8>) {
    let Some(point) = body.iter().position(|&b| b == b'.') else {
        return;
    };
    let end = body
        .iter()
        .position(|&b| b == b'e' || b == b'E')
        .unwrap_or(body.len());
    let mut cut = end;
    while cut > point + 1 && body[cut - 1] == b'0' {
        cut -= 1;
    }
    if cut == point + 1 {
        cut = point;
    }
    body.drain(cut..end);
}

/// `%a` of a non-negative finite value as glibc prints it (after the `0x`): the leading digit
/// 1 (0 for zero and subnormals, whose exponent is -1022), the 52-bit fraction in hex (without
/// trailing zeros when no precision is given, else rounded to the precision, ties to even, a
/// carry raising the leading digit), and a binary exponent in decimal.
fn hex_float(abs: f64, precision: Option<usize>, alt: bool, upper: bool) -> Vec<u8> {
    const FRACTION_DIGITS: usize = 13;
    let bits = abs.to_bits();
    let biased = (bits >> 52) & 0x7ff;
    let fraction = bits & ((1 << 52) - 1);
    let (lead, exp): (u64, i64) = match (biased, fraction) {
        (0, 0) => (0, 0),
        (0, _) => (0, -1022),
        _ => (1, biased as i64 - 1023),
    };
    let mantissa = (lead << 52) | fraction;
    let (mantissa, kept) = match precision {
        Some(p) if p < FRACTION_DIGITS => {
            let shift = 4 * (FRACTION_DIGITS - p) as u32;
            let mut m = mantissa >> shift;
            let rest = mantissa & ((1 << shift) - 1);
            let half = 1 << (shift - 1);
            if rest > half || (rest == half && m & 1 == 1) {
                m += 1;
            }
            (m, p)
        }
        _ => (mantissa, FRACTION_DIGITS),
    };
    let hex = |d: u64| {
        let d = d as u8;
        match d {
            0..=9 => b'0' + d,
            _ if upper => b'A' + d - 10,
            _ => b'a' + d - 10,
        }
    };
    let mut digits: Vec<u8> = (0..kept)
        .rev()
        .map(|i| hex((mantissa >> (4 * i)) & 0xf))
        .collect();
    match precision {
        None => {
            while digits.last() == Some(&b'0') {
                digits.pop();
            }
        }
        Some(p) => digits.resize(digits.len().max(p), b'0'),
    }
    let mut s = Vec::with_capacity(digits.len() + 8);
    s.push(hex(mantissa >> (4 * kept)));
    if !digits.is_empty() || alt {
        s.push(b'.');
    }
    s.extend_from_slice(&digits);
    s.push(if upper { b'P' } else { b'p' });
    s.extend_from_slice(format!("{exp:+}").as_bytes());
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::{c_int, c_void, CString};

    /// An argument of a test message, and what it is passed to the C library as.
    #[derive(Debug, Clone)]
    enum Value {
        /// A word the kernel sent, passed to C as the length modifier's type.
        Int(u64),
        Float(f64),
        Str(Vec<u8>),
        Ptr(u64),
    }

    /// A message body as ockl lays it out: the format with its NUL, padded to 8 bytes, then
    /// one word per star and per integer, double or pointer, and padded bytes per string.
    fn message(fmt: &[u8], stars: &[i32], values: &[Value]) -> Vec<u8> {
        let mut out = fmt.to_vec();
        out.push(0);
        let pad = |out: &mut Vec<u8>| out.resize(out.len().next_multiple_of(8), 0);
        pad(&mut out);
        for &s in stars {
            // clang zero-extends a 32-bit int to the 64-bit word.
            out.extend_from_slice(&u64::from(s as u32).to_le_bytes());
        }
        for v in values {
            match v {
                Value::Int(w) | Value::Ptr(w) => out.extend_from_slice(&w.to_le_bytes()),
                Value::Float(f) => out.extend_from_slice(&f.to_bits().to_le_bytes()),
                Value::Str(s) => {
                    out.extend_from_slice(s);
                    out.push(0);
                    pad(&mut out);
                }
            }
        }
        out
    }

    /// What the C library's snprintf prints for a format holding one conversion with `stars`
    /// and `value`, passed as the types the conversion takes (`wide`: a 64-bit integer).
    fn reference(fmt: &[u8], stars: &[i32], value: &Value, wide: bool) -> Vec<u8> {
        let f = CString::new(fmt).unwrap();
        let mut buf = vec![0u8; 1 << 16];
        let (p, n, f) = (buf.as_mut_ptr().cast(), buf.len(), f.as_ptr());
        let s = match value {
            Value::Str(s) => CString::new(s.clone()).unwrap(),
            _ => CString::default(),
        };
        macro_rules! call {
            ($v:expr) => {
                match *stars {
                    [] => libc::snprintf(p, n, f, $v),
                    [a] => libc::snprintf(p, n, f, a as c_int, $v),
                    [a, b] => libc::snprintf(p, n, f, a as c_int, b as c_int, $v),
                    _ => unreachable!(),
                }
            };
        }
        // SAFETY: `f` holds one conversion taking the stars (ints) and one argument of exactly
        // the type passed here; the output buffer is `n` bytes.
        let written = unsafe {
            match value {
                Value::Int(w) if wide => call!(*w as i64),
                // The C int the conversion reads from the word, as it would from a register.
                Value::Int(w) => call!(*w as u32 as c_int),
                Value::Float(v) => call!(*v),
                Value::Str(_) => call!(s.as_ptr()),
                Value::Ptr(w) => call!(*w as usize as *const c_void),
            }
        };
        let written = usize::try_from(written).expect("snprintf failed");
        assert!(written < buf.len());
        buf.truncate(written);
        buf
    }

    /// Whether `got` differs from glibc's `want` only by glibc's `%#g` bug (see the module
    /// comment): `want` is `1.e±XX` (maybe padded) where `got` has the precision's zeros.
    fn glibc_alt_g_carry(fmt: &str, want: &[u8], got: &[u8]) -> bool {
        let (want, got) = (String::from_utf8_lossy(want), String::from_utf8_lossy(got));
        let alt_g = fmt.contains('#') && (fmt.contains('g') || fmt.contains('G'));
        let (Some(w), Some(g)) = (want.find("1.e").or(want.find("1.E")), got.find("1.0")) else {
            return false;
        };
        let zeros = got[g + 2..].chars().take_while(|&c| c == '0').count();
        let mut fixed = got[g..].to_string();
        fixed.replace_range(2..2 + zeros, "");
        // Only the padding before may differ (glibc pads its shorter text).
        let sign = |s: &str| {
            s.chars()
                .filter(|c| matches!(c, '+' | '-'))
                .collect::<String>()
        };
        alt_g
            && sign(&want[..w]) == sign(&got[..g])
            && fixed.replace(' ', "") == want[w..].replace(' ', "")
    }

    fn ints() -> Vec<Value> {
        [
            0,
            1,
            7,
            42,
            255,
            256,
            0x7fff,
            0x8000,
            0xffff,
            1234567,
            0x7fff_ffff,
            0x8000_0000,
            0xffff_ffff,
            0x1_0000_0000,
            0x1234_5678_9abc_def0,
            (-1i64) as u64,
            (-128i64) as u64,
            (-1234567i64) as u64,
            i64::MIN as u64,
            i64::MAX as u64,
            u64::MAX,
        ]
        .into_iter()
        .map(Value::Int)
        .collect()
    }

    fn floats() -> Vec<Value> {
        let mut v = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            1.5,
            2.5,
            -2.5,
            0.125,
            0.05,
            0.15,
            0.25,
            0.35,
            9.5,
            99.5,
            999_999.5,
            0.999_999_5,
            9.999_999_5,
            1.0 / 3.0,
            2.0 / 3.0,
            123.456,
            -123.456,
            1e-5,
            1e-4,
            9.9999e-5,
            123_456.0,
            1e15,
            1e16,
            1e17,
            1e21,
            1e300,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            2.225e-308,
            f64::from_bits(0x000f_8000_0000_0000),
            f64::from_bits(0x000f_ffff_ffff_ffff),
            1.03125,
            1.09375,
            1.0 + f64::EPSILON,
            2.0 - f64::EPSILON,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
        ];
        // Arbitrary finite doubles over the whole exponent range.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        while v.len() < 80 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let f = f64::from_bits(x);
            if f.is_finite() {
                v.push(f);
            }
        }
        v.into_iter().map(Value::Float).collect()
    }

    fn strings() -> Vec<Value> {
        [
            &b""[..],
            b"a",
            b"hello",
            b"hello world, a longer one",
            "\u{e9}t\u{e9}".as_bytes(),
        ]
        .into_iter()
        .map(|s| Value::Str(s.to_vec()))
        .collect()
    }

    fn pointers() -> Vec<Value> {
        [0, 1, 0x1234, 0x7fff_dead_beef, u64::MAX]
            .into_iter()
            .map(Value::Ptr)
            .collect()
    }

    /// Every flag combination, width, precision, length and conversion (with stars), each
    /// with values taken in turn, against the C library's snprintf.
    #[test]
    fn conversions_match_the_c_library() {
        let (ints, floats, strings, pointers) = (ints(), floats(), strings(), pointers());
        let int_lengths = ["", "hh", "h", "l", "ll", "j", "z", "t", "q"];
        let mut kinds: Vec<(String, bool, &[Value])> = Vec::new();
        for conv in ["d", "i", "o", "u", "x", "X"] {
            for len in int_lengths {
                let wide = !matches!(len, "" | "hh" | "h");
                kinds.push((format!("{len}{conv}"), wide, &ints));
            }
        }
        for conv in ["f", "F", "e", "E", "g", "G", "a", "A"] {
            for len in ["", "l"] {
                kinds.push((format!("{len}{conv}"), false, &floats));
            }
        }
        kinds.push(("c".into(), false, &ints));
        kinds.push(("s".into(), false, &strings));
        kinds.push(("p".into(), false, &pointers));
        let widths: [(&str, Option<i32>); 6] = [
            ("", None),
            ("1", None),
            ("7", None),
            ("30", None),
            ("*", Some(-9)),
            ("*", Some(11)),
        ];
        let precisions: [(&str, Option<i32>); 9] = [
            ("", None),
            (".", None),
            (".0", None),
            (".1", None),
            (".4", None),
            (".13", None),
            (".17", None),
            (".*", Some(-1)),
            (".*", Some(20)),
        ];
        let mut checked = 0usize;
        let mut turn = 0usize;
        for mask in 0..64u32 {
            let flags: String = "-+ #0'"
                .chars()
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .map(|(_, c)| c)
                .collect();
            for (width, wstar) in widths {
                for (precision, pstar) in precisions {
                    for (kind, wide, values) in &kinds {
                        let fmt = format!("<%{flags}{width}{precision}{kind}>");
                        let stars: Vec<i32> = wstar.into_iter().chain(pstar).collect();
                        for _ in 0..2 {
                            turn = turn.wrapping_add(7);
                            let value = &values[turn % values.len()];
                            let want = reference(fmt.as_bytes(), &stars, value, *wide);
                            let got = format(&message(
                                fmt.as_bytes(),
                                &stars,
                                std::slice::from_ref(value),
                            ));
                            if glibc_alt_g_carry(&fmt, &want, &got) {
                                continue;
                            }
                            assert_eq!(
                                String::from_utf8_lossy(&got),
                                String::from_utf8_lossy(&want),
                                "format {fmt:?}, stars {stars:?}, value {value:?}"
                            );
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(checked > 100_000, "{checked} conversions checked");
    }

    /// Every value with a set of common conversions (the loop above samples values).
    #[test]
    fn every_value_matches_the_c_library() {
        let cases: [(&[&str], bool, Vec<Value>); 5] = [
            (
                &[
                    "%d", "%hhd", "%hd", "%+5i", "%#o", "%#.0x", "%-8u", "%012X", "%c",
                ],
                false,
                ints(),
            ),
            (
                &["%ld", "%llu", "%#jo", "%zx", "%+.20td", "%qX"],
                true,
                ints(),
            ),
            (
                &[
                    "%f", "%.0f", "%#.0f", "%.20f", "%e", "%.0e", "%#.0E", "%.15e", "%g", "%#g",
                    "%.0g", "%.1g", "%.17g", "%G", "%a", "%A", "%.0a", "%.1a", "%.2a", "%.12a",
                    "%.20a", "%#a", "%030.3a", "%-+12.4e", "% 015.5f", "%.4096f", "%.300e",
                ],
                false,
                floats(),
            ),
            (&["%s", "%.0s", "%.3s", "%-12s", "%12.2s"], false, strings()),
            (
                &["%p", "%20p", "%-20p", "%.20p", "%+p", "% p", "%020p"],
                false,
                pointers(),
            ),
        ];
        for (formats, wide, values) in &cases {
            for fmt in *formats {
                for value in values {
                    let want = reference(fmt.as_bytes(), &[], value, *wide);
                    let got = format(&message(fmt.as_bytes(), &[], std::slice::from_ref(value)));
                    if glibc_alt_g_carry(fmt, &want, &got) {
                        continue;
                    }
                    assert_eq!(
                        String::from_utf8_lossy(&got),
                        String::from_utf8_lossy(&want),
                        "format {fmt:?}, value {value:?}"
                    );
                }
            }
        }
    }

    /// A message with several conversions takes its arguments in order, strings included.
    #[test]
    fn a_message_takes_its_arguments_in_order() {
        let fmt = b"x=%d y=%5.2f s=%s p=%p %% %x %*d|%.*s|%c";
        let bytes = message(
            fmt,
            &[],
            &[
                Value::Int(-7i64 as u64),
                Value::Float(-1234.5678),
                Value::Str(b"a string of 19 byte".to_vec()),
                Value::Ptr(0x1234),
                Value::Int(255),
                Value::Int(6),
                Value::Int(42),
                Value::Int(3),
                Value::Str(b"abcdef".to_vec()),
                Value::Int(u64::from(b'z')),
            ],
        );
        let got = format(&bytes);
        let mut buf = vec![0u8; 256];
        let f = CString::new(&fmt[..]).unwrap();
        let (s1, s2) = (
            CString::new("a string of 19 byte").unwrap(),
            CString::new("abcdef").unwrap(),
        );
        // SAFETY: the format's conversions match the arguments; the buffer has 256 bytes.
        let n = unsafe {
            libc::snprintf(
                buf.as_mut_ptr().cast(),
                buf.len(),
                f.as_ptr(),
                -7 as c_int,
                -1234.5678f64,
                s1.as_ptr(),
                0x1234usize as *const c_void,
                255 as c_int,
                6 as c_int,
                42 as c_int,
                3 as c_int,
                s2.as_ptr(),
                c_int::from(b'z'),
            )
        };
        buf.truncate(usize::try_from(n).unwrap());
        assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&buf));
    }

    fn run(fmt: &str, values: &[Value]) -> String {
        String::from_utf8(format(&message(fmt.as_bytes(), &[], values))).unwrap()
    }

    /// Formats that would make the C library read what was never passed print markers.
    #[test]
    fn hostile_formats_print_markers() {
        let three = [Value::Int(7), Value::Int(8), Value::Int(9)];
        let cases: &[(&str, &[Value], &str)] = &[
            ("%3$s", &three, "%<unsupported: %3$s>"),
            ("%8$s", &[], "%<unsupported: %8$s>"),
            ("%2$p|%d", &three, "%<unsupported: %2$p>|7"),
            ("%*3$d|", &three, "%<unsupported: %*3$d>|"),
            ("%***d|%d", &three, "%<unsupported: %***d>|7"),
            (
                "%Lf|%d",
                &[Value::Float(1.5), Value::Int(5)],
                "%<unsupported: %Lf>|5",
            ),
            ("%m|%d", &three, "%<unsupported: %m>|7"),
            (
                "%S|%C|%d",
                &three,
                "%<unsupported: %S>|%<unsupported: %C>|7",
            ),
            (
                "%ls|%d",
                &[Value::Str(b"w".to_vec()), Value::Int(4)],
                "%<unsupported: %ls>|4",
            ),
            ("%lc|%d", &three, "%<unsupported: %lc>|8"),
            (
                "%hp|%Ld|%hf",
                &three,
                "%<unsupported: %hp>|%<unsupported: %Ld>|%<unsupported: %hf>",
            ),
            ("%n|%d", &three, "%<unsupported: %n>|8"),
            ("%99999999d|%d", &three, "%<unsupported: %99999999d>|8"),
            (
                "%.99999999f|",
                &[Value::Float(1.0)],
                "%<unsupported: %.99999999f>|",
            ),
            (
                "%99999999999999999999999d|",
                &three,
                "%<unsupported: %99999999999999999999999d>|",
            ),
            (
                "%*d|%d",
                &[
                    Value::Int(i32::MIN as u32 as u64),
                    Value::Int(1),
                    Value::Int(2),
                ],
                "%<unsupported: %*d>|2",
            ),
            (
                "%4097d|%4096d",
                &[Value::Int(1), Value::Int(1)],
                "%<unsupported: %4097d>|",
            ),
            ("%d %d %d %d", &three, "7 8 9 %<missing argument: %d>"),
            ("%s", &[], "%<missing argument: %s>"),
            ("%*d", &[Value::Int(3)], "%<missing argument: %*d>"),
            ("%.*f", &[], "%<missing argument: %.*f>"),
            ("end %", &[], "end %<unsupported: %>"),
            ("end %-08.3", &[], "end %<unsupported: %-08.3>"),
            ("end %ll", &[], "end %<unsupported: %ll>"),
            ("%!|%d", &three, "%<unsupported: %>!|7"),
            ("%5%|%d", &three, "%<unsupported: %5%>|7"),
            (
                "%I|%k|%Z",
                &[],
                "%<unsupported: %I>|%<unsupported: %k>|%<unsupported: %Z>",
            ),
        ];
        for (fmt, values, want) in cases {
            let got = run(fmt, values);
            if fmt.starts_with("%4097d") {
                assert!(
                    got.starts_with(want) && got.len() == want.len() + 4096,
                    "{fmt}: {got:?}"
                );
            } else {
                assert_eq!(&got, want, "format {fmt:?}");
            }
        }
    }

    /// Widths and messages cannot make the host allocate without bound.
    #[test]
    fn output_is_capped() {
        let fmt = "%4096d".repeat(1000);
        let values: Vec<Value> = (0..1000).map(Value::Int).collect();
        let got = run(&fmt, &values);
        assert!(
            got.ends_with("%<output truncated>"),
            "{}",
            &got[got.len() - 40..]
        );
        assert!(got.len() <= MAX_OUTPUT + 32);
        // A format without a NUL, and a string without one, end at the message's end.
        assert_eq!(format(b"abc%d"), b"abc%<missing argument: %d>");
        assert_eq!(format(b"%s\0\0\0\0\0\0xyz"), b"xyz");
    }

    /// Arbitrary formats and argument bytes never panic, and the text stays bounded.
    #[test]
    fn arbitrary_formats_never_panic() {
        let alphabet = b"%%%%-+ #0'123456789*.$hlLqjztdiouxXfFeEgGaAcspnmSC abc\n";
        let mut x: u64 = 1;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..20_000 {
            let len = (next() % 24) as usize;
            let mut bytes: Vec<u8> = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            bytes.push(0);
            for _ in 0..(next() % 40) {
                bytes.push(next() as u8);
            }
            let out = format(&bytes);
            assert!(out.len() <= MAX_OUTPUT + 32);
        }
    }
}
