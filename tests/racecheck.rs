//! The shared-memory race checker, file-driven: every launch file in
//! `programs/racecheck/` is checked, and what `warpsim check` prints must
//! equal the `.check` file beside it (`WARPSIM_BLESS=1 cargo test -p warpsim
//! --test racecheck` rewrites them). The expected finding of each kernel is
//! argued in the comment above it in `programs/racecheck/racecheck.cu`.
//!
//! Also: the legacy warp-synchronous reductions of the corpus are found,
//! the findings do not depend on host threads, and a plain run looks for
//! nothing. The global-memory races of `programs/racecheck/global-races.cu`
//! (issue 10): each kernel's finding at its lines, the missing fence named,
//! and the explore memory model showing the wrong answers a missing fence
//! allows.

mod support;

use std::path::PathBuf;

use support::{check_expected, check_launch, launch_files, repo_root, run_program};
use warpsim_driver::check::{FindingKind, Severity};

fn config() -> warpsim_machine::MachineConfig {
    warpsim_driver::load_config(None).expect("the built-in machine")
}

fn launch(path: &str) -> PathBuf {
    repo_root().join("programs").join(format!("{path}.toml"))
}

#[test]
fn every_racecheck_program_prints_its_expected_findings() {
    let launches: Vec<PathBuf> = launch_files()
        .into_iter()
        .filter(|path| path.parent().is_some_and(|dir| dir.ends_with("racecheck")))
        .collect();
    assert_eq!(launches.len(), 12, "{launches:?}");
    let mut failures = Vec::new();
    for launch in &launches {
        let (text, _, _) = check_launch(launch, config(), 2);
        if let Some(difference) = check_expected(&launch.with_extension("check"), &text) {
            failures.push(difference);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Each racy kernel has one shared-race error of the hazard its comment
/// names, at its line; the correct ones have none.
#[test]
fn each_kernel_reports_its_hazard_at_its_line() {
    let expected = [
        ("rawMissingSync", Some(("read-after-write", 17))),
        ("rawWithSync", None),
        ("warShiftInPlace", Some(("write-after-read", 39))),
        ("wawLastWriterWins", Some(("write-after-write", 49))),
        ("warpReduceNoSyncwarp", Some(("write-after-read", 67))),
        ("warpReduceSyncwarp", None),
    ];
    for (name, race) in expected {
        let (text, outcome, _) = check_launch(&launch(&format!("racecheck/{name}")), config(), 2);
        let found: Vec<(FindingKind, Severity, u32, bool)> = outcome
            .findings
            .iter()
            .map(|finding| {
                let hazard = race.is_some_and(|(hazard, _)| finding.message.contains(hazard));
                (finding.kind, finding.severity, finding.line, hazard)
            })
            .collect();
        let expected: Vec<(FindingKind, Severity, u32, bool)> = race
            .map(|(_, line)| (FindingKind::SharedRace, Severity::Error, line, true))
            .into_iter()
            .collect();
        assert_eq!(found, expected, "{name}:\n{text}");
        assert_eq!(outcome.failed, race.is_some(), "{name}");
    }
}

/// The reductions that unroll their last warp with `volatile` and no
/// `__syncwarp()` (the CUDA samples' reduce4 to reduce6, written before
/// Volta) race on hardware that does not run a warp in lockstep: every
/// finding is a shared race between lines of that unrolled last warp
/// (programs/corpus/reductions.cu: warpReduce's lines 78-83, inlined at
/// line 98, and reduce6's lines 148-153).
#[test]
fn legacy_warp_synchronous_reductions_are_races() {
    for (name, last_warp_lines) in [
        ("reduce4_unroll_last_warp", 78..=83),
        ("reduce6_multi_element", 148..=153),
    ] {
        let (text, outcome, _) = check_launch(&launch(&format!("corpus/{name}")), config(), 2);
        assert!(!outcome.findings.is_empty(), "{name}:\n{text}");
        for finding in &outcome.findings {
            assert_eq!(finding.kind, FindingKind::SharedRace, "{name}:\n{text}");
            assert_eq!(finding.sites.len(), 2, "{name}:\n{text}");
            for site in &finding.sites {
                // The line the code came from: inside warpReduce when inlined.
                let line = site
                    .inlined_from
                    .first()
                    .map_or(site.line, |place| place.line);
                assert!(
                    last_warp_lines.contains(&line),
                    "{name}: line {line}:\n{text}"
                );
            }
            assert!(
                finding
                    .notes
                    .iter()
                    .any(|note| note.contains("__syncwarp()")),
                "{name}:\n{text}"
            );
        }
        // A plain run of it does not fail (tests/corpus.rs checks its sums):
        // the finding is the bug, not the output.
        let run = run_program(&format!("corpus/{name}"), None, 2);
        assert_eq!(run.failure, None);
    }
}

#[test]
fn race_findings_do_not_depend_on_host_threads() {
    for name in ["racecheck/rawMissingSync", "corpus/reduce6_multi_element"] {
        let (one, _, _) = check_launch(&launch(name), config(), 1);
        let (three, _, _) = check_launch(&launch(name), config(), 3);
        assert_eq!(one, three, "{name}");
    }
}

/// A finding expected: its kind, hazard, earlier line and later line.
type ExpectedRace = (FindingKind, &'static str, u32, u32);

/// Each global-memory kernel reports the kinds its comment in
/// global-races.cu names, at its lines (earlier access, later access); the
/// correct ones report nothing.
#[test]
fn each_global_kernel_reports_its_race_at_its_lines() {
    let expected: [(&str, &[ExpectedRace]); 6] = [
        (
            "messagePassingNoFence",
            &[(FindingKind::DataRace, "read-after-write", 14, 20)],
        ),
        ("messagePassingFenced", &[]),
        (
            "flagHandoffCtaScope",
            &[
                (FindingKind::ScopeRace, "read-after-write", 50, 54),
                (FindingKind::DataRace, "read-after-write", 49, 56),
            ],
        ),
        ("threadfenceReduction", &[]),
        ("threadfenceReductionAcquire", &[]),
        (
            "threadfenceReductionNoFence",
            &[
                (FindingKind::DataRace, "read-after-write", 102, 109),
                (FindingKind::DataRace, "read-after-write", 102, 109),
            ],
        ),
    ];
    for (name, races) in expected {
        let (text, outcome, _) = check_launch(&launch(&format!("racecheck/{name}")), config(), 2);
        let found: Vec<(FindingKind, bool, u32, u32)> = outcome
            .findings
            .iter()
            .map(|finding| {
                let earlier = finding
                    .sites
                    .iter()
                    .find(|site| !site.primary)
                    .map_or(0, |site| site.line);
                (
                    finding.kind,
                    finding.severity == Severity::Error,
                    earlier,
                    finding.line,
                )
            })
            .collect();
        let wanted: Vec<(FindingKind, bool, u32, u32)> = races
            .iter()
            .map(|&(kind, _, earlier, later)| (kind, true, earlier, later))
            .collect();
        assert_eq!(found, wanted, "{name}:\n{text}");
        for (finding, (_, hazard, _, _)) in outcome.findings.iter().zip(races) {
            assert!(
                finding.message.contains(hazard),
                "{name}: {}",
                finding.message
            );
        }
    }
}

/// The handoff without a fence names the flag store that needs one before
/// it, as a third place and in a note.
#[test]
fn a_missing_fence_is_reported_where_it_belongs() {
    let (text, outcome, _) = check_launch(&launch("racecheck/messagePassingNoFence"), config(), 1);
    let lines: Vec<u32> = outcome.findings[0]
        .sites
        .iter()
        .map(|site| site.line)
        .collect();
    assert_eq!(lines, [14, 20, 15], "{text}");
    assert!(
        text.contains("the store to `flag` (byte 0) is not ordered after the store to `data` (byte 0) for a reader in another block; add __threadfence() between them"),
        "{text}"
    );
}

/// The racy histogram (a plain add where atomicAdd belongs) is a global
/// data race, and the global findings are the same at any host threads.
#[test]
fn the_racy_histogram_is_a_global_data_race_on_every_host() {
    let histogram = launch("blocks/racyHistogram");
    let (text, outcome, _) = check_launch(&histogram, config(), 1);
    let kinds: Vec<(FindingKind, u32)> = outcome
        .findings
        .iter()
        .map(|finding| (finding.kind, finding.line))
        .collect();
    assert_eq!(kinds, [(FindingKind::DataRace, 11)], "{text}");
    for name in [
        "blocks/racyHistogram",
        "racecheck/threadfenceReductionNoFence",
    ] {
        let (one, _, _) = check_launch(&launch(name), config(), 1);
        let (two, _, _) = check_launch(&launch(name), config(), 2);
        assert_eq!(one, two, "{name}");
    }
}

/// In the explore memory model the kernels without their fences give the
/// wrong answers a GPU may give, for some seeds; with the fences, never.
/// The reduction's fenced kernel is `threadfenceReductionAcquire`, whose
/// last block fences after its ticket too: the CUDA sample as written
/// (`threadfenceReduction`) fences only the writers, and the PTX model lets
/// its reader see an older partial sum (message passing needs a fence in
/// each thread), which the explore model finds for a few seeds.
#[test]
fn the_explore_model_shows_what_a_missing_fence_allows() {
    let cases = [
        (
            "racecheck/messagePassingNoFence",
            "racecheck/messagePassingFenced",
            42,
        ),
        (
            "racecheck/threadfenceReductionNoFence",
            "racecheck/threadfenceReductionAcquire",
            32640,
        ),
    ];
    for (unfenced, fenced, right) in cases {
        let mut wrong_seen = false;
        for seed in 0..12 {
            let mut explore = config();
            explore.memory.model = warpsim_driver::MemoryModel::Explore;
            explore.memory.seed = seed;
            let out = |name: &str| {
                let run = support::run_program_on(name, explore.clone(), 1);
                support::i32s(&run.buffer("out"))[0]
            };
            assert_eq!(out(fenced), right, "{fenced}, seed {seed}");
            wrong_seen |= out(unfenced) != right;
        }
        assert!(wrong_seen, "{unfenced}: always right in 12 seeds");
    }
}

/// On an H100 the `.cta` handoff across blocks hangs: the spinning block's
/// `.cta` acquire loads are served by its SM's L1 and never see the other
/// block's store (programs/racecheck/hardware/fence-bugs.cu). In the explore
/// model the same spin sticks to its L1 for some seeds and is reported as
/// a livelock; the `.gpu` handoff never is.
#[test]
fn a_cta_scope_spin_across_blocks_can_hang_as_on_an_h100() {
    let mut hung = 0;
    for seed in 0..8 {
        let mut explore = config();
        explore.memory.model = warpsim_driver::MemoryModel::Explore;
        explore.memory.seed = seed;
        // A spin is a livelock after this many instructions without progress.
        explore.barriers.livelock_window = 20_000;
        let cta = support::run_program_on("racecheck/flagHandoffCtaScope", explore.clone(), 1);
        if let Some(failure) = &cta.failure {
            assert!(failure.contains("livelock across blocks"), "{failure}");
            hung += 1;
        }
        let gpu = support::run_program_on("racecheck/messagePassingFenced", explore, 1);
        assert_eq!(gpu.failure, None, "seed {seed}");
    }
    assert!(hung > 0, "the .cta spin never hung in 8 seeds");
}
