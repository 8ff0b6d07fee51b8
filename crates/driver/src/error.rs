//! Errors of bad input (exit code 2): unreadable files, malformed TOML, IR
//! that does not parse or verify, launches that cannot start. Each names the
//! file and, where there is one, the line, and shows that line the way a
//! compiler does.

use std::path::PathBuf;

use crate::long_lines::clip_message;

/// Messages may quote input of any length (a name, a value, a token): every
/// form is cut to [`crate::long_lines::MAX_MESSAGE_CHARS`] a line.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("{}", clip_message(&format!("{}: cannot read: {message}", path.display())))]
    Io { path: PathBuf, message: String },
    /// A problem at a place in a file: a key or value of a TOML file (a
    /// launch file or a machine configuration), or a line of the kernel
    /// source. `summary` is one line, `FILE:LINE:COLUMN: MESSAGE`; `rendered`
    /// is the whole message with the line shown and the spot marked.
    #[error("{}", clip_message(summary))]
    Located { summary: String, rendered: String },
    /// The launch asks for something impossible, with no line to point at.
    #[error("{}", clip_message(&format!("{}: {message}", path.display())))]
    Launch { path: PathBuf, message: String },
}

impl InputError {
    /// The message as the command prints it: compiler-style, with the line at
    /// fault shown where there is one, ending with a newline.
    pub fn render(&self) -> String {
        match self {
            InputError::Located { rendered, .. } => clip_message(rendered),
            other => format!("error: {other}\n"),
        }
    }
}

/// 1-based line and column of a byte offset.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = crate::diagnostics::floor_char_boundary(text, offset);
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map_or(0, |rest| rest.chars().count())
        + 1;
    (line, column)
}
