//! NumPy's `.npy` format (`numpy.lib.format`): the header of a file given as
//! a buffer's initial contents, and the header written before a buffer's
//! bytes by `--dump NAME=PATH.npy`.
//!
//! A file is the magic string `\x93NUMPY`, a version (1.0, 2.0 or 3.0), the
//! header's length (two bytes in version 1, four after), and the header: a
//! Python dictionary literal with `descr` (the data type, e.g. `'<f4'`),
//! `fortran_order` and `shape`, padded with spaces and ending with a newline.
//! The data follows, the elements in the order the header says.

use std::io::{self, Read, Write};

use crate::launch_file::ElementType;

const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// The largest header read. NumPy itself refuses headers over 10,000 bytes
/// unless told otherwise; a larger one is a corrupt or hostile file.
const MAX_HEADER_BYTES: u32 = 1 << 20;

/// What an `.npy` file's header says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpyHeader {
    /// The format version, `(major, minor)`.
    pub version: (u8, u8),
    /// The data type as NumPy spells it: `<f4`, `|u1`.
    pub descr: String,
    pub fortran_order: bool,
    pub shape: Vec<u64>,
    /// Where the data starts: the bytes before it.
    pub data_offset: u64,
}

impl NpyHeader {
    /// The number of elements, or `None` when it overflows.
    pub fn element_count(&self) -> Option<u64> {
        self.shape
            .iter()
            .try_fold(1u64, |count, &dim| count.checked_mul(dim))
    }

    /// The shape as Python writes it: `(3,)`, `(2, 3)`, `()`.
    pub fn shape_text(&self) -> String {
        shape_text(&self.shape)
    }
}

fn shape_text(shape: &[u64]) -> String {
    match shape {
        [one] => format!("({one},)"),
        dims => {
            let dims: Vec<String> = dims.iter().map(u64::to_string).collect();
            format!("({})", dims.join(", "))
        }
    }
}

/// Reads an `.npy` header from the start of `reader`. The error says what
/// is wrong, for a message about the file.
pub fn read_header(reader: &mut impl Read) -> Result<NpyHeader, String> {
    let mut start = [0u8; 8];
    read_fully(reader, &mut start, "its first 8 bytes")?;
    if &start[..6] != MAGIC {
        return Err("it is not an .npy file (it does not start with \\x93NUMPY)".to_string());
    }
    let version = (start[6], start[7]);
    let (length_bytes, utf8) = match version.0 {
        1 => (2, false),
        2 => (4, false),
        3 => (4, true),
        _ => {
            return Err(format!(
                "it is .npy version {}.{}; warpsim reads versions 1.0, 2.0 and 3.0",
                version.0, version.1
            ))
        }
    };
    let mut length = [0u8; 4];
    read_fully(reader, &mut length[..length_bytes], "its header length")?;
    let header_len = u32::from_le_bytes(length);
    if header_len > MAX_HEADER_BYTES {
        return Err(format!(
            "its header is {header_len} bytes long, more than the {MAX_HEADER_BYTES} warpsim reads"
        ));
    }
    let mut header = vec![0u8; header_len as usize];
    read_fully(reader, &mut header, "its header")?;
    // Versions 1.0 and 2.0 are Latin-1, 3.0 is UTF-8; every character the
    // three fields use is ASCII, so non-ASCII Latin-1 bytes can only be in
    // values we refuse anyway.
    let text = if utf8 {
        String::from_utf8(header).map_err(|_| "its header is not UTF-8".to_string())?
    } else {
        header.iter().map(|&byte| char::from(byte)).collect()
    };
    let fields = HeaderParser::new(&text)
        .dictionary()
        .map_err(|problem| format!("its header cannot be read: {problem}"))?;
    let mut descr = None;
    let mut fortran_order = None;
    let mut shape = None;
    for (key, value) in fields {
        match (key.as_str(), value) {
            ("descr", Value::Text(text)) => descr = Some(text),
            ("descr", Value::Other) => {
                return Err(
                    "it holds a structured data type; warpsim reads arrays of one number type"
                        .to_string(),
                )
            }
            ("fortran_order", Value::Bool(flag)) => fortran_order = Some(flag),
            ("shape", Value::Tuple(dims)) => shape = Some(dims),
            ("descr" | "fortran_order" | "shape", _) => {
                return Err(format!("its header's `{key}` has the wrong form"))
            }
            // Later versions may add keys; they do not change the data.
            _ => {}
        }
    }
    let missing = |key: &str| format!("its header has no `{key}`");
    Ok(NpyHeader {
        version,
        descr: descr.ok_or_else(|| missing("descr"))?,
        fortran_order: fortran_order.ok_or_else(|| missing("fortran_order"))?,
        shape: shape.ok_or_else(|| missing("shape"))?,
        data_offset: (6 + 2 + length_bytes) as u64 + u64::from(header_len),
    })
}

