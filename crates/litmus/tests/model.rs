//! The checker beyond the reference table: atomics, No-Thin-Air, barriers, observation through
//! read-modify-write chains, the candidate bound and hand-built tests that are malformed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use warpsim_litmus::{
    allowed_outcomes, parse_file, AccessOrder, Event, Instruction, LitmusTest, Location,
    LocationId, ModelError, Outcome, Placement, Register, Thread, Value, DEFAULT_BOUND,
};

fn single_test(text: &str) -> LitmusTest {
    let file =
        parse_file(Path::new("model.litmus"), text).unwrap_or_else(|error| panic!("{error}"));
    let mut tests = file.expand().unwrap();
    assert_eq!(tests.len(), 1, "the text should describe one test");
    tests.remove(0)
}

fn outcomes(test: &LitmusTest) -> BTreeSet<Outcome> {
    allowed_outcomes(test, DEFAULT_BOUND).unwrap()
}

fn outcome_set(outcomes: &[&[u32]]) -> BTreeSet<Outcome> {
    outcomes
        .iter()
        .map(|values| Outcome(values.to_vec()))
        .collect()
}

/// Two threads in different CTAs each add 1 to `x` with `atom` of the given scopes.
fn two_increments(first_scope: &str, second_scope: &str) -> LitmusTest {
    single_test(&format!(
        r#"
name = "atomic-increments"
placements = ["grid"]
[locations]
x = 0
[[thread]]
body = "atom.{first_scope}.global.add.u32 r0, [x], 1;"
[[thread]]
body = "atom.{second_scope}.global.add.u32 r0, [x], 1;"
"#
    ))
}

#[test]
fn morally_strong_atomics_are_atomic() {
    // Observables: 0:r0, 1:r0, x. The PTX ISA's atomicity litmus test 1: x == 2.
    assert_eq!(
        outcomes(&two_increments("gpu", "sys")),
        outcome_set(&[&[0, 1, 2], &[1, 0, 2]])
    );
    // Litmus test 2: `.cta` atomics in different CTAs are not morally strong, so an update may be
    // lost (x == 1), either by both reading 0 or by the second write landing first in coherence
    // order although it read the first.
    assert_eq!(
        outcomes(&two_increments("cta", "gpu")),
        outcome_set(&[&[0, 0, 1], &[0, 1, 1], &[0, 1, 2], &[1, 0, 1], &[1, 0, 2]])
    );
}

#[test]
fn compare_and_swap_lets_exactly_one_thread_win() {
    let test = single_test(
        r#"
name = "cas"
placements = ["grid"]
[locations]
lock = 0
[[thread]]
body = "atom.acquire.gpu.global.cas.b32 r0, [lock], 0, 1;"
[[thread]]
body = "atom.acquire.gpu.global.cas.b32 r0, [lock], 0, 2;"
"#,
    );
    // Observables: 0:r0, 1:r0, lock.
    assert_eq!(outcomes(&test), outcome_set(&[&[0, 1, 1], &[2, 0, 2]]));
}

#[test]
fn values_never_come_out_of_thin_air() {
    let dependent = single_test(
        r#"
name = "LB+data"
placements = ["grid"]
[locations]
x = 0
y = 0
[[thread]]
body = """
ld.relaxed.gpu.global.u32 r0, [x];
st.relaxed.gpu.global.u32 [y], r0;
"""
[[thread]]
body = """
ld.relaxed.gpu.global.u32 r1, [y];
st.relaxed.gpu.global.u32 [x], r1;
"""
"#,
    );
    // Observables: 0:r0, 1:r1, x, y: only zeros, since every other value would justify itself.
    assert_eq!(outcomes(&dependent), outcome_set(&[&[0, 0, 0, 0]]));
    // With one dependency broken by a constant, the value 42 may flow around.
    let constant = single_test(
        r#"
name = "LB+data+constant"
placements = ["grid"]
[locations]
x = 0
y = 0
[[thread]]
body = """
ld.global.u32 r0, [x];
st.global.u32 [y], r0;
"""
[[thread]]
body = """
ld.global.u32 r1, [y];
st.global.u32 [x], 42;
"""
"#,
    );
    assert_eq!(
        outcomes(&constant),
        outcome_set(&[&[0, 0, 42, 0], &[42, 0, 42, 42], &[42, 42, 42, 42]])
    );
}

