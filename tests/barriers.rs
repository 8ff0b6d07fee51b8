//! The barrier checker (issue 4), file-driven: every launch file in
//! `programs/barriers/` is checked (static uniformity analysis, then a run
//! with the dynamic checker), and what `warpsim check` prints must equal the
//! `.check` file beside it. `WARPSIM_BLESS=1 cargo test --test barriers`
//! rewrites the `.check` files. The expected findings of each kernel are
//! argued in the comment above it in its `.cu`/`.kir` file, and what an H100
//! and compute-sanitizer's synccheck did with it is in
//! `programs/barriers/README.md`.
//!
//! Also: the same findings for any number of host threads; no finding at all
//! on the correct programs of `programs/`; the pre-Volta semantics switch;
//! the JSON form of the findings.

mod support;

use std::path::PathBuf;

use support::{check_expected, check_launch, i32s, launch_files, repo_root};
use warpsim_driver::check::{FindingKind, Severity};

fn barrier_launches() -> Vec<PathBuf> {
    launch_files()
        .into_iter()
        .filter(|path| path.parent().is_some_and(|dir| dir.ends_with("barriers")))
        .collect()
}

fn config(name: Option<&str>) -> warpsim_machine::MachineConfig {
    let path = name.map(|name| repo_root().join("programs/barriers").join(name));
    warpsim_driver::load_config(path.as_deref()).expect("the configuration loads")
}

fn kinds(outcome: &warpsim_driver::check::CheckOutcome) -> Vec<(FindingKind, Severity)> {
    outcome
        .findings
        .iter()
        .map(|finding| (finding.kind, finding.severity))
        .collect()
}

