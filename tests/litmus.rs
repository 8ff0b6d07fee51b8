//! The explore memory model against the PTX memory model (issue 10): every
//! litmus test of `programs/litmus`, at every variant and placement, run as
//! a kernel on the machine; the outcomes it produces must be exactly those
//! the checker of the model's axioms allows, less the documented ones the
//! explore model cannot reach. The exhaustive mode must be sound too, and a
//! run in the explore model is the same for a seed on every host.

mod support;

use std::collections::BTreeSet;
use std::process::Command;

use support::repo_root;
use warpsim_driver::litmus::{self, LitmusKernel};
use warpsim_litmus::{allowed_outcomes, parse_file, LitmusTest, Outcome, DEFAULT_BOUND};

/// The allowed outcomes the explore model never produces, by test, each a
/// documented deviation (`crates/machine/src/weak_memory.rs`): a `.cta`
/// fence orders a thread's accesses for every observer, so load buffering
/// across blocks with `.cta` fences (which an H100 shows) is not reached.
const UNREACHABLE: &[(&str, &str)] = &[("LB+fence.sc.cta@grid", "0:r0=1 1:r1=1 x=1 y=1")];

fn expanded(file: &str) -> Vec<LitmusTest> {
    let path = repo_root().join("programs/litmus").join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    parse_file(&path, &text).unwrap().expand().unwrap()
}

fn machine() -> warpsim_driver::MachineConfig {
    warpsim_driver::load_config(None).unwrap()
}

fn describe_all<'a>(
    test: &LitmusTest,
    outcomes: impl IntoIterator<Item = &'a Outcome>,
) -> Vec<String> {
    outcomes
        .into_iter()
        .map(|outcome| test.describe(outcome))
        .collect()
}

/// Runs every test of `file` in the explore model (8 launches of 64
/// instances, 64 when an allowed outcome has not come) and compares what came with what the model allows.
fn explore_matches_the_model(file: &str) {
    let config = machine();
    for test in expanded(file) {
        let allowed = allowed_outcomes(&test, DEFAULT_BOUND).unwrap();
        let kernel = LitmusKernel::new(&test).unwrap();
        let expected_unseen: BTreeSet<String> = UNREACHABLE
            .iter()
            .filter(|(name, _)| *name == test.name)
            .map(|(_, outcome)| outcome.to_string())
            .collect();
        let unseen_of = |seen: &std::collections::BTreeMap<Outcome, u64>| -> BTreeSet<String> {
            describe_all(
                &test,
                allowed.iter().filter(|outcome| !seen.contains_key(outcome)),
            )
            .into_iter()
            .collect()
        };
        let mut seen = litmus::explore(&kernel, &config, 8, 0).unwrap();
        if unseen_of(&seen) != expected_unseen {
            // A rare outcome gets 56 launches more (seeds 8 to 63): the
            // weak outcome of IRIW within one warp comes 9 times in 4,096
            // runs, its fences taking 265 cycles each.
            for (outcome, count) in litmus::explore(&kernel, &config, 56, 8).unwrap() {
                *seen.entry(outcome).or_insert(0) += count;
            }
        }
        let forbidden: Vec<&Outcome> = seen.keys().filter(|o| !allowed.contains(o)).collect();
        assert!(
            forbidden.is_empty(),
            "{}: outcomes the PTX model forbids: {:?}",
            test.name,
            describe_all(&test, forbidden)
        );
        let unseen = unseen_of(&seen);
        assert_eq!(
            unseen, expected_unseen,
            "{}: allowed but not produced",
            test.name
        );
    }
}

macro_rules! explore_tests {
    ($($name:ident => $file:literal,)*) => {
        $(
            #[test]
            fn $name() {
                explore_matches_the_model($file);
            }
        )*
    };
}

explore_tests! {
    message_passing => "MP.litmus",
    store_buffering => "SB.litmus",
    load_buffering => "LB.litmus",
    read_read_coherence => "CoRR.litmus",
    write_write_coherence => "CoWW.litmus",
    independent_reads_of_independent_writes => "IRIW.litmus",
    write_to_read_causality => "WRC.litmus",
    isa2 => "ISA2.litmus",
    two_plus_two_writes => "2+2W.litmus",
    r_shape => "R.litmus",
    s_shape => "S.litmus",
}

/// The allowed outcomes the exhaustive mode does not reach for threads in
/// different blocks: its start times (0, 1, 96 and 1,536 cycles) never line
/// two release stores up with the other thread's acquire load closely
/// enough; the explore mode's finer delays do.
const EXHAUSTIVE_UNREACHED: &[(&str, &str)] = &[("SB+acq_rel.gpu@grid", "0:r0=1 1:r1=1 x=1 y=1")];

