//! The litmus table of the project's memory-model reference (`reference/memory-model.md`),
//! row by row and column by column, checked against the brute-force model.
//!
//! Each row is written once as a `.litmus` file with `{st}`, `{ld}` and `{fence}` placeholders;
//! each column becomes one or more `[[variant]]`s whose `expect` is the table's letter. Threads
//! sit in different CTAs (`placements = ["grid"]`), as the table says, and a fence sits between
//! the two operations of every thread that has two.
//!
//! The column "`.cta` fences or ops across CTAs" is read as: the test's scope is `.cta`
//! throughout, so its variants use `.cta` fences together with `.relaxed.cta` accesses (and,
//! without fences, `.relaxed.cta` accesses alone). With `.gpu` accesses and `.cta` fences
//! instead, every row but CoRR stays allowed; CoRR becomes forbidden, because two `.gpu`
//! accesses are morally strong across CTAs whatever the fences, and
//! Sequential-Consistency-Per-Location then orders them (tested separately below).

use std::collections::BTreeSet;
use std::path::Path;

use warpsim_litmus::{
    allowed_outcomes, parse_file, Expectation, LitmusTest, Outcome, DEFAULT_BOUND,
};

/// A row of the table: the shape, written with placeholders, and the table's letters.
struct Row {
    name: &'static str,
    locations: &'static [&'static str],
    threads: &'static [&'static str],
    exists: &'static str,
    /// One letter per column: A (allowed) or F (forbidden).
    letters: &'static str,
}

/// A column of the table: its variants, as (name, store, load, fence).
type Column = &'static [(&'static str, &'static str, &'static str, &'static str)];

const PLAIN_STORE: &str = "st.global.u32";
const PLAIN_LOAD: &str = "ld.global.u32";
const GPU_STORE: &str = "st.relaxed.gpu.global.u32";
const GPU_LOAD: &str = "ld.relaxed.gpu.global.u32";
const CTA_STORE: &str = "st.relaxed.cta.global.u32";
const CTA_LOAD: &str = "ld.relaxed.cta.global.u32";

const COLUMNS: [Column; 6] = [
    // No fence, plain.
    &[("plain", PLAIN_STORE, PLAIN_LOAD, "")],
    // No fence, .relaxed.gpu.
    &[("relaxed.gpu", GPU_STORE, GPU_LOAD, "")],
    // fence.acq_rel.gpu + .relaxed.gpu.
    &[(
        "fence.acq_rel.gpu",
        GPU_STORE,
        GPU_LOAD,
        "fence.acq_rel.gpu;",
    )],
    // __threadfence + plain.
    &[("membar.gl+plain", PLAIN_STORE, PLAIN_LOAD, "membar.gl;")],
    // __threadfence + .relaxed.gpu / volatile.
    &[
        ("membar.gl+relaxed.gpu", GPU_STORE, GPU_LOAD, "membar.gl;"),
        (
            "membar.gl+volatile",
            "st.volatile.global.u32",
            "ld.volatile.global.u32",
            "membar.gl;",
        ),
        (
            "fence.sc.gpu+relaxed.gpu",
            GPU_STORE,
            GPU_LOAD,
            "fence.sc.gpu;",
        ),
    ],
    // .cta fences or ops across CTAs.
    &[
        ("relaxed.cta", CTA_STORE, CTA_LOAD, ""),
        ("membar.cta+relaxed.cta", CTA_STORE, CTA_LOAD, "membar.cta;"),
        (
            "fence.acq_rel.cta+relaxed.cta",
            CTA_STORE,
            CTA_LOAD,
            "fence.acq_rel.cta;",
        ),
        ("membar.cta+plain", PLAIN_STORE, PLAIN_LOAD, "membar.cta;"),
    ],
];

const MP: Row = Row {
    name: "MP",
    locations: &["x", "y"],
    threads: &[
        "{st} [x], 1;\n{fence}\n{st} [y], 1;",
        "{ld} r0, [y];\n{fence}\n{ld} r1, [x];",
    ],
    exists: "\"1:r0\" = 1\n\"1:r1\" = 0",
    letters: "AAFFFA",
};

const SB: Row = Row {
    name: "SB",
    locations: &["x", "y"],
    threads: &[
        "{st} [x], 1;\n{fence}\n{ld} r0, [y];",
        "{st} [y], 1;\n{fence}\n{ld} r1, [x];",
    ],
    exists: "\"0:r0\" = 0\n\"1:r1\" = 0",
    letters: "AAAFFA",
};

