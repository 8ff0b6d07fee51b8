//! The initialization checker: which reads of shared and local memory are
//! `uninitialized-read` findings (bytes no store or atomic wrote, byte by
//! byte, whichever thread wrote shared memory, only the thread itself for
//! local memory, generic accesses included), how they are merged (once per
//! instruction, with every thread, across blocks), what they say, and the
//! fill pattern of fresh memory.

mod common;
use common::*;
use warpsim_machine::{FindingKind, MachineConfig, Severity};

/// The uninitialized-read findings of a checked run of `source` on one
/// block of `threads` threads, with an output buffer of `words` words.
fn reads(source: &str, threads: u32, words: usize) -> (Outcome, Vec<warpsim_machine::Finding>) {
    let out = kernel(source)
        .threads(threads)
        .arg(Arg::zeros(words))
        .check_initialization()
        .run()
        .ok();
    let findings = out
        .outcome
        .findings
        .iter()
        .filter(|finding| finding.kind == FindingKind::UninitializedRead)
        .cloned()
        .collect();
    (out, findings)
}

/// The threads of a finding's site as (warp, lanes).
fn threads(finding: &warpsim_machine::Finding) -> Vec<(u32, u32)> {
    finding.sites[0]
        .threads
        .iter()
        .map(|entry| (entry.warp, entry.lanes))
        .collect()
}

// Lane t stores one byte at s + t, then loads the word holding it: only the
// words whose four bytes four lanes stored are initialized, so with 30
// lanes the last word (bytes 28-31, of which lanes 28-29 stored two) is not.
const BYTES_THEN_WORDS: &str = r#"
.kernel bytes(.param .u64 OUT)
{
    .shared .align 4 .u8 s[32];
    .reg .u32 %t, %a, %w, %v, %base;
    .reg .u64 %po, %off;
    mov.u32 %t, %tid.x;
    mov.u32 %base, s;
    add.u32 %a, %base, %t;
    st.shared.u8 [%a], %t;
    bar.sync 0;
    and.b32 %w, %a, 0xfffffffc;
    ld.shared.u32 %v, [%w];                  // @word
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    st.global.u32 [%po], %v;
}
"#;

#[test]
fn bytes_count_one_by_one() {
    let (out, findings) = reads(BYTES_THEN_WORDS, 30, 32);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let finding = &findings[0];
    assert_eq!(finding.severity, Severity::Error);
    assert_eq!(finding.sites[0].pc, out.pc("@word"));
    assert!(finding.sites[0].primary);
    assert_eq!(threads(finding), [(0, 0b11 << 28)]);
    assert!(
        finding
            .message
            .contains("bytes of `s` (within its bytes 28-31, shared offsets 0x1c-0x1f)"),
        "{}",
        finding.message
    );
    // Lanes 28 and 29 read their two bytes and two of the 0xff fill.
    let words = out.u32s(0);
    assert_eq!(words[28], 0xffff_1d1c);
    assert_eq!(words[0], 0x0302_0100);
    // All 32 lanes: every word is whole.
    let (_, findings) = reads(BYTES_THEN_WORDS, 32, 32);
    assert!(findings.is_empty(), "{findings:#?}");
}

// Warp 0 stores s[t]; after the barrier warp 1 reads s[t - 32] (written by
// another warp: initialized) and s[t] (written by nobody). The second read
// runs in a loop of three rounds: one finding, every round's threads.
const OTHER_WARPS: &str = r#"
.kernel other(.param .u64 OUT)
{
    .shared .align 4 .u32 s[64];
    .reg .u32 %t, %a, %v, %w, %i, %base;
    .reg .pred %first, %again;
    mov.u32 %t, %tid.x;
    mov.u32 %base, s;
    mad.lo.u32 %a, %t, 4, %base;
    setp.lt.u32 %first, %t, 32;
@%first st.shared.u32 [%a], %t;
    bar.sync 0;
@%first exit;
    ld.shared.u32 %v, [%a+-128];             // @theirs
    mov.u32 %i, 0;
LOOP:
    ld.shared.u32 %w, [%a];                  // @unwritten
    add.u32 %i, %i, 1;
    setp.lt.u32 %again, %i, 3;
@%again bra LOOP;
}
"#;

#[test]
fn stores_of_other_warps_count_and_repeats_make_one_finding() {
    let (out, findings) = reads(OTHER_WARPS, 64, 1);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0].sites[0].pc, out.pc("@unwritten"));
    assert_eq!(threads(&findings[0]), [(1, u32::MAX)]);
    assert!(findings[0].message.contains("within its bytes 128-255"));
}

