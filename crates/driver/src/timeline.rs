//! `--timeline`: what each SM held over a launch, written as a Chrome trace
//! that Perfetto (<https://ui.perfetto.dev>) and `chrome://tracing` open.
//!
//! The file follows Google's Trace Event Format
//! (<https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU>),
//! in its object form: `{"traceEvents": [...], "displayTimeUnit": "ns",
//! "otherData": {...}}`.
//!
//! - Each SM is a process, its `pid` the SM's index, named `SM 12` by a
//!   `process_name` metadata event (`"ph": "M"`).
//! - Thread 0 of an SM holds its blocks, thread `1 + s` the warps of its
//!   sub-partition `s`; `thread_name` metadata events name them.
//! - A block's stay on its SM is a complete event (`"ph": "X"`) named
//!   `block (x,y,z)`, with `args` `linear` (its linear index),
//!   `start_cycle` and `end_cycle`.
//! - A warp's span in a state worth seeing (a barrier wait, a long memory
//!   wait) is a complete event named after the state as Nsight Compute
//!   names it (`stall_barrier`), with `args` `block` (the block's linear
//!   index) and `warp` (the warp's index in its block).
//! - `ts` and `dur` are microseconds, as the format says, computed from
//!   cycles at the launch's clock (cycles / MHz); metadata events have
//!   `ts` 0.
//! - `otherData` has `kernel` and `clock_mhz`, and a `note` when the
//!   machine recorded no timeline (the trace then has no events).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;
use warpsim_machine::timing::Timeline;

/// What `otherData` says when the machine recorded no timeline.
pub const NO_TIMELINE_NOTE: &str =
    "the machine recorded no timeline for this launch: the timing model did not run";

/// A Chrome trace: the whole file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Trace {
    #[serde(rename = "traceEvents")]
    pub events: Vec<TraceEvent>,
    /// How the viewer shows times; the events' times are microseconds
    /// whatever this says, and cycles at GPU clocks are nanoseconds.
    #[serde(rename = "displayTimeUnit")]
    pub display_time_unit: &'static str,
    #[serde(rename = "otherData")]
    pub other_data: OtherData,
}

/// One event of the trace.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceEvent {
    pub name: String,
    /// `"X"`, a complete event (a span), or `"M"`, metadata.
    #[serde(rename = "ph")]
    pub phase: &'static str,
    /// The SM.
    #[serde(rename = "pid")]
    pub process: u32,
    /// 0 for the SM's blocks, `1 + s` for sub-partition `s`'s warps.
    #[serde(rename = "tid")]
    pub thread: u32,
    /// The start, in microseconds.
    #[serde(rename = "ts")]
    pub timestamp_us: f64,
    /// The length of a complete event, in microseconds.
    #[serde(rename = "dur", skip_serializing_if = "Option::is_none")]
    pub duration_us: Option<f64>,
    pub args: EventArgs,
}

/// The `args` of an event, by kind.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum EventArgs {
    /// A metadata event's name for its process or thread.
    Name {
        name: String,
    },
    Block {
        linear: u64,
        start_cycle: u64,
        end_cycle: u64,
    },
    Warp {
        block: u64,
        warp: u32,
    },
}

/// What the trace says of itself.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OtherData {
    pub kernel: String,
    /// The clock the cycles were turned into microseconds at.
    pub clock_mhz: u32,
    /// Why the trace has no events, when the machine recorded no timeline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The thread of an SM's process that holds its blocks; sub-partition `s`'s
/// warps are on thread `1 + s`.
pub const BLOCK_THREAD: u32 = 0;