const LB: Row = Row {
    name: "LB",
    locations: &["x", "y"],
    threads: &[
        "{ld} r0, [x];\n{fence}\n{st} [y], 1;",
        "{ld} r1, [y];\n{fence}\n{st} [x], 1;",
    ],
    exists: "\"0:r0\" = 1\n\"1:r1\" = 1",
    letters: "AAFFFA",
};

const CORR: Row = Row {
    name: "CoRR",
    locations: &["x"],
    threads: &["{st} [x], 1;", "{ld} r0, [x];\n{fence}\n{ld} r1, [x];"],
    exists: "\"1:r0\" = 1\n\"1:r1\" = 0",
    letters: "AFFAFA",
};

const IRIW: Row = Row {
    name: "IRIW",
    locations: &["x", "y"],
    threads: &[
        "{st} [x], 1;",
        "{st} [y], 1;",
        "{ld} r0, [x];\n{fence}\n{ld} r1, [y];",
        "{ld} r2, [y];\n{fence}\n{ld} r3, [x];",
    ],
    exists: "\"2:r0\" = 1\n\"2:r1\" = 0\n\"3:r2\" = 1\n\"3:r3\" = 0",
    letters: "AAAAFA",
};

const WRC: Row = Row {
    name: "WRC",
    locations: &["x", "y"],
    threads: &[
        "{st} [x], 1;",
        "{ld} r0, [x];\n{fence}\n{st} [y], 1;",
        "{ld} r1, [y];\n{fence}\n{ld} r2, [x];",
    ],
    exists: "\"1:r0\" = 1\n\"2:r1\" = 1\n\"2:r2\" = 0",
    letters: "AAFAFA",
};

const ISA2: Row = Row {
    name: "ISA2",
    locations: &["x", "y", "z"],
    threads: &[
        "{st} [x], 1;\n{fence}\n{st} [y], 1;",
        "{ld} r0, [y];\n{fence}\n{st} [z], 1;",
        "{ld} r1, [z];\n{fence}\n{ld} r2, [x];",
    ],
    exists: "\"1:r0\" = 1\n\"2:r1\" = 1\n\"2:r2\" = 0",
    letters: "AAFFFA",
};

const TWO_PLUS_TWO_W: Row = Row {
    name: "2+2W",
    locations: &["x", "y"],
    threads: &[
        "{st} [x], 1;\n{fence}\n{st} [y], 2;",
        "{st} [y], 1;\n{fence}\n{st} [x], 2;",
    ],
    exists: "x = 1\ny = 1",
    letters: "AAAFFA",
};

const ROWS: [&Row; 8] = [&MP, &SB, &LB, &CORR, &IRIW, &WRC, &ISA2, &TWO_PLUS_TWO_W];

fn expectation(letter: char) -> Expectation {
    match letter {
        'A' => Expectation::Allowed,
        'F' => Expectation::Forbidden,
        other => panic!("the table has only A and F, not {other}"),
    }
}

/// The row as a `.litmus` file with the given placements and variants (name, st, ld, fence,
/// expect).
fn litmus_text(
    row: &Row,
    placements: &str,
    variants: &[(&str, &str, &str, &str, Option<Expectation>)],
) -> String {
    let mut text = format!(
        "name = \"{}\"\nplacements = [{placements}]\n[locations]\n",
        row.name
    );
    for location in row.locations {
        text += &format!("{location} = 0\n");
    }
    for body in row.threads {
        text += &format!("[[thread]]\nbody = \"\"\"\n{body}\n\"\"\"\n");
    }
    text += &format!("[exists]\n{}\n", row.exists);
    for (name, store, load, fence, expect) in variants {
        text += &format!("[[variant]]\nname = \"{name}\"\nst = \"{store}\"\nld = \"{load}\"\nfence = \"{fence}\"\n");
        if let Some(expect) = expect {
            text += &format!("expect = \"{expect}\"\n");
        }
    }
    text
}

fn expand(
    row: &Row,
    placements: &str,
    variants: &[(&str, &str, &str, &str, Option<Expectation>)],
) -> Vec<LitmusTest> {
    let text = litmus_text(row, placements, variants);
    let path = format!("{}.litmus", row.name);
    let file =
        parse_file(Path::new(&path), &text).unwrap_or_else(|error| panic!("{error}\n{text}"));
    file.expand().unwrap()
}

fn weak_outcome_allowed(test: &LitmusTest) -> bool {
    allowed_outcomes(test, DEFAULT_BOUND)
        .unwrap()
        .iter()
        .any(|outcome| test.matches_exists(outcome))
}