/// The exhaustive mode enumerates the weak memory's choices and a few
/// start times per block: for threads in different blocks it reaches the
/// outcomes the model allows, and never another.
#[test]
fn the_exhaustive_mode_reaches_the_allowed_outcomes_across_blocks() {
    let config = machine();
    let mut checked = 0;
    for file in ["MP.litmus", "SB.litmus", "2+2W.litmus", "CoRR.litmus"] {
        for test in expanded(file)
            .into_iter()
            .filter(|test| test.name.ends_with("@grid"))
        {
            let allowed = allowed_outcomes(&test, DEFAULT_BOUND).unwrap();
            let kernel = LitmusKernel::new(&test).unwrap();
            let reached = litmus::exhaustive(&kernel, &config, 20_000).unwrap();
            let reached: BTreeSet<String> =
                describe_all(&test, reached.keys()).into_iter().collect();
            let mut expected: BTreeSet<String> =
                describe_all(&test, &allowed).into_iter().collect();
            for (name, outcome) in EXHAUSTIVE_UNREACHED {
                if *name == test.name {
                    assert!(
                        expected.remove(*outcome),
                        "{name}: {outcome} is not allowed"
                    );
                }
            }
            assert_eq!(reached, expected, "{}", test.name);
            checked += 1;
        }
    }
    assert_eq!(checked, 32);
}

/// Past its bound the exhaustive mode stops with an error naming the test.
#[test]
fn the_exhaustive_mode_stops_at_its_bound() {
    let test = expanded("IRIW.litmus").remove(0);
    let kernel = LitmusKernel::new(&test).unwrap();
    let error = litmus::exhaustive(&kernel, &machine(), 5).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "{}: the exhaustive mode needs more than 5 runs; give a larger --bound or use the explore mode",
            test.name
        )
    );
}

/// The same seed gives the same histogram; another seed another one.
#[test]
fn a_seed_names_one_explored_run() {
    let config = machine();
    let test = expanded("MP.litmus")
        .into_iter()
        .find(|test| test.name == "MP+plain@grid")
        .unwrap();
    let kernel = LitmusKernel::new(&test).unwrap();
    let first = litmus::explore(&kernel, &config, 2, 7).unwrap();
    let again = litmus::explore(&kernel, &config, 2, 7).unwrap();
    let other = litmus::explore(&kernel, &config, 2, 8).unwrap();
    assert_eq!(first, again);
    assert_ne!(first, other);
}

fn warpsim(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_warpsim"))
        .args(args)
        .current_dir(repo_root())
        .output()
        .unwrap()
}

/// `warpsim run --memory explore --seed N` gives byte-identical outputs at
/// any number of host threads, and the racy histogram's lost updates move
/// with the seed.
#[test]
fn an_explored_run_is_the_same_at_any_host_thread_count() {
    let dir = std::env::temp_dir().join(format!("warpsim-explore-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut dumps = Vec::new();
    for (threads, seed) in [("1", "5"), ("2", "5"), ("1", "6")] {
        let path = dir.join(format!("bins-{threads}-{seed}.bin"));
        let dump = format!("bins={}", path.display());
        let output = warpsim(&[
            "run",
            "programs/blocks/racyHistogram.toml",
            "--memory",
            "explore",
            "--seed",
            seed,
            "--threads",
            threads,
            "--dump",
            &dump,
        ]);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        dumps.push(std::fs::read(&path).unwrap());
    }
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(dumps[0], dumps[1]);
    assert_ne!(dumps[0], dumps[2]);
}

/// `warpsim litmus` prints herd7's histogram with each outcome judged by
/// the model, and exits 0 when nothing forbidden came.
#[test]
fn the_litmus_command_prints_a_judged_histogram() {
    let output = warpsim(&[
        "litmus",
        "programs/litmus/MP.litmus",
        "--only",
        "MP+threadfence+relaxed.gpu@grid",
        "--exhaustive",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("Test MP+threadfence+relaxed.gpu@grid (exhaustive: "),
        "{text}"
    );
    assert_eq!(lines[1], "Histogram (3 states)", "{text}");
    for (line, outcome) in lines[2..5].iter().zip([
        ":> 1:r0=0 1:r1=0 x=1 y=1  (allowed)",
        ":> 1:r0=0 1:r1=1 x=1 y=1  (allowed)",
        ":> 1:r0=1 1:r1=1 x=1 y=1  (allowed)",
    ]) {
        assert!(line.ends_with(outcome), "{line}");
    }
    assert!(
        lines[5].starts_with("Exists: forbidden by the PTX model; seen 0 of "),
        "{text}"
    );
    assert_eq!(lines[6], "Sound: every outcome produced is allowed");
}

/// A litmus file with an error is reported at its line, exit code 2.
#[test]
fn a_broken_litmus_file_is_an_error_at_its_line() {
    let dir = std::env::temp_dir().join(format!("warpsim-litmus-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.litmus");
    std::fs::write(
        &path,
        "name = \"bad\"\n[locations]\nx = 0\n[[thread]]\nbody = \"\"\"\nst.global.u32 [x], 1;\nfrobnicate r0;\n\"\"\"\n",
    )
    .unwrap();
    let output = warpsim(&["litmus", path.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("bad.litmus:7"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
