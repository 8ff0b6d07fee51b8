//! CUDA's device-side `printf`: one thread's output, formatted from its
//! format string and the buffer of arguments PTX's `vprintf` receives.
//!
//! The CUDA C++ Programming Guide ("Formatted Output") defines the call: the
//! compiler stores each argument in a buffer at its natural alignment
//! (integers of up to 32 bits as 4 bytes, `long`, `long long` and pointers as
//! 8, `float` promoted to `double`), and the runtime formats the text on the
//! host after the kernel, with the C library's rules. This module reads the
//! arguments the way the format's conversions say, so a format that
//! disagrees with the arguments prints garbage, as it does on a GPU. The
//! return value is the number of arguments the format took.
//!
//! Deviations: `%n` prints nothing and takes no argument (CUDA does not
//! support it), and a conversion this module does not know is printed as
//! written.

use std::fmt::Write;

/// The longest string `%s` prints, and the longest format read: a pointer
/// to memory without a terminating NUL must not run the simulator out of memory.
pub const MAX_STRING_BYTES: usize = 1 << 16;

/// What the formatter needs from memory.
pub trait PrintfMemory {
    /// The `size`-byte (4 or 8) little-endian argument at byte `offset` of
    /// the argument buffer, or `None` when it cannot be read.
    fn argument(&mut self, offset: u64, size: u32) -> Option<u64>;
    /// The NUL-terminated string at generic `address` (without the NUL, at
    /// most [`MAX_STRING_BYTES`]), or `None` when it cannot be read.
    fn string(&mut self, address: u64) -> Option<Vec<u8>>;
}

/// Formats `format` with the arguments `memory` holds; appends the text to
/// `out` and returns how many arguments the format took.
pub fn format(format: &[u8], memory: &mut dyn PrintfMemory, out: &mut Vec<u8>) -> i32 {
    let mut arguments = Arguments {
        memory,
        offset: 0,
        taken: 0,
    };
    let mut rest = format;
    while let Some(position) = rest.iter().position(|&byte| byte == b'%') {
        out.extend_from_slice(&rest[..position]);
        rest = &rest[position + 1..];
        let (spec, used) = Spec::parse(rest);
        let written = &rest[..used];
        rest = &rest[used..];
        match spec {
            Some(spec) => spec.write(&mut arguments, out),
            None => {
                out.push(b'%');
                out.extend_from_slice(written);
            }
        }
    }
    out.extend_from_slice(rest);
    arguments.taken
}

/// The argument buffer, read in order.
struct Arguments<'a> {
    memory: &'a mut dyn PrintfMemory,
    offset: u64,
    taken: i32,
}

impl Arguments<'_> {
    /// The next argument of `size` bytes, at its natural alignment; an
    /// argument that cannot be read is 0.
    fn next(&mut self, size: u32) -> u64 {
        let size_bytes = u64::from(size);
        self.offset = self.offset.div_ceil(size_bytes) * size_bytes;
        let value = self.memory.argument(self.offset, size).unwrap_or(0);
        self.offset += size_bytes;
        self.taken += 1;
        value
    }
}

/// One conversion: `%[flags][width][.precision][length]conversion`.
#[derive(Clone, Copy, Debug, Default)]
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    alternate: bool,
    zero: bool,
    width: Count,
    precision: Option<Count>,
    /// 8-byte integer argument (`l`, `ll`, `j`, `z`, `t`).
    wide: bool,
    conversion: u8,
}

/// A width or precision: written in the format, or taken from an argument (`*`).
#[derive(Clone, Copy, Debug, Default)]
enum Count {
    #[default]
    None,
    Given(usize),
    FromArgument,
}

/// Widths and precisions above this are cut to it, as a bound on output.
const MAX_COUNT: usize = 4096;