// Each thread's local word 0 is written by thread 0 only: thread 0 reads its
// own word, every other thread reads a word no one wrote for it. Word 1 is
// written through a generic address and read back through another.
const LOCAL_PER_THREAD: &str = r#"
.kernel local(.param .u64 OUT)
{
    .local .align 4 .u32 arr[2];
    .reg .u32 %t, %v, %w;
    .reg .u64 %po, %off, %g;
    .reg .pred %zero;
    mov.u32 %t, %tid.x;
    setp.eq.u32 %zero, %t, 0;
@%zero st.local.u32 [arr], 7;
    ld.local.u32 %v, [arr];                  // @own
    mov.u64 %g, arr;
    cvta.local.u64 %g, %g;
    st.u32 [%g+4], %t;
    ld.u32 %w, [%g+4];                       // @generic
    add.u32 %v, %v, %w;
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    st.global.u32 [%po], %v;
}
"#;

#[test]
fn local_memory_is_per_thread_and_generic_accesses_count() {
    let (out, findings) = reads(LOCAL_PER_THREAD, 64, 64);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let finding = &findings[0];
    assert_eq!(finding.sites[0].pc, out.pc("@own"));
    assert_eq!(threads(finding), [(0, !1), (1, u32::MAX)]);
    assert!(
        finding
            .message
            .starts_with("uninitialized local memory read: a load reads bytes of its thread's local memory (within bytes 0-3)"),
        "{}",
        finding.message
    );
    // Thread 0: 7 + 0; the others: the fill (-1) plus their id.
    let words = out.u32s(0);
    assert_eq!(words[0], 7);
    assert_eq!(words[5], 4);
}

// Atomics read what they update: `atom.add` and `red.add` on a word nobody
// wrote are findings; `atom.exch` returns the old value, so it is too. The
// words they leave are written: the loads after them are not.
const ATOMICS: &str = r#"
.kernel atomics(.param .u64 OUT)
{
    .shared .align 4 .u32 counters[3];
    .reg .u32 %t, %old, %v, %base;
    .reg .u64 %po;
    mov.u32 %t, %tid.x;
    mov.u32 %base, counters;
    atom.shared.add.u32 %old, [%base], 1;    // @add
    red.shared.add.u32 [%base+4], 1;         // @red
    atom.shared.exch.b32 %old, [%base+8], %t; // @exch
    bar.sync 0;
    ld.shared.u32 %v, [%base];
    ld.shared.u32 %v, [%base+4];
    ld.shared.u32 %v, [%base+8];
    ld.param.u64 %po, [OUT];
    st.global.u32 [%po], %v;
}
"#;

#[test]
fn atomics_read_and_write() {
    let (out, findings) = reads(ATOMICS, 32, 1);
    let pcs: Vec<u32> = findings.iter().map(|finding| finding.sites[0].pc).collect();
    assert_eq!(pcs, [out.pc("@add"), out.pc("@red"), out.pc("@exch")]);
    for finding in &findings {
        assert!(
            finding.message.contains("an atomic reads"),
            "{}",
            finding.message
        );
        assert_eq!(threads(finding), [(0, u32::MAX)]);
    }
}

// Every block reads s[0] before thread 0 writes it: a fresh block starts
// with nothing written, whatever the block before it wrote.
const EVERY_BLOCK: &str = r#"
.kernel blocks(.param .u64 OUT)
{
    .shared .align 4 .u32 s[1];
    .reg .u32 %t, %v;
    .reg .u64 %po;
    .reg .pred %zero;
    mov.u32 %t, %tid.x;
    ld.shared.u32 %v, [s];                   // @read
    bar.sync 0;
    setp.eq.u32 %zero, %t, 0;
@%zero st.shared.u32 [s], 1;
    ld.param.u64 %po, [OUT];
@%zero st.global.u32 [%po], %v;
}
"#;

#[test]
fn every_block_starts_unwritten_and_findings_merge_across_blocks() {
    let run = |host_threads: usize| {
        let out = kernel(EVERY_BLOCK)
            .grid([5, 1, 1])
            .threads(32)
            .arg(Arg::zeros(1))
            .host_threads(host_threads)
            .check_initialization()
            .run()
            .ok();
        let findings = out.outcome.findings.clone();
        (out, findings)
    };
    let (out, findings) = run(1);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0].kind, FindingKind::UninitializedRead);
    assert_eq!(findings[0].sites[0].pc, out.pc("@read"));
    assert_eq!(findings[0].block, [0, 0, 0]);
    assert_eq!(findings[0].blocks, 5);
    assert_eq!(run(3).1, findings);
}

