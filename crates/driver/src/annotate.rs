//! `warpsim annotate`: the kernel's source files printed line by line with
//! the run's counts in a margin, as Nsight Compute's source page shows them:
//! the warp instructions each line executed, the shared-memory wavefronts,
//! ideal wavefronts and bank conflicts of its shared accesses, and the
//! global sectors of its global accesses. Lines with bank conflicts carry a
//! `!` so that they stand out.
//!
//! The files are read by the names the report gives them, which are paths
//! from the working directory ([`crate::locations`]). A file that cannot be
//! read is skipped with a note; it is an error only when no file can be
//! shown at all.

use std::collections::BTreeMap;
use std::fmt::Write;

use warpsim_ir::StateSpace;

use crate::report::{InstructionReport, MemoryCounts, Report};

/// What to annotate and how wide the screen is.
#[derive(Clone, Debug)]
pub struct AnnotateOptions {
    /// Only this file: its name as the report gives it, or the end of that
    /// name after a `/` (`kernel.cu` for `programs/corpus/kernel.cu`).
    pub file: Option<String>,
    /// Screen width in characters: longer lines are cut, ending in `…`.
    pub width: usize,
}

impl Default for AnnotateOptions {
    fn default() -> Self {
        AnnotateOptions {
            file: None,
            width: DEFAULT_WIDTH,
        }
    }
}

/// The screen width `warpsim annotate` assumes unless told otherwise.
pub const DEFAULT_WIDTH: usize = 120;

/// The annotated files, and notes on files that could not be shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Annotation {
    pub text: String,
    /// One line each: a file that could not be read, counted lines past the
    /// end of a file.
    pub notes: Vec<String>,
}

/// Why nothing could be annotated.
#[derive(Debug, thiserror::Error)]
pub enum AnnotateError {
    #[error("--file {asked}: the kernel has no counted instructions in such a file; it has them in {}", available.join(", "))]
    NoSuchFile {
        asked: String,
        available: Vec<String>,
    },
    #[error("no source file could be read: {}", notes.join("; "))]
    NothingReadable { notes: Vec<String> },
}

/// Annotates the source files of `report`, reading them from disk.
pub fn annotate(report: &Report, options: &AnnotateOptions) -> Result<Annotation, AnnotateError> {
    annotate_with(report, options, |name| {
        // Source files are shown as text even where they are not UTF-8.
        std::fs::read(name).map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
    })
}

/// [`annotate`], reading each file with `read`.
pub fn annotate_with(
    report: &Report,
    options: &AnnotateOptions,
    mut read: impl FnMut(&str) -> std::io::Result<String>,
) -> Result<Annotation, AnnotateError> {
    let counts = counts_by_file(report);
    let files: Vec<&String> = match &options.file {
        None => counts.keys().collect(),
        Some(asked) => {
            let chosen: Vec<&String> = counts
                .keys()
                .filter(|name| names_file(name, asked))
                .collect();
            if chosen.is_empty() {
                return Err(AnnotateError::NoSuchFile {
                    asked: asked.clone(),
                    available: counts.keys().cloned().collect(),
                });
            }
            chosen
        }
    };
    let mut text = report.header_line();
    let mut notes = Vec::new();
    let mut shown = 0;
    for name in files {
        let lines = &counts[name];
        let source = match read(name) {
            Ok(source) => source,
            Err(error) => {
                notes.push(format!(
                    "cannot read {name} ({error}); its counts are not shown"
                ));
                continue;
            }
        };
        text.push('\n');
        render_file(&mut text, name, &source, lines, options.width);
        shown += 1;
        let line_count = source.lines().count() as u32;
        let past_end: Vec<String> = lines
            .keys()
            .filter(|&&line| line > line_count)
            .map(u32::to_string)
            .collect();
        if !past_end.is_empty() {
            notes.push(format!(
                "{name} ends at line {line_count}, so the counts at line{} {} are not shown (was it edited after it was compiled?)",
                if past_end.len() == 1 { "" } else { "s" },
                past_end.join(", ")
            ));
        }
    }
    if shown == 0 {
        return Err(AnnotateError::NothingReadable { notes });
    }
    Ok(Annotation { text, notes })
}