impl Spec {
    /// Parses the conversion after a `%`; returns it (or `None` for one
    /// this module does not know) and the bytes it took.
    fn parse(text: &[u8]) -> (Option<Spec>, usize) {
        let mut spec = Spec::default();
        let mut at = 0;
        while let Some(&byte) = text.get(at) {
            match byte {
                b'-' => spec.left = true,
                b'+' => spec.plus = true,
                b' ' => spec.space = true,
                b'#' => spec.alternate = true,
                b'0' => spec.zero = true,
                _ => break,
            }
            at += 1;
        }
        let count = |at: &mut usize| -> Count {
            if text.get(*at) == Some(&b'*') {
                *at += 1;
                return Count::FromArgument;
            }
            let start = *at;
            while text.get(*at).is_some_and(u8::is_ascii_digit) {
                *at += 1;
            }
            if *at == start {
                return Count::None;
            }
            let digits = std::str::from_utf8(&text[start..*at]).unwrap_or("0");
            Count::Given(digits.parse::<usize>().unwrap_or(MAX_COUNT).min(MAX_COUNT))
        };
        spec.width = count(&mut at);
        if text.get(at) == Some(&b'.') {
            at += 1;
            spec.precision = Some(match count(&mut at) {
                Count::None => Count::Given(0),
                given => given,
            });
        }
        while let Some(&byte) = text.get(at) {
            match byte {
                b'l' | b'j' | b'z' | b't' => spec.wide = true,
                b'h' | b'L' | b'q' => {}
                _ => break,
            }
            at += 1;
        }
        match text.get(at) {
            Some(&conversion) if b"diuoxXcsfFeEgGaAp%n".contains(&conversion) => {
                spec.conversion = conversion;
                (Some(spec), at + 1)
            }
            Some(_) => (None, at + 1),
            None => (None, at),
        }
    }

    fn write(mut self, arguments: &mut Arguments, out: &mut Vec<u8>) {
        if self.conversion == b'%' {
            out.push(b'%');
            return;
        }
        if self.conversion == b'n' {
            return;
        }
        let mut width = match self.width {
            Count::None => 0,
            Count::Given(width) => width,
            Count::FromArgument => {
                let value = arguments.next(4) as u32 as i32;
                if value < 0 {
                    self.left = true;
                }
                (value.unsigned_abs() as usize).min(MAX_COUNT)
            }
        };
        let precision = match self.precision {
            None => None,
            Some(Count::Given(precision)) => Some(precision),
            Some(Count::FromArgument) => {
                let value = arguments.next(4) as u32 as i32;
                // A negative precision is taken as if it were left out.
                (value >= 0).then_some((value as usize).min(MAX_COUNT))
            }
            Some(Count::None) => Some(0),
        };
        let integer_size = if self.wide { 8 } else { 4 };
        let (sign, body) = match self.conversion {
            b'd' | b'i' => {
                let bits = arguments.next(integer_size);
                let value = if self.wide {
                    bits as i64
                } else {
                    i64::from(bits as u32 as i32)
                };
                let digits = integer_digits(value.unsigned_abs(), 10, false, precision);
                (self.sign(value < 0), digits)
            }
            b'u' | b'o' | b'x' | b'X' => {
                let bits = arguments.next(integer_size);
                let value = if self.wide { bits } else { bits & 0xffff_ffff };
                let (radix, upper) = match self.conversion {
                    b'u' => (10, false),
                    b'o' => (8, false),
                    b'x' => (16, false),
                    _ => (16, true),
                };
                let mut digits = integer_digits(value, radix, upper, precision);
                if self.alternate && value != 0 {
                    match self.conversion {
                        b'o' if !digits.starts_with('0') => digits.insert(0, '0'),
                        b'x' => digits.insert_str(0, "0x"),
                        b'X' => digits.insert_str(0, "0X"),
                        _ => {}
                    }
                }
                (String::new(), digits)
            }
            b'c' => {
                let byte = arguments.next(4) as u8;
                self.zero = false;
                pad(out, &[byte], width, self.left, false);
                return;
            }
            b's' => {
                let address = arguments.next(8);
                let mut text = if address == 0 {
                    b"(null)".to_vec()
                } else {
                    arguments.memory.string(address).unwrap_or_default()
                };
                if let Some(precision) = precision {
                    text.truncate(precision);
                }
                pad(out, &text, width, self.left, false);
                return;
            }
            b'p' => {
                let address = arguments.next(8);
                let text = if address == 0 {
                    "(nil)".to_string()
                } else {
                    format!("{address:#x}")
                };
                pad(out, text.as_bytes(), width, self.left, false);
                return;
            }
            conversion => {
                let value = f64::from_bits(arguments.next(8));
                let upper = conversion.is_ascii_uppercase();
                let body = if !value.is_finite() {
                    // No zero padding for infinities and NaNs (C17 7.21.6.1).
                    self.zero = false;
                    let text = if value.is_nan() { "nan" } else { "inf" };
                    text.to_string()
                } else {
                    match conversion.to_ascii_lowercase() {
                        b'f' => fixed(value.abs(), precision.unwrap_or(6), self.alternate),
                        b'e' => scientific(value.abs(), precision.unwrap_or(6), self.alternate),
                        b'g' => general(value.abs(), precision.unwrap_or(6), self.alternate),
                        _ => hexadecimal(value.abs(), precision),
                    }
                };
                let body = if upper {
                    body.to_ascii_uppercase()
                } else {
                    body
                };
                (self.sign(value.is_sign_negative()), body)
            }
        };
        // The `0` flag pads between sign and digits; it is ignored with `-`,
        // and for integers when a precision is given.
        let integer = b"diuoxX".contains(&self.conversion);
        let zero = self.zero && !self.left && !(integer && precision.is_some());
        if zero {
            let prefix_length = sign.len()
                + if body.starts_with("0x") || body.starts_with("0X") {
                    2
                } else {
                    0
                };
            let (prefix, digits) = body.split_at(prefix_length - sign.len());
            out.extend_from_slice(sign.as_bytes());
            out.extend_from_slice(prefix.as_bytes());
            width = width.saturating_sub(prefix_length);
            pad(out, digits.as_bytes(), width, false, true);
        } else {
            let text = format!("{sign}{body}");
            pad(out, text.as_bytes(), width, self.left, false);
        }
    }