/// Without the checker nothing is tracked or reported, and what runs is
/// the same: the checker only observes.
#[test]
fn a_plain_run_reports_nothing_and_computes_the_same() {
    let checked = kernel(LOCAL_PER_THREAD)
        .threads(64)
        .arg(Arg::zeros(64))
        .check_initialization()
        .run()
        .ok();
    let plain = kernel(LOCAL_PER_THREAD)
        .threads(64)
        .arg(Arg::zeros(64))
        .run()
        .ok();
    assert!(plain.outcome.findings.is_empty());
    assert!(!checked.outcome.findings.is_empty());
    assert_eq!(plain.u32s(0), checked.u32s(0));
    assert_eq!(plain.outcome.stats, checked.outcome.stats);
}

// Reads fresh shared and local memory and stores what they held.
const FRESH: &str = r#"
.kernel fresh(.param .u64 OUT)
{
    .shared .align 4 .u32 s[1];
    .local .align 4 .u32 l[1];
    .reg .u32 %a, %b;
    .reg .u64 %po;
    ld.shared.u32 %a, [s];
    ld.local.u32 %b, [l];
    ld.param.u64 %po, [OUT];
    st.global.u32 [%po], %a;
    st.global.u32 [%po+4], %b;
}
"#;

#[test]
fn fresh_memory_holds_the_configured_fill() {
    let fresh = |fill: Option<u8>| {
        let mut config = MachineConfig::hopper();
        if let Some(fill) = fill {
            config.memory.fresh_fill = fill;
        }
        kernel(FRESH)
            .threads(1)
            .arg(Arg::zeros(2))
            .config(config)
            .run()
            .ok()
            .u32s(0)
    };
    assert_eq!(fresh(None), [u32::MAX, u32::MAX]);
    assert_eq!(fresh(Some(0)), [0, 0]);
    assert_eq!(fresh(Some(0xab)), [0xabab_abab, 0xabab_abab]);
    // 0xff bytes are NaN as a float.
    assert!(f32::from_bits(fresh(None)[0]).is_nan());
}

// `.param` and `.const` memory always have contents; an access that faults
// ends the block without a panic, checked or not.
const PARAM_CONST_AND_FAULT: &str = r#"
.kernel pc(.param .u64 OUT)
{
    .const .align 4 .u32 c[2] = {1, 2};
    .shared .align 4 .u32 s[1];
    .reg .u32 %v, %w;
    .reg .u64 %po;
    ld.param.u64 %po, [OUT];
    ld.const.u32 %v, [c+4];
    st.global.u32 [%po], %v;
    ld.shared.u32 %w, [s+4096];              // @past_end
}
"#;

#[test]
fn param_and_const_loads_are_initialized_and_faults_stay_faults() {
    let out = kernel(PARAM_CONST_AND_FAULT)
        .threads(32)
        .arg(Arg::zeros(1))
        .check_initialization()
        .run();
    assert!(matches!(
        out.fault().kind,
        warpsim_machine::FaultKind::OutOfBounds { .. }
    ));
    assert!(
        out.outcome.findings.is_empty(),
        "{:#?}",
        out.outcome.findings
    );
    assert_eq!(out.u32s(0), [2]);
}

// Dynamic shared memory: the two extern names alias its start and the
// finding names the first declared.
const DYNAMIC: &str = r#"
.kernel dynamic(.param .u64 OUT)
{
    .shared .align 4 .u32 fixed[4];
    .extern .shared .align 16 .u32 dyn[];
    .extern .shared .align 16 .u32 alias[];
    .reg .u32 %v;
    .reg .u64 %po;
    st.shared.u32 [fixed], 1;
    ld.shared.u32 %v, [dyn+8];               // @dynamic
    ld.param.u64 %po, [OUT];
    st.global.u32 [%po], %v;
}
"#;

#[test]
fn dynamic_shared_memory_is_named_by_its_variable() {
    let out = kernel(DYNAMIC)
        .threads(1)
        .dynamic_shared(64)
        .arg(Arg::zeros(1))
        .check_initialization()
        .run()
        .ok();
    let findings = &out.outcome.findings;
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0].sites[0].pc, out.pc("@dynamic"));
    assert!(
        findings[0].message.contains(
            "bytes of `dyn` (within its bytes 8-11, shared offsets 0x18-0x1b, dynamic shared memory)"
        ),
        "{}",
        findings[0].message
    );
    assert!(findings[0].notes[0].contains("0xff bytes"));
}