fn barrier_test(placement: &str) -> LitmusTest {
    single_test(&format!(
        r#"
name = "MP+bar.sync"
placements = ["{placement}"]
[locations]
x = 0
[[thread]]
body = """
st.global.u32 [x], 1;
bar.sync 0;
"""
[[thread]]
body = """
bar.sync 0;
ld.global.u32 r0, [x];
"""
"#
    ))
}

#[test]
fn barriers_order_their_block_only() {
    // Observables: 1:r0, x.
    assert_eq!(outcomes(&barrier_test("block")), outcome_set(&[&[1, 1]]));
    assert_eq!(outcomes(&barrier_test("warp")), outcome_set(&[&[1, 1]]));
    // In separate blocks each thread meets the barrier alone, which orders nothing between them.
    assert_eq!(
        outcomes(&barrier_test("grid")),
        outcome_set(&[&[0, 1], &[1, 1]])
    );
}

#[test]
fn observation_passes_through_read_modify_write_chains() {
    let test = single_test(
        r#"
name = "MP+rmw-chain"
placements = ["grid"]
[locations]
x = 0
y = 0
[[thread]]
body = """
st.global.u32 [x], 1;
st.release.gpu.global.u32 [y], 1;
"""
[[thread]]
body = "atom.relaxed.gpu.global.add.u32 r0, [y], 1;"
[[thread]]
body = """
ld.acquire.gpu.global.u32 r1, [y];
ld.global.u32 r2, [x];
"""
[exists]
"2:r1" = 2
"2:r2" = 0
"#,
    );
    let allowed = outcomes(&test);
    assert!(allowed.iter().all(|outcome| !test.matches_exists(outcome)));
    // Reading 2 is possible, and then the data is always there.
    assert!(allowed
        .iter()
        .any(|outcome| test.describe(outcome) == "1:r0=1 2:r1=2 2:r2=1 x=1 y=2"));
}

#[test]
fn the_bound_counts_candidate_executions() {
    let test = single_test(
        r#"
name = "MP"
placements = ["grid"]
[locations]
x = 0
y = 0
[[thread]]
body = """
st.global.u32 [x], 1;
st.global.u32 [y], 1;
"""
[[thread]]
body = """
ld.global.u32 r0, [y];
ld.global.u32 r1, [x];
"""
"#,
    );
    // Two reads with two possible sources each; one write per location; no fence.sc.
    assert_eq!(
        allowed_outcomes(&test, 3),
        Err(ModelError::TooLarge {
            candidates: 4,
            bound: 3
        })
    );
    assert_eq!(allowed_outcomes(&test, 4).unwrap().len(), 4);

    let crowded = single_test(
        r#"
name = "crowded"
placements = ["grid"]
[locations]
x = 0
[[thread]]
body = """
st.global.u32 [x], 1;
st.global.u32 [x], 2;
fence.sc.gpu;
ld.global.u32 r0, [x];
"""
[[thread]]
body = """
st.global.u32 [x], 3;
fence.sc.gpu;
ld.global.u32 r0, [x];
"""
[[thread]]
body = """
st.global.u32 [x], 4;
fence.sc.gpu;
ld.global.u32 r0, [x];
"""
"#,
    );
    // Reads: each sees its own latest write or one of the other threads' writes (3, 4 and 4
    // choices);
    // coherence: interleavings of chains of 2, 1 and 1 writes (12); Fence-SC: 3! orders.
    assert_eq!(
        allowed_outcomes(&crowded, 1000),
        Err(ModelError::TooLarge {
            candidates: 3 * 4 * 4 * 12 * 6,
            bound: 1000
        })
    );
    assert!(allowed_outcomes(&crowded, 3 * 4 * 4 * 12 * 6).is_ok());
}