    /// The sign a number is printed with.
    fn sign(&self, negative: bool) -> String {
        if negative {
            "-".to_string()
        } else if self.plus {
            "+".to_string()
        } else if self.space {
            " ".to_string()
        } else {
            String::new()
        }
    }
}

/// Writes `text` padded to `width`: on the left with spaces or zeros, or on
/// the right with spaces when `left`-justified.
fn pad(out: &mut Vec<u8>, text: &[u8], width: usize, left: bool, zeros: bool) {
    let fill = width.saturating_sub(text.len());
    let filler = if zeros { b'0' } else { b' ' };
    if left {
        out.extend_from_slice(text);
        out.resize(out.len() + fill, b' ');
    } else {
        out.resize(out.len() + fill, filler);
        out.extend_from_slice(text);
    }
}

/// The digits of `value` in `radix`, at least `precision` of them (C: a
/// precision of 0 prints nothing for the value 0).
fn integer_digits(value: u64, radix: u32, upper: bool, precision: Option<usize>) -> String {
    let mut digits = match radix {
        8 => format!("{value:o}"),
        16 if upper => format!("{value:X}"),
        16 => format!("{value:x}"),
        _ => value.to_string(),
    };
    match precision {
        Some(0) if value == 0 => digits.clear(),
        Some(precision) if digits.len() < precision => {
            digits.insert_str(0, &"0".repeat(precision - digits.len()));
        }
        _ => {}
    }
    digits
}

/// `%f` of a finite, non-negative value (Rust's formatting with a precision
/// rounds the exact binary value correctly, as the C library does).
fn fixed(value: f64, precision: usize, alternate: bool) -> String {
    let mut text = format!("{value:.precision$}");
    if alternate && precision == 0 {
        text.push('.');
    }
    text
}

/// `%e` of a finite, non-negative value: `d.ddddde+XX`.
fn scientific(value: f64, precision: usize, alternate: bool) -> String {
    let text = format!("{value:.precision$e}");
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let point = if alternate && precision == 0 { "." } else { "" };
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}{point}e{sign}{:02}", exponent.unsigned_abs())
}

