//! Tests of the merge pass: each rule of the module documentation, the cases
//! it must leave alone, the registers and labels it rewrites, and that the
//! merged kernel verifies and round-trips through its text.

use super::*;
use crate::{parse_module, print_module, verify_module};

/// A kernel with a 16-byte-aligned shared array `s` (at offset 0), a 4-byte
/// variable `pad` before `odd` (so `odd` starts 4 bytes past an 8-byte
/// boundary), `%t` the thread index, `%p` a parameter, and `%a` = s + 16t
/// (16-byte aligned), `%b` = s + 8t (8-byte aligned), `%c` = s + 4t (4-byte).
fn kernel(body: &str) -> Module {
    let text = format!(
        ".file 1 \"merge.cu\"
.kernel k(.param .u32 P, .param .u64 G)
{{
    .shared .align 16 .b8 s[4096];
    .shared .align 4 .b8 pad[4];
    .shared .align 4 .b8 odd[4096];
    .reg .u32 %t, %p, %a, %b, %c, %o, %n, %r<8>;
    .reg .f32 %f<8>;
    .reg .f64 %d<4>;
    .reg .u16 %h<4>;
    .reg .u64 %g;
    .reg .pred %q;
    mov.u32 %t, %tid.x;
    ld.param.u32 %p, [P];
    ld.param.u64 %g, [G];
    shl.b32 %a, %t, 4;
    add.s32 %a, %a, s;
    shl.b32 %b, %t, 3;
    add.s32 %b, %b, s;
    shl.b32 %c, %t, 2;
    add.s32 %c, %c, s;
    shl.b32 %o, %t, 3;
    add.s32 %o, %o, odd;
{body}
    exit;
}}
"
    );
    parse_module("merge.kir", &text).unwrap_or_else(|error| panic!("{error}\n{text}"))
}

/// Merges, checks that the result verifies and round-trips, and returns the
/// summary and the shared-memory instructions as text, one per line.
fn merged(body: &str) -> (MergeSummary, Vec<String>) {
    let mut module = kernel(body);
    verify_module(&module).unwrap_or_else(|error| panic!("before merging: {error}"));
    let summary = merge_accesses(&mut module);
    verify_module(&module)
        .unwrap_or_else(|error| panic!("after merging: {error}\n{}", print_module(&module)));
    let printed = print_module(&module);
    let reparsed = parse_module("merged.kir", &printed).expect("the merged text parses");
    assert_eq!(reparsed, module, "parse(print(m)) != m\n{printed}");
    // Merging is idempotent: nothing is left to merge.
    let mut again = module.clone();
    assert_eq!(
        merge_accesses(&mut again),
        MergeSummary::default(),
        "a second pass merged more\n{printed}"
    );
    let kernel = &module.kernels[0];
    // The shared-memory instructions, and the copies the pass adds.
    let lines = kernel
        .instrs
        .iter()
        .map(|instr| (instr, crate::instruction_text(kernel, instr)))
        .filter(|(instr, text)| {
            matches!(
                &instr.op,
                Op::Load {
                    space: StateSpace::Shared,
                    ..
                } | Op::Store {
                    space: StateSpace::Shared,
                    ..
                } | Op::Atom { .. }
            ) || (text.starts_with("mov") && text.contains("%merged"))
        })
        .map(|(_, text)| text)
        .collect();
    (summary, lines)
}

fn texts(body: &str) -> Vec<String> {
    merged(body).1
}

#[test]
fn adjacent_loads_of_an_aligned_pair_become_one_vector_load() {
    assert_eq!(
        texts("ld.shared.f32 %f1, [%b]; ld.shared.f32 %f2, [%b+4];"),
        ["ld.shared.v2.f32 {%f1, %f2}, [%b]"]
    );
    // In either order; the load sits where the first one was.
    assert_eq!(
        texts("ld.shared.f32 %f2, [%b+4]; ld.shared.f32 %f1, [%b];"),
        ["ld.shared.v2.f32 {%f1, %f2}, [%b]"]
    );
    // Two 64-bit loads of an aligned 16-byte group.
    assert_eq!(
        texts("ld.shared.f64 %d1, [%a]; ld.shared.f64 %d2, [%a+8];"),
        ["ld.shared.v2.f64 {%d1, %d2}, [%a]"]
    );
}

