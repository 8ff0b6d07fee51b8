//! Renders errors the way a compiler does: a message, the source line with the
//! spot marked, and notes. Parse and verify errors point into the `.kir`
//! text; kernel faults point at the instruction's source line (the CUDA line
//! when the IR came from PTX with `.loc`), and a deadlock lists every stuck
//! warp with "stuck here" at its line. Every rendering goes through
//! [`Sources::render`], which cuts lines longer than a screen.

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use codespan_reporting::diagnostic::{Diagnostic, Label};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::{self, termcolor::NoColor};
use warpsim_ir::{ParseError, VerifyError};
use warpsim_machine::error::{ExecError, FaultKind, GlobalPlace, PathPosition, Waiting};

use crate::locations::Place;
use crate::long_lines::ClippedFiles;

/// Source texts by the names locations use, read lazily.
pub struct Sources {
    files: SimpleFiles<String, String>,
    ids: HashMap<String, Option<usize>>,
    /// Where names that are not found as given are looked up.
    base_dir: PathBuf,
}

impl Sources {
    pub fn new(base_dir: &Path) -> Sources {
        Sources {
            files: SimpleFiles::new(),
            ids: HashMap::new(),
            base_dir: base_dir.to_path_buf(),
        }
    }

    /// Files already read, for rendering only (no name is looked up).
    fn of_files(files: SimpleFiles<String, String>) -> Sources {
        Sources {
            files,
            ids: HashMap::new(),
            base_dir: PathBuf::new(),
        }
    }

    /// Registers a text under `name` (the main source, already in memory).
    pub fn add(&mut self, name: &str, text: String) {
        let id = self.files.add(name.to_string(), text);
        self.ids.insert(name.to_string(), Some(id));
    }

    fn id(&mut self, name: &str) -> Option<usize> {
        if let Some(id) = self.ids.get(name) {
            return *id;
        }
        // Only regular files of reasonable size: a `.file` directive may name
        // anything, `/dev/zero` included.
        const MAX_SOURCE_BYTES: u64 = 16 << 20;
        let candidates = [PathBuf::from(name), self.base_dir.join(name)];
        let text = candidates.iter().find_map(|path| {
            let metadata = std::fs::metadata(path).ok()?;
            if !metadata.is_file() || metadata.len() > MAX_SOURCE_BYTES {
                return None;
            }
            std::fs::read_to_string(path).ok()
        });
        let id = text.map(|text| self.files.add(name.to_string(), text));
        self.ids.insert(name.to_string(), id);
        id
    }

    /// The byte range of a whole line (without indentation), if the file is known.
    fn line_range(&mut self, name: &str, line: u32) -> Option<(usize, Range<usize>)> {
        let id = self.id(name)?;
        let text = self.files.get(id).ok()?.source();
        Some((id, line_span(text, line)?))
    }

    /// The diagnostic as text, with lines longer than a screen cut
    /// ([`crate::long_lines`]).
    fn render(&self, diagnostic: &Diagnostic<usize>) -> String {
        let (files, diagnostic) = ClippedFiles::new(&self.files, diagnostic);
        let mut writer = NoColor::new(Vec::new());
        let config = term::Config::default();
        if term::emit(&mut writer, &config, &files, &diagnostic).is_err() {
            return diagnostic.message.clone();
        }
        String::from_utf8_lossy(&writer.into_inner()).into_owned()
    }

    /// A diagnostic with a label at `name:line`, or with the location as a
    /// note when the file cannot be read.
    fn at_line(
        &mut self,
        diagnostic: Diagnostic<usize>,
        name: &str,
        line: u32,
        label: String,
        primary: bool,
    ) -> Diagnostic<usize> {
        let mut diagnostic = diagnostic;
        match self.line_range(name, line) {
            Some((id, range)) => diagnostic
                .labels
                .push(marker(primary, id, range).with_message(label)),
            None => diagnostic.notes.push(format!("{name}:{line}: {label}")),
        }
        diagnostic
    }
}

/// A primary or secondary label.
fn marker(primary: bool, file: usize, range: Range<usize>) -> Label<usize> {
    if primary {
        Label::primary(file, range)
    } else {
        Label::secondary(file, range)
    }
}

/// `block (X,Y,Z)`.
fn block_text(block: [u32; 3]) -> String {
    format!("block ({},{},{})", block[0], block[1], block[2])
}

fn line_start(text: &str, line: u32) -> Option<usize> {
    if line == 0 {
        return None;
    }
    if line == 1 {
        return Some(0);
    }
    text.match_indices('\n')
        .nth(line as usize - 2)
        .map(|(index, _)| index + 1)
}

