//! Long lines cut to a screen before they are shown: a source line in a
//! diagnostic is cut around the columns its labels mark (with `…` where text
//! was left out, the carets still under the marked text and the location
//! still giving the line's real column), and a line of a message is cut in
//! its middle. Generated or minified sources can have lines of megabytes,
//! and a message may quote a value of any length; neither should flood the
//! terminal.

use std::collections::HashMap;
use std::ops::Range;

use codespan_reporting::diagnostic::Diagnostic;
use codespan_reporting::files::{Error as FilesError, Files, SimpleFiles};

/// Source lines longer than this many characters are cut when shown: about
/// a screen's width.
pub const MAX_SOURCE_COLUMNS: usize = 200;

/// Lines of messages longer than this many characters are cut in the middle:
/// every message warpsim writes itself is shorter, and a quoted value of
/// this length is already more than a screen.
pub const MAX_MESSAGE_CHARS: usize = 1000;

/// Lines kept before and after each labelled line: codespan shows the one
/// line between two labelled lines rather than a gap mark.
const CONTEXT_LINES: usize = 2;

/// What stands for left-out text.
const ELLIPSIS: &str = "…";

/// Characters kept before a label's start when one label marks a long line.
const LEAD_COLUMNS: usize = 60;

/// With several labels on a long line, the characters kept around each, and
/// the most of each label's own text kept.
const CONTEXT_COLUMNS: usize = 30;
const LABEL_COLUMNS: usize = 60;

/// `text` with every line longer than [`MAX_MESSAGE_CHARS`] characters cut in
/// its middle, saying how much was left out.
pub fn clip_message(text: &str) -> String {
    if text.len() <= MAX_MESSAGE_CHARS {
        return text.to_string();
    }
    let mut out = String::with_capacity(MAX_MESSAGE_CHARS.min(text.len()));
    for (index, line) in text.split('\n').enumerate() {
        if index > 0 {
            out.push('\n');
        }
        let chars = line.chars().count();
        if chars <= MAX_MESSAGE_CHARS {
            out.push_str(line);
            continue;
        }
        let (head, tail) = (MAX_MESSAGE_CHARS * 3 / 4, MAX_MESSAGE_CHARS / 8);
        let head_end = line
            .char_indices()
            .nth(head)
            .map_or(line.len(), |(at, _)| at);
        let tail_start = line
            .char_indices()
            .rev()
            .nth(tail - 1)
            .map_or(head_end, |(at, _)| at.max(head_end));
        out.push_str(&line[..head_end]);
        out.push_str(&format!(
            "{ELLIPSIS}({} characters left out){ELLIPSIS}",
            chars - head - tail
        ));
        out.push_str(&line[tail_start..]);
    }
    out
}

/// One kept stretch of a cut line.
#[derive(Clone, Debug)]
struct Piece {
    /// Its bytes in the original text.
    original: Range<usize>,
    /// Where it starts in the clipped text.
    clipped_start: usize,
    /// The original line's character column (0-based) of its first character.
    column: usize,
}

/// A file as a diagnostic shows it: the lines its labels touch and those
/// near them, long ones cut; every other line empty (a diagnostic never
/// shows them, and a file may be large), so that line numbers stay as they
/// were.
struct ClippedFile {
    name: String,
    text: String,
    /// Where each line starts in `text`.
    line_starts: Vec<usize>,
    /// The cut lines, by line index.
    cut: HashMap<usize, Vec<Piece>>,
}

/// The files of one diagnostic, as [`ClippedFile`]s, by the ids of the
/// [`SimpleFiles`] they come from (`None`: no label is in that file).
pub(crate) struct ClippedFiles {
    files: Vec<Option<ClippedFile>>,
}

/// Maps byte offsets of an original text to the clipped one.
struct OffsetMap<'a> {
    original_line_starts: &'a [usize],
    clipped_line_starts: &'a [usize],
    cut: &'a HashMap<usize, Vec<Piece>>,
}

impl OffsetMap<'_> {
    /// Where original byte `offset` is in the clipped text. Text left out
    /// maps to the `…` standing for it: its start for a label's start
    /// (`end` false), its end for a label's end.
    fn map(&self, offset: usize, end: bool) -> usize {
        let line = line_index(self.original_line_starts, offset);
        let line_start = self.original_line_starts[line];
        let Some(pieces) = self.cut.get(&line) else {
            return self.clipped_line_starts[line] + (offset - line_start);
        };
        for piece in pieces {
            if offset < piece.original.start {
                // In the gap before this piece, which a `…` stands for.
                let ellipsis_start = piece.clipped_start - ELLIPSIS.len();
                return if end {
                    piece.clipped_start
                } else {
                    ellipsis_start
                };
            }
            if offset <= piece.original.end {
                return piece.clipped_start + (offset - piece.original.start);
            }
        }
        // After the last piece: the trailing `…`.
        let last = &pieces[pieces.len() - 1];
        let after = last.clipped_start + last.original.len();
        if end {
            after + ELLIPSIS.len()
        } else {
            after
        }
    }
}

