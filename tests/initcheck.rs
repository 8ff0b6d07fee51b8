//! The initialization checker, file-driven: every launch file in
//! `programs/initcheck/` is checked, and what `warpsim check` prints must
//! equal the `.check` file beside it (`WARPSIM_BLESS=1 cargo test -p warpsim
//! --test initcheck` rewrites them). The expected findings of each kernel
//! are argued in the comment above it in `programs/initcheck/initcheck.cu`.
//!
//! Also: the fill pattern of fresh memory in the kernels' outputs (and
//! another pattern from the machine file), outputs that do not change when
//! checking, the same findings for any number of host threads, a plain run
//! that looks for nothing, and `warpsim run --check --json`.

mod support;

use std::path::PathBuf;

use support::{check_expected, check_launch, i32s, launch_files, repo_root};
use warpsim_driver::check::{FindingKind, Severity};

fn initcheck_launches() -> Vec<PathBuf> {
    launch_files()
        .into_iter()
        .filter(|path| path.parent().is_some_and(|dir| dir.ends_with("initcheck")))
        .collect()
}

fn launch(name: &str) -> PathBuf {
    repo_root()
        .join("programs/initcheck")
        .join(format!("{name}.toml"))
}

fn machine(fresh_fill: u8) -> warpsim_machine::MachineConfig {
    let mut config = warpsim_driver::load_config(None).expect("the built-in machine");
    config.memory.fresh_fill = fresh_fill;
    config
}

/// The `out` buffer of a checked run of `name` on a machine whose fresh
/// memory holds `fresh_fill` bytes.
fn out(name: &str, fresh_fill: u8) -> Vec<i32> {
    let (_, _, result) = check_launch(&launch(name), machine(fresh_fill), 2);
    i32s(&result.buffer("out").expect("buffer out"))
}

