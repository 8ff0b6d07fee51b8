//! The `*.litmus` file format (TOML) and its expansion into concrete [`LitmusTest`]s.
//!
//! # Format
//!
//! - `name` (required) and `doc` (optional): the test's name and a sentence about it.
//! - `placements` (optional, default `["warp", "block", "grid"]`): the placements to expand.
//!   Thread `i` (in `[[thread]]` order) runs at block 0, warp 0, lane `i` for `"warp"`; at
//!   block 0, warp `i`, lane 0 for `"block"`; and at block `i`, warp 0, lane 0 for `"grid"`. A
//!   `[[thread]]` may give `placement = { block = B, warp = W, lane = L }` instead, which then
//!   holds for every placement.
//! - `[locations]`: every location the bodies use, with its initial `u32` value, in the order
//!   that outcomes report them.
//! - `[[thread]]` with `body`: one PTX instruction per line (see [`crate::instruction`]); blank
//!   lines and `//` comments are ignored, and so is a line that substitution leaves empty.
//!   Registers must be written before they are read. At every placement, the threads that share
//!   a block must execute the same number of `bar.sync`, since each barrier waits for all of
//!   them.
//! - `[exists]`: the outcome to look for, `"T:rN" = value` for register `rN` of thread `T` at
//!   the end, or `location = value` for a location's final value.
//! - `[[variant]]` tables: `name`, an optional `expect`, and a string for every `{placeholder}`
//!   the bodies use. Every variant must define every placeholder that the bodies use. `expect`
//!   is `"allowed"` or `"forbidden"` for every placement, or a table per placement such as
//!   `{ warp = "forbidden", grid = "allowed" }`. A file without variants is one test; it may
//!   carry a top-level `expect`.
//!
//! Expanded tests are named `<name>+<variant>@<placement>`, or `<name>@<placement>` without
//! variants. Every problem is reported as a [`LitmusError`] naming the file and line; nothing in
//! here panics on bad input.
//!
//! A body's lines are numbered from the line of its opening quotes (plus one when the string
//! starts with a newline, which TOML drops). A basic multi-line string that joins lines with a
//! trailing backslash would shift later numbers; litmus bodies have no reason to do that.

use std::ops::Range;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::error::{LitmusError, LitmusErrorKind, PlaceholderContext};
use crate::instruction::{is_identifier, parse_instruction, parse_register};
use crate::litmus_test::{
    Event, Expectation, Instruction, LitmusTest, Location, LocationId, Observable, Placement,
    Register, Thread, ThreadId,
};

/// Lanes per warp, and warps per block at most (1024 threads).
const LANES_PER_WARP: u32 = 32;
const WARPS_PER_BLOCK: u32 = 32;

/// How the threads of a test are spread over the launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PlacementKind {
    /// All threads in lanes of one warp.
    Warp,
    /// All threads in one block, one warp each.
    Block,
    /// Every thread in its own block.
    Grid,
}

impl PlacementKind {
    pub const ALL: [PlacementKind; 3] = [
        PlacementKind::Warp,
        PlacementKind::Block,
        PlacementKind::Grid,
    ];