#[test]
fn every_barrier_program_prints_its_expected_findings() {
    let launches = barrier_launches();
    assert!(
        launches.len() >= 25,
        "only {} barrier programs",
        launches.len()
    );
    let mut failures = Vec::new();
    for launch in &launches {
        let (text, _, _) = check_launch(launch, config(None), 2);
        if let Some(difference) = check_expected(&launch.with_extension("check"), &text) {
            failures.push(difference);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn findings_do_not_depend_on_the_number_of_host_threads() {
    for launch in barrier_launches() {
        let (one, _, one_result) = check_launch(&launch, config(None), 1);
        let (three, _, three_result) = check_launch(&launch, config(None), 3);
        assert_eq!(one, three, "{}", launch.display());
        assert_eq!(
            one_result.report.to_json(),
            three_result.report.to_json(),
            "{}",
            launch.display()
        );
    }
}

/// Every kind of finding, and both severities, occur in the suite.
#[test]
fn the_suite_exercises_every_dynamic_and_static_finding() {
    let mut seen = Vec::new();
    for launch in barrier_launches() {
        let (_, outcome, _) = check_launch(&launch, config(None), 2);
        seen.extend(kinds(&outcome));
    }
    for kind in [
        FindingKind::DivergentBarrierInWarp,
        FindingKind::DivergentBarrierInBlock,
        FindingKind::BarrierCompletedByExit,
        FindingKind::Deadlock,
        FindingKind::Livelock,
        FindingKind::WarpSync,
        FindingKind::InvalidBarrier,
        FindingKind::NonUniformBarrier,
        FindingKind::UninitializedRead,
    ] {
        assert!(
            seen.iter().any(|(seen, _)| *seen == kind),
            "no {kind:?} finding"
        );
    }
}

/// The correct programs of the repository (everything outside
/// `programs/barriers/`, `programs/initcheck/` and `programs/racecheck/`,
/// and the kernels of those suites documented as correct) give no finding,
/// static or dynamic.
#[test]
fn correct_programs_have_no_findings() {
    let correct_barrier_kernels = [
        "warpEarlyExit",
        "namedBarrierPairs",
        "producerConsumer",
        "syncthreadsCountAndOr",
        "nestedUniformCorrect",
        "funcBarrierUniform",
        "syncwarpCorrect",
        "shflPartialCorrect",
        "partialWarpExit",
        "exitInsideLoop",
        "loopUniformCorrect",
    ];
    let correct_initcheck_kernels = [
        "sharedWithSync",
        "dynamicSharedHaloWritten",
        "localArrayAllWritten",
    ];
    let correct_racecheck_kernels = [
        "rawWithSync",
        "warpReduceSyncwarp",
        "messagePassingFenced",
        "threadfenceReduction",
        "threadfenceReductionAcquire",
    ];
    // Blocks racing on purpose: the histogram with a plain add instead of
    // atomicAdd (tests/blocks.rs runs it; tests/racecheck.rs checks it).
    let racy_on_purpose = ["racyHistogram"];
    // The async-copy kernels with a bug on purpose: a read before the wait
    // for its cp.async, and an mbarrier phase that never completes
    // (tests/async_copy.rs).
    let async_bugs_on_purpose = ["async_stale_read", "mbarrier_deadlock"];
    // The CUDA samples' reductions that unroll their last warp without
    // __syncwarp() race since Volta (tests/racecheck.rs).
    let legacy_warp_synchronous = [
        "reduce4_unroll_last_warp",
        "reduce6_multi_element",
        "reduce6_multi_element_8M",
    ];
    let mut checked = 0;
    for launch in launch_files() {
        let name = launch.file_stem().unwrap().to_string_lossy().to_string();
        let in_suite = |suite: &str| launch.parent().is_some_and(|dir| dir.ends_with(suite));
        if in_suite("barriers") && !correct_barrier_kernels.contains(&name.as_str())
            || in_suite("initcheck") && !correct_initcheck_kernels.contains(&name.as_str())
            || in_suite("racecheck") && !correct_racecheck_kernels.contains(&name.as_str())
            || legacy_warp_synchronous.contains(&name.as_str())
            || racy_on_purpose.contains(&name.as_str())
            || async_bugs_on_purpose.contains(&name.as_str())
        {
            continue;
        }
        let (text, outcome, _) = check_launch(&launch, config(None), 2);
        assert!(
            outcome.findings.is_empty() && !outcome.failed,
            "{}:\n{text}",
            launch.display()
        );
        checked += 1;
    }
    assert!(checked >= 60, "only {checked} correct programs checked");
}

/// Seed 003's `if/else` with a `__syncthreads()` in each arm, each arm then
/// reading the word the other arm wrote before its barrier
/// (`if-else-neighbour.kir`). With per-thread arrival (Volta and later) the
/// barrier completes once all 128 threads have arrived, at either
/// instruction, so every thread reads a fresh value. With per-warp arrival
/// (pre-Volta) a warp runs the branch's taken side (the odd threads) first
/// and their arrival counts the whole warp: the barrier completes when every
/// warp has run that side, the odd threads read their even neighbours' words
/// before these are written (the -1 stored before), and the checker calls the
/// divergent barrier an error, not a warning. NVRTC's form of the same CUDA
/// (`ifElseSharedNeighbour`) reads after the arms join, so it stays correct.
#[test]
fn pre_volta_semantics_break_the_if_else_barrier_pair() {
    let run = |name: &str, config_name: Option<&str>| {
        let launch = repo_root()
            .join("programs/barriers")
            .join(format!("{name}.toml"));
        let (text, outcome, result) = check_launch(&launch, config(config_name), 2);
        let bytes = result.buffer("out").expect("buffer out");
        (text, outcome, i32s(&bytes)[..128].to_vec())
    };
    // What each thread stores before its arm's barrier, as the kernels say.
    let written = |t: i32| if t % 2 == 0 { 2 * t } else { 2 * t - 1000 };
    let fresh: Vec<i32> = (0..128)
        .map(|t| written(if t % 2 == 0 { t + 1 } else { t - 1 }))
        .collect();
    let stale: Vec<i32> = (0..128)
        .map(|t| if t % 2 == 1 { -1 } else { fresh[t as usize] })
        .collect();
    let divergent = |outcome: &warpsim_driver::check::CheckOutcome| {
        outcome
            .findings
            .iter()
            .filter(|finding| finding.kind == FindingKind::DivergentBarrierInWarp)
            .map(|finding| finding.severity)
            .collect::<Vec<_>>()
    };

    let (_, volta, out) = run("ifElseNeighbourInArms", None);
    assert_eq!(out, fresh);
    assert_eq!(divergent(&volta), [Severity::Warning]);
    assert!(!volta.failed);

    let (text, pre_volta, out) = run("ifElseNeighbourInArms", Some("pre-volta.sim.toml"));
    assert_eq!(out, stale);
    // One finding per barrier phase: the odd side's, then the even side's.
    assert_eq!(
        divergent(&pre_volta),
        [Severity::Error, Severity::Error],
        "{text}"
    );
    assert!(pre_volta.failed);

    let (_, _, out) = run("ifElseSharedNeighbour", Some("pre-volta.sim.toml"));
    assert_eq!(out, fresh);
}

/// `warpsim check --json -`: the report with its `findings`, each with the
/// fields the issue names; the diagnostics go to stderr; exit code 1 when an
/// error was found, 0 for warnings only.
#[test]
fn check_json_lists_the_findings() {
    // Run from the repository's root, so that paths are relative to it.
    let run = |name: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_warpsim"))
            .current_dir(repo_root())
            .args(["check", "--json", "-"])
            .arg(format!("programs/barriers/{name}"))
            .output()
            .expect("warpsim runs")
    };
    let output = run("condSync.toml");
    assert_eq!(output.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let findings = json["findings"].as_array().expect("findings");
    let dynamic = findings
        .iter()
        .find(|finding| finding["kind"] == "barrier-completed-by-exit")
        .expect("the exit finding");
    assert_eq!(dynamic["severity"], "warning");
    assert_eq!(dynamic["file"], "programs/barriers/public-cases.cu");
    assert_eq!(dynamic["block"], serde_json::json!([0, 0, 0]));
    assert_eq!(dynamic["threads"], "0-63");
    assert!(dynamic["message"].as_str().unwrap().contains("exited"));
    let source = std::fs::read_to_string(repo_root().join("programs/barriers/public-cases.cu"))
        .expect("the source");
    let line = dynamic["line"].as_u64().unwrap() as usize;
    assert!(
        source.lines().nth(line - 1).unwrap().contains("<- cs"),
        "line {line}"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("[barrier-completed-by-exit]"), "{stderr}");

    let output = run("spinDeadlock.toml");
    assert_eq!(output.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let livelock = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|finding| finding["kind"] == "livelock")
        .expect("the livelock");
    assert_eq!(livelock["severity"], "error");
    let spin = livelock["sites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|site| site["label"].as_str().unwrap().contains("polling"))
        .expect("the spinning loop");
    assert_eq!(spin["threads"], "32-63");
    assert!(spin["label"].as_str().unwrap().contains("buffer `out`"));
}

/// What an H100 did with each CUDA kernel of the suite
/// (`programs/barriers/hardware/results.txt`, written by
/// `hardware/run.sh`): the sum of `out` when it finished, or that it hung.
fn hardware_results() -> Vec<(String, Option<i64>)> {
    let text = std::fs::read_to_string(repo_root().join("programs/barriers/hardware/results.txt"))
        .expect("the H100 results");
    // The second run (skip-to-exit.cu) prints `case NAME: done, sum of ... = N`.
    let second =
        std::fs::read_to_string(repo_root().join("programs/barriers/hardware/skip-to-exit.txt"))
            .expect("the H100 results of skip-to-exit.cu");
    let mut results: Vec<(String, Option<i64>)> = Vec::new();
    for line in second.lines() {
        let Some(rest) = line.strip_prefix("case ") else {
            continue;
        };
        let (name, sum) = rest
            .split_once(": done, sum of out[0..64) = ")
            .expect("a sum");
        if !results.iter().any(|(seen, _)| seen == name) {
            results.push((name.to_string(), Some(sum.parse().expect("a number"))));
        }
    }
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("### ") {
            current = rest.split(':').next().map(str::to_string);
            continue;
        }
        let Some(name) = &current else { continue };
        if results.iter().any(|(seen, _)| seen == name) {
            continue;
        }
        if let Some(rest) = line.strip_prefix("status: finished; sum ") {
            let sum = rest.split(',').next().unwrap().parse().expect("a sum");
            results.push((name.clone(), Some(sum)));
        } else if line.starts_with("RESULT: hangs") {
            results.push((name.clone(), None));
        }
    }
    results
}

/// Every CUDA kernel of the suite gives the H100's output (the sum of
/// `out`), and the kernels that hang on the H100 end in a deadlock or a
/// livelock. Left out, each for a reason: the IR kernels (the GPU ran CUDA
/// equivalents that also write a second part of `out`), and
/// `invalidBarrierId16`, which an H100 runs as if barrier 16 were valid
/// while the machine stops it (the PTX ISA allows 0 to 15; the checker
/// reports it as an error either way).
///
/// A kernel whose output depends on memory it never wrote (an
/// `uninitialized-read` finding) reads warpsim's fill pattern (0xff bytes)
/// where the H100, freshly started, had zeros: it is compared on a machine
/// whose fresh memory is zero, as the H100's was, and must be one of the
/// kernels known to do it (funcBarrierDivergent: the even threads read the
/// slots of the odd threads, which never call the function that writes
/// them).
#[test]
fn outputs_match_the_h100() {
    let results = hardware_results();
    assert!(
        results.len() >= 30,
        "only {} hardware results",
        results.len()
    );
    let mut compared = 0;
    for (name, hardware) in results {
        let launch = repo_root()
            .join("programs/barriers")
            .join(format!("{name}.toml"));
        let text = std::fs::read_to_string(&launch).expect("a launch file");
        if !text.contains(".ptx\"") || name == "invalidBarrierId16" {
            continue;
        }
        let (mut report, outcome, mut result) = check_launch(&launch, config(None), 2);
        let reads_fresh_memory = outcome
            .findings
            .iter()
            .any(|finding| finding.kind == FindingKind::UninitializedRead);
        if reads_fresh_memory {
            assert!(
                ["funcBarrierDivergent"].contains(&name.as_str()),
                "{name} reads memory it never wrote:\n{report}"
            );
            let mut zeroed = config(None);
            zeroed.memory.fresh_fill = 0;
            (report, _, result) = check_launch(&launch, zeroed, 2);
        }
        match hardware {
            Some(sum) => {
                let bytes = result.buffer("out").expect("buffer out");
                let ours: i64 = i32s(&bytes).iter().map(|&value| i64::from(value)).sum();
                assert_eq!(ours, sum, "{name}:\n{report}");
            }
            None => {
                let hangs = outcome.findings.iter().any(|finding| {
                    matches!(finding.kind, FindingKind::Deadlock | FindingKind::Livelock)
                });
                assert!(hangs, "{name} hangs on the H100:\n{report}");
            }
        }
        compared += 1;
    }
    assert!(compared >= 30, "only {compared} kernels compared");
}

/// A finding in code NVRTC inlined is at the user's call, and its JSON says
/// which line of the device function the code came from.
#[test]
fn findings_in_inlined_code_are_at_the_call() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_warpsim"))
        .current_dir(repo_root())
        .args(["check", "--json", "-"])
        .arg("programs/barriers/inlineBarrierDivergent.toml")
        .output()
        .expect("warpsim runs");
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let source = std::fs::read_to_string(repo_root().join("programs/barriers/inlined.cu"))
        .expect("the source");
    let line_of = |marker: &str| {
        source
            .lines()
            .position(|line| line.contains(marker))
            .expect("a marked line") as u64
            + 1
    };
    let findings = json["findings"].as_array().expect("findings");
    // The static finding and the two barrier findings the run makes, then
    // the even threads' read of `s[t]`, which only the odd threads wrote:
    // not inlined, at its own line.
    assert_eq!(findings.len(), 4, "{findings:#?}");
    let (reads, barrier_findings): (Vec<_>, Vec<_>) = findings
        .iter()
        .partition(|finding| finding["kind"] == "uninitialized-read");
    assert_eq!(reads.len(), 1, "{findings:#?}");
    assert_eq!(reads[0]["line"], line_of("out[t] = s[t]"));
    assert_eq!(reads[0]["threads"], "0-126 step 2");
    for finding in barrier_findings {
        assert_eq!(finding["file"], "programs/barriers/inlined.cu");
        assert_eq!(finding["line"], line_of("<- ib1"));
        assert_eq!(
            finding["inlined_from"],
            serde_json::json!([{"file": "programs/barriers/inlined.cu", "line": line_of("<- ib0")}])
        );
    }
    // The instruction's own line in the report too.
    let barrier = json["instructions"]
        .as_array()
        .expect("instructions")
        .iter()
        .find(|instruction| instruction["text"] == "bar.sync 0")
        .expect("the barrier");
    assert_eq!(barrier["line"], line_of("<- ib1"));
    assert_eq!(barrier["inlined_from"][0]["line"], line_of("<- ib0"));
}