/// Checks every column of a row in separate CTAs and returns the disagreements.
fn check_row(row: &Row) {
    let mut variants = Vec::new();
    for (column, letter) in COLUMNS.iter().zip(row.letters.chars()) {
        for &(name, store, load, fence) in column.iter() {
            variants.push((name, store, load, fence, Some(expectation(letter))));
        }
    }
    let tests = expand(row, "\"grid\"", &variants);
    assert_eq!(tests.len(), variants.len());
    let mut disagreements = Vec::new();
    for test in &tests {
        let allowed = weak_outcome_allowed(test);
        let expected = test.expect.unwrap() == Expectation::Allowed;
        if allowed != expected {
            disagreements.push(format!(
                "{}: the table says {}, the model says {}",
                test.name,
                test.expect.unwrap(),
                if allowed { "allowed" } else { "forbidden" }
            ));
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

#[test]
fn message_passing_row() {
    check_row(&MP);
}

#[test]
fn store_buffering_row() {
    check_row(&SB);
}

#[test]
fn load_buffering_row() {
    check_row(&LB);
}

#[test]
fn read_read_coherence_row() {
    check_row(&CORR);
}

#[test]
fn independent_reads_of_independent_writes_row() {
    check_row(&IRIW);
}

#[test]
fn write_to_read_causality_row() {
    check_row(&WRC);
}

#[test]
fn isa2_row() {
    check_row(&ISA2);
}

#[test]
fn two_plus_two_writes_row() {
    check_row(&TWO_PLUS_TWO_W);
}

/// The other reading of the last column: `.cta` fences with `.gpu` accesses across CTAs.
/// Nothing synchronizes, so every weak outcome stays allowed, except CoRR's: two `.gpu`
/// accesses are morally strong across CTAs, so coherence holds without any fence.
#[test]
fn cta_fences_with_gpu_accesses_across_ctas() {
    for row in ROWS {
        let variants = [
            (
                "fence.sc.cta+relaxed.gpu",
                GPU_STORE,
                GPU_LOAD,
                "fence.sc.cta;",
                None,
            ),
            (
                "fence.acq_rel.cta+relaxed.gpu",
                GPU_STORE,
                GPU_LOAD,
                "fence.acq_rel.cta;",
                None,
            ),
        ];
        for test in expand(row, "\"grid\"", &variants) {
            assert_eq!(
                weak_outcome_allowed(&test),
                row.name != "CoRR",
                "{}",
                test.name
            );
        }
    }
}

/// "All threads in one CTA: `.cta` behaves exactly like `.gpu`": with every thread in one block
/// (as lanes of one warp or as separate warps), each `.cta` variant allows exactly the outcomes
/// of its `.gpu` counterpart, and the weak outcome follows the `.gpu` column of the table.
#[test]
fn cta_scope_within_one_cta_behaves_like_gpu_scope() {
    // (.cta variant, .gpu variant, the table column of the .gpu variant)
    let pairs = [
        (
            ("relaxed.cta", CTA_STORE, CTA_LOAD, ""),
            ("relaxed.gpu", GPU_STORE, GPU_LOAD, ""),
            1,
        ),
        (
            (
                "fence.acq_rel.cta",
                CTA_STORE,
                CTA_LOAD,
                "fence.acq_rel.cta;",
            ),
            (
                "fence.acq_rel.gpu",
                GPU_STORE,
                GPU_LOAD,
                "fence.acq_rel.gpu;",
            ),
            2,
        ),
        (
            ("membar.cta+plain", PLAIN_STORE, PLAIN_LOAD, "membar.cta;"),
            ("membar.gl+plain", PLAIN_STORE, PLAIN_LOAD, "membar.gl;"),
            3,
        ),
        (
            ("membar.cta+relaxed.cta", CTA_STORE, CTA_LOAD, "membar.cta;"),
            ("membar.gl+relaxed.gpu", GPU_STORE, GPU_LOAD, "membar.gl;"),
            4,
        ),
    ];
    for row in ROWS {
        for (
            (cta_name, cta_store, cta_load, cta_fence),
            (gpu_name, gpu_store, gpu_load, gpu_fence),
            column,
        ) in pairs
        {
            let tests = expand(
                row,
                "\"warp\", \"block\"",
                &[
                    (cta_name, cta_store, cta_load, cta_fence, None),
                    (gpu_name, gpu_store, gpu_load, gpu_fence, None),
                ],
            );
            let [cta_warp, cta_block, gpu_warp, gpu_block] = &tests[..] else {
                panic!("expected four tests, got {}", tests.len());
            };
            let letter = row.letters.chars().nth(column).unwrap();
            for (cta, gpu) in [(cta_warp, gpu_warp), (cta_block, gpu_block)] {
                let cta_outcomes = allowed_outcomes(cta, DEFAULT_BOUND).unwrap();
                let gpu_outcomes = allowed_outcomes(gpu, DEFAULT_BOUND).unwrap();
                assert_eq!(
                    cta_outcomes, gpu_outcomes,
                    "{} against {}",
                    cta.name, gpu.name
                );
                assert_eq!(
                    weak_outcome_allowed(cta),
                    letter == 'A',
                    "{} in one CTA should follow column {column} ({letter})",
                    cta.name
                );
            }
        }
    }
}

fn outcome_set(outcomes: &[&[u32]]) -> BTreeSet<Outcome> {
    outcomes
        .iter()
        .map(|values| Outcome(values.to_vec()))
        .collect()
}

fn only_test(row: &Row, store: &str, load: &str, fence: &str) -> LitmusTest {
    let mut tests = expand(row, "\"grid\"", &[("only", store, load, fence, None)]);
    assert_eq!(tests.len(), 1);
    tests.remove(0)
}

#[test]
fn message_passing_full_allowed_sets() {
    // Observables: 1:r0, 1:r1, x, y.
    let plain = only_test(&MP, PLAIN_STORE, PLAIN_LOAD, "");
    assert_eq!(
        plain
            .observables()
            .iter()
            .map(|&observable| plain.observable_name(observable))
            .collect::<Vec<_>>(),
        ["1:r0", "1:r1", "x", "y"]
    );
    assert_eq!(
        allowed_outcomes(&plain, DEFAULT_BOUND).unwrap(),
        outcome_set(&[&[0, 0, 1, 1], &[0, 1, 1, 1], &[1, 0, 1, 1], &[1, 1, 1, 1]])
    );
    for fence in [
        "fence.sc.gpu;",
        "fence.acq_rel.gpu;",
        "membar.gl;",
        "membar.sys;",
    ] {
        let fenced = only_test(&MP, GPU_STORE, GPU_LOAD, fence);
        assert_eq!(
            allowed_outcomes(&fenced, DEFAULT_BOUND).unwrap(),
            outcome_set(&[&[0, 0, 1, 1], &[0, 1, 1, 1], &[1, 1, 1, 1]]),
            "{fence}"
        );
    }
    let released = only_test(
        &MP,
        "st.release.gpu.global.u32",
        "ld.acquire.gpu.global.u32",
        "",
    );
    assert_eq!(
        allowed_outcomes(&released, DEFAULT_BOUND).unwrap(),
        outcome_set(&[&[0, 0, 1, 1], &[0, 1, 1, 1], &[1, 1, 1, 1]])
    );
    let released_in_cta = only_test(
        &MP,
        "st.release.cta.global.u32",
        "ld.acquire.cta.global.u32",
        "",
    );
    assert_eq!(
        allowed_outcomes(&released_in_cta, DEFAULT_BOUND)
            .unwrap()
            .len(),
        4
    );
}

#[test]
fn store_buffering_and_two_plus_two_writes_full_allowed_sets() {
    // Observables: 0:r0, 1:r1, x, y.
    let fenced = only_test(&SB, GPU_STORE, GPU_LOAD, "fence.sc.gpu;");
    assert_eq!(
        allowed_outcomes(&fenced, DEFAULT_BOUND).unwrap(),
        outcome_set(&[&[0, 1, 1, 1], &[1, 0, 1, 1], &[1, 1, 1, 1]])
    );
    let acquire_release = only_test(&SB, GPU_STORE, GPU_LOAD, "fence.acq_rel.gpu;");
    assert_eq!(
        allowed_outcomes(&acquire_release, DEFAULT_BOUND)
            .unwrap()
            .len(),
        4
    );
    // Observables: x, y.
    let plain = only_test(&TWO_PLUS_TWO_W, PLAIN_STORE, PLAIN_LOAD, "");
    assert_eq!(
        allowed_outcomes(&plain, DEFAULT_BOUND).unwrap(),
        outcome_set(&[&[1, 1], &[1, 2], &[2, 1], &[2, 2]])
    );
    let fenced = only_test(&TWO_PLUS_TWO_W, PLAIN_STORE, PLAIN_LOAD, "membar.gl;");
    assert_eq!(
        allowed_outcomes(&fenced, DEFAULT_BOUND).unwrap(),
        outcome_set(&[&[1, 2], &[2, 1], &[2, 2]])
    );
}