fn line_index(line_starts: &[usize], offset: usize) -> usize {
    match line_starts.binary_search(&offset) {
        Ok(line) => line,
        Err(next) => next.saturating_sub(1),
    }
}

/// The byte `count` characters before `at` in `line` (its start if fewer).
fn chars_back(line: &str, at: usize, count: usize) -> usize {
    if count == 0 {
        return at;
    }
    line[..at]
        .char_indices()
        .rev()
        .nth(count - 1)
        .map_or(0, |(index, _)| index)
}

/// The byte `count` characters after `at` in `line` (its end if fewer).
fn chars_forward(line: &str, at: usize, count: usize) -> usize {
    line[at..]
        .char_indices()
        .nth(count)
        .map_or(line.len(), |(index, _)| at + index)
}

/// The stretches of a long `line` to keep (byte ranges within it, sorted,
/// apart) around `marks`, the byte ranges within it that labels mark.
fn windows(line: &str, marks: &[Range<usize>]) -> Vec<Range<usize>> {
    let width = MAX_SOURCE_COLUMNS - 2 * ELLIPSIS.chars().count();
    if marks.len() <= 1 {
        let focus = marks.first().map_or(0, |mark| mark.start);
        let mut start = chars_back(line, focus, LEAD_COLUMNS);
        let end = chars_forward(line, start, width);
        if end == line.len() {
            start = chars_back(line, end, width);
        }
        return std::iter::once(start..end).collect();
    }
    let mut windows: Vec<Range<usize>> = marks
        .iter()
        .map(|mark| {
            let label_end = mark
                .end
                .clamp(mark.start, chars_forward(line, mark.start, LABEL_COLUMNS));
            chars_back(line, mark.start, CONTEXT_COLUMNS)
                ..chars_forward(line, label_end, CONTEXT_COLUMNS)
        })
        .collect();
    windows.sort_by_key(|window| window.start);
    let mut merged: Vec<Range<usize>> = Vec::new();
    for window in windows {
        match merged.last_mut() {
            Some(last) if window.start <= last.end => last.end = last.end.max(window.end),
            _ => merged.push(window),
        }
    }
    merged
}

impl ClippedFile {
    /// `text` as shown with labels at the byte ranges `ranges`, and those
    /// ranges in the clipped text.
    fn new(name: &str, text: &str, ranges: &[Range<usize>]) -> (ClippedFile, Vec<Range<usize>>) {
        let original_line_starts: Vec<usize> =
            codespan_reporting::files::line_starts(text).collect();
        let line_count = original_line_starts.len();
        let line_end = |line: usize| {
            original_line_starts
                .get(line + 1)
                .map_or(text.len(), |&next| next - 1)
        };
        // The lines each label spans, and what it marks on each.
        let mut marks: HashMap<usize, Vec<Range<usize>>> = HashMap::new();
        for range in ranges {
            let (first, last) = (
                line_index(&original_line_starts, range.start),
                line_index(&original_line_starts, range.end),
            );
            for (line, &start) in original_line_starts
                .iter()
                .enumerate()
                .take(last + 1)
                .skip(first)
            {
                let end = line_end(line);
                // On a line the label runs through, it marks the line's start.
                let focus = if range.start >= start {
                    range.start
                } else if range.end <= end {
                    range.end
                } else {
                    start
                };
                let mark = focus - start..range.end.clamp(focus, end) - start;
                marks.entry(line).or_default().push(mark);
            }
        }
        // codespan shows the line between two labelled lines, so lines near
        // a label are kept too (marking nothing: cut, they show their start).
        let labelled: Vec<usize> = marks.keys().copied().collect();
        for line in labelled {
            let near = line.saturating_sub(CONTEXT_LINES)..=line + CONTEXT_LINES;
            for near in near.filter(|&near| near < line_count) {
                marks.entry(near).or_default();
            }
        }
        let mut clipped = String::new();
        let mut line_starts = Vec::with_capacity(line_count);
        let mut cut = HashMap::new();
        for (line, &start) in original_line_starts.iter().enumerate() {
            line_starts.push(clipped.len());
            let end = line_end(line);
            let content = &text[start..end];
            if let Some(line_marks) = marks.get(&line) {
                if content.len() > MAX_SOURCE_COLUMNS
                    && content.chars().count() > MAX_SOURCE_COLUMNS
                {
                    let mut pieces = Vec::new();
                    let kept = windows(content, line_marks);
                    for (index, window) in kept.iter().enumerate() {
                        if window.start > 0 || index > 0 {
                            clipped.push_str(ELLIPSIS);
                        }
                        pieces.push(Piece {
                            original: start + window.start..start + window.end,
                            clipped_start: clipped.len(),
                            column: content[..window.start].chars().count(),
                        });
                        clipped.push_str(&content[window.clone()]);
                    }
                    if kept.last().is_some_and(|window| window.end < content.len()) {
                        clipped.push_str(ELLIPSIS);
                    }
                    cut.insert(line, pieces);
                } else {
                    clipped.push_str(content);
                }
            }
            if end < text.len() {
                clipped.push('\n');
            }
        }
        let map = OffsetMap {
            original_line_starts: &original_line_starts,
            clipped_line_starts: &line_starts,
            cut: &cut,
        };
        let mapped = ranges
            .iter()
            .map(|range| {
                let start = map.map(range.start, false);
                start..map.map(range.end, true).max(start)
            })
            .collect();
        (
            ClippedFile {
                name: name.to_string(),
                text: clipped,
                line_starts,
                cut,
            },
            mapped,
        )
    }