#[test]
fn three_or_four_words_of_an_aligned_quad_become_one_128_bit_load() {
    assert_eq!(
        texts(
            "ld.shared.f32 %f1, [%a]; ld.shared.f32 %f2, [%a+4];
             ld.shared.f32 %f3, [%a+8]; ld.shared.f32 %f4, [%a+12];"
        ),
        ["ld.shared.v4.f32 {%f1, %f2, %f3, %f4}, [%a]"]
    );
    // Out of order too, and a word that nobody asked for is read into a fresh register.
    let (summary, lines) =
        merged("ld.shared.f32 %f3, [%a+12]; ld.shared.f32 %f1, [%a+4]; ld.shared.f32 %f2, [%a+8];");
    assert_eq!(lines, ["ld.shared.v4.f32 {%merged0, %f1, %f2, %f3}, [%a]"]);
    assert_eq!(summary.merged_loads, 1);
    assert_eq!(summary.loads_replaced, 3);
    // Two words of a quad merge only as an aligned pair.
    assert_eq!(
        texts("ld.shared.f32 %f1, [%a]; ld.shared.f32 %f2, [%a+8];"),
        ["ld.shared.f32 %f1, [%a]", "ld.shared.f32 %f2, [%a+8]"]
    );
    assert_eq!(
        texts("ld.shared.f32 %f1, [%a+4]; ld.shared.f32 %f2, [%a+8];"),
        ["ld.shared.f32 %f1, [%a+4]", "ld.shared.f32 %f2, [%a+8]"]
    );
    assert_eq!(
        texts("ld.shared.f32 %f1, [%a+8]; ld.shared.f32 %f2, [%a+12];"),
        ["ld.shared.v2.f32 {%f1, %f2}, [%a+8]"]
    );
    // Six words: a quad and the pair after it.
    assert_eq!(
        texts(
            "ld.shared.f32 %f1, [%a]; ld.shared.f32 %f2, [%a+4]; ld.shared.f32 %f3, [%a+8];
             ld.shared.f32 %f4, [%a+12]; ld.shared.f32 %f5, [%a+16]; ld.shared.f32 %f6, [%a+20];"
        ),
        [
            "ld.shared.v4.f32 {%f1, %f2, %f3, %f4}, [%a]",
            "ld.shared.v2.f32 {%f5, %f6}, [%a+16]"
        ]
    );
}

#[test]
fn an_eight_byte_aligned_base_allows_pairs_but_not_quads() {
    assert_eq!(
        texts(
            "ld.shared.f32 %f1, [%b]; ld.shared.f32 %f2, [%b+4];
             ld.shared.f32 %f3, [%b+8]; ld.shared.f32 %f4, [%b+12];"
        ),
        [
            "ld.shared.v2.f32 {%f1, %f2}, [%b]",
            "ld.shared.v2.f32 {%f3, %f4}, [%b+8]"
        ]
    );
    // A pair starting 4 bytes past an 8-byte boundary does not merge.
    assert_eq!(
        texts("ld.shared.f32 %f1, [%b+4]; ld.shared.f32 %f2, [%b+8];"),
        ["ld.shared.f32 %f1, [%b+4]", "ld.shared.f32 %f2, [%b+8]"]
    );
}

