//! Splits `.kir` text into tokens that carry their line and column, so that
//! every parse error can point at the offending character.

use crate::error::ParseError;

#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    /// A word: mnemonic with its modifiers (`ld.shared.f32`), label or variable name.
    Word(String),
    /// `.kernel`, `.reg`, `.u32`, ...: a dot followed by a word, without the dot.
    Directive(String),
    /// `%r1`, `%tid.x`: the whole name including `%`.
    Register(String),
    /// An integer literal (decimal, or hex with `0x`); the sign is a separate token.
    Integer(u64),
    /// A decimal float literal, kept as written so that it can be read as
    /// `f32` or `f64` with a single rounding.
    Float(String),
    /// `0fXXXXXXXX` (f32 bits) or `0dXXXXXXXXXXXXXXXX` (f64 bits).
    FloatBits {
        bits: u64,
        double: bool,
    },
    String(String),
    Punct(char),
    End,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub kind: TokenKind,
    pub line: u32,
    pub column: u32,
    pub length: u32,
}

impl TokenKind {
    /// The token as a message quotes it; a long name or string is cut.
    pub fn describe(&self) -> String {
        match self {
            TokenKind::Word(word) => format!("`{}`", quoted(word)),
            TokenKind::Directive(word) => format!("`.{}`", quoted(word)),
            TokenKind::Register(name) => format!("`{}`", quoted(name)),
            TokenKind::Integer(value) => format!("`{value}`"),
            TokenKind::Float(value) => format!("`{value}`"),
            TokenKind::FloatBits { bits, double } => {
                if *double {
                    format!("`0d{bits:016X}`")
                } else {
                    format!("`0f{bits:08X}`")
                }
            }
            TokenKind::String(text) => format!("\"{}\"", quoted(text)),
            TokenKind::Punct(c) => format!("`{c}`"),
            TokenKind::End => "the end of the file".to_string(),
        }
    }
}

/// Characters of a token a message quotes; the rest is left out with `…`.
const MAX_QUOTED_CHARS: usize = 60;

/// `text`, or its first [`MAX_QUOTED_CHARS`] characters and `…`: a generated
/// source may hold a name of megabytes.
fn quoted(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(MAX_QUOTED_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]).into(),
        None => text.into(),
    }
}

fn is_word_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == '$'
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$'
}

/// Tokenizes a whole file. Fails on the first character that starts no token.
pub fn tokenize(file: &str, text: &str) -> Result<Vec<Token>, ParseError> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut index = 0;
    let mut line = 1u32;
    let mut line_start = 0usize;
    let error = |line: u32, column: u32, message: String| ParseError {
        file: file.to_string(),
        line,
        column,
        length: 1,
        message,
    };
    while index < chars.len() {
        let c = chars[index];
        let column = (index - line_start + 1) as u32;
        if c == '\n' {
            index += 1;
            line += 1;
            line_start = index;
            continue;
        }
        if c.is_whitespace() {
            index += 1;
            continue;
        }
        if c == '/' && chars.get(index + 1) == Some(&'/') {
            while index < chars.len() && chars[index] != '\n' {
                index += 1;
            }
            continue;
        }
        if c == '/' && chars.get(index + 1) == Some(&'*') {
            let (start_line, start_column) = (line, column);
            index += 2;
            loop {
                if index + 1 >= chars.len() {
                    return Err(error(
                        start_line,
                        start_column,
                        "unterminated block comment".to_string(),
                    ));
                }
                if chars[index] == '*' && chars[index + 1] == '/' {
                    index += 2;
                    break;
                }
                if chars[index] == '\n' {
                    line += 1;
                    line_start = index + 1;
                }
                index += 1;
            }
            continue;
        }
        let start = index;
        let kind = if is_word_start(c) {
            while index < chars.len() {
                if is_word_char(chars[index]) || chars[index] == '.' {
                    index += 1;
                } else if chars[index] == ':'
                    && chars.get(index + 1) == Some(&':')
                    && chars.get(index + 2).is_some_and(|&next| is_word_char(next))
                {
                    // A qualifier with a sub-qualifier, as in
                    // `mbarrier.init.shared::cta.b64` (PTX ISA 9.7.13.15):
                    // one opcode word.
                    index += 2;
                } else {
                    break;
                }
            }
            TokenKind::Word(chars[start..index].iter().collect())
        } else if c == '.' && chars.get(index + 1).is_some_and(|&next| is_word_char(next)) {
            index += 1;
            while index < chars.len() && is_word_char(chars[index]) {
                index += 1;
            }
            TokenKind::Directive(chars[start + 1..index].iter().collect())
        } else if c == '%' {
            index += 1;
            while index < chars.len() && is_word_char(chars[index]) {
                index += 1;
            }
            if index == start + 1 {
                return Err(error(
                    line,
                    column,
                    "expected a register name after `%`".to_string(),
                ));
            }
            // `%tid.x`: a dimension suffix belongs to the special register.
            if chars.get(index) == Some(&'.')
                && chars
                    .get(index + 1)
                    .is_some_and(|c| matches!(c, 'x' | 'y' | 'z'))
                && !chars.get(index + 2).is_some_and(|&c| is_word_char(c))
            {
                index += 2;
            }
            TokenKind::Register(chars[start..index].iter().collect())
        } else if c.is_ascii_digit() {
            lex_number(&chars, &mut index).map_err(|message| error(line, column, message))?
        } else if c == '"' {
            index += 1;
            while index < chars.len() && chars[index] != '"' && chars[index] != '\n' {
                index += 1;
            }
            if chars.get(index) != Some(&'"') {
                return Err(error(line, column, "unterminated string".to_string()));
            }
            index += 1;
            TokenKind::String(chars[start + 1..index - 1].iter().collect())
        } else if ",;:[]{}()@!+-|<>=".contains(c) {
            index += 1;
            TokenKind::Punct(c)
        } else {
            return Err(error(
                line,
                column,
                format!("unexpected character `{}`", c.escape_debug()),
            ));
        };
        tokens.push(Token {
            kind,
            line,
            column,
            length: (index - start) as u32,
        });
    }
    tokens.push(Token {
        kind: TokenKind::End,
        line,
        column: (index - line_start + 1) as u32,
        length: 1,
    });
    Ok(tokens)
}