    /// The 1-based column in the original line of clipped byte `offset` of
    /// line `line`.
    fn column_number(&self, line: usize, offset: usize) -> usize {
        let line_start = self.line_starts.get(line).copied().unwrap_or(0);
        let column = match self.cut.get(&line) {
            Some(pieces) => {
                // The piece holding it, or the one after the `…` it is in.
                let piece = pieces
                    .iter()
                    .find(|piece| offset < piece.clipped_start + piece.original.len())
                    .unwrap_or(&pieces[pieces.len() - 1]);
                let within = offset.saturating_sub(piece.clipped_start);
                let within = self.text[piece.clipped_start..]
                    .get(..within)
                    .map_or(0, |text| text.chars().count());
                piece.column + within
            }
            None => self
                .text
                .get(line_start..offset.max(line_start))
                .map_or(0, |text| text.chars().count()),
        };
        column + 1
    }
}

impl ClippedFiles {
    /// The files of `diagnostic` (ids into `files`) with its labels' lines
    /// cut, and the diagnostic with its labels moved to match and its
    /// message, labels and notes cut to [`MAX_MESSAGE_CHARS`] a line.
    pub(crate) fn new(
        files: &SimpleFiles<String, String>,
        diagnostic: &Diagnostic<usize>,
    ) -> (ClippedFiles, Diagnostic<usize>) {
        let mut diagnostic = diagnostic.clone();
        diagnostic.message = clip_message(&diagnostic.message);
        for note in &mut diagnostic.notes {
            *note = clip_message(note);
        }
        let mut clipped = ClippedFiles { files: Vec::new() };
        let mut ids: Vec<usize> = diagnostic
            .labels
            .iter()
            .map(|label| label.file_id)
            .collect();
        ids.sort_unstable();
        ids.dedup();
        for id in ids {
            let Ok(file) = files.get(id) else { continue };
            let positions: Vec<usize> = diagnostic
                .labels
                .iter()
                .enumerate()
                .filter(|(_, label)| label.file_id == id)
                .map(|(position, _)| position)
                .collect();
            let text = file.source();
            // Ranges within the text and on character boundaries.
            let ranges: Vec<Range<usize>> = positions
                .iter()
                .map(|&position| {
                    let range = &diagnostic.labels[position].range;
                    let start = crate::diagnostics::floor_char_boundary(text, range.start);
                    start..crate::diagnostics::floor_char_boundary(text, range.end).max(start)
                })
                .collect();
            let (file, mapped) = ClippedFile::new(file.name(), text, &ranges);
            for (&position, range) in positions.iter().zip(mapped) {
                let label = &mut diagnostic.labels[position];
                label.range = range;
                label.message = clip_message(&label.message);
            }
            if clipped.files.len() <= id {
                clipped.files.resize_with(id + 1, || None);
            }
            clipped.files[id] = Some(file);
        }
        (clipped, diagnostic)
    }

    fn file(&self, id: usize) -> Result<&ClippedFile, FilesError> {
        self.files
            .get(id)
            .and_then(Option::as_ref)
            .ok_or(FilesError::FileMissing)
    }
}