#[test]
fn unprovable_alignment_prevents_merging() {
    // s + 4t: no pair is known to start on an 8-byte boundary.
    assert_eq!(
        texts("ld.shared.f32 %f1, [%c]; ld.shared.f32 %f2, [%c+4];"),
        ["ld.shared.f32 %f1, [%c]", "ld.shared.f32 %f2, [%c+4]"]
    );
    // odd + 8t lies 4 bytes past an 8-byte boundary; odd + 8t + 4 would be aligned, but
    // ptxas only knows odd's alignment (4), not its value, so neither pair merges.
    assert_eq!(
        texts("ld.shared.f32 %f1, [%o+4]; ld.shared.f32 %f2, [%o+8];"),
        ["ld.shared.f32 %f1, [%o+4]", "ld.shared.f32 %f2, [%o+8]"]
    );
    // A variable's own address is a constant: odd + 4 is 8-byte aligned.
    assert_eq!(
        texts("ld.shared.f32 %f1, [odd+4]; ld.shared.f32 %f2, [odd+8];"),
        ["ld.shared.v2.f32 {%f1, %f2}, [odd+4]"]
    );
}

#[test]
fn addresses_are_compared_through_constant_offsets() {
    // A register made from the base by adding a constant names the same place.
    assert_eq!(
        texts("add.s32 %r1, %b, 4; ld.shared.f32 %f1, [%b]; ld.shared.f32 %f2, [%r1];"),
        ["ld.shared.v2.f32 {%f1, %f2}, [%b]"]
    );
    // The base redefined in between still counts from its old value.
    assert_eq!(
        texts("mov.u32 %r1, %b; ld.shared.f32 %f1, [%r1]; add.s32 %r1, %r1, 16; ld.shared.f32 %f2, [%r1+-12];"),
        ["ld.shared.v2.f32 {%f1, %f2}, [%r1]"]
    );
    // Two registers computed apart are different places even if equal in value.
    assert_eq!(
        texts("add.s32 %r1, %c, %c; ld.shared.f32 %f1, [%b]; ld.shared.f32 %f2, [%r1+4];"),
        ["ld.shared.f32 %f1, [%b]", "ld.shared.f32 %f2, [%r1+4]"]
    );
}

#[test]
fn what_may_intervene_between_merged_loads() {
    let pair = |middle: &str| {
        texts(&format!(
            "ld.shared.f32 %f1, [%b]; {middle} ld.shared.f32 %f2, [%b+4];"
        ))
    };
    let merged_pair = "ld.shared.v2.f32 {%f1, %f2}, [%b]";
    // A global store or load, arithmetic, a branch-free guard: no effect.
    assert!(pair("st.global.f32 [%g], %f3;").contains(&merged_pair.to_string()));
    assert!(pair("ld.global.f32 %f3, [%g];").contains(&merged_pair.to_string()));
    assert!(pair("add.f32 %f3, %f1, %f1;").contains(&merged_pair.to_string()));
    // A shared store (even to another word), a generic store, an atomic, a barrier or a
    // fence keeps the loads apart.
    for middle in [
        "st.shared.f32 [%b+8], %f3;",
        "st.f32 [%g], %f3;",
        "atom.shared.add.u32 %r1, [%c], 3;",
        "bar.sync 0;",
        "membar.cta;",
        "bar.warp.sync -1;",
        "ld.volatile.shared.f32 %f3, [%b+8];",
    ] {
        let lines = pair(middle);
        assert!(
            !lines.contains(&merged_pair.to_string()),
            "merged across `{middle}`: {lines:?}"
        );
    }
}

#[test]
fn volatile_guarded_and_narrow_loads_stay_apart() {
    for body in [
        "ld.volatile.shared.f32 %f1, [%b]; ld.volatile.shared.f32 %f2, [%b+4];",
        "setp.lt.u32 %q, %t, 7; @%q ld.shared.f32 %f1, [%b]; @%q ld.shared.f32 %f2, [%b+4];",
        "ld.shared.u16 %h1, [%b]; ld.shared.u16 %h2, [%b+2];",
        "ld.shared.u8 %r1, [%b]; ld.shared.u8 %r2, [%b+1];",
    ] {
        let (summary, _) = merged(body);
        assert_eq!(summary, MergeSummary::default(), "`{body}`");
    }
    // Relaxed loads merge like weak ones.
    assert_eq!(
        texts("ld.relaxed.cta.shared.f32 %f1, [%b]; ld.relaxed.cta.shared.f32 %f2, [%b+4];"),
        ["ld.relaxed.cta.shared.v2.f32 {%f1, %f2}, [%b]"]
    );
}

