//! File-driven tests: every program in `programs/*/` runs, and what warpsim
//! prints about it (its `printf` output, the report table, the final
//! buffers' digests, the failure if any) must equal the `.report` file kept
//! beside the launch file; for a few programs, `warpsim annotate`'s output
//! must equal the `.annotate` file beside it.
//! `WARPSIM_BLESS=1 cargo test --test programs` rewrites the `.report` and
//! `.annotate` files.
//! The same run with 1 and with 2 host threads must give identical JSON
//! reports and buffers, and every report's per-line rollup must add up to
//! its per-instruction counts.

mod support;

use std::collections::HashSet;

use support::{check_expected, digest, launch_files, repo_root};
use warpsim_driver::annotate::{annotate_with, AnnotateOptions};
use warpsim_driver::report::Report;
use warpsim_ir::{MemoryAccessKind, StateSpace};
use warpsim_machine::InstrStats;

fn render(launch: &std::path::Path, host_threads: usize) -> (String, String) {
    let config = warpsim_driver::load_config(None).unwrap();
    let prepared = warpsim_driver::prepare(launch, config)
        .unwrap_or_else(|error| panic!("{}: {error}", launch.display()));
    let mut result = prepared.execute(host_threads).unwrap();
    // Paths in expected files are relative to the repository root.
    let root = format!("{}/", repo_root().display());
    result.report = support::relative_to_root(result.report);
    let mut text = String::from_utf8_lossy(&result.printed).into_owned();
    text.push_str(&result.report.to_table());
    text.push('\n');
    for (name, bytes) in &result.buffers() {
        text.push_str(&format!(
            "buffer {name}: {} bytes, fnv1a {:016x}\n",
            bytes.len(),
            digest(bytes)
        ));
    }
    if let Some(failure) = &result.failure {
        text.push('\n');
        text.push_str(&failure.replace(&root, ""));
    }
    (text, result.report.to_json())
}

