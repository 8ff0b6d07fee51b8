//! TOML files (launch files, machine configurations) kept with their text,
//! so that every error can point at the line at fault: syntax and type errors
//! at the span the parser gives, and problems found later (a kernel that is
//! not in the source, a grid too large, a bank count that is no power of two)
//! at the key they come from, looked up by its path in the parsed document.

use std::cell::OnceCell;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::de::{DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use toml::Spanned;

use crate::diagnostics::{line_span, render_labels, FileLabel};
use crate::error::{line_column, InputError};

/// A TOML file's path and text.
pub struct TomlFile {
    path: PathBuf,
    text: String,
    /// Where each key is, parsed when first needed (`None`: it did not parse).
    keys: OnceCell<Option<Node>>,
}

impl TomlFile {
    /// Reads `path`.
    pub fn read(path: &Path) -> Result<TomlFile, InputError> {
        let text = std::fs::read_to_string(path).map_err(|error| InputError::Io {
            path: path.to_path_buf(),
            message: error.to_string(),
        })?;
        Ok(TomlFile::new(path, text))
    }

    /// A file already in memory.
    pub fn new(path: &Path, text: String) -> TomlFile {
        TomlFile {
            path: path.to_path_buf(),
            text,
            keys: OnceCell::new(),
        }
    }

    /// The name messages give the file: its path as given.
    pub fn name(&self) -> String {
        self.path.display().to_string()
    }

    /// Parses the file into `T`. Errors show the line at fault; their first
    /// line of text is the message, the rest (what the parser expected)
    /// labels the spot.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, InputError> {
        toml::from_str(&self.text).map_err(|error| {
            let text = error.message().trim();
            let (message, detail) = match text.split_once('\n') {
                Some((first, rest)) => (first.trim(), rest.trim().replace('\n', "; ")),
                None => (text, String::new()),
            };
            match error.span() {
                // A key missing from the top level has no place in the file
                // (the parser gives the top-level keys' span, from offset 0;
                // a table's span starts with its header).
                Some(span)
                    if !(span.start == 0
                        && !self.text.starts_with('[')
                        && message.starts_with("missing field")) =>
                {
                    let label = FileLabel {
                        file: 0,
                        span: self.header_only(span),
                        message: detail,
                        primary: true,
                    };
                    self.located(message, vec![label], Vec::new(), Vec::new())
                }
                _ => InputError::Located {
                    summary: format!("{}:1:1: {message}", self.name()),
                    rendered: format!("error: {}:1:1: {message}\n", self.name()),
                },
            }
        })
    }

    /// A table's span (from its header to its last key) cut to its header.
    fn header_only(&self, span: Range<usize>) -> Range<usize> {
        let rest = self.text.get(span.start..span.end).unwrap_or("");
        if !rest.starts_with('[') {
            return span;
        }
        match rest.find(']') {
            Some(close) => {
                let close = close + if rest.starts_with("[[") { 2 } else { 1 };
                span.start..span.start + close.min(rest.len())
            }
            None => span,
        }
    }

    /// The span of the key at `path` (table keys by name, array elements by
    /// their index, e.g. `["args", "1"]`): the key itself for a key, the
    /// value for an array element.
    pub fn key_span(&self, path: &[&str]) -> Option<Range<usize>> {
        let root = self
            .keys
            .get_or_init(|| toml::from_str::<Node>(&self.text).ok())
            .as_ref()?;
        let mut node = root;
        let mut span = None;
        for part in path {
            match node {
                Node::Table(entries) => {
                    let (key, value) = entries.iter().find(|(key, _)| key.get_ref() == part)?;
                    span = Some(key.span());
                    node = value;
                }
                Node::Array(elements) => {
                    let element = elements.get(part.parse::<usize>().ok()?)?;
                    span = Some(element.span());
                    node = element.get_ref();
                }
                Node::Leaf => return None,
            }
        }
        span
    }

    /// An error to be placed with [`FileError::at`].
    pub fn error(&self, message: impl Into<String>) -> FileError<'_> {
        FileError {
            file: self,
            message: message.into(),
            labels: Vec::new(),
            notes: Vec::new(),
            others: Vec::new(),
        }
    }

    /// An error with its labels in this file (file 0) and in `others`
    /// (files 1 and on).
    fn located(
        &self,
        message: &str,
        labels: Vec<FileLabel>,
        notes: Vec<String>,
        others: Vec<(String, String)>,
    ) -> InputError {
        let files: Vec<(String, String)> = std::iter::once((self.name(), self.text.clone()))
            .chain(others)
            .collect();
        let place = labels
            .iter()
            .find(|label| label.primary)
            .or(labels.first())
            .map_or((0, 0), |label| (label.file, label.span.start));
        let (name, text) = &files[place.0];
        let (line, column) = line_column(text, place.1);
        InputError::Located {
            summary: format!("{name}:{line}:{column}: {message}"),
            rendered: render_labels(&files, message, &labels, &notes),
        }
    }
}

