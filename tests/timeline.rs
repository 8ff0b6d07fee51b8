//! `--timeline`: a timeline built by hand written as a Chrome trace (the
//! Trace Event Format that Perfetto and chrome://tracing open) and read back
//! event by event; and the command's `--timeline` option, which today, with
//! no timing model in the machine, writes a trace without events that says
//! why.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};
use support::repo_root;
use warpsim_driver::timeline::Trace;
use warpsim_machine::stats::StallReason;
use warpsim_machine::timing::{BlockSpan, Timeline, WarpSpan};

/// A fresh scratch directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("timeline")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the scratch directory can be made");
    dir
}

/// Runs `warpsim ARGS` in the repository root.
fn warpsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warpsim"))
        .env_remove("RUST_LOG")
        .env_remove("RUST_BACKTRACE")
        .current_dir(repo_root())
        .args(args)
        .output()
        .expect("warpsim starts")
}

fn read_json(path: &Path) -> Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// The clock of the hand-built timeline: 1,600 MHz, so that every time in
/// microseconds below is a binary fraction, exact in JSON both ways.
const CLOCK_MHZ: u32 = 1600;

/// Two blocks on SM 3 one after the other and one on SM 0; warps of SM 3
/// waiting at a barrier on sub-partitions 2 and 0, and one of SM 0 waiting
/// for global memory on sub-partition 1.
fn timeline() -> Timeline {
    Timeline {
        blocks: vec![
            BlockSpan {
                sm: 3,
                block: [0, 0, 0],
                linear: 0,
                start: 0,
                end: 2400,
            },
            BlockSpan {
                sm: 0,
                block: [1, 0, 0],
                linear: 1,
                start: 200,
                end: 1000,
            },
            BlockSpan {
                sm: 3,
                block: [0, 1, 0],
                linear: 2,
                start: 2400,
                end: 4000,
            },
        ],
        warps: vec![
            WarpSpan {
                sm: 3,
                sub_partition: 2,
                linear: 0,
                warp: 2,
                state: StallReason::Barrier,
                start: 400,
                end: 1200,
            },
            WarpSpan {
                sm: 0,
                sub_partition: 1,
                linear: 1,
                warp: 1,
                state: StallReason::LongScoreboard,
                start: 400,
                end: 800,
            },
            WarpSpan {
                sm: 3,
                sub_partition: 0,
                linear: 2,
                warp: 0,
                state: StallReason::Barrier,
                start: 3200,
                end: 4000,
            },
        ],
    }
}

fn metadata(name: &str, pid: u32, tid: u32, value: &str) -> Value {
    json!({"name": name, "ph": "M", "pid": pid, "tid": tid, "ts": 0.0, "args": {"name": value}})
}