/// Lanes of a mask as ranges: `0-15, 17, 20-31`.
pub fn lane_ranges(mask: u32) -> String {
    let mut parts = Vec::new();
    let mut lane = 0;
    while lane < 32 {
        if mask >> lane & 1 == 0 {
            lane += 1;
            continue;
        }
        let start = lane;
        while lane < 32 && mask >> lane & 1 != 0 {
            lane += 1;
        }
        parts.push(if lane - 1 == start {
            start.to_string()
        } else {
            format!("{start}-{}", lane - 1)
        });
    }
    if parts.is_empty() {
        "none".to_string()
    } else {
        parts.join(", ")
    }
}

/// A mark on a line of a file: the primary one says where the error is,
/// secondary ones show related places.
#[derive(Clone, Debug)]
pub struct FileLabel {
    /// Which of the files given to [`render_labels`].
    pub file: usize,
    /// Byte range in the file's text; only its first line is marked.
    pub span: Range<usize>,
    pub message: String,
    pub primary: bool,
}

/// An error with lines of `files` (names and texts) shown and marked, and
/// notes after them.
pub fn render_labels(
    files: &[(String, String)],
    message: &str,
    labels: &[FileLabel],
    notes: &[String],
) -> String {
    let mut simple_files = SimpleFiles::new();
    for (name, text) in files {
        simple_files.add(name.clone(), text.clone());
    }
    let labels = labels
        .iter()
        .filter_map(|label| {
            let text = &files.get(label.file)?.1;
            let start = floor_char_boundary(text, label.span.start);
            // A span over several lines (a whole table) is shown by its
            // first line (the table's header).
            let line_end = text[start..].find('\n').map_or(text.len(), |n| start + n);
            let end = floor_char_boundary(text, label.span.end.clamp(start, line_end));
            Some(marker(label.primary, label.file, start..end).with_message(&label.message))
        })
        .collect();
    let diagnostic = Diagnostic::error()
        .with_message(message)
        .with_labels(labels)
        .with_notes(notes.to_vec());
    Sources::of_files(simple_files).render(&diagnostic)
}

/// The byte range of line `line` (1-based) of `text`, without its indentation.
pub fn line_span(text: &str, line: u32) -> Option<Range<usize>> {
    let start = line_start(text, line)?;
    let end = text[start..].find('\n').map_or(text.len(), |n| start + n);
    let indent = text[start..end].len() - text[start..end].trim_start().len();
    Some(start + indent..end.max(start + indent))
}