#[test]
fn loads_in_different_blocks_stay_apart() {
    let (summary, _) = merged(
        "ld.shared.f32 %f1, [%b];
    setp.lt.u32 %q, %t, 7;
@%q bra SKIP;
    add.f32 %f1, %f1, %f1;
SKIP:
    ld.shared.f32 %f2, [%b+4];",
    );
    assert_eq!(summary, MergeSummary::default());
}

#[test]
fn a_register_used_before_its_load_is_filled_through_a_copy() {
    // %f2 is read between the loads, so the merged load writes a fresh register and the
    // second load's place copies it into %f2.
    assert_eq!(
        texts("ld.shared.f32 %f1, [%b]; add.f32 %f3, %f2, %f2; ld.shared.f32 %f2, [%b+4];"),
        [
            "ld.shared.v2.f32 {%f1, %merged0}, [%b]",
            "mov.b32 %f2, %merged0"
        ]
    );
    // Registers of different types (an integer and a float word) load as bits.
    assert_eq!(
        texts("ld.shared.u32 %r1, [%b]; ld.shared.f32 %f1, [%b+4];"),
        [
            "ld.shared.v2.b32 {%r1, %merged0}, [%b]",
            "mov.b32 %f1, %merged0"
        ]
    );
}

#[test]
fn stores_that_cover_an_aligned_group_become_one_store() {
    assert_eq!(
        texts("st.shared.f32 [%b], %f1; st.shared.f32 [%b+4], %f2;"),
        ["st.shared.v2.f32 [%b], {%f1, %f2}"]
    );
    assert_eq!(
        texts(
            "st.shared.u32 [%a+8], %r3; st.shared.u32 [%a], %r1;
             st.shared.u32 [%a+12], %r4; st.shared.u32 [%a+4], %r2;"
        ),
        ["st.shared.v4.u32 [%a], {%r1, %r2, %r3, %r4}"]
    );
    // Three of four words are not a full group: only the aligned pair merges.
    assert_eq!(
        texts("st.shared.u32 [%a+4], %r1; st.shared.u32 [%a+8], %r2; st.shared.u32 [%a+12], %r3;"),
        [
            "st.shared.u32 [%a+4], %r1",
            "st.shared.v2.u32 [%a+8], {%r2, %r3}"
        ]
    );
    // 16-bit stores make a 32- or 64-bit store; 8-bit stores never merge.
    assert_eq!(
        texts("st.shared.u16 [%b], %h1; st.shared.u16 [%b+2], %h2;"),
        ["st.shared.v2.u16 [%b], {%h1, %h2}"]
    );
    assert_eq!(
        texts(
            "st.shared.u16 [%b], %h0; st.shared.u16 [%b+2], %h1;
             st.shared.u16 [%b+4], %h2; st.shared.u16 [%b+6], %h3;"
        ),
        ["st.shared.v4.u16 [%b], {%h0, %h1, %h2, %h3}"]
    );
    let (summary, _) = merged("st.shared.u8 [%b], %r1; st.shared.u8 [%b+1], %r2;");
    assert_eq!(summary, MergeSummary::default());
    // Literals and mixed types store as bits.
    assert_eq!(
        texts("st.shared.u32 [%b], 7; st.shared.f32 [%b+4], %f1;"),
        ["st.shared.v2.b32 [%b], {0x7, %f1}"]
    );
}