#[test]
fn every_initcheck_program_prints_its_expected_findings() {
    let launches = initcheck_launches();
    assert_eq!(launches.len(), 7, "{launches:?}");
    let mut failures = Vec::new();
    for launch in &launches {
        let (text, _, _) = check_launch(launch, machine(0xff), 2);
        if let Some(difference) = check_expected(&launch.with_extension("check"), &text) {
            failures.push(difference);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Each faulty kernel has one uninitialized-read error, at the line its
/// comment names, with the threads it names; the correct ones have none.
#[test]
fn each_kernel_reports_its_reads_at_its_line() {
    let source = std::fs::read_to_string(repo_root().join("programs/initcheck/initcheck.cu"))
        .expect("the source");
    let line_of = |marker: &str| {
        source
            .lines()
            .position(|line| line.contains(marker))
            .expect("a marked line") as u32
            + 1
    };
    let expected = [
        ("sharedMissingSync", None),
        ("sharedWithSync", None),
        ("sharedCounterNotZeroed", Some(("<- not zeroed", "0-31"))),
        ("dynamicSharedHalo", Some(("<- halo", "63"))),
        ("dynamicSharedHaloWritten", None),
        (
            "localArrayPartlyWritten",
            Some(("<- local", "6-7, 14-15, 22-23, 30-31")),
        ),
        ("localArrayAllWritten", None),
    ];
    for (name, read) in expected {
        let (text, outcome, _) = check_launch(&launch(name), machine(0xff), 2);
        // sharedMissingSync's missing barrier is a race (tests/racecheck.rs
        // looks at those), not an uninitialized read.
        let found: Vec<(u32, &str, Severity)> = outcome
            .findings
            .iter()
            .filter(|finding| finding.kind != FindingKind::SharedRace)
            .map(|finding| {
                assert_eq!(finding.kind, FindingKind::UninitializedRead, "{text}");
                (finding.line, finding.threads.as_str(), finding.severity)
            })
            .collect();
        let expected: Vec<(u32, &str, Severity)> = read
            .map(|(marker, threads)| (line_of(marker), threads, Severity::Error))
            .into_iter()
            .collect();
        assert_eq!(found, expected, "{name}:\n{text}");
        let racy = name == "sharedMissingSync";
        assert_eq!(outcome.failed, read.is_some() || racy, "{name}");
    }
}

/// What the missing writes leave shows in the outputs: -1 from the default
/// 0xff bytes, 0 or 0x7f7f7f7f from other fills; the written values as the
/// comments in initcheck.cu say.
#[test]
fn the_outputs_show_the_fill_pattern() {
    for (fill, word) in [(0xff, -1i32), (0x00, 0), (0x7f, 0x7f7f_7f7f)] {
        let missing_sync = out("sharedMissingSync", fill);
        // Both warps store before either loads (initcheck.cu).
        let expected: Vec<i32> = (0..64).map(|t| 63 - t).collect();
        assert_eq!(missing_sync[..64], expected, "fill {fill:#x}");

        let counter = out("sharedCounterNotZeroed", fill);
        assert_eq!(counter[0], word.wrapping_add(64), "fill {fill:#x}");

        let halo = out("dynamicSharedHalo", fill);
        assert_eq!(halo[63], 126i32.wrapping_add(word), "fill {fill:#x}");
        assert_eq!(halo[0], 2, "fill {fill:#x}");

        let local = out("localArrayPartlyWritten", fill);
        let expected: Vec<i32> = (0..32)
            .map(|t| if t % 8 >= 6 { word } else { 10 * (t % 8) + 1 })
            .collect();
        assert_eq!(local[..32], expected, "fill {fill:#x}");
    }
    // The correct kernels do not depend on the fill.
    for fill in [0x00, 0xff] {
        let with_sync = out("sharedWithSync", fill);
        assert_eq!(with_sync[..64], (0..64).rev().collect::<Vec<i32>>());
        assert_eq!(out("dynamicSharedHaloWritten", fill)[63], 126);
        let all_written = out("localArrayAllWritten", fill);
        let expected: Vec<i32> = (0..32).map(|t| 10 * (t % 8) + 1).collect();
        assert_eq!(all_written[..32], expected);
    }
}

/// The checker only observes: a plain run and a checked run leave the same
/// memory and counters, and a plain run looks for no uninitialized reads.
#[test]
fn checking_changes_nothing_and_a_plain_run_looks_for_nothing() {
    for launch in initcheck_launches() {
        let prepared = warpsim_driver::prepare(&launch, machine(0xff)).expect("it prepares");
        let plain = prepared.execute(2).expect("it runs");
        let (checked, _) = prepared.check(2).expect("it runs");
        assert_eq!(plain.buffers(), checked.buffers(), "{}", launch.display());
        assert_eq!(
            plain.report.totals,
            checked.report.totals,
            "{}",
            launch.display()
        );
        assert!(
            plain
                .findings
                .iter()
                .all(|finding| finding.kind != FindingKind::UninitializedRead),
            "{}",
            launch.display()
        );
    }
}

#[test]
fn findings_do_not_depend_on_the_number_of_host_threads() {
    for launch in initcheck_launches() {
        let (one, _, one_result) = check_launch(&launch, machine(0xff), 1);
        let (three, _, three_result) = check_launch(&launch, machine(0xff), 3);
        assert_eq!(one, three, "{}", launch.display());
        assert_eq!(
            one_result.report.to_json(),
            three_result.report.to_json(),
            "{}",
            launch.display()
        );
    }
}

/// `warpsim run --check --json -`: exit code 1, the diagnostic on stderr,
/// the finding in the JSON report with its fields.
#[test]
fn run_check_reports_the_read_in_json() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_warpsim"))
        .current_dir(repo_root())
        .args(["run", "--check", "--json", "-"])
        .arg("programs/initcheck/dynamicSharedHalo.toml")
        .output()
        .expect("warpsim runs");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("[uninitialized-read]"), "{stderr}");
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let findings = json["findings"].as_array().expect("findings");
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let finding = &findings[0];
    assert_eq!(finding["kind"], "uninitialized-read");
    assert_eq!(finding["severity"], "error");
    assert_eq!(finding["file"], "programs/initcheck/initcheck.cu");
    assert_eq!(finding["threads"], "63");
    assert_eq!(finding["blocks"], 1);
    let message = finding["message"].as_str().unwrap();
    assert!(message.contains("`dyn`"), "{message}");
    assert!(message.contains("256-259"), "{message}");
}