/// `offset`, within `text` and moved back to the start of its character.
pub(crate) fn floor_char_boundary(text: &str, offset: usize) -> usize {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// An error at a line of a source file (read through `sources`), with that
/// line shown; or with the place as a note when the file cannot be read.
pub fn render_at_line(sources: &mut Sources, message: &str, file: &str, line: u32) -> String {
    let diagnostic = Diagnostic::error().with_message(message);
    let diagnostic = sources.at_line(diagnostic, file, line, String::new(), true);
    sources.render(&diagnostic)
}

/// A parse error with the offending span marked.
pub fn render_parse_error(error: &ParseError, text: &str) -> String {
    let mut files = SimpleFiles::new();
    let id = files.add(error.file.clone(), text.to_string());
    let start = line_start(text, error.line).unwrap_or(text.len());
    let line_end = text[start..].find('\n').map_or(text.len(), |n| start + n);
    let column_byte = text[start..line_end]
        .char_indices()
        .nth(error.column.saturating_sub(1) as usize)
        .map_or(line_end, |(index, _)| start + index);
    let span_end = text[column_byte..line_end]
        .char_indices()
        .nth(error.length as usize)
        .map_or(line_end, |(index, _)| column_byte + index);
    let diagnostic = Diagnostic::error()
        .with_message(&error.message)
        .with_labels(vec![Label::primary(
            id,
            column_byte..span_end.max(column_byte),
        )]);
    Sources::of_files(files).render(&diagnostic)
}

/// Every verifier problem, each at its line.
pub fn render_verify_error(error: &VerifyError, sources: &mut Sources) -> String {
    let mut out = String::new();
    for problem in &error.problems {
        let diagnostic = Diagnostic::error().with_message(format!(
            "in kernel `{}`: {}",
            problem.kernel, problem.message
        ));
        let diagnostic =
            sources.at_line(diagnostic, &problem.file, problem.line, String::new(), true);
        out.push_str(&sources.render(&diagnostic));
    }
    let first_kernel = error.problems.first().map(|problem| &problem.kernel);
    let one_kernel = error
        .problems
        .iter()
        .all(|problem| Some(&problem.kernel) == first_kernel);
    out.push_str(&format!(
        "error: the {} has {} problem{}\n",
        if one_kernel { "kernel" } else { "source" },
        error.problems.len(),
        if error.problems.len() == 1 { "" } else { "s" }
    ));
    out
}

/// A one-line summary of a fault, for the report's `error` field.
pub fn fault_summary(error: &ExecError, place_of: &dyn Fn(u32) -> Place) -> String {
    let block = block_text(error.block);
    let place = match &error.site {
        Some(site) => {
            let Place { file, line, .. } = place_of(site.pc);
            format!(
                "{file}:{line}: {block}, thread ({},{},{})",
                site.thread[0], site.thread[1], site.thread[2]
            )
        }
        None => block,
    };
    format!("{place}: {}", fault_message(&error.kind))
}

/// Where a global address lies, in words: `offset 60 of buffer `out`,
/// which has 60 bytes`, `4 bytes before the start of buffer `list``.
/// An out-of-bounds access (`past_end`) also says how long the buffer is.
fn place_text(place: &GlobalPlace, past_end: bool) -> String {
    match place {
        GlobalPlace::Offset {
            buffer,
            offset,
            len,
        } if past_end => format!("offset {offset} of buffer `{buffer}`, which has {len} bytes"),
        GlobalPlace::Offset { buffer, offset, .. } => {
            format!("offset {offset} of buffer `{buffer}`")
        }
        GlobalPlace::BeforeStart { buffer, bytes } => {
            let unit = if *bytes == 1 { "byte" } else { "bytes" };
            format!("{bytes} {unit} before the start of buffer `{buffer}`")
        }
        GlobalPlace::NullPointer => "below every buffer: a null pointer".to_string(),
        GlobalPlace::Unmapped => "in no buffer".to_string(),
    }
}

fn fault_message(kind: &FaultKind) -> String {
    match kind {
        FaultKind::OutOfBounds {
            space,
            address,
            size,
            store,
            place,
        } => {
            let access = if *store { "store" } else { "load" };
            if *place == Some(GlobalPlace::NullPointer) {
                return format!(
                    "null pointer: a {size}-byte {} {access} at address {address:#x}, below every buffer (a pointer that is null or was never set)",
                    space.name()
                );
            }
            let whereabouts = match place {
                Some(place) => format!(" ({})", place_text(place, true)),
                None => String::new(),
            };
            format!(
                "out-of-bounds {}-byte {} {access} at address {address:#x}{whereabouts}",
                size,
                space.name()
            )
        }
        FaultKind::Misaligned {
            space,
            address,
            size,
            place,
        } => {
            let whereabouts = match place {
                Some(place) => format!(" ({})", place_text(place, false)),
                None => String::new(),
            };
            format!(
                "misaligned {size}-byte {} access at address {address:#x}{whereabouts}: it must be a multiple of {size}",
                space.name()
            )
        }
        FaultKind::AssertionFailed {
            expression,
            file,
            line,
            function,
            threads,
        } => {
            let others = match threads.len() {
                0 | 1 => String::new(),
                2 => " (and in 1 more thread of the warp)".to_string(),
                count => format!(" (and in {} more threads of the warp)", count - 1),
            };
            format!("assertion `{expression}` failed ({file}:{line}, in `{function}`){others}")
        }
        FaultKind::Trap => "the kernel executed `trap` (`__trap()`), which stops it".to_string(),
        FaultKind::InvalidAccess { message } | FaultKind::InvalidBarrier { message } => message.clone(),
        FaultKind::Deadlock => "deadlock: no thread of the block can move again".to_string(),
        FaultKind::Livelock {
            window,
            not_resident: Some(block),
            ..
        } => format!(
            "deadlock across blocks: after {window} warp instructions without progress (barriers.livelock_window), every resident block spins waiting for another block, and block ({},{},{}) and those after it cannot become resident until one of them exits",
            block[0], block[1], block[2]
        ),
        FaultKind::Livelock {
            window,
            across_blocks: true,
            ..
        } => format!(
            "livelock across blocks: after {window} warp instructions without progress (barriers.livelock_window), threads spin polling global memory that no thread of the launch changes any more"
        ),
        FaultKind::Livelock { window, .. } => format!(
            "livelock: threads ran {window} warp instructions without progress and came back to a state they had been in (barriers.livelock_window)"
        ),
        FaultKind::MbarrierDeadlock { window } => format!(
            "mbarrier deadlock: after {window} warp instructions without progress (barriers.livelock_window), threads still spin waiting on mbarrier phases that no thread and no copy in flight can complete"
        ),
        FaultKind::InstructionLimit { limit } => format!(
            "the block ran more than {limit} warp instructions (limits.max_warp_instructions_per_block)"
        ),
    }
}

fn waiting_text(path: &PathPosition) -> String {
    match path.waiting {
        Waiting::Running => "running".to_string(),
        Waiting::Barrier(id) => format!("waiting at barrier {id}"),
        Waiting::WarpSync(mask) => format!("waiting at a warp sync with mask {mask:#010x}"),
        Waiting::Reconvergence => "waiting here for its other paths to reconverge".to_string(),
    }
}

/// A fault with its source line, or for hangs every stuck warp at its line.
pub fn render_fault(
    error: &ExecError,
    place_of: &dyn Fn(u32) -> Place,
    sources: &mut Sources,
) -> String {
    let block = block_text(error.block);
    // A failed `assert` first prints what the CUDA runtime prints for each
    // failing thread.
    let mut printed = String::new();
    if let FaultKind::AssertionFailed {
        expression,
        file,
        line,
        function,
        threads,
    } = &error.kind
    {
        let [bx, by, bz] = error.block;
        for [tx, ty, tz] in threads {
            printed.push_str(&format!(
                "{file}:{line}: {function}: block: [{bx},{by},{bz}], thread: [{tx},{ty},{tz}] Assertion `{expression}` failed.\n"
            ));
        }
    }
    let mut diagnostic = Diagnostic::error().with_message(fault_message(&error.kind));
    if let Some(site) = &error.site {
        let place = place_of(site.pc);
        if let Some(note) = place.inlined_note() {
            diagnostic.notes.push(note);
        }
        let Place { file, line, .. } = place;
        diagnostic = sources.at_line(
            diagnostic,
            &file,
            line,
            format!(
                "in {block}, thread ({},{},{}) (warp {}, lane {})",
                site.thread[0], site.thread[1], site.thread[2], site.warp, site.lane
            ),
            true,
        );
    } else {
        diagnostic.message = format!("{block}: {}", diagnostic.message);
    }
    for warp in &error.warps {
        for path in &warp.paths {
            // A path spinning on an mbarrier is shown at its wait.
            let mbarrier = error
                .spinning
                .iter()
                .find(|spin| spin.warp == warp.warp && spin.pc == path.pc)
                .and_then(|spin| spin.mbarrier);
            let (pc, waiting) = match mbarrier {
                Some(wait) if path.waiting == Waiting::Running => {
                    (wait.pc, format!("waiting for {}", wait.describe()))
                }
                _ => (path.pc, waiting_text(path)),
            };
            let Place { file, line, .. } = place_of(pc);
            let label = format!(
                "stuck here: warp {}, lanes {}: {waiting}",
                warp.warp,
                lane_ranges(path.lanes),
            );
            let primary = path.waiting != Waiting::Reconvergence;
            diagnostic = sources.at_line(diagnostic, &file, line, label, primary);
        }
        if warp.exited != 0 {
            diagnostic.notes.push(format!(
                "warp {}: lanes {} have exited",
                warp.warp,
                lane_ranges(warp.exited)
            ));
        }
    }
    for barrier in &error.barriers {
        diagnostic.notes.push(format!(
            "barrier {}: {} of {} expected threads have arrived",
            barrier.id, barrier.arrived, barrier.expected
        ));
    }
    printed + &sources.render(&diagnostic)
}

/// A mark on a source line (or a range of lines) of a file read through
/// [`Sources`].
#[derive(Clone, Debug)]
pub struct LineLabel {
    pub file: String,
    pub line: u32,
    pub last_line: Option<u32>,
    pub message: String,
    pub primary: bool,
}

/// An error or warning with every label's lines shown; labels whose file
/// cannot be read become notes.
pub fn render_lines(
    sources: &mut Sources,
    is_error: bool,
    message: &str,
    labels: &[LineLabel],
    notes: &[String],
) -> String {
    let mut diagnostic = if is_error {
        Diagnostic::error()
    } else {
        Diagnostic::warning()
    }
    .with_message(message);
    for label in labels {
        let first = sources.line_range(&label.file, label.line);
        let last = label
            .last_line
            .and_then(|last| sources.line_range(&label.file, last));
        match (first, last) {
            (Some((id, first)), Some((_, last))) => diagnostic.labels.push(
                marker(label.primary, id, first.start..last.end).with_message(&label.message),
            ),
            _ => {
                diagnostic = sources.at_line(
                    diagnostic,
                    &label.file,
                    label.line,
                    label.message.clone(),
                    label.primary,
                );
            }
        }
    }
    diagnostic.notes.extend(notes.iter().cloned());
    sources.render(&diagnostic)
}