#[test]
fn a_merged_store_sits_at_the_last_store_with_its_line() {
    let mut module = kernel(
        ".loc 1 100
    st.shared.f32 [%b], %f1;
    .loc 1 200
    st.shared.f32 [%b+4], %f2;
    .loc 1 300
    ld.shared.f32 %f3, [%a];
    .loc 1 400
    ld.shared.f32 %f4, [%a+4];",
    );
    merge_accesses(&mut module);
    let kernel = &module.kernels[0];
    let lines: Vec<(String, u32)> = kernel
        .instrs
        .iter()
        .filter(|instr| matches!(instr.op, Op::Load { .. } | Op::Store { .. }))
        .filter(|instr| instr.loc.line >= 100)
        .map(|instr| (crate::instruction_text(kernel, instr), instr.loc.line))
        .collect();
    assert_eq!(
        lines,
        [
            ("st.shared.v2.f32 [%b], {%f1, %f2}".to_string(), 200),
            ("ld.shared.v2.f32 {%f3, %f4}, [%a]".to_string(), 300),
        ]
    );
}

#[test]
fn what_may_intervene_between_merged_stores() {
    let pair = |middle: &str| {
        texts(&format!(
            "st.shared.f32 [%b], %f1; {middle} st.shared.f32 [%b+4], %f2;"
        ))
    };
    let merged_pair = "st.shared.v2.f32 [%b], {%f1, %f2}";
    assert!(pair("ld.global.f32 %f3, [%g];").contains(&merged_pair.to_string()));
    assert!(pair("st.global.f32 [%g], %f3;").contains(&merged_pair.to_string()));
    for middle in [
        "ld.shared.f32 %f3, [%b+8];",
        "ld.f32 %f3, [%g];",
        "st.shared.f32 [%c], %f3;",
        "bar.sync 0;",
        "atom.shared.add.u32 %r1, [%c], 3;",
    ] {
        let lines = pair(middle);
        assert!(
            !lines.contains(&merged_pair.to_string()),
            "merged across `{middle}`: {lines:?}"
        );
    }
    // A store to the same word ends the group: the later one must stay last.
    assert_eq!(
        texts("st.shared.f32 [%b], %f1; st.shared.f32 [%b+4], %f2; st.shared.f32 [%b], %f3;"),
        [
            "st.shared.v2.f32 [%b], {%f1, %f2}",
            "st.shared.f32 [%b], %f3"
        ]
    );
}

#[test]
fn a_value_overwritten_before_the_merged_store_is_copied_first() {
    assert_eq!(
        texts("st.shared.f32 [%b], %f1; add.f32 %f1, %f1, %f1; st.shared.f32 [%b+4], %f1;"),
        [
            "mov.b32 %merged0, %f1",
            "st.shared.v2.f32 [%b], {%merged0, %f1}"
        ]
    );
}

#[test]
fn labels_follow_the_instructions_they_named() {
    let mut module = kernel(
        "TOP:
    st.shared.f32 [%b], %f1;
    st.shared.f32 [%b+4], %f2;
    setp.lt.u32 %q, %t, 7;
@%q bra TOP;",
    );
    merge_accesses(&mut module);
    let kernel = &module.kernels[0];
    let top = kernel
        .labels
        .iter()
        .find(|label| label.name == "TOP")
        .expect("the label");
    // The first store is gone; the label names the merged store that took its place.
    assert_eq!(
        crate::instruction_text(kernel, &kernel.instrs[top.target.index()]),
        "st.shared.v2.f32 [%b], {%f1, %f2}"
    );
    verify_module(&module).expect("the merged kernel verifies");
}

