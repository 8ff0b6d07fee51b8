//! `ldmatrix` and `stmatrix` (PTX ISA 9.7.14.5.15 and 9.7.14.5.16): which
//! 16-bit element every lane receives or stores, for `.x1`, `.x2`, `.x4`
//! and `.trans`, against a host reference written from the ISA's fragment
//! layout; the wavefronts of rows in a scrambled order, against the rule of
//! bank-rules.md (one phase per matrix, the most rows in one bank group);
//! and what the initialization and race checkers see.

mod common;
use common::*;

/// The row that lane `lane` gives: a permutation of the 32 rows of 16
/// bytes of a 512-byte tile.
fn row_of(lane: usize) -> usize {
    (5 * lane + 3) % 32
}

/// Shared element `e` (16-bit, byte 2e of the tile) holds `e`. Lane `l`
/// gives row `row_of(l)`; the fragments go to OUT[11 l ..]: x4 (4
/// registers), x4.trans (4), x2 (2), x1 (1).
const LOADS: &str = r#"
.kernel loads(.param .u64 OUT)
{
    .reg .pred %p;
    .reg .u32 %t, %i, %w, %v, %address, %row;
    .reg .b32 %f<11>;
    .reg .u64 %po, %off;
    .shared .align 16 .b8 tile[512];
    mov.u32 %t, %laneid;
    mov.u32 %i, 0;
FILL:
    shl.b32 %w, %t, 2;
    add.u32 %w, %w, %i;
    shl.b32 %v, %w, 1;
    mad.lo.u32 %v, %v, 0x10001, 0x10000;
    shl.b32 %address, %w, 2;
    st.shared.u32 [%address], %v;
    add.u32 %i, %i, 1;
    setp.lt.u32 %p, %i, 4;
    @%p bra FILL;
    mad.lo.u32 %row, %t, 5, 3;
    and.b32 %row, %row, 31;
    shl.b32 %address, %row, 4;
    ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%f0, %f1, %f2, %f3}, [%address];   // @x4
    ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%f4, %f5, %f6, %f7}, [%address];   // @x4trans
    ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%f8, %f9}, [%address];   // @x2
    ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%f10}, [%address];   // @x1
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 44;
    add.u64 %po, %po, %off;
    st.global.u32 [%po], %f0;
    st.global.u32 [%po+4], %f1;
    st.global.u32 [%po+8], %f2;
    st.global.u32 [%po+12], %f3;
    st.global.u32 [%po+16], %f4;
    st.global.u32 [%po+20], %f5;
    st.global.u32 [%po+24], %f6;
    st.global.u32 [%po+28], %f7;
    st.global.u32 [%po+32], %f8;
    st.global.u32 [%po+36], %f9;
    st.global.u32 [%po+40], %f10;
}
"#;

/// Element (row, column) of matrix `matrix` when lanes give `row_of` rows
/// and shared element `e` holds `e`.
fn loaded_element(matrix: usize, row: usize, column: usize) -> u32 {
    (row_of(8 * matrix + row) * 8 + column) as u32
}

/// What lane `lane` holds in the register of matrix `matrix`: elements
/// (lane / 4, 2 (lane % 4)) and the next column, transposed with `.trans`.
fn fragment_word(lane: usize, matrix: usize, transpose: bool) -> u32 {
    let (row, column) = (lane / 4, 2 * (lane % 4));
    let element = |row: usize, column: usize| {
        if transpose {
            loaded_element(matrix, column, row)
        } else {
            loaded_element(matrix, row, column)
        }
    };
    element(row, column) | element(row, column + 1) << 16
}

/// The wavefronts of `matrices` matrices whose rows are given by `row_of`:
/// per matrix, the most of its 8 rows that share the four banks of one
/// 16-byte slot of a 128-byte bank row.
fn expected_wavefronts(matrices: usize) -> u64 {
    (0..matrices)
        .map(|matrix| {
            let mut per_slot = [0u64; 8];
            for row in 0..8 {
                per_slot[row_of(8 * matrix + row) % 8] += 1;
            }
            *per_slot.iter().max().unwrap()
        })
        .sum()
}