    /// The name the file format uses: `warp`, `block` or `grid`.
    pub fn name(self) -> &'static str {
        match self {
            PlacementKind::Warp => "warp",
            PlacementKind::Block => "block",
            PlacementKind::Grid => "grid",
        }
    }

    pub fn from_name(name: &str) -> Option<PlacementKind> {
        PlacementKind::ALL
            .into_iter()
            .find(|kind| kind.name() == name)
    }

    /// Where thread `index` runs when the file gives it no explicit placement.
    pub fn place(self, index: u32) -> Placement {
        match self {
            PlacementKind::Warp => Placement {
                block: 0,
                warp: 0,
                lane: index,
            },
            PlacementKind::Block => Placement {
                block: 0,
                warp: index,
                lane: 0,
            },
            PlacementKind::Grid => Placement {
                block: index,
                warp: 0,
                lane: 0,
            },
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// A parsed and fully checked `.litmus` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LitmusFile {
    path: PathBuf,
    name: String,
    doc: String,
    placements: Vec<PlacementKind>,
    variant_names: Vec<String>,
    tests: Vec<LitmusTest>,
}

impl LitmusFile {
    /// The file's `name`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The file's `doc`, or an empty string.
    pub fn doc(&self) -> &str {
        &self.doc
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The placements the file expands to, in the order it lists them.
    pub fn placements(&self) -> &[PlacementKind] {
        &self.placements
    }

    /// The names of the file's variants, in file order (empty for a file without variants).
    pub fn variant_names(&self) -> &[String] {
        &self.variant_names
    }

    /// One test per variant and placement, variants outermost. [`parse_file`] has already
    /// checked every one of them, so this does not fail for a file it returned.
    pub fn expand(&self) -> Result<Vec<LitmusTest>, LitmusError> {
        Ok(self.tests.clone())
    }
}

/// Parses a `.litmus` file. `path` is only used to name the file in tests and errors.
pub fn parse_file(path: &Path, text: &str) -> Result<LitmusFile, LitmusError> {
    let source = Source { path, text };
    let table: FileTable = toml::from_str(text).map_err(|error| {
        let line = error.span().map_or(1, |span| source.line_at(span.start));
        source.error(
            line,
            LitmusErrorKind::Toml {
                message: error.message().trim().to_string(),
            },
        )
    })?;
    FileBuilder { source, table }.build()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileTable {
    name: Spanned<String>,
    #[serde(default)]
    doc: Option<String>,
    #[serde(default)]
    placements: Option<Spanned<Vec<Spanned<String>>>>,
    #[serde(default)]
    locations: Option<IndexMap<String, Spanned<u32>>>,
    #[serde(default, rename = "thread")]
    threads: Vec<Spanned<ThreadTable>>,
    #[serde(default)]
    exists: Option<IndexMap<String, Spanned<u32>>>,
    #[serde(default, rename = "variant")]
    variants: Vec<Spanned<IndexMap<String, Spanned<toml::Value>>>>,
    #[serde(default)]
    expect: Option<Spanned<toml::Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ThreadTable {
    body: Spanned<String>,
    #[serde(default)]
    placement: Option<Spanned<PlacementTable>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlacementTable {
    block: u32,
    warp: u32,
    lane: u32,
}

/// The file being parsed, for line numbers and errors.
#[derive(Clone, Copy)]
struct Source<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Source<'_> {
    /// The 1-based line holding byte `offset`.
    fn line_at(&self, offset: usize) -> u32 {
        let end = offset.min(self.text.len());
        let newlines = self.text.as_bytes()[..end]
            .iter()
            .filter(|&&byte| byte == b'\n')
            .count();
        u32::try_from(newlines + 1).unwrap_or(u32::MAX)
    }

    fn line_of<T>(&self, spanned: &Spanned<T>) -> u32 {
        self.line_at(spanned.span().start)
    }

    fn error(&self, line: u32, kind: LitmusErrorKind) -> LitmusError {
        LitmusError {
            path: self.path.to_path_buf(),
            line,
            kind,
        }
    }

    /// The line of the first character of a string value's content.
    fn content_start_line(&self, span: &Range<usize>) -> (u32, bool) {
        let line = self.line_at(span.start);
        let raw = self.text.get(span.start..).unwrap_or_default();
        if let Some(after) = raw
            .strip_prefix("\"\"\"")
            .or_else(|| raw.strip_prefix("'''"))
        {
            // TOML drops a newline right after the opening delimiter of a multi-line string.
            let skips_newline = after.starts_with('\n') || after.starts_with("\r\n");
            (line + u32::from(skips_newline), true)
        } else {
            // A one-line string keeps all of its (escaped) lines on the line of the key.
            (line, false)
        }
    }
}

/// One source line of a thread body.
struct BodyLine {
    text: String,
    line: u32,
}

/// A thread as written: its body lines and an optional explicit placement.
struct ThreadSource {
    lines: Vec<BodyLine>,
    placement: Option<Placement>,
    /// The line of the thread's `body`, for errors about the whole thread.
    line: u32,
}

/// A variant as written (or the single implicit variant of a file without any).
struct VariantSource {
    name: Option<String>,
    placeholders: IndexMap<String, String>,
    expect: [Option<Expectation>; 3],
}

/// An `[exists]` entry before it is checked against the registers a variant writes.
struct ExistsEntry {
    key: String,
    observable: Observable,
    value: u32,
    line: u32,
}

struct FileBuilder<'a> {
    source: Source<'a>,
    table: FileTable,
}

impl FileBuilder<'_> {
    fn error(&self, line: u32, kind: LitmusErrorKind) -> LitmusError {
        self.source.error(line, kind)
    }

    fn build(self) -> Result<LitmusFile, LitmusError> {
        let name_line = self.source.line_of(&self.table.name);
        let name = self.table.name.get_ref().clone();
        if name.is_empty() || name.chars().any(char::is_whitespace) {
            return Err(self.error(
                name_line,
                LitmusErrorKind::BadStructure {
                    reason: format!("the test name `{name}` must be non-empty and without spaces"),
                },
            ));
        }
        let placements = self.placements()?;
        let locations = self.locations()?;
        let threads = self.threads(name_line)?;
        let exists = self.exists(&locations, threads.len())?;
        let variants = self.variants(&placements)?;

        let mut tests = Vec::new();
        for variant in &variants {
            let bodies = threads
                .iter()
                .enumerate()
                .map(|(index, thread)| self.thread_instructions(index, thread, variant, &locations))
                .collect::<Result<Vec<_>, _>>()?;
            let exists_values = self.check_exists(&exists, &bodies, variant)?;
            for &kind in &placements {
                let placed = self.place_threads(kind, &threads, bodies.clone())?;
                tests.push(LitmusTest {
                    name: match &variant.name {
                        Some(variant_name) => format!("{name}+{variant_name}@{}", kind.name()),
                        None => format!("{name}@{}", kind.name()),
                    },
                    path: self.source.path.to_path_buf(),
                    locations: locations.clone(),
                    threads: placed,
                    exists: exists_values.clone(),
                    expect: variant.expect[kind.index()],
                });
            }
        }
        Ok(LitmusFile {
            path: self.source.path.to_path_buf(),
            name,
            doc: self.table.doc.clone().unwrap_or_default(),
            placements,
            variant_names: variants
                .iter()
                .filter_map(|variant| variant.name.clone())
                .collect(),
            tests,
        })
    }

    fn placements(&self) -> Result<Vec<PlacementKind>, LitmusError> {
        let Some(list) = &self.table.placements else {
            return Ok(PlacementKind::ALL.to_vec());
        };
        let mut kinds = Vec::new();
        for entry in list.get_ref() {
            let line = self.source.line_of(entry);
            let kind = PlacementKind::from_name(entry.get_ref()).ok_or_else(|| {
                self.error(
                    line,
                    LitmusErrorKind::BadPlacement {
                        reason: format!("`{}` is not one of warp, block, grid", entry.get_ref()),
                    },
                )
            })?;
            if kinds.contains(&kind) {
                return Err(self.error(
                    line,
                    LitmusErrorKind::BadPlacement {
                        reason: format!("`{}` is listed twice", kind.name()),
                    },
                ));
            }
            kinds.push(kind);
        }
        if kinds.is_empty() {
            return Err(self.error(
                self.source.line_of(list),
                LitmusErrorKind::BadPlacement {
                    reason: "the placement list is empty".to_string(),
                },
            ));
        }
        Ok(kinds)
    }

    fn locations(&self) -> Result<Vec<Location>, LitmusError> {
        let Some(table) = &self.table.locations else {
            return Ok(Vec::new());
        };
        let mut locations = Vec::new();
        for (name, init) in table {
            if !is_identifier(name) {
                return Err(self.error(
                    self.source.line_of(init),
                    LitmusErrorKind::BadStructure {
                        reason: format!(
                            "location name `{name}` must be a letter or `_` followed by letters, digits or `_`"
                        ),
                    },
                ));
            }
            locations.push(Location {
                name: name.clone(),
                init: *init.get_ref(),
            });
        }
        Ok(locations)
    }

    fn threads(&self, name_line: u32) -> Result<Vec<ThreadSource>, LitmusError> {
        if self.table.threads.is_empty() {
            return Err(self.error(
                name_line,
                LitmusErrorKind::BadStructure {
                    reason: "the file has no [[thread]]".to_string(),
                },
            ));
        }
        self.table
            .threads
            .iter()
            .map(|thread| {
                let thread = thread.get_ref();
                let (first_line, multiline) = self.source.content_start_line(&thread.body.span());
                let lines = thread
                    .body
                    .get_ref()
                    .split('\n')
                    .enumerate()
                    .map(|(offset, text)| BodyLine {
                        text: text.trim_end_matches('\r').to_string(),
                        line: if multiline {
                            first_line.saturating_add(u32::try_from(offset).unwrap_or(u32::MAX))
                        } else {
                            first_line
                        },
                    })
                    .collect();
                let placement = match &thread.placement {
                    Some(spanned) => {
                        let table = spanned.get_ref();
                        let placement = Placement {
                            block: table.block,
                            warp: table.warp,
                            lane: table.lane,
                        };
                        self.check_placement(placement, self.source.line_of(spanned))?;
                        Some(placement)
                    }
                    None => None,
                };
                Ok(ThreadSource {
                    lines,
                    placement,
                    line: self.source.line_of(&thread.body),
                })
            })
            .collect()
    }

    fn check_placement(&self, placement: Placement, line: u32) -> Result<(), LitmusError> {
        if fits_in_a_block(placement) {
            return Ok(());
        }
        Err(self.error(
            line,
            LitmusErrorKind::BadPlacement {
                reason: format!(
                    "{placement} is outside a block: lanes go up to {} and warps up to {}",
                    LANES_PER_WARP - 1,
                    WARPS_PER_BLOCK - 1
                ),
            },
        ))
    }

    fn exists(
        &self,
        locations: &[Location],
        thread_count: usize,
    ) -> Result<Vec<ExistsEntry>, LitmusError> {
        let Some(table) = &self.table.exists else {
            return Ok(Vec::new());
        };
        let mut entries = Vec::new();
        for (key, value) in table {
            let line = self.source.line_of(value);
            let bad = |reason: String| {
                self.error(
                    line,
                    LitmusErrorKind::BadExists {
                        key: key.clone(),
                        reason,
                    },
                )
            };
            let observable = if let Some((thread_text, register_text)) = key.split_once(':') {
                let thread = thread_text
                    .trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|&thread| (thread as usize) < thread_count)
                    .ok_or_else(|| {
                        bad(format!(
                            "`{thread_text}` is not a thread of this test (it has {thread_count} threads, numbered from 0)"
                        ))
                    })?;
                let register =
                    parse_register(register_text.trim()).map_err(|error| bad(error.to_string()))?;
                Observable::Register {
                    thread: ThreadId(thread),
                    register,
                }
            } else {
                let index = locations
                    .iter()
                    .position(|location| &location.name == key)
                    .ok_or_else(|| {
                        bad("neither `thread:register` nor a location of [locations]".to_string())
                    })?;
                Observable::Location(LocationId(index as u32))
            };
            entries.push(ExistsEntry {
                key: key.clone(),
                observable,
                value: *value.get_ref(),
                line,
            });
        }
        Ok(entries)
    }

    fn variants(&self, placements: &[PlacementKind]) -> Result<Vec<VariantSource>, LitmusError> {
        if self.table.variants.is_empty() {
            let expect = match &self.table.expect {
                Some(value) => self.expectation(value, placements)?,
                None => [None; 3],
            };
            return Ok(vec![VariantSource {
                name: None,
                placeholders: IndexMap::new(),
                expect,
            }]);
        }
        if let Some(expect) = &self.table.expect {
            return Err(self.error(
                self.source.line_of(expect),
                LitmusErrorKind::BadExpectation {
                    reason:
                        "a file with [[variant]]s gives `expect` in each variant, not at the top"
                            .to_string(),
                },
            ));
        }
        let mut variants: Vec<VariantSource> = Vec::new();
        for table in &self.table.variants {
            let table_line = self.source.line_of(table);
            let mut name = None;
            let mut expect = [None; 3];
            let mut placeholders = IndexMap::new();
            for (key, value) in table.get_ref() {
                let line = self.source.line_of(value);
                match key.as_str() {
                    "name" => match value.get_ref() {
                        toml::Value::String(text)
                            if !text.is_empty() && !text.chars().any(char::is_whitespace) =>
                        {
                            name = Some(text.clone());
                        }
                        _ => {
                            return Err(self.error(
                                line,
                                LitmusErrorKind::BadVariant {
                                    reason: "`name` must be a non-empty string without spaces"
                                        .to_string(),
                                },
                            ))
                        }
                    },
                    "expect" => expect = self.expectation(value, placements)?,
                    _ => {
                        let text = match value.get_ref() {
                            toml::Value::String(text) => text.clone(),
                            toml::Value::Integer(number) => number.to_string(),
                            _ => {
                                return Err(self.error(
                                    line,
                                    LitmusErrorKind::BadVariant {
                                        reason: format!(
                                            "the value of placeholder `{key}` must be a string"
                                        ),
                                    },
                                ))
                            }
                        };
                        placeholders.insert(key.clone(), text);
                    }
                }
            }
            let name = name.ok_or_else(|| {
                self.error(
                    table_line,
                    LitmusErrorKind::BadVariant {
                        reason: "a [[variant]] needs a `name`".to_string(),
                    },
                )
            })?;
            if variants
                .iter()
                .any(|variant| variant.name.as_deref() == Some(name.as_str()))
            {
                return Err(self.error(
                    table_line,
                    LitmusErrorKind::BadVariant {
                        reason: format!("two variants are named `{name}`"),
                    },
                ));
            }
            variants.push(VariantSource {
                name: Some(name),
                placeholders,
                expect,
            });
        }
        Ok(variants)
    }

    /// `"allowed"`/`"forbidden"` for every placement, or a table per placement.
    fn expectation(
        &self,
        value: &Spanned<toml::Value>,
        placements: &[PlacementKind],
    ) -> Result<[Option<Expectation>; 3], LitmusError> {
        let line = self.source.line_of(value);
        let bad = |reason: String| self.error(line, LitmusErrorKind::BadExpectation { reason });
        let parse_word =
            |word: &toml::Value| match word.as_str().map(str::to_ascii_lowercase).as_deref() {
                Some("allowed") => Ok(Expectation::Allowed),
                Some("forbidden") => Ok(Expectation::Forbidden),
                _ => Err(bad(format!(
                    "`{word}` is neither \"allowed\" nor \"forbidden\""
                ))),
            };
        match value.get_ref() {
            toml::Value::Table(table) => {
                let mut expect = [None; 3];
                for (key, word) in table {
                    let kind = PlacementKind::from_name(key)
                        .ok_or_else(|| bad(format!("`{key}` is not one of warp, block, grid")))?;
                    if !placements.contains(&kind) {
                        return Err(bad(format!("the file does not list placement `{key}`")));
                    }
                    expect[kind.index()] = Some(parse_word(word)?);
                }
                Ok(expect)
            }
            word => {
                let expectation = parse_word(word)?;
                Ok([Some(expectation); 3])
            }
        }
    }

    /// A thread's instructions for one variant: substitution, then decoding, then a check that
    /// every register is written before it is read.
    fn thread_instructions(
        &self,
        thread_index: usize,
        thread: &ThreadSource,
        variant: &VariantSource,
        locations: &[Location],
    ) -> Result<Vec<Instruction>, LitmusError> {
        let mut instructions = Vec::new();
        let mut written = [false; Register::COUNT as usize];
        for body_line in &thread.lines {
            let without_comment = strip_comment(&body_line.text);
            if without_comment.trim().is_empty() {
                continue;
            }
            let substituted = substitute(without_comment, variant)
                .map_err(|kind| self.error(body_line.line, kind))?;
            for piece in substituted.split('\n') {
                let text = strip_comment(piece).trim();
                if text.is_empty() || text == ";" {
                    continue;
                }
                let event = parse_instruction(text, locations)
                    .map_err(|kind| self.error(body_line.line, kind))?;
                for register in event.sources() {
                    if !written[register.0 as usize] {
                        return Err(self.error(
                            body_line.line,
                            LitmusErrorKind::RegisterReadBeforeWritten {
                                thread: thread_index as u32,
                                register: register.to_string(),
                            },
                        ));
                    }
                }
                if let Some(register) = event.destination() {
                    written[register.0 as usize] = true;
                }
                instructions.push(Instruction {
                    text: text.to_string(),
                    line: body_line.line,
                    event,
                });
            }
        }
        Ok(instructions)
    }

    /// The `[exists]` clause of one variant: every register it names must be written.
    fn check_exists(
        &self,
        entries: &[ExistsEntry],
        bodies: &[Vec<Instruction>],
        variant: &VariantSource,
    ) -> Result<Vec<(Observable, u32)>, LitmusError> {
        entries
            .iter()
            .map(|entry| {
                if let Observable::Register { thread, register } = entry.observable {
                    let writes = bodies[thread.index()]
                        .iter()
                        .any(|instruction| instruction.event.destination() == Some(register));
                    if !writes {
                        let in_variant = variant
                            .name
                            .as_ref()
                            .map(|name| format!(" in variant `{name}`"))
                            .unwrap_or_default();
                        return Err(self.error(
                            entry.line,
                            LitmusErrorKind::BadExists {
                                key: entry.key.clone(),
                                reason: format!(
                                    "thread {thread} never writes {register}{in_variant}"
                                ),
                            },
                        ));
                    }
                }
                Ok((entry.observable, entry.value))
            })
            .collect()
    }

    /// The threads at one placement, checked for collisions and for barriers that every thread
    /// of a block reaches equally often.
    fn place_threads(
        &self,
        kind: PlacementKind,
        threads: &[ThreadSource],
        bodies: Vec<Vec<Instruction>>,
    ) -> Result<Vec<Thread>, LitmusError> {
        let mut placed: Vec<Thread> = Vec::new();
        for (index, (thread, instructions)) in threads.iter().zip(bodies).enumerate() {
            // Explicit placements were checked when the thread was read; a default one may
            // still fall outside a block when a warp gets more than 32 threads.
            let placement = thread.placement.unwrap_or_else(|| kind.place(index as u32));
            if !fits_in_a_block(placement) {
                return Err(self.error(
                    thread.line,
                    LitmusErrorKind::BadPlacement {
                        reason: format!(
                            "placement `{}` puts thread {index} at {placement}, outside a block",
                            kind.name()
                        ),
                    },
                ));
            }
            if let Some(other) = placed
                .iter()
                .position(|earlier| earlier.placement == placement)
            {
                return Err(self.error(
                    thread.line,
                    LitmusErrorKind::BadPlacement {
                        reason: format!(
                            "placement `{}` puts threads {other} and {index} both at {placement}",
                            kind.name()
                        ),
                    },
                ));
            }
            placed.push(Thread {
                placement,
                instructions,
            });
        }
        for (index, thread) in placed.iter().enumerate() {
            let barriers = barrier_lines(thread);
            for (other_index, other) in placed.iter().enumerate() {
                if other.placement.block != thread.placement.block {
                    continue;
                }
                let other_barriers = barrier_lines(other);
                if other_barriers.len() < barriers.len() {
                    return Err(self.error(
                        barriers[other_barriers.len()],
                        LitmusErrorKind::BarrierMismatch {
                            reason: format!(
                                "at placement `{}` thread {index} executes {} bar.sync but thread {other_index}, \
                                 in the same block {}, executes {}; every thread of a block must execute the same number",
                                kind.name(),
                                barriers.len(),
                                thread.placement.block,
                                other_barriers.len()
                            ),
                        },
                    ));
                }
            }
        }
        Ok(placed)
    }
}

fn fits_in_a_block(placement: Placement) -> bool {
    placement.lane < LANES_PER_WARP && placement.warp < WARPS_PER_BLOCK
}

fn barrier_lines(thread: &Thread) -> Vec<u32> {
    thread
        .instructions
        .iter()
        .filter(|instruction| instruction.event == Event::Barrier)
        .map(|instruction| instruction.line)
        .collect()
}

/// The part of a line before a `//` comment.
fn strip_comment(line: &str) -> &str {
    line.find("//").map_or(line, |start| &line[..start])
}

/// Replaces every `{name}` of a line with the variant's value for `name`.
fn substitute(line: &str, variant: &VariantSource) -> Result<String, LitmusErrorKind> {
    let malformed = |reason: &str| LitmusErrorKind::MalformedPlaceholder {
        text: line.trim().to_string(),
        reason: reason.to_string(),
    };
    let mut result = String::new();
    let mut rest = line;
    while let Some(open) = rest.find(['{', '}']) {
        if rest[open..].starts_with('}') {
            return Err(malformed("a `}` without a `{` before it"));
        }
        result.push_str(&rest[..open]);
        let after_open = &rest[open + 1..];
        let close = after_open
            .find('}')
            .ok_or_else(|| malformed("a `{` without a closing `}`"))?;
        let name = &after_open[..close];
        if !is_identifier(name) {
            return Err(malformed(
                "a placeholder is a name between braces, as in `{fence}`",
            ));
        }
        let value = variant.placeholders.get(name).ok_or_else(|| {
            LitmusErrorKind::UndefinedPlaceholder {
                name: name.to_string(),
                context: match &variant.name {
                    Some(variant_name) => PlaceholderContext::Variant(variant_name.clone()),
                    None => PlaceholderContext::NoVariants,
                },
            }
        })?;
        result.push_str(value);
        rest = &after_open[close + 1..];
    }
    result.push_str(rest);
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<LitmusFile, LitmusError> {
        parse_file(Path::new("unit.litmus"), text)
    }

    fn lines_of(test: &LitmusTest) -> Vec<Vec<(u32, String)>> {
        test.threads
            .iter()
            .map(|thread| {
                thread
                    .instructions
                    .iter()
                    .map(|instruction| (instruction.line, instruction.text.clone()))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn body_lines_are_numbered_for_every_string_form() {
        let text = "name = \"forms\"\r\nplacements = [\"grid\"]\r\n[locations]\r\ny = 5\r\nx = 0\r\n\
                    [[thread]]\r\nbody = \"\"\"\r\n// a comment line\r\n\r\nst.global.u32 [x], 1; // trailing\r\n\"\"\"\r\n\
                    [[thread]]\r\nbody = '''ld.global.u32 r0, [x];\r\nld.global.u32 r1, [y];'''\r\n\
                    [[thread]]\r\nbody = \"fence.sc.gpu;\\nld.global.u32 r2, [y];\"\r\n";
        let file = parse(text).unwrap();
        assert_eq!(file.name(), "forms");
        assert_eq!(file.doc(), "");
        assert_eq!(file.placements(), [PlacementKind::Grid]);
        let tests = file.expand().unwrap();
        assert_eq!(tests.len(), 1);
        let test = &tests[0];
        assert_eq!(test.name, "forms@grid");
        assert_eq!(
            lines_of(test),
            [
                vec![(10, "st.global.u32 [x], 1;".to_string())],
                vec![
                    (13, "ld.global.u32 r0, [x];".to_string()),
                    (14, "ld.global.u32 r1, [y];".to_string())
                ],
                vec![
                    (16, "fence.sc.gpu;".to_string()),
                    (16, "ld.global.u32 r2, [y];".to_string())
                ],
            ]
        );
        // Locations keep the order of the file, not the alphabet.
        assert_eq!(
            test.locations,
            [
                Location {
                    name: "y".to_string(),
                    init: 5
                },
                Location {
                    name: "x".to_string(),
                    init: 0
                }
            ]
        );
        let names: Vec<String> = test
            .observables()
            .into_iter()
            .map(|observable| test.observable_name(observable))
            .collect();
        assert_eq!(names, ["1:r0", "1:r1", "2:r2", "y", "x"]);
    }

    #[test]
    fn a_file_without_variants_may_carry_expect_and_explicit_placements() {
        let text = r#"
name = "placed"
doc = "Two lanes of warp 1 of block 3."
placements = ["warp"]
expect = "forbidden"
[locations]
x = 0
[[thread]]
placement = { block = 3, warp = 1, lane = 4 }
body = "st.relaxed.cta.global.u32 [x], 1;"
[[thread]]
placement = { block = 3, warp = 1, lane = 9 }
body = """
ld.relaxed.cta.global.u32 r0, [x];
ld.relaxed.cta.global.u32 r1, [x];
"""
[exists]
"1:r0" = 1
"1:r1" = 0
"#;
        let file = parse(text).unwrap();
        assert_eq!(file.doc(), "Two lanes of warp 1 of block 3.");
        assert!(file.variant_names().is_empty());
        let tests = file.expand().unwrap();
        assert_eq!(tests.len(), 1);
        assert_eq!(tests[0].name, "placed@warp");
        assert_eq!(tests[0].expect, Some(Expectation::Forbidden));
        assert_eq!(
            tests[0].threads[1].placement,
            Placement {
                block: 3,
                warp: 1,
                lane: 9
            }
        );
        assert_eq!(
            tests[0].exists,
            [
                (
                    Observable::Register {
                        thread: ThreadId(1),
                        register: Register(0)
                    },
                    1
                ),
                (
                    Observable::Register {
                        thread: ThreadId(1),
                        register: Register(1)
                    },
                    0
                ),
            ]
        );
    }

    #[test]
    fn a_multi_line_placeholder_value_becomes_several_instructions() {
        let text = r#"
name = "double-fence"
placements = ["block"]
[locations]
x = 0
[[thread]]
body = """
st.global.u32 [x], 1;
{fences}
"""
[[variant]]
name = "two"
fences = "fence.sc.cta;\nmembar.gl;"
[[variant]]
name = "number"
fences = 7
"#;
        let error = parse(text).unwrap_err();
        // The integer value substitutes as `7`, which is no instruction.
        assert_eq!(error.line, 9);
        assert_eq!(
            error.kind,
            LitmusErrorKind::MalformedInstruction {
                text: "7".to_string(),
                reason: "an instruction ends with `;`".to_string()
            }
        );
        let file = parse(&text.replace("fences = 7", "fences = \"\"")).unwrap();
        assert_eq!(file.variant_names(), ["two", "number"]);
        let tests = file.expand().unwrap();
        assert_eq!(
            lines_of(&tests[0])[0],
            [
                (8, "st.global.u32 [x], 1;".to_string()),
                (9, "fence.sc.cta;".to_string()),
                (9, "membar.gl;".to_string())
            ]
        );
        assert_eq!(lines_of(&tests[1])[0].len(), 1);
    }

    #[test]
    fn too_many_threads_for_a_warp_is_a_placement_error() {
        let mut text = "name = \"wide\"\n[locations]\nx = 0\n".to_string();
        for _ in 0..33 {
            text += "[[thread]]\nbody = \"st.global.u32 [x], 1;\"\n";
        }
        let error = parse(&text).unwrap_err();
        assert_eq!(error.line, 4 + 32 * 2 + 1);
        assert!(
            error
                .to_string()
                .contains("placement `warp` puts thread 32 at block 0 warp 0 lane 32"),
            "{error}"
        );
    }
}