/// Fills `bytes` from `reader`, or says that the file ended in `what`.
fn read_fully(reader: &mut impl Read, bytes: &mut [u8], what: &str) -> Result<(), String> {
    reader.read_exact(bytes).map_err(|error| {
        if error.kind() == io::ErrorKind::UnexpectedEof {
            format!("it ends in {what}")
        } else {
            error.to_string()
        }
    })
}

/// The `descr`s a buffer of `element` reads: its little-endian type (one-byte
/// types have no byte order, `|`). A bfloat16 buffer reads raw 16-bit
/// patterns: NumPy has no bfloat16 of its own; `ml_dtypes.bfloat16` arrays
/// are saved as `<V2` (or `|V2`), and `array.view(np.uint16)` as `<u2`.
pub fn accepted_descrs(element: ElementType) -> &'static [&'static str] {
    match element {
        ElementType::U8 => &["|u1", "<u1"],
        ElementType::I8 => &["|i1", "<i1"],
        ElementType::U16 => &["<u2"],
        ElementType::I16 => &["<i2"],
        ElementType::U32 => &["<u4"],
        ElementType::I32 => &["<i4"],
        ElementType::U64 => &["<u8"],
        ElementType::I64 => &["<i8"],
        ElementType::F16 => &["<f2"],
        ElementType::BF16 => &["<u2", "<V2", "|V2"],
        ElementType::F32 => &["<f4"],
        ElementType::F64 => &["<f8"],
    }
}

/// The `descr` a dump of a buffer of `element` gets: the first it reads, so
/// a dump reads back. bfloat16 is written as `<u2` (its bits), which every
/// NumPy loads; `.view(ml_dtypes.bfloat16)` gives the values.
pub fn descr(element: ElementType) -> &'static str {
    accepted_descrs(element)[0]
}

/// Writes a version 1.0 header for `len` elements of type `descr`, in C
/// order. The header is padded so that the data starts at a multiple of 64
/// bytes, as NumPy does.
pub fn write_header(out: &mut impl Write, descr: &str, len: u64) -> io::Result<()> {
    let mut header = format!(
        "{{'descr': '{descr}', 'fortran_order': False, 'shape': {}, }}",
        shape_text(&[len])
    );
    // Magic, version and length take 10 bytes; the newline ends the header.
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    header.push('\n');
    let header_len = u16::try_from(header.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "the header is too long"))?;
    out.write_all(MAGIC)?;
    out.write_all(&[1, 0])?;
    out.write_all(&header_len.to_le_bytes())?;
    out.write_all(header.as_bytes())
}

/// A header value: what `descr`, `fortran_order` and `shape` may be.
#[derive(Debug, PartialEq)]
enum Value {
    Text(String),
    Bool(bool),
    Tuple(Vec<u64>),
    /// Anything else (a list, a dictionary): valid Python, but not a value
    /// this reader needs to understand.
    Other,
}

/// A parser of the dictionary literal of an `.npy` header, as
/// `numpy.lib.format` writes it (`repr` of a dict): string keys, and string,
/// boolean, tuple-of-integer or nested values.
struct HeaderParser<'a> {
    text: &'a str,
    position: usize,
}

impl<'a> HeaderParser<'a> {
    fn new(text: &'a str) -> HeaderParser<'a> {
        HeaderParser { text, position: 0 }
    }

    fn rest(&self) -> &'a str {
        &self.text[self.position..]
    }