#[test]
fn ldmatrix_gives_every_lane_its_fragment_elements() {
    let out = run_kernel(LOADS, 1, 32, &[Arg::zeros(32 * 11)]).ok();
    let got = out.u32s(0);
    for lane in 0..32 {
        let mut want = Vec::new();
        want.extend((0..4).map(|matrix| fragment_word(lane, matrix, false)));
        want.extend((0..4).map(|matrix| fragment_word(lane, matrix, true)));
        want.extend((0..2).map(|matrix| fragment_word(lane, matrix, false)));
        want.push(fragment_word(lane, 0, false));
        assert_eq!(&got[11 * lane..11 * lane + 11], &want[..], "lane {lane}");
    }
    for (marker, matrices) in [("@x4", 4), ("@x4trans", 4), ("@x2", 2), ("@x1", 1)] {
        let wavefronts = expected_wavefronts(matrices);
        assert_eq!(
            out.stats(marker),
            shared(1, 32, wavefronts, matrices as u64),
            "{marker}"
        );
    }
}

/// Lane `l` holds, in register `i`, elements `8l + 2i` (low half) and
/// `8l + 2i + 1` (high half); `stmatrix` writes them to the rows that lanes
/// give (`row_of`), plainly and then transposed into a second tile; every
/// thread then copies four words of each tile to OUT.
const STORES: &str = r#"
.kernel stores(.param .u64 OUT)
{
    .reg .pred %p;
    .reg .u32 %t, %address, %row, %base, %i, %w, %v;
    .reg .b32 %s<4>;
    .reg .u64 %po, %off;
    .shared .align 16 .b8 tile[1024];
    mov.u32 %t, %laneid;
    shl.b32 %base, %t, 3;
    mad.lo.u32 %s0, %base, 0x10001, 0x10000;
    add.u32 %s1, %s0, 0x20002;
    add.u32 %s2, %s0, 0x40004;
    add.u32 %s3, %s0, 0x60006;
    mad.lo.u32 %row, %t, 5, 3;
    and.b32 %row, %row, 31;
    shl.b32 %address, %row, 4;
    stmatrix.sync.aligned.m8n8.x4.shared.b16 [%address], {%s0, %s1, %s2, %s3};   // @st
    stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%address+512], {%s0, %s1, %s2, %s3};   // @sttrans
    ld.param.u64 %po, [OUT];
    mov.u32 %i, 0;
COPY:
    mad.lo.u32 %w, %i, 32, %t;
    shl.b32 %address, %w, 2;
    ld.shared.u32 %v, [%address];
    mul.wide.u32 %off, %w, 4;
    add.u64 %off, %po, %off;
    st.global.u32 [%off], %v;
    add.u32 %i, %i, 1;
    setp.lt.u32 %p, %i, 8;
    @%p bra COPY;
}
"#;

#[test]
fn stmatrix_puts_every_lanes_fragment_elements_in_their_rows() {
    let out = run_kernel(STORES, 1, 32, &[Arg::zeros(256)]).ok();
    let got = out.u32s(0);
    // The tiles as 16-bit elements.
    let elements: Vec<u32> = got
        .iter()
        .flat_map(|&word| [word & 0xffff, word >> 16])
        .collect();
    let mut want = vec![0u32; 512];
    for lane in 0..32 {
        for matrix in 0..4 {
            for half in 0..2 {
                let value = (8 * lane + 2 * matrix + half) as u32;
                let (row, column) = (lane / 4, 2 * (lane % 4) + half);
                want[row_of(8 * matrix + row) * 8 + column] = value;
                want[256 + row_of(8 * matrix + column) * 8 + row] = value;
            }
        }
    }
    assert_eq!(elements, want);
    let wavefronts = expected_wavefronts(4);
    assert_eq!(out.stats("@st"), shared(1, 32, wavefronts, 4));
    assert_eq!(out.stats("@sttrans"), shared(1, 32, wavefronts, 4));
}

