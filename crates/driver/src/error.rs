//! Errors of bad input (exit code 2): unreadable files, malformed TOML, IR
//! that does not parse or verify, launches that cannot start. Each names the
//! file and, where there is one, the line.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("{}: cannot read: {message}", path.display())]
    Io { path: PathBuf, message: String },
    /// A TOML file that does not parse or has unknown keys or bad values.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Toml {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    /// The kernel source does not parse or verify; `rendered` shows the
    /// source lines with the problems marked.
    #[error("{rendered}")]
    Source { summary: String, rendered: String },
    /// The launch file is well-formed TOML but asks for something impossible.
    #[error("{}: {message}", path.display())]
    Launch { path: PathBuf, message: String },
    #[error("{0}")]
    Other(String),
}

/// Parses TOML into `T`, turning the error's byte span into a line and column.
pub fn parse_toml<T: DeserializeOwned>(path: &Path, text: &str) -> Result<T, InputError> {
    toml::from_str(text).map_err(|error| {
        let (line, column) = error
            .span()
            .map(|span| line_column(text, span.start))
            .unwrap_or((1, 1));
        InputError::Toml {
            path: path.to_path_buf(),
            line,
            column,
            message: error.message().trim().to_string(),
        }
    })
}

/// 1-based line and column of a byte offset.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map_or(0, |rest| rest.chars().count())
        + 1;
    (line, column)
}