    fn skip_space(&mut self) {
        let rest = self.rest();
        self.position += rest.len() - rest.trim_start().len();
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_space();
        self.rest().chars().next()
    }

    fn expect(&mut self, expected: char) -> Result<(), String> {
        match self.peek() {
            Some(found) if found == expected => {
                self.position += found.len_utf8();
                Ok(())
            }
            Some(found) => Err(format!("expected `{expected}`, found `{found}`")),
            None => Err(format!("expected `{expected}`, found the end")),
        }
    }

    /// `{ KEY: VALUE, ... }` with an optional trailing comma.
    fn dictionary(&mut self) -> Result<Vec<(String, Value)>, String> {
        self.expect('{')?;
        let mut entries = Vec::new();
        loop {
            if self.peek() == Some('}') {
                self.position += 1;
                break;
            }
            let key = self.string()?;
            self.expect(':')?;
            let value = self.value()?;
            entries.push((key, value));
            match self.peek() {
                Some(',') => self.position += 1,
                Some('}') => {}
                _ => return Err("expected `,` or `}` after a value".to_string()),
            }
        }
        if self.peek().is_some() {
            return Err("text after the dictionary".to_string());
        }
        Ok(entries)
    }

    fn value(&mut self) -> Result<Value, String> {
        match self.peek() {
            Some('\'' | '"') => Ok(Value::Text(self.string()?)),
            Some('(') => self.tuple(),
            Some('[' | '{') => {
                self.skip_nested()?;
                Ok(Value::Other)
            }
            Some(_) => {
                let word = self.word();
                match word {
                    "True" => Ok(Value::Bool(true)),
                    "False" => Ok(Value::Bool(false)),
                    "" => Err("expected a value".to_string()),
                    _ => Ok(Value::Other),
                }
            }
            None => Err("expected a value, found the end".to_string()),
        }
    }