#[test]
fn ldmatrix_of_rows_never_written_is_an_uninitialized_read() {
    const UNWRITTEN: &str = r#"
.kernel unwritten(.param .u64 OUT)
{
    .reg .u32 %t, %address;
    .reg .b32 %f;
    .reg .u64 %po;
    .shared .align 16 .b8 tile[128];
    mov.u32 %t, %laneid;
    shl.b32 %address, %t, 4;
    and.b32 %address, %address, 127;
    ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%f}, [%address];   // @read
    ld.param.u64 %po, [OUT];
    st.global.u32 [%po], %f;
}
"#;
    let out = kernel(UNWRITTEN)
        .threads(32)
        .arg(Arg::zeros(1))
        .check_initialization()
        .run()
        .ok();
    let pc = pc_of(UNWRITTEN, &out.program, "@read");
    let findings: Vec<_> = out
        .outcome
        .findings
        .iter()
        .filter(|finding| finding.kind == warpsim_machine::FindingKind::UninitializedRead)
        .collect();
    // The eight row lanes of the one matrix read bytes no store wrote.
    assert_eq!(findings.len(), 1, "{:?}", out.outcome.findings);
    assert_eq!(findings[0].sites[0].pc, pc);
    let lanes: Vec<(u32, u32)> = findings[0].sites[0]
        .threads
        .iter()
        .map(|entry| (entry.warp, entry.lanes))
        .collect();
    assert_eq!(lanes, vec![(0, 0xff)]);
}

/// Warp 0 writes a matrix with `stmatrix` that warp 1 reads with
/// `ldmatrix`; with the barrier between them there is no race, without it
/// the race checker names the two instructions.
fn handoff(barrier: &str) -> String {
    format!(
        r#"
.kernel handoff(.param .u64 OUT)
{{
    .reg .pred %first;
    .reg .u32 %t, %lane, %address;
    .reg .b32 %f;
    .reg .u64 %po;
    .shared .align 16 .b8 tile[128];
    mov.u32 %t, %tid.x;
    mov.u32 %lane, %laneid;
    shl.b32 %address, %lane, 4;
    and.b32 %address, %address, 127;
    mov.u32 %f, %t;
    setp.lt.u32 %first, %t, 32;
    @!%first bra READ;
    stmatrix.sync.aligned.m8n8.x1.shared.b16 [%address], {{%f}};   // @write
READ:
    {barrier}
    @%first bra DONE;
    ldmatrix.sync.aligned.m8n8.x1.shared.b16 {{%f}}, [%address];   // @read
    ld.param.u64 %po, [OUT];
    st.global.u32 [%po], %f;
DONE:
    exit;
}}
"#
    )
}

#[test]
fn the_race_checker_sees_matrix_loads_and_stores() {
    let races = |barrier: &str| {
        let source = handoff(barrier);
        let out = kernel(&source)
            .threads(64)
            .arg(Arg::zeros(1))
            .check_races()
            .run()
            .ok();
        let write = pc_of(&source, &out.program, "@write");
        let read = pc_of(&source, &out.program, "@read");
        let mut sites: Vec<Vec<u32>> = out
            .outcome
            .findings
            .iter()
            .filter(|finding| finding.kind == warpsim_machine::FindingKind::SharedRace)
            .map(|finding| finding.sites.iter().map(|site| site.pc).collect())
            .collect();
        sites.iter_mut().for_each(|pcs| pcs.sort());
        (sites, write, read)
    };
    let (without, write, read) = races("");
    let mut expected = vec![write, read];
    expected.sort();
    assert_eq!(without, vec![expected]);
    let (with, _, _) = races("bar.sync 0;");
    assert!(with.is_empty(), "{with:?}");
}