impl Trace {
    /// The trace of `timeline` (none: a trace without events, with a note
    /// saying so), its cycles turned into microseconds at `clock_mhz`.
    /// Events come as: every SM's metadata, by SM; the blocks in the order
    /// the timeline lists them; then the warp spans in theirs.
    pub fn new(kernel: &str, clock_mhz: u32, timeline: Option<&Timeline>) -> Trace {
        let other_data = OtherData {
            kernel: kernel.to_string(),
            clock_mhz,
            note: timeline.is_none().then(|| NO_TIMELINE_NOTE.to_string()),
        };
        let Some(timeline) = timeline else {
            return Trace {
                events: Vec::new(),
                display_time_unit: "ns",
                other_data,
            };
        };
        let microseconds = |cycles: u64| cycles as f64 / f64::from(clock_mhz.max(1));
        // The SMs that appear, each with the sub-partitions whose warps do,
        // in order, for the metadata that names them.
        let mut sub_partitions_of: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for block in &timeline.blocks {
            sub_partitions_of.entry(block.sm).or_default();
        }
        for warp in &timeline.warps {
            let used = sub_partitions_of.entry(warp.sm).or_default();
            if !used.contains(&warp.sub_partition) {
                used.push(warp.sub_partition);
            }
        }
        let metadata = |name: &str, process: u32, thread: u32, value: String| TraceEvent {
            name: name.to_string(),
            phase: "M",
            process,
            thread,
            timestamp_us: 0.0,
            duration_us: None,
            args: EventArgs::Name { name: value },
        };
        let mut events = Vec::new();
        for (&sm, sub_partitions) in &mut sub_partitions_of {
            sub_partitions.sort_unstable();
            events.push(metadata("process_name", sm, 0, format!("SM {sm}")));
            events.push(metadata(
                "thread_name",
                sm,
                BLOCK_THREAD,
                "blocks".to_string(),
            ));
            for &sub_partition in sub_partitions.iter() {
                events.push(metadata(
                    "thread_name",
                    sm,
                    1 + sub_partition,
                    format!("sub-partition {sub_partition} warps"),
                ));
            }
        }
        for block in &timeline.blocks {
            let [x, y, z] = block.block;
            events.push(TraceEvent {
                name: format!("block ({x},{y},{z})"),
                phase: "X",
                process: block.sm,
                thread: BLOCK_THREAD,
                timestamp_us: microseconds(block.start),
                duration_us: Some(microseconds(block.end.saturating_sub(block.start))),
                args: EventArgs::Block {
                    linear: block.linear,
                    start_cycle: block.start,
                    end_cycle: block.end,
                },
            });
        }
        for warp in &timeline.warps {
            events.push(TraceEvent {
                name: warp.state.ncu_name().to_string(),
                phase: "X",
                process: warp.sm,
                thread: 1 + warp.sub_partition,
                timestamp_us: microseconds(warp.start),
                duration_us: Some(microseconds(warp.end.saturating_sub(warp.start))),
                args: EventArgs::Warp {
                    block: warp.linear,
                    warp: warp.warp,
                },
            });
        }
        Trace {
            events,
            display_time_unit: "ns",
            other_data,
        }
    }

    /// Writes the trace as JSON to `out`, which is the file at `path`
    /// (named in the error).
    pub fn write(&self, out: impl Write, path: &Path) -> Result<(), TimelineError> {
        let failed = |error: std::io::Error| TimelineError {
            path: path.to_path_buf(),
            error,
        };
        let mut out = BufWriter::new(out);
        // A trace can hold millions of events: compact JSON, not pretty.
        serde_json::to_writer(&mut out, self).map_err(|error| failed(error.into()))?;
        out.write_all(b"\n").map_err(failed)?;
        out.flush().map_err(failed)
    }

    /// Writes the trace to a new file at `path`, replacing one there.
    pub fn write_file(&self, path: &Path) -> Result<(), TimelineError> {
        let file = File::create(path).map_err(|error| TimelineError {
            path: path.to_path_buf(),
            error,
        })?;
        self.write(file, path)
    }
}

/// The timeline could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the timeline to {}: {error}", path.display())]
pub struct TimelineError {
    pub path: PathBuf,
    pub error: std::io::Error,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_timeline_the_trace_is_empty_and_says_why() {
        let trace = Trace::new("k", 1755, None);
        let json: serde_json::Value = serde_json::to_value(&trace).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "traceEvents": [],
                "displayTimeUnit": "ns",
                "otherData": {"kernel": "k", "clock_mhz": 1755, "note": NO_TIMELINE_NOTE},
            })
        );
    }

    #[test]
    fn an_empty_timeline_has_no_note() {
        let trace = Trace::new("k", 1000, Some(&Timeline::default()));
        assert!(trace.events.is_empty());
        assert_eq!(trace.other_data.note, None);
    }

    #[test]
    fn a_file_that_cannot_be_written_is_named() {
        let path = Path::new("/nonexistent-directory/trace.json");
        let error = Trace::new("k", 1000, None).write_file(path).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("cannot write the timeline to /nonexistent-directory/trace.json: "),
            "{error}"
        );
    }
}