fn lex_number(chars: &[char], index: &mut usize) -> Result<TokenKind, String> {
    let start = *index;
    let next = chars.get(start + 1).copied();
    if chars[start] == '0' && matches!(next, Some('x' | 'X' | 'f' | 'F' | 'd' | 'D')) {
        let marker = next.unwrap_or('x').to_ascii_lowercase();
        *index += 2;
        let digits_start = *index;
        while *index < chars.len() && chars[*index].is_ascii_hexdigit() {
            *index += 1;
        }
        let digits: String = chars[digits_start..*index].iter().collect();
        if marker == 'x' {
            skip_unsigned_suffix(chars, index);
        }
        if *index < chars.len() && is_word_char(chars[*index]) {
            return Err(format!(
                "malformed number: unexpected `{}` after `{}`",
                chars[*index],
                chars[start..*index].iter().collect::<String>()
            ));
        }
        match marker {
            'f' if digits.len() != 8 => {
                return Err("a `0f` float literal needs exactly 8 hex digits".to_string())
            }
            'd' if digits.len() != 16 => {
                return Err("a `0d` float literal needs exactly 16 hex digits".to_string())
            }
            _ => {}
        }
        let value = u64::from_str_radix(&digits, 16)
            .map_err(|_| format!("malformed hexadecimal number `0{marker}{digits}`"))?;
        return Ok(match marker {
            'x' => TokenKind::Integer(value),
            'f' => TokenKind::FloatBits {
                bits: value,
                double: false,
            },
            _ => TokenKind::FloatBits {
                bits: value,
                double: true,
            },
        });
    }
    while *index < chars.len() && chars[*index].is_ascii_digit() {
        *index += 1;
    }
    let mut is_float = false;
    if chars.get(*index) == Some(&'.') && chars.get(*index + 1).is_some_and(char::is_ascii_digit) {
        is_float = true;
        *index += 1;
        while *index < chars.len() && chars[*index].is_ascii_digit() {
            *index += 1;
        }
    }
    if matches!(chars.get(*index), Some('e' | 'E')) {
        let mut lookahead = *index + 1;
        if matches!(chars.get(lookahead), Some('+' | '-')) {
            lookahead += 1;
        }
        if chars.get(lookahead).is_some_and(char::is_ascii_digit) {
            is_float = true;
            *index = lookahead;
            while *index < chars.len() && chars[*index].is_ascii_digit() {
                *index += 1;
            }
        }
    }
    let text: String = chars[start..*index].iter().collect();
    if !is_float {
        skip_unsigned_suffix(chars, index);
    }
    if *index < chars.len() && is_word_char(chars[*index]) {
        return Err(format!(
            "malformed number: unexpected `{}` after `{text}`",
            chars[*index]
        ));
    }
    if is_float {
        match text.parse::<f64>() {
            Ok(_) => Ok(TokenKind::Float(text)),
            Err(_) => Err(format!("malformed float `{text}`")),
        }
    } else {
        text.parse::<u64>()
            .map(TokenKind::Integer)
            .map_err(|_| format!("integer `{text}` does not fit in 64 bits"))
    }
}

/// PTX marks an integer literal unsigned with a `U` after its digits
/// (`mov.b16 one, 0x3f80U;` in `cuda_bf16.h`'s inline PTX). The value is the
/// same either way: the instruction's type says how its bits are read.
fn skip_unsigned_suffix(chars: &[char], index: &mut usize) {
    if chars.get(*index) == Some(&'U') {
        *index += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_quote_long_tokens_cut() {
        assert_eq!(TokenKind::Word("add".to_string()).describe(), "`add`");
        let long = TokenKind::Word("w".repeat(3_000_000)).describe();
        assert_eq!(long, format!("`{}…`", "w".repeat(MAX_QUOTED_CHARS)));
        let string = TokenKind::String("é".repeat(100)).describe();
        assert_eq!(string.chars().count(), MAX_QUOTED_CHARS + 3);
    }

    /// `0x3f80U` and `7U` are the integers 0x3f80 and 7; a `U` inside a
    /// number, or after a float, is still an error.
    #[test]
    fn integers_take_an_unsigned_suffix() {
        let kinds = |text: &str| {
            tokenize("t", text).map(|tokens| {
                tokens
                    .into_iter()
                    .map(|token| token.kind)
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(
            kinds("0x3f80U, 7U").unwrap(),
            [
                TokenKind::Integer(0x3f80),
                TokenKind::Punct(','),
                TokenKind::Integer(7),
                TokenKind::End
            ]
        );
        for bad in ["0x3fU0", "7UU", "1.5U", "0f3F800000U"] {
            assert!(kinds(bad).is_err(), "{bad}");
        }
    }
}