/// Whether the file the report names `name` is the one `asked` for: the
/// same name, or `asked` is the end of it after a `/`.
fn names_file(name: &str, asked: &str) -> bool {
    name == asked
        || name
            .strip_suffix(asked)
            .is_some_and(|start| start.ends_with('/') && !asked.is_empty())
}

/// What one source line did, summed over its instructions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct LineCounts {
    /// Warp-level executions of every instruction of the line.
    executed: u64,
    /// The shared-memory and global-memory columns of the line's accesses.
    memory: MemoryCounts,
}

impl LineCounts {
    fn add(&mut self, instruction: &InstructionReport) {
        self.executed += instruction.counts.executed;
        // Parameter loads are not memory traffic; generic accesses count
        // where their addresses resolved, as in the report's tables.
        if instruction.space != Some(StateSpace::Param) {
            self.memory
                .add(MemoryCounts::new(instruction.space, &instruction.counts));
        }
    }
}

/// The counts of every file that has executed instructions, by file name
/// and line. When nothing executed (a kernel that failed at once), every
/// file of the kernel is there, so that its source can still be seen.
fn counts_by_file(report: &Report) -> BTreeMap<String, BTreeMap<u32, LineCounts>> {
    let anything_ran = report
        .instructions
        .iter()
        .any(|instruction| instruction.counts.executed > 0);
    let mut files: BTreeMap<String, BTreeMap<u32, LineCounts>> = BTreeMap::new();
    for instruction in &report.instructions {
        if anything_ran && instruction.counts.executed == 0 {
            continue;
        }
        files
            .entry(instruction.file.clone())
            .or_default()
            .entry(instruction.line)
            .or_default()
            .add(instruction);
    }
    files
}

/// The titles of the margin's number columns. "executed" is every warp
/// instruction the line executed, as Nsight Compute's "Instructions
/// Executed"; the others are the line's shared-memory and global-memory
/// accesses, as in the report's tables.
const MARGIN_TITLES: [&str; 6] = [
    "executed",
    "wavefronts",
    "ideal",
    "conflicts",
    "ways",
    "sectors",
];

/// Appends `name`'s annotated lines to `out`.
fn render_file(
    out: &mut String,
    name: &str,
    source: &str,
    counts: &BTreeMap<u32, LineCounts>,
    width: usize,
) {
    let line_count = source.lines().count();
    let number_width = line_count.to_string().len().max(4);
    // Each column is as wide as its title or its widest value in this
    // file, so that the source keeps as much of the screen as it can.
    let values: BTreeMap<u32, [String; 6]> = counts
        .iter()
        .map(|(&line, line_counts)| (line, margin_values(line_counts)))
        .collect();
    let column_widths: [usize; 6] = std::array::from_fn(|column| {
        values
            .values()
            .map(|row| row[column].chars().count())
            .chain([MARGIN_TITLES[column].len()])
            .max()
            .unwrap_or(0)
    });
    let columns = |cells: [&str; 6]| {
        let mut text = String::new();
        for (cell, column_width) in cells.iter().zip(column_widths) {
            let _ = write!(text, "  {cell:>column_width$}");
        }
        text
    };
    let _ = writeln!(out, "{name}");
    let _ = writeln!(out, "{:>number_width$}{}", "line", columns(MARGIN_TITLES));
    let blank = " ".repeat(columns([""; 6]).len());
    // The margin ends in a marker column (`!` on lines with bank
    // conflicts) and a bar before the source text: `  !│ `.
    let margin_width = number_width + blank.len() + 5;
    // Narrow screens still get some of each line.
    let text_width = width.saturating_sub(margin_width).max(20);
    for (index, text) in source.lines().enumerate() {
        let line = index as u32 + 1;
        let (cells, marker) = match (values.get(&line), counts.get(&line)) {
            (Some(row), Some(line_counts)) => {
                let conflicted = line_counts.memory.has_bank_conflicts();
                (
                    columns(row.each_ref().map(String::as_str)),
                    if conflicted { '!' } else { ' ' },
                )
            }
            _ => (blank.clone(), ' '),
        };
        let row = format!(
            "{line:>number_width$}{cells}  {marker}│ {}",
            cut(&expand_tabs(text), text_width)
        );
        let _ = writeln!(out, "{}", row.trim_end());
    }
}