/// An error about a TOML file, being given its place.
pub struct FileError<'a> {
    file: &'a TomlFile,
    message: String,
    labels: Vec<FileLabel>,
    notes: Vec<String>,
    /// Other files shown (names and texts), labels' files 1 and on.
    others: Vec<(String, String)>,
}

impl FileError<'_> {
    /// Marks the key at `path` (or, when it is not in the file, the nearest
    /// enclosing key that is) as the place of the error.
    pub fn at(self, path: &[&str], label: impl Into<String>) -> Self {
        self.label(path, label.into(), true)
    }

    /// Marks the key at `path` as related to the error.
    pub fn also_at(self, path: &[&str], label: impl Into<String>) -> Self {
        self.label(path, label.into(), false)
    }

    /// Marks line `line` of another file (the kernel source: `name`, `text`)
    /// as related to the error.
    pub fn also_at_line(
        mut self,
        name: &str,
        text: &str,
        line: u32,
        label: impl Into<String>,
    ) -> Self {
        let Some(span) = line_span(text, line) else {
            return self;
        };
        let file = match self.others.iter().position(|(other, _)| other == name) {
            Some(index) => index + 1,
            None => {
                self.others.push((name.to_string(), text.to_string()));
                self.others.len()
            }
        };
        self.labels.push(FileLabel {
            file,
            span,
            message: label.into(),
            primary: false,
        });
        self
    }

    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    fn label(mut self, path: &[&str], label: String, primary: bool) -> Self {
        let span = (1..=path.len())
            .rev()
            .find_map(|len| self.file.key_span(&path[..len]));
        if let Some(span) = span {
            let primary = primary && !self.labels.iter().any(|label| label.primary);
            self.labels.push(FileLabel {
                file: 0,
                span,
                message: label,
                primary,
            });
        }
        self
    }

    /// The error, showing the marked lines; without any, it names the file only.
    pub fn into_error(mut self) -> InputError {
        if self.labels.is_empty() {
            let mut message = self.message;
            for note in &self.notes {
                message.push_str("; ");
                message.push_str(note);
            }
            return InputError::Launch {
                path: self.file.path.clone(),
                message,
            };
        }
        if !self.labels.iter().any(|label| label.primary) {
            self.labels[0].primary = true;
        }
        self.file
            .located(&self.message, self.labels, self.notes, self.others)
    }
}

impl From<FileError<'_>> for InputError {
    fn from(error: FileError<'_>) -> InputError {
        error.into_error()
    }
}

/// A parsed TOML document reduced to where its keys are.
enum Node {
    Table(Vec<(Spanned<String>, Node)>),
    Array(Vec<Spanned<Node>>),
    Leaf,
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Node, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a TOML value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Node, E> {
        Ok(Node::Leaf)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Node, E> {
        Ok(Node::Leaf)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Node, E> {
        Ok(Node::Leaf)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Node, E> {
        Ok(Node::Leaf)
    }

    fn visit_str<E>(self, _: &str) -> Result<Node, E> {
        Ok(Node::Leaf)
    }

    // Array elements are values, which always have a span. Table values are
    // not asked for theirs: tables made by a header (`[buffers.a]` makes
    // `buffers`) may have none. Their keys always do.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut elements = Vec::new();
        while let Some(element) = seq.next_element()? {
            elements.push(element);
        }
        Ok(Node::Array(elements))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry()? {
            entries.push(entry);
        }
        Ok(Node::Table(entries))
    }
}