#[test]
fn every_program_prints_its_expected_report() {
    let launches = launch_files();
    assert!(
        launches.len() >= 17,
        "only {} programs found",
        launches.len()
    );
    let mut failures = Vec::new();
    for launch in &launches {
        let (text, _) = render(launch, 2);
        if let Some(difference) = check_expected(&launch.with_extension("report"), &text) {
            failures.push(difference);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn reports_do_not_depend_on_the_number_of_host_threads() {
    for launch in launch_files() {
        let one = render(&launch, 1);
        let two = render(&launch, 2);
        let three = render(&launch, 3);
        assert_eq!(one, two, "{}", launch.display());
        assert_eq!(one, three, "{}", launch.display());
    }
}

/// The programs whose annotated source is kept beside them: a `.kir` seed
/// kernel with its 32-way conflict, and two corpus kernels compiled from
/// CUDA, one with code inlined from a device function.
const ANNOTATED: &[&str] = &[
    "seed/transposeSmemF",
    "corpus/bitonic_sort_shared",
    "corpus/noinline_shared_calls",
];

#[test]
fn annotated_programs_print_their_expected_source_margins() {
    let mut failures = Vec::new();
    for name in ANNOTATED {
        let launch = repo_root().join("programs").join(format!("{name}.toml"));
        let config = warpsim_driver::load_config(None).unwrap();
        let prepared = warpsim_driver::prepare(&launch, config).unwrap();
        let report = support::relative_to_root(prepared.execute(2).unwrap().report);
        // The report names files from the repository root, as a user
        // running there reads them.
        let annotation = annotate_with(&report, &AnnotateOptions::default(), |file| {
            std::fs::read_to_string(repo_root().join(file))
        })
        .unwrap_or_else(|error| panic!("{name}: {error}"));
        assert_eq!(annotation.notes, Vec::<String>::new(), "{name}");
        if let Some(difference) =
            check_expected(&launch.with_extension("annotate"), &annotation.text)
        {
            failures.push(difference);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The rollup of `report` against its instructions and totals: every memory
/// instruction but parameter loads is in exactly one row, of its own file,
/// line, space and kind; each row's counts are the sums of its
/// instructions'; rows are in source order, one per key; and the rows' sums
/// per kind of access are the totals'.
fn check_rollup(name: &str, report: &Report) {
    type Key = (String, u32, StateSpace, MemoryAccessKind);
    let mut expected: Vec<(Key, u64, InstrStats)> = Vec::new();
    for instruction in &report.instructions {
        let (Some(space), Some(op)) = (instruction.space, instruction.op) else {
            continue;
        };
        if space == StateSpace::Param {
            continue;
        }
        let key = (instruction.file.clone(), instruction.line, space, op);
        let position = match expected.iter().position(|(known, _, _)| *known == key) {
            Some(position) => position,
            None => {
                expected.push((key, 0, InstrStats::default()));
                expected.len() - 1
            }
        };
        expected[position].1 += 1;
        expected[position].2.add(&instruction.counts);
    }
    assert_eq!(report.lines.len(), expected.len(), "{name}: rows");
    let mut seen = HashSet::new();
    for row in &report.lines {
        let key = (row.file.clone(), row.line, row.space, row.op);
        assert!(seen.insert(key.clone()), "{name}: {key:?} twice");
        let (_, instructions, counts) = expected
            .iter()
            .find(|(known, _, _)| *known == key)
            .unwrap_or_else(|| panic!("{name}: row {key:?} has no instruction"));
        assert_eq!(row.instructions, *instructions, "{name}: {key:?}");
        assert_eq!(row.counts, *counts, "{name}: {key:?}");
    }
    assert!(
        report
            .lines
            .windows(2)
            .all(|pair| (&pair[0].file, pair[0].line) <= (&pair[1].file, pair[1].line)),
        "{name}: rows out of source order"
    );
    // The totals by kind of access: atomics and reductions count together;
    // a `cp.async` counts its shared-memory side with the stores and its
    // global side with the loads.
    use warpsim_driver::report::{GlobalTotals, SharedTotals};
    use MemoryAccessKind::{AsyncCopy, Atomic, Load, Reduction, Store};
    type Kinds<'a> = (
        &'a [MemoryAccessKind],
        &'a [MemoryAccessKind],
        &'a SharedTotals,
        &'a GlobalTotals,
    );
    let kinds: [Kinds; 3] = [
        (
            &[Load],
            &[Load, AsyncCopy],
            &report.totals.shared_load,
            &report.totals.global_load,
        ),
        (
            &[Store, AsyncCopy],
            &[Store],
            &report.totals.shared_store,
            &report.totals.global_store,
        ),
        (
            &[Atomic, Reduction],
            &[Atomic, Reduction],
            &report.totals.shared_atomic,
            &report.totals.global_atomic,
        ),
    ];
    for (shared_ops, global_ops, shared, global) in kinds {
        let sum = |ops: &[MemoryAccessKind], field: fn(&InstrStats) -> u64| -> u64 {
            report
                .lines
                .iter()
                .filter(|row| ops.contains(&row.op))
                .map(|row| field(&row.counts))
                .sum()
        };
        let from_rows = SharedTotals {
            requests: sum(shared_ops, |counts| counts.shared_requests),
            wavefronts: sum(shared_ops, |counts| counts.wavefronts),
            ideal_wavefronts: sum(shared_ops, |counts| counts.ideal_wavefronts),
            bank_conflicts: sum(shared_ops, |counts| counts.bank_conflicts),
        };
        assert_eq!(from_rows, *shared, "{name}: {shared_ops:?}");
        let from_rows = GlobalTotals {
            requests: sum(global_ops, |counts| counts.global_requests),
            sectors: sum(global_ops, |counts| counts.sectors),
        };
        assert_eq!(from_rows, *global, "{name}: {global_ops:?}");
    }
}

#[test]
fn every_rollup_adds_up_to_its_instructions_and_totals() {
    for launch in launch_files() {
        let config = warpsim_driver::load_config(None).unwrap();
        let prepared = warpsim_driver::prepare(&launch, config).unwrap();
        let report = prepared.execute(2).unwrap().report;
        check_rollup(&launch.display().to_string(), &report);
        // The JSON carries the same rows.
        let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
        assert_eq!(
            json["lines"].as_array().map(Vec::len),
            Some(report.lines.len()),
            "{}",
            launch.display()
        );
    }
}