#[test]
fn a_timeline_is_written_as_a_chrome_trace() {
    let path = scratch("hand_built").join("trace.json");
    Trace::new("stencil", CLOCK_MHZ, Some(&timeline()))
        .write_file(&path)
        .unwrap();
    let trace = read_json(&path);
    assert_eq!(trace["displayTimeUnit"], "ns");
    assert_eq!(
        trace["otherData"],
        json!({"kernel": "stencil", "clock_mhz": CLOCK_MHZ})
    );
    let events = trace["traceEvents"]
        .as_array()
        .expect("traceEvents is a list");
    // Each SM's metadata, by SM: its name, its blocks' thread, the threads
    // of the sub-partitions whose warps appear; then the blocks in the
    // timeline's order, then the warp spans in theirs.
    let expected = vec![
        metadata("process_name", 0, 0, "SM 0"),
        metadata("thread_name", 0, 0, "blocks"),
        metadata("thread_name", 0, 2, "sub-partition 1 warps"),
        metadata("process_name", 3, 0, "SM 3"),
        metadata("thread_name", 3, 0, "blocks"),
        metadata("thread_name", 3, 1, "sub-partition 0 warps"),
        metadata("thread_name", 3, 3, "sub-partition 2 warps"),
        // ts and dur are microseconds: cycles / 1,600 MHz.
        json!({"name": "block (0,0,0)", "ph": "X", "pid": 3, "tid": 0, "ts": 0.0, "dur": 1.5,
               "args": {"linear": 0, "start_cycle": 0, "end_cycle": 2400}}),
        json!({"name": "block (1,0,0)", "ph": "X", "pid": 0, "tid": 0, "ts": 0.125, "dur": 0.5,
               "args": {"linear": 1, "start_cycle": 200, "end_cycle": 1000}}),
        json!({"name": "block (0,1,0)", "ph": "X", "pid": 3, "tid": 0, "ts": 1.5, "dur": 1.0,
               "args": {"linear": 2, "start_cycle": 2400, "end_cycle": 4000}}),
        json!({"name": "stall_barrier", "ph": "X", "pid": 3, "tid": 3, "ts": 0.25, "dur": 0.5,
               "args": {"block": 0, "warp": 2}}),
        json!({"name": "stall_long_scoreboard", "ph": "X", "pid": 0, "tid": 2, "ts": 0.25, "dur": 0.25,
               "args": {"block": 1, "warp": 1}}),
        json!({"name": "stall_barrier", "ph": "X", "pid": 3, "tid": 1, "ts": 2.0, "dur": 0.5,
               "args": {"block": 2, "warp": 0}}),
    ];
    assert_eq!(events.len(), expected.len());
    for (index, (event, expected)) in events.iter().zip(&expected).enumerate() {
        assert_eq!(event, expected, "event {index}");
    }
    // Times are numbers with a fraction even where they are whole, as the
    // format's microseconds are.
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(r#""ts":1.5,"dur":1.0,"#), "{text}");
}

/// `warpsim run --timeline` on a program of 16 blocks: every block appears
/// exactly once, as a complete event on thread 0 of an SM that has a
/// `process_name` event, its times are its cycles at the report's clock, no
/// block runs past the report's `cycles`, and every warp span lies within
/// its block's span.
#[test]
fn run_with_timeline_writes_a_trace_and_leaves_the_report_alone() {
    let dir = scratch("run");
    let path = dir.join("trace.json");
    let launch = "programs/seed/reduceShared.toml";
    let with = warpsim(&["run", launch, "--timeline", path.to_str().unwrap()]);
    assert_eq!(with.status.code(), Some(0), "{:?}", with);
    let without = warpsim(&["run", launch]);
    assert_eq!(with.stdout, without.stdout);
    let report: Value = serde_json::from_slice(&warpsim(&["run", launch, "--json", "-"]).stdout)
        .expect("JSON report");
    let clock_mhz = report["clock_mhz"].as_f64().expect("clock_mhz");
    let cycles = report["cycles"].as_u64().expect("cycles");
    let trace = read_json(&path);
    assert_eq!(trace["displayTimeUnit"], "ns");
    assert_eq!(
        trace["otherData"],
        json!({"kernel": "reduceShared", "clock_mhz": report["clock_mhz"]})
    );
    let events = trace["traceEvents"].as_array().expect("traceEvents");
    let named: Vec<u64> = events
        .iter()
        .filter(|event| event["name"] == "process_name")
        .map(|event| event["pid"].as_u64().expect("pid"))
        .collect();
    let blocks: Vec<&Value> = events
        .iter()
        .filter(|event| event["ph"] == "X" && event["tid"] == 0)
        .collect();
    let mut linear: Vec<u64> = blocks
        .iter()
        .map(|block| block["args"]["linear"].as_u64().expect("linear"))
        .collect();
    linear.sort_unstable();
    assert_eq!(linear, (0..16).collect::<Vec<u64>>());
    let mut spans = std::collections::HashMap::new();
    for block in &blocks {
        assert!(named.contains(&block["pid"].as_u64().unwrap()), "{block}");
        let start = block["args"]["start_cycle"].as_u64().unwrap();
        let end = block["args"]["end_cycle"].as_u64().unwrap();
        assert!(start < end && end <= cycles, "{block}");
        let ts = block["ts"].as_f64().unwrap();
        let dur = block["dur"].as_f64().unwrap();
        assert!((ts - start as f64 / clock_mhz).abs() < 1e-9, "{block}");
        assert!((ts + dur - end as f64 / clock_mhz).abs() < 1e-9, "{block}");
        spans.insert(block["args"]["linear"].as_u64().unwrap(), (ts, ts + dur));
    }
    let warps: Vec<&Value> = events
        .iter()
        .filter(|event| event["ph"] == "X" && event["tid"] != 0)
        .collect();
    // reduceShared waits at __syncthreads: its warps have barrier spans.
    assert!(!warps.is_empty());
    for warp in warps {
        assert_eq!(warp["name"], "stall_barrier");
        let (start, end) = spans[&warp["args"]["block"].as_u64().unwrap()];
        let ts = warp["ts"].as_f64().unwrap();
        let dur = warp["dur"].as_f64().unwrap();
        assert!(ts >= start - 1e-9 && ts + dur <= end + 1e-9, "{warp}");
    }

    // `check` records it too.
    let checked = dir.join("checked.json");
    let output = warpsim(&["check", launch, "--timeline", checked.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{:?}", output);
    assert_eq!(read_json(&checked)["otherData"]["kernel"], "reduceShared");
}

#[test]
fn a_timeline_that_cannot_be_written_is_an_error_before_the_run() {
    let output = warpsim(&[
        "run",
        "programs/seed/reduceShared.toml",
        "--timeline",
        "/nonexistent-directory/trace.json",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr
            .starts_with("error: cannot write the timeline to /nonexistent-directory/trace.json: "),
        "{stderr}"
    );
    assert!(output.stdout.is_empty());

    // A source alone is only checked statically: there is no run to record.
    let output = warpsim(&[
        "check",
        "programs/seed/reduceShared.kir",
        "--timeline",
        "/nonexistent-directory/trace.json",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("--timeline records a run"), "{stderr}");
}