impl<'a> Files<'a> for ClippedFiles {
    type FileId = usize;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: usize) -> Result<&'a str, FilesError> {
        Ok(&self.file(id)?.name)
    }

    fn source(&'a self, id: usize) -> Result<&'a str, FilesError> {
        Ok(&self.file(id)?.text)
    }

    fn line_index(&'a self, id: usize, byte_index: usize) -> Result<usize, FilesError> {
        Ok(line_index(&self.file(id)?.line_starts, byte_index))
    }

    fn column_number(
        &'a self,
        id: usize,
        line_index: usize,
        byte_index: usize,
    ) -> Result<usize, FilesError> {
        Ok(self.file(id)?.column_number(line_index, byte_index))
    }

    fn line_range(&'a self, id: usize, line_index: usize) -> Result<Range<usize>, FilesError> {
        let file = self.file(id)?;
        let start = *file
            .line_starts
            .get(line_index)
            .ok_or(FilesError::LineTooLarge {
                given: line_index,
                max: file.line_starts.len().saturating_sub(1),
            })?;
        let end = file
            .line_starts
            .get(line_index + 1)
            .copied()
            .unwrap_or(file.text.len());
        Ok(start..end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One label's range, as the functions take a list of them.
    fn one(range: Range<usize>) -> Vec<Range<usize>> {
        std::iter::once(range).collect()
    }

    #[test]
    fn short_messages_stay_and_long_lines_lose_their_middle() {
        assert_eq!(clip_message("short\nlines"), "short\nlines");
        let long = format!("start {} end", "x".repeat(3_000_000));
        let clipped = clip_message(&format!("first\n{long}"));
        assert!(clipped.starts_with("first\nstart xxx"));
        assert!(clipped.ends_with("xxx end"));
        assert!(clipped.contains("characters left out"));
        let second = clipped.lines().nth(1).unwrap();
        assert!(second.chars().count() <= MAX_MESSAGE_CHARS + 40, "{second}");
    }

    #[test]
    fn a_long_line_is_cut_around_its_label_and_keeps_its_column() {
        let line = format!("{}TARGET{}", "a".repeat(5000), "b".repeat(5000));
        let text = format!("first\n{line}\nlast\n");
        let start = text.find("TARGET").unwrap();
        let (file, ranges) = ClippedFile::new("f", &text, &one(start..start + 6));
        let shown = file.text.lines().nth(1).unwrap();
        assert!(shown.chars().count() <= MAX_SOURCE_COLUMNS, "{shown}");
        assert!(shown.starts_with('…') && shown.ends_with('…'), "{shown}");
        assert_eq!(&file.text[ranges[0].clone()], "TARGET");
        // Line numbers stay; lines far from every label are left empty.
        assert_eq!(file.text.lines().count(), 3);
        assert_eq!(file.text.lines().next(), Some("first"));
        assert_eq!(file.column_number(1, ranges[0].start), 5001);
        let far = format!("{}{text}", "far\n".repeat(5));
        let start = far.find("TARGET").unwrap();
        let (file, _) = ClippedFile::new("f", &far, &one(start..start + 6));
        let head: String = file.text.chars().take(20).collect();
        assert!(file.text.starts_with("\n\n\n\nfar\nfirst\n…"), "{head:?}");
    }

    #[test]
    fn labels_far_apart_on_one_line_each_keep_their_text() {
        let line = format!(
            "{}ONE{}TWO{}",
            "é".repeat(1000),
            "x".repeat(100_000),
            "z".repeat(10)
        );
        let one = line.find("ONE").unwrap();
        let two = line.find("TWO").unwrap();
        let (file, ranges) = ClippedFile::new("f", &line, &[one..one + 3, two..two + 3]);
        assert_eq!(&file.text[ranges[0].clone()], "ONE");
        assert_eq!(&file.text[ranges[1].clone()], "TWO");
        assert_eq!(file.text.matches('…').count(), 2, "{}", file.text);
        assert_eq!(
            file.column_number(0, ranges[1].start),
            1000 + 3 + 100_000 + 1
        );
    }

    #[test]
    fn a_label_past_the_window_ends_at_the_ellipsis() {
        let line = "y".repeat(10_000);
        let (file, ranges) = ClippedFile::new("f", &line, &one(100..9_000));
        assert!(file.text.ends_with('…'));
        assert_eq!(ranges[0].end, file.text.len());
        assert_eq!(file.column_number(0, ranges[0].start), 101);
    }
}