/// The margin's cells of a counted line: empty where the line has no such
/// access.
fn margin_values(counts: &LineCounts) -> [String; 6] {
    let [wavefronts, ideal, conflicts, ways, sectors] = counts.memory.cells("");
    [
        counts.executed.to_string(),
        wavefronts,
        ideal,
        conflicts,
        ways,
        sectors,
    ]
}

/// `text` with tabs expanded to the next multiple of 8 columns, as a
/// terminal shows them, so that cutting at the screen width cuts where the
/// reader sees the edge.
fn expand_tabs(text: &str) -> String {
    let mut expanded = String::with_capacity(text.len());
    let mut column = 0;
    for character in text.chars() {
        if character == '\t' {
            let spaces = 8 - column % 8;
            expanded.extend(std::iter::repeat_n(' ', spaces));
            column += spaces;
        } else {
            expanded.push(character);
            column += 1;
        }
    }
    expanded
}

/// `text` cut to `width` characters, its last one `…` where it was cut.
fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut kept: String = text.chars().take(width.saturating_sub(1)).collect();
    kept.push('…');
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instruction(line: u32, space: Option<StateSpace>, executed: u64) -> InstructionReport {
        InstructionReport {
            index: 0,
            text: String::new(),
            file: "k.cu".to_string(),
            line,
            inlined_from: Vec::new(),
            space,
            op: space.map(|_| warpsim_ir::MemoryAccessKind::Load),
            counts: warpsim_machine::InstrStats {
                executed,
                threads: executed * 32,
                shared_requests: if space == Some(StateSpace::Shared) {
                    executed
                } else {
                    0
                },
                global_requests: if space == Some(StateSpace::Global) {
                    executed
                } else {
                    0
                },
                ..Default::default()
            },
            timing: None,
        }
    }

    fn report(instructions: Vec<InstructionReport>) -> Report {
        Report {
            kernel: "k".to_string(),
            source: "k.cu.ptx".to_string(),
            device: "Hopper (sm_90)".to_string(),
            grid: [1, 1, 1],
            block: [32, 1, 1],
            shared_bytes: 0,
            static_shared_bytes: 128,
            registers_per_thread: 32,
            registers_source: crate::RegisterSource::Default,
            registers_note: None,
            status: "ok",
            error: None,
            blocks_run: 1,
            failed_blocks: 0,
            timing: None,
            lines: Report::rollup(&instructions),
            instructions,
            totals: Default::default(),
            findings: None,
            printf_output: String::new(),
            printf_dropped_bytes: 0,
        }
    }

    #[test]
    fn lines_carry_their_counts_and_conflicts_stand_out() {
        let mut conflicted = instruction(2, Some(StateSpace::Shared), 4);
        conflicted.counts.wavefronts = 128;
        conflicted.counts.ideal_wavefronts = 4;
        conflicted.counts.bank_conflicts = 124;
        let mut global = instruction(3, Some(StateSpace::Global), 4);
        global.counts.sectors = 16;
        let report = report(vec![
            instruction(2, None, 4),
            conflicted,
            global,
            instruction(9, None, 0),
        ]);
        let source = "int a;\nx = tile[threadIdx.x * 32];\ny[i] = x;\n";
        let annotation = annotate_with(&report, &AnnotateOptions::default(), |name| {
            assert_eq!(name, "k.cu");
            Ok(source.to_string())
        })
        .unwrap();
        let lines: Vec<&str> = annotation.text.lines().collect();
        assert!(lines[0].starts_with("k  grid (1,1,1)"));
        assert_eq!(lines[2], "k.cu");
        assert_eq!(
            lines[3],
            "line  executed  wavefronts  ideal  conflicts  ways  sectors"
        );
        assert_eq!(lines[4], format!("{:>4}{}   │ int a;", 1, " ".repeat(55)));
        let conflicts: Vec<&str> = lines[5].split_whitespace().collect();
        assert_eq!(
            conflicts,
            [
                "2",
                "8",
                "128",
                "4",
                "124",
                "32.0",
                "!│",
                "x",
                "=",
                "tile[threadIdx.x",
                "*",
                "32];"
            ]
        );
        let sectors: Vec<&str> = lines[6].split_whitespace().collect();
        assert_eq!(sectors, ["3", "4", "16", "│", "y[i]", "=", "x;"]);
        // Line 9 did not run, and only counted lines past the end are noted.
        assert_eq!(annotation.notes, Vec::<String>::new());
    }

    #[test]
    fn long_lines_are_cut_at_the_screen_width() {
        let report = report(vec![instruction(1, None, 1)]);
        let long = "x".repeat(300);
        let options = AnnotateOptions {
            file: None,
            width: 100,
        };
        let annotation = annotate_with(&report, &options, |_| Ok(long.clone())).unwrap();
        let line = annotation.text.lines().last().unwrap();
        assert_eq!(line.chars().count(), 100);
        assert!(line.ends_with("x…"));
        assert_eq!(cut("short", 10), "short");
        assert_eq!(expand_tabs("\tx\ty"), "        x       y");
    }

    #[test]
    fn unreadable_files_are_notes_and_unknown_names_errors() {
        let mut other = instruction(5, None, 1);
        other.file = "gone.cuh".to_string();
        let report = report(vec![instruction(1, None, 1), other]);
        let annotation = annotate_with(&report, &AnnotateOptions::default(), |name| {
            if name == "k.cu" {
                Ok("a\n".to_string())
            } else {
                Err(std::io::Error::from(std::io::ErrorKind::NotFound))
            }
        })
        .unwrap();
        assert!(annotation.text.contains("k.cu\n"));
        assert!(!annotation.text.contains("gone.cuh"));
        assert_eq!(annotation.notes.len(), 1);
        assert!(annotation.notes[0].starts_with("cannot read gone.cuh"));

        let nothing = annotate_with(&report, &AnnotateOptions::default(), |_| {
            Err(std::io::Error::from(std::io::ErrorKind::NotFound))
        });
        assert!(matches!(
            nothing,
            Err(AnnotateError::NothingReadable { .. })
        ));

        let only = AnnotateOptions {
            file: Some("nosuch.cu".to_string()),
            width: 120,
        };
        let error = annotate_with(&report, &only, |_| Ok(String::new())).unwrap_err();
        assert_eq!(
            error.to_string(),
            "--file nosuch.cu: the kernel has no counted instructions in such a file; it has them in gone.cuh, k.cu"
        );
    }

    #[test]
    fn files_are_chosen_by_name_or_by_the_end_of_their_path() {
        assert!(names_file("programs/corpus/k.cu", "k.cu"));
        assert!(names_file("programs/corpus/k.cu", "corpus/k.cu"));
        assert!(names_file("k.cu", "k.cu"));
        assert!(!names_file("programs/corpus/kk.cu", "k.cu"));
        assert!(!names_file("programs/corpus/k.cu", ""));
    }

    #[test]
    fn counted_lines_past_the_end_of_a_file_are_noted() {
        let report = report(vec![instruction(40, None, 1)]);
        let annotation = annotate_with(&report, &AnnotateOptions::default(), |_| {
            Ok("one line\n".into())
        })
        .unwrap();
        assert_eq!(
            annotation.notes,
            ["k.cu ends at line 1, so the counts at line 40 are not shown (was it edited after it was compiled?)"]
        );
    }
}