fn instruction(event: Event) -> Instruction {
    Instruction {
        text: format!("{event:?}"),
        line: 1,
        event,
    }
}

fn hand_built(threads: Vec<Vec<Event>>) -> LitmusTest {
    LitmusTest {
        name: "hand-built".to_string(),
        path: PathBuf::from("hand-built"),
        locations: vec![Location {
            name: "x".to_string(),
            init: 0,
        }],
        threads: threads
            .into_iter()
            .enumerate()
            .map(|(index, events)| Thread {
                placement: Placement {
                    block: index as u32,
                    warp: 0,
                    lane: 0,
                },
                instructions: events.into_iter().map(instruction).collect(),
            })
            .collect(),
        exists: Vec::new(),
        expect: None,
    }
}

#[test]
fn malformed_hand_built_tests_are_errors_not_panics() {
    let unknown_location = hand_built(vec![vec![Event::Load {
        order: AccessOrder::Weak,
        dst: Register(0),
        location: LocationId(7),
    }]]);
    assert!(matches!(
        allowed_outcomes(&unknown_location, DEFAULT_BOUND),
        Err(ModelError::MalformedTest { .. })
    ));

    let unwritten_register = hand_built(vec![vec![Event::Store {
        order: AccessOrder::Weak,
        location: LocationId(0),
        value: Value::Register(Register(3)),
    }]]);
    assert!(matches!(
        allowed_outcomes(&unwritten_register, DEFAULT_BOUND),
        Err(ModelError::MalformedTest { .. })
    ));

    let register_beyond_r15 = hand_built(vec![vec![Event::Load {
        order: AccessOrder::Weak,
        dst: Register(40),
        location: LocationId(0),
    }]]);
    assert!(matches!(
        allowed_outcomes(&register_beyond_r15, DEFAULT_BOUND),
        Err(ModelError::MalformedTest { .. })
    ));

    let mut unmatched_barrier = hand_built(vec![vec![Event::Barrier], vec![]]);
    unmatched_barrier.threads[1].placement.block = 0;
    unmatched_barrier.threads[1].placement.warp = 1;
    assert!(matches!(
        allowed_outcomes(&unmatched_barrier, DEFAULT_BOUND),
        Err(ModelError::MalformedTest { .. })
    ));

    let mut many_locations = hand_built(vec![vec![]]);
    many_locations.locations = (0..70)
        .map(|index| Location {
            name: format!("l{index}"),
            init: 0,
        })
        .collect();
    assert_eq!(
        allowed_outcomes(&many_locations, DEFAULT_BOUND),
        Err(ModelError::TooManyEvents {
            events: 70,
            limit: 64
        })
    );

    let too_many = hand_built(vec![vec![Event::Barrier; 40]]);
    assert_eq!(
        allowed_outcomes(&too_many, DEFAULT_BOUND),
        Err(ModelError::TooManyEvents {
            events: 81,
            limit: 64
        })
    );
}

/// A known simplification (see the `model` module documentation): coherence order is total, so
/// racing weak writes that each writer reads back in the other order are never both seen. The
/// Alloy model of Lustig et al. leaves such writes unordered and allows `0:r0=2 1:r1=1`.
#[test]
fn racing_weak_writes_are_ordered_totally() {
    let test = single_test(
        r#"
name = "racing-writes"
placements = ["grid"]
[locations]
x = 0
[[thread]]
body = """
st.global.u32 [x], 1;
fence.sc.gpu;
ld.global.u32 r0, [x];
"""
[[thread]]
body = """
st.global.u32 [x], 2;
fence.sc.gpu;
ld.global.u32 r1, [x];
"""
"#,
    );
    // Observables: 0:r0, 1:r1, x.
    assert_eq!(
        outcomes(&test),
        outcome_set(&[&[1, 1, 1], &[1, 2, 1], &[1, 2, 2], &[2, 2, 2]])
    );
}