    /// A run of letters, digits and underscores.
    fn word(&mut self) -> &'a str {
        self.skip_space();
        let rest = self.rest();
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        self.position += end;
        &rest[..end]
    }

    /// A quoted string without escapes (the keys and type codes have none).
    fn string(&mut self) -> Result<String, String> {
        let quote = match self.peek() {
            Some(quote @ ('\'' | '"')) => quote,
            _ => return Err("expected a quoted string".to_string()),
        };
        self.position += 1;
        let rest = self.rest();
        let end = rest
            .find(quote)
            .ok_or_else(|| "a string is not closed".to_string())?;
        let text = &rest[..end];
        if text.contains('\\') {
            return Err("a string has an escape".to_string());
        }
        self.position += end + 1;
        Ok(text.to_string())
    }

    /// `(INT, INT, ...)`, with an optional trailing comma; Python 2 wrote
    /// long integers with an `L`.
    fn tuple(&mut self) -> Result<Value, String> {
        self.expect('(')?;
        let mut dims = Vec::new();
        loop {
            if self.peek() == Some(')') {
                self.position += 1;
                return Ok(Value::Tuple(dims));
            }
            self.skip_space();
            let rest = self.rest();
            let end = rest.find([',', ')']).unwrap_or(rest.len());
            let word = rest[..end].trim();
            self.position += end;
            let digits = word.strip_suffix('L').unwrap_or(word);
            let dim = digits
                .parse::<u64>()
                .map_err(|_| format!("a shape holds `{word}`, not a size"))?;
            dims.push(dim);
            match self.peek() {
                Some(',') => self.position += 1,
                Some(')') => {}
                _ => return Err("expected `,` or `)` in a shape".to_string()),
            }
        }
    }

    /// Skips a bracketed value (`[...]`, `{...}`) and what it nests.
    fn skip_nested(&mut self) -> Result<(), String> {
        let mut depth = 0usize;
        let mut quote = None;
        for (offset, c) in self.rest().char_indices() {
            match (quote, c) {
                (Some(open), c) if c == open => quote = None,
                (Some(_), _) => {}
                (None, '\'' | '"') => quote = Some(c),
                (None, '[' | '{' | '(') => depth += 1,
                (None, ']' | '}' | ')') => {
                    depth -= 1;
                    if depth == 0 {
                        self.position += offset + 1;
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
        Err("a bracket is not closed".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header_of(bytes: &[u8]) -> Result<NpyHeader, String> {
        read_header(&mut &bytes[..])
    }

    /// A file of version `major` with header text `dict`.
    fn file(major: u8, dict: &str) -> Vec<u8> {
        let mut bytes = MAGIC.to_vec();
        bytes.extend([major, 0]);
        if major == 1 {
            bytes.extend((dict.len() as u16).to_le_bytes());
        } else {
            bytes.extend((dict.len() as u32).to_le_bytes());
        }
        bytes.extend(dict.as_bytes());
        bytes
    }

    #[test]
    fn written_headers_read_back_and_align_the_data() {
        for len in [0, 1, 3, 1 << 40] {
            let mut bytes = Vec::new();
            write_header(&mut bytes, "<f4", len).unwrap();
            assert_eq!(bytes.len() % 64, 0);
            assert_eq!(bytes.last(), Some(&b'\n'));
            let header = header_of(&bytes).unwrap();
            assert_eq!(header.version, (1, 0));
            assert_eq!(header.descr, "<f4");
            assert!(!header.fortran_order);
            assert_eq!(header.shape, [len]);
            assert_eq!(header.data_offset, bytes.len() as u64);
        }
        // What NumPy 1.x and 2.x write for np.save("a.npy", np.arange(3, dtype=np.float32)).
        let mut numpy = file(
            1,
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
        );
        numpy.extend([b' '; 60]);
        let len = numpy.len() - 10;
        numpy[8..10].copy_from_slice(&(len as u16).to_le_bytes());
        let header = header_of(&numpy).unwrap();
        assert_eq!(header.shape, [3]);
        assert_eq!(header.data_offset, numpy.len() as u64);
    }

    #[test]
    fn versions_two_and_three_and_other_shapes_read() {
        let two = file(
            2,
            "{\"shape\": (2, 3L), \"fortran_order\": True, \"descr\": \"<i8\"}",
        );
        let header = header_of(&two).unwrap();
        assert_eq!(header.shape, [2, 3]);
        assert_eq!(header.element_count(), Some(6));
        assert!(header.fortran_order);
        assert_eq!(header.data_offset, two.len() as u64);
        let scalar = header_of(&file(
            3,
            "{'descr': '|u1', 'fortran_order': False, 'shape': (), 'later': [1, {'a': ')'}]}",
        ))
        .unwrap();
        assert_eq!(scalar.shape, Vec::<u64>::new());
        assert_eq!(scalar.element_count(), Some(1));
        assert_eq!(scalar.shape_text(), "()");
    }

    #[test]
    fn bad_headers_say_what_is_wrong() {
        let problem = |bytes: &[u8]| header_of(bytes).unwrap_err();
        assert!(problem(b"PK\x03\x04 a zip").contains("not an .npy file"));
        assert!(problem(b"\x93NUMPY").contains("ends in its first 8 bytes"));
        assert!(problem(&file(4, "{}")).contains("version 4.0"));
        assert!(problem(&file(1, "{'descr': '<f4'")).contains("cannot be read"));
        let structured = "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,)}";
        assert!(problem(&file(1, structured)).contains("structured"));
        let no_shape = "{'descr': '<f4', 'fortran_order': False}";
        assert!(problem(&file(1, no_shape)).contains("no `shape`"));
        let bad_shape = "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}";
        assert!(problem(&file(1, bad_shape)).contains("`-1`"));
        let mut short = file(1, "{}");
        short[8] = 200;
        assert!(problem(&short).contains("ends in its header"));
    }

    #[test]
    fn every_element_type_writes_a_descr_it_reads() {
        use ElementType::*;
        for element in [U8, U16, U32, U64, I8, I16, I32, I64, F16, BF16, F32, F64] {
            assert!(accepted_descrs(element).contains(&descr(element)));
            let size = descr(element)[2..].parse::<u64>().unwrap();
            assert_eq!(size, element.size(), "{element}");
        }
        assert_eq!(descr(F16), "<f2");
        assert_eq!(descr(BF16), "<u2");
        assert_eq!(descr(U8), "|u1");
    }
}