#[test]
fn atomic_adds_of_one_with_unused_results_become_population_count_increments() {
    let (summary, lines) = merged(
        "atom.shared.add.u32 %r1, [%c], 1;
    red.shared.add.u32 [%c], 1;
    mov.u32 %r2, 1;
    red.shared.add.u32 [%c], %r2;",
    );
    assert_eq!(summary.popc_increments, 3);
    assert_eq!(
        lines
            .iter()
            .filter(|line| line.starts_with("red") || line.starts_with("atom"))
            .collect::<Vec<_>>(),
        [
            "red.shared.popc_inc.u32 [%c], 1",
            "red.shared.popc_inc.u32 [%c], 1",
            "red.shared.popc_inc.u32 [%c], 1"
        ]
    );
    // A used result, another increment, a signed add, another space: unchanged.
    for body in [
        "atom.shared.add.u32 %r1, [%c], 1; st.global.u32 [%g], %r1;",
        "red.shared.add.u32 [%c], 2;",
        "red.shared.add.u32 [%c], %p;",
        "red.shared.add.s32 [%c], 1;",
        "red.global.add.u32 [%g], 1;",
        "red.shared.inc.u32 [%c], 1;",
    ] {
        let (summary, _) = merged(body);
        assert_eq!(summary.popc_increments, 0, "`{body}`");
    }
}

#[test]
fn population_count_increments_round_trip_and_verify_strictly() {
    let module = parse_module(
        "popc.kir",
        ".kernel k()
{
    .shared .align 4 .u32 h[4];
    .reg .u32 %a;
    mov.u32 %a, h;
    red.shared.popc_inc.u32 [%a], 1;
    exit;
}
",
    )
    .expect("parses");
    verify_module(&module).expect("verifies");
    let printed = print_module(&module);
    assert!(
        printed.contains("red.shared.popc_inc.u32 [%a], 1;"),
        "{printed}"
    );
    assert_eq!(parse_module("popc.kir", &printed).expect("parses"), module);
    for (body, problem) in [
        ("atom.shared.popc_inc.u32 %a, [%a], 1;", "returns no value"),
        ("red.shared.popc_inc.u32 [%a], 2;", "adds the literal 1"),
        ("red.shared.popc_inc.s32 [%a], 1;", "not defined for `.s32`"),
        (
            "red.global.popc_inc.u32 [%g], 1;",
            "shared-memory reduction",
        ),
    ] {
        let text = format!(
            ".kernel k()
{{
    .shared .align 4 .u32 h[4];
    .reg .u32 %a;
    .reg .u64 %g;
    mov.u32 %a, h;
    mov.u64 %g, 0;
    {body}
    exit;
}}
"
        );
        let module = parse_module("popc.kir", &text).expect("parses");
        let error = verify_module(&module).expect_err(body).to_string();
        assert!(error.contains(problem), "`{body}`: {error}");
    }
}

#[test]
fn the_summary_adds_up_over_kernels() {
    let mut total = MergeSummary::default();
    total += MergeSummary {
        merged_loads: 1,
        loads_replaced: 2,
        merged_stores: 3,
        stores_replaced: 6,
        popc_increments: 1,
    };
    total += MergeSummary {
        merged_loads: 1,
        loads_replaced: 3,
        ..MergeSummary::default()
    };
    assert_eq!(total.merged_loads, 2);
    assert_eq!(total.loads_replaced, 5);
    assert_eq!(total.popc_increments, 1);
}

#[test]
fn misplaced_or_overlapping_accesses_are_left_alone() {
    // A 4-byte load at byte 2 of a pair does not fill a slot of a vector.
    let (summary, _) = merged("ld.shared.u32 %r1, [%b+2]; ld.shared.u32 %r2, [%b+4];");
    assert_eq!(summary, MergeSummary::default());
    // Two loads of one word: ptxas would drop the second; the pass leaves both.
    let (summary, _) =
        merged("ld.shared.f32 %f1, [%b]; ld.shared.f32 %f2, [%b+4]; ld.shared.f32 %f3, [%b];");
    assert_eq!(summary, MergeSummary::default());
    // A kernel without shared accesses is returned unchanged.
    let mut module = kernel("add.s32 %r1, %t, 1;");
    let before = module.clone();
    assert_eq!(merge_accesses(&mut module), MergeSummary::default());
    assert_eq!(module, before);
}
