//! Blocks that run side by side (issue 9): a block that waits for another
//! block of the same launch finishes when both are resident, and blocks that
//! wait for a block that cannot become resident are a deadlock naming them.

mod support;

use support::{check_launch, i32s, repo_root, run_program};
use warpsim_machine::{FindingKind, Severity};

/// The repro: block 0 spins on a flag that block 1 sets. Before
/// blocks ran side by side, block 0 spun to the instruction limit.
#[test]
fn a_block_waiting_for_another_resident_block_finishes() {
    for threads in [1, 3] {
        let run = run_program("blocks/interBlock", None, threads);
        assert_eq!(run.failure, None);
        assert_eq!(i32s(&run.buffer("out")), [1, 2]);
    }
}

/// A grid-wide barrier of four blocks on a GPU that holds two: the two
/// resident blocks wait for the two that cannot start until one of them
/// exits. The finding names both resident blocks and the next in line.
#[test]
fn blocks_waiting_for_a_block_that_cannot_be_resident_deadlock() {
    let launch = repo_root().join("programs/barriers/gridBarrierThread0.toml");
    let config_path = repo_root().join("programs/barriers/two-resident-blocks.sim.toml");
    let config = warpsim_driver::load_config(Some(&config_path)).unwrap();
    let (text, outcome, _) = check_launch(&launch, config, 1);
    let kinds: Vec<_> = outcome
        .findings
        .iter()
        .map(|finding| (finding.kind, finding.severity))
        .collect();
    assert_eq!(kinds, [(FindingKind::Deadlock, Severity::Error)], "{text}");
    assert!(text.contains("block (2,0,0) is the next in line"), "{text}");
    assert!(
        text.contains("in block (0,0,0) and 1 other block, (1,0,0)"),
        "{text}"
    );
    assert!(outcome.failed);
}

/// With the default GPU all four blocks are resident and the grid-wide
/// barrier completes, as on an H100 (programs/barriers/README.md).
#[test]
fn a_grid_barrier_of_resident_blocks_completes() {
    let launch = repo_root().join("programs/barriers/gridBarrierThread0.toml");
    let config = warpsim_driver::load_config(None).unwrap();
    let (text, outcome, _) = check_launch(&launch, config, 2);
    assert!(outcome.findings.is_empty(), "{text}");
    assert!(!outcome.failed, "{text}");
    // Every block passed the barrier and marked its slot.
    let run = run_program("barriers/gridBarrierThread0", None, 2);
    assert_eq!(run.failure, None);
    assert_eq!(i32s(&run.buffer("out"))[..4], [1, 1, 1, 1]);
}

/// Blocks racing on plain global stores (a histogram that needed
/// `atomicAdd`): updates are lost, and the same ones on every run and for
/// any number of host threads, as simulated time, not the host, decides
/// which block's store lands last.
#[test]
fn a_racy_histogram_loses_the_same_updates_on_every_run() {
    let reference = run_program("blocks/racyHistogram", None, 1);
    assert_eq!(reference.failure, None);
    let bins = i32s(&reference.buffer("bins"));
    let counted: i32 = bins.iter().sum();
    assert!(
        counted < 65536 && counted > 0,
        "an atomic histogram counts 65,536 keys; this one {counted}"
    );
    for run in 0..5 {
        for threads in [1, 2, 3] {
            let other = run_program("blocks/racyHistogram", None, threads);
            assert_eq!(
                i32s(&other.buffer("bins")),
                bins,
                "run {run} on {threads} host threads"
            );
            assert_eq!(other.report.to_json(), reference.report.to_json());
        }
    }
}