/// `%g` of a finite, non-negative value: `%e` or `%f`, whichever C17
/// 7.21.6.1 chooses for the exponent, without trailing zeros unless `#`.
fn general(value: f64, precision: usize, alternate: bool) -> String {
    let significant = precision.max(1);
    // The exponent the value has once rounded to `significant` digits.
    let rounded = format!("{value:.prec$e}", prec = significant - 1);
    let exponent: i64 = rounded
        .split_once('e')
        .and_then(|(_, exponent)| exponent.parse().ok())
        .unwrap_or(0);
    let mut text = if exponent < -4 || exponent >= significant as i64 {
        scientific(value, significant - 1, alternate)
    } else {
        fixed(
            value,
            (significant as i64 - 1 - exponent) as usize,
            alternate,
        )
    };
    if !alternate {
        let (number, exponent_part) = match text.find('e') {
            Some(at) => text.split_at(at),
            None => (text.as_str(), ""),
        };
        let number = if number.contains('.') {
            number.trim_end_matches('0').trim_end_matches('.')
        } else {
            number
        };
        text = format!("{number}{exponent_part}");
    }
    text
}

/// `%a` of a finite, non-negative value: `0x1.hhhhp+d` (subnormals as
/// `0x0.hhhhp-1022`), the shortest exact form unless a precision is given.
fn hexadecimal(value: f64, precision: Option<usize>) -> String {
    let bits = value.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i64;
    let mut fraction = bits & ((1 << 52) - 1);
    if biased == 0 && fraction == 0 {
        let digits = precision.map_or(String::new(), |p| {
            if p == 0 {
                String::new()
            } else {
                format!(".{}", "0".repeat(p))
            }
        });
        return format!("0x0{digits}p+0");
    }
    let (mut lead, exponent) = if biased == 0 {
        (0u64, -1022)
    } else {
        (1u64, biased - 1023)
    };
    let mut digit_count = 13;
    if let Some(precision) = precision.filter(|&p| p < 13) {
        // Round the 52-bit fraction to `precision` hex digits, to nearest even.
        let drop = 4 * (13 - precision) as u32;
        let kept = fraction >> drop;
        let remainder = fraction & ((1u64 << drop) - 1);
        let half = 1u64 << (drop - 1);
        let mut rounded = kept;
        if remainder > half || (remainder == half && kept & 1 == 1) {
            rounded += 1;
        }
        if precision == 0 {
            if rounded > 0 {
                lead += 1;
            }
            fraction = 0;
        } else if rounded >> (4 * precision) != 0 {
            lead += 1;
            fraction = 0;
        } else {
            fraction = rounded << drop;
        }
        digit_count = precision;
    }
    let mut digits = format!("{fraction:013x}");
    digits.truncate(digit_count);
    if precision.is_none() {
        digits = digits.trim_end_matches('0').to_string();
    }
    let point = if digits.is_empty() { "" } else { "." };
    let sign = if exponent < 0 { '-' } else { '+' };
    let mut text = String::new();
    let _ = write!(
        text,
        "0x{lead}{point}{digits}p{sign}{}",
        exponent.unsigned_abs()
    );
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Arguments laid out as CUDA lays them out, and strings by address.
    #[derive(Default)]
    struct Buffer {
        bytes: Vec<u8>,
        strings: Vec<(u64, Vec<u8>)>,
    }

    impl Buffer {
        fn push(mut self, bytes: &[u8]) -> Buffer {
            let size = bytes.len();
            while !self.bytes.len().is_multiple_of(size) {
                self.bytes.push(0xee);
            }
            self.bytes.extend_from_slice(bytes);
            self
        }
        fn int(self, value: i32) -> Buffer {
            self.push(&value.to_le_bytes())
        }
        fn long(self, value: i64) -> Buffer {
            self.push(&value.to_le_bytes())
        }
        fn double(self, value: f64) -> Buffer {
            self.push(&value.to_le_bytes())
        }
        fn string(mut self, address: u64, text: &str) -> Buffer {
            self.strings.push((address, text.as_bytes().to_vec()));
            self.push(&address.to_le_bytes())
        }
    }

    impl PrintfMemory for Buffer {
        fn argument(&mut self, offset: u64, size: u32) -> Option<u64> {
            let start = offset as usize;
            let slice = self.bytes.get(start..start + size as usize)?;
            let mut word = [0u8; 8];
            word[..slice.len()].copy_from_slice(slice);
            Some(u64::from_le_bytes(word))
        }
        fn string(&mut self, address: u64) -> Option<Vec<u8>> {
            self.strings
                .iter()
                .find(|(at, _)| *at == address)
                .map(|(_, text)| text.clone())
        }
    }

    fn printed(format_text: &str, mut buffer: Buffer) -> (String, i32) {
        let mut out = Vec::new();
        let taken = format(format_text.as_bytes(), &mut buffer, &mut out);
        (String::from_utf8(out).unwrap(), taken)
    }

    #[test]
    fn integers_follow_the_c_library() {
        let buffer = || {
            Buffer::default()
                .int(-42)
                .int(7)
                .long(-5_000_000_000)
                .int(255)
        };
        assert_eq!(
            printed("%d|%5u|%ld|%x", buffer()),
            ("-42|    7|-5000000000|ff".to_string(), 4)
        );
        assert_eq!(
            printed("%+05d|%-4d|", Buffer::default().int(42).int(3)).0,
            "+0042|3   |"
        );
        assert_eq!(
            printed("%.3d|%#o|%#X", Buffer::default().int(5).int(8).int(255)).0,
            "005|010|0XFF"
        );
        assert_eq!(printed("%08.3d", Buffer::default().int(7)).0, "     007");
        assert_eq!(printed("%.0d|", Buffer::default().int(0)).0, "|");
        assert_eq!(
            printed("%#010x", Buffer::default().int(255)).0,
            "0x000000ff"
        );
        assert_eq!(printed("%u", Buffer::default().int(-1)).0, "4294967295");
        assert_eq!(printed("%c%c", Buffer::default().int(104).int(105)).0, "hi");
    }

    #[test]
    fn floats_follow_the_c_library() {
        let one =
            |format_text: &str, value: f64| printed(format_text, Buffer::default().double(value)).0;
        assert_eq!(one("%f", 1.5), "1.500000");
        assert_eq!(one("%.2f", 2.675), "2.67"); // 2.675 is 2.67499999... in binary
        assert_eq!(one("%8.3f", -1.23456), "  -1.235");
        assert_eq!(one("%e", 12345.678), "1.234568e+04");
        assert_eq!(one("%E", 0.000123), "1.230000E-04");
        assert_eq!(one("%g", 100000.0), "100000");
        assert_eq!(one("%g", 1000000.0), "1e+06");
        assert_eq!(one("%g", 0.0001), "0.0001");
        assert_eq!(one("%g", 0.00001), "1e-05");
        assert_eq!(one("%g", 1.5), "1.5");
        assert_eq!(one("%#g", 1.5), "1.50000");
        assert_eq!(one("%.3g", 1.23456), "1.23");
        assert_eq!(one("%a", 1.0), "0x1p+0");
        assert_eq!(one("%a", 3.0), "0x1.8p+1");
        assert_eq!(one("%a", 0.1), "0x1.999999999999ap-4");
        assert_eq!(one("%f", f64::INFINITY), "inf");
        assert_eq!(one("%5.1f", f64::NEG_INFINITY), " -inf");
        assert_eq!(one("%F", f64::NAN), "NAN");
        assert_eq!(one("%010.2f", -1.5), "-000001.50");
        assert_eq!(one("%+.0f", 2.5), "+2");
    }

    #[test]
    fn arguments_sit_at_their_natural_alignment() {
        // An int, then a double at offset 8, then an int at 16, then a
        // pointer at 24: what NVRTC stores for printf("%d %f %d %s", ...).
        let buffer = Buffer::default()
            .int(3)
            .double(0.5)
            .int(9)
            .string(0x1000, "hi");
        assert_eq!(
            printed("t=%d a=%f n=%d %s\n", buffer),
            ("t=3 a=0.500000 n=9 hi\n".to_string(), 4)
        );
    }

    #[test]
    fn strings_percent_and_unknown_conversions() {
        let buffer = Buffer::default().string(8, "abcdef").long(0);
        assert_eq!(printed("[%.3s|%-5s|%%|%k]", buffer).0, "[abc|(null)|%|%k]");
        assert_eq!(
            printed("%p %p", Buffer::default().long(0x1234).long(0)).0,
            "0x1234 (nil)"
        );
        assert_eq!(
            printed("%*d|%-*d|", Buffer::default().int(4).int(1).int(3).int(2)).0,
            "   1|2  |"
        );
        assert_eq!(
            printed("no arguments", Buffer::default()),
            ("no arguments".to_string(), 0)
        );
        assert_eq!(printed("trailing %", Buffer::default()).0, "trailing %");
    }
}
