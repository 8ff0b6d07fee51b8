//! `redux.sync` and `match.sync` on the machine: in converged code, in a
//! partial last warp (lanes without a thread are not waited for), in both
//! arms of a divergent branch with a mask per arm and with one mask across
//! the arms (the rendezvous of `shfl.sync` and `vote.sync`), and under a
//! guard. Every expectation is computed on the host from the inputs, warp by
//! warp, with the PTX ISA's definitions.

mod common;
use common::*;

/// Each thread loads `v = IN[i]` and writes 15 words: redux add, min, max
/// (`.u32`), min, max (`.s32`), and, or, xor; match.any of `v & 3`;
/// match.all of `v & 3` and its predicate; match.all of a constant and its
/// predicate; match.any.b64 and match.all.b64 of `(v & 1) << 32 | 5`.
const CONVERGED: &str = r#"
.kernel reduce_match(.param .u64 IN, .param .u64 OUT)
{
    .reg .u32 %t, %v, %k, %r, %c, %hi;
    .reg .u64 %pi, %po, %off, %l;
    .reg .pred %p;
    mov.u32 %t, %ntid.x;
    mov.u32 %c, %ctaid.x;
    mul.lo.u32 %t, %t, %c;
    mov.u32 %c, %tid.x;
    add.u32 %t, %t, %c;
    ld.param.u64 %pi, [IN];
    mul.wide.u32 %off, %t, 4;
    add.u64 %pi, %pi, %off;
    ld.global.u32 %v, [%pi];
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 60;
    add.u64 %po, %po, %off;
    redux.sync.add.u32 %r, %v, 0xffffffff;      // @add
    st.global.u32 [%po], %r;
    redux.sync.min.u32 %r, %v, 0xffffffff;      st.global.u32 [%po+4], %r;
    redux.sync.max.u32 %r, %v, 0xffffffff;      st.global.u32 [%po+8], %r;
    redux.sync.min.s32 %r, %v, 0xffffffff;      st.global.u32 [%po+12], %r;
    redux.sync.max.s32 %r, %v, 0xffffffff;      st.global.u32 [%po+16], %r;
    redux.sync.and.b32 %r, %v, 0xffffffff;      st.global.u32 [%po+20], %r;
    redux.sync.or.b32 %r, %v, 0xffffffff;       st.global.u32 [%po+24], %r;
    redux.sync.xor.b32 %r, %v, 0xffffffff;      // @xor
    st.global.u32 [%po+28], %r;
    and.b32 %k, %v, 3;
    match.any.sync.b32 %r, %k, 0xffffffff;      st.global.u32 [%po+32], %r;
    match.all.sync.b32 %r|%p, %k, 0xffffffff;   st.global.u32 [%po+36], %r;
    selp.u32 %r, 1, 0, %p;                      st.global.u32 [%po+40], %r;
    match.all.sync.b32 %r|%p, 7, 0xffffffff;    st.global.u32 [%po+44], %r;
    selp.u32 %r, 1, 0, %p;                      st.global.u32 [%po+48], %r;
    and.b32 %hi, %v, 1;
    mov.b64 %l, {5, %hi};
    match.any.sync.b64 %r, %l, 0xffffffff;      st.global.u32 [%po+52], %r;
    match.all.sync.b64 %r, %l, 0xffffffff;      st.global.u32 [%po+56], %r;
}
"#;

/// The lanes `lo..hi` of a warp as a mask.
fn lanes(lo: usize, hi: usize) -> u32 {
    (lo..hi).fold(0, |mask, lane| mask | 1 << lane)
}

/// The 15 words `CONVERGED` writes for each lane of a warp holding `values`.
fn converged_expectation(values: &[u32]) -> Vec<[u32; 15]> {
    let members = lanes(0, values.len());
    let signed = |v: u32| v as i32;
    let equal = |key: &dyn Fn(u32) -> u64, value: u64| {
        (0..values.len()).fold(0u32, |mask, lane| {
            mask | u32::from(key(values[lane]) == value) << lane
        })
    };
    let all_equal = |key: &dyn Fn(u32) -> u64| values.iter().all(|&v| key(v) == key(values[0]));
    let key32 = |v: u32| u64::from(v & 3);
    let key64 = |v: u32| u64::from(v & 1) << 32 | 5;
    values
        .iter()
        .map(|&v| {
            let all32 = all_equal(&key32);
            let all64 = all_equal(&key64);
            [
                values.iter().fold(0u32, |sum, &x| sum.wrapping_add(x)),
                *values.iter().min().unwrap(),
                *values.iter().max().unwrap(),
                values.iter().map(|&x| signed(x)).min().unwrap() as u32,
                values.iter().map(|&x| signed(x)).max().unwrap() as u32,
                values.iter().fold(u32::MAX, |acc, &x| acc & x),
                values.iter().fold(0, |acc, &x| acc | x),
                values.iter().fold(0, |acc, &x| acc ^ x),
                equal(&key32, key32(v)),
                if all32 { members } else { 0 },
                u32::from(all32),
                members,
                1,
                equal(&key64, key64(v)),
                if all64 { members } else { 0 },
            ]
        })
        .collect()
}

fn check_converged(values: &[u32], grid: usize, block: usize, out: &[u32]) {
    for b in 0..grid {
        for w in 0..block.div_ceil(32) {
            let first = b * block + w * 32;
            let count = (block - w * 32).min(32);
            let expected = converged_expectation(&values[first..first + count]);
            for (lane, want) in expected.iter().enumerate() {
                let i = first + lane;
                assert_eq!(
                    &out[15 * i..15 * i + 15],
                    want,
                    "block {b} warp {w} lane {lane}"
                );
            }
        }
    }
}

/// Values with both signs, repeats and every residue of 4.
fn inputs(count: usize, seed: u32) -> Vec<u32> {
    (0..count as u32)
        .map(|i| {
            let x = (i.wrapping_mul(0x9e37_79b9) ^ seed).rotate_left(i % 13);
            if i % 5 == 0 {
                x & 0xff
            } else {
                x
            }
        })
        .collect()
}

#[test]
fn reductions_and_matches_over_full_warps() {
    let values = inputs(128, 0x1234_5678);
    let out = run_kernel(
        CONVERGED,
        2,
        64,
        &[Arg::u32s(&values), Arg::zeros(128 * 15)],
    )
    .ok();
    check_converged(&values, 2, 64, &out.u32s(1));
    assert_eq!(out.stats("@add"), counts(4, 128));
}

#[test]
fn a_partial_last_warp_reduces_over_its_threads() {
    // 40 threads: warp 1 holds 8, and the full mask names 24 lanes without a
    // thread, which are not waited for.
    let values = inputs(80, 0xdead_beef);
    let out = run_kernel(CONVERGED, 2, 40, &[Arg::u32s(&values), Arg::zeros(80 * 15)]).ok();
    check_converged(&values, 2, 40, &out.u32s(1));
    assert_eq!(out.stats("@xor"), counts(4, 80));
}

#[test]
fn hand_worked_warp() {
    // Lane l holds l, so the warp's sum is 496, min 0, max 31; lane 31 holds
    // 0xffffffff instead: -1 as .s32.
    let mut values: Vec<u32> = (0..32).collect();
    values[31] = u32::MAX;
    let out = run_kernel(CONVERGED, 1, 32, &[Arg::u32s(&values), Arg::zeros(32 * 15)]).ok();
    let words = out.u32s(1);
    let lane0 = &words[..15];
    assert_eq!(lane0[0], 465u32.wrapping_add(u32::MAX)); // 0 + ... + 30 - 1
    assert_eq!(lane0[1..5], [0, u32::MAX, u32::MAX, 30]);
    assert_eq!(
        lane0[5..8],
        [0, u32::MAX, 0xffff_ffff ^ (0..31).fold(0, |a, x| a ^ x)]
    );
    // v & 3 == 0 at lanes 0, 4, ..., 28.
    assert_eq!(lane0[8], 0x1111_1111);
    assert_eq!(lane0[9..13], [0, 0, u32::MAX, 1]);
    // (v & 1) << 32 | 5: the even lanes match lane 0, not all lanes agree.
    assert_eq!(lane0[13..15], [0x5555_5555, 0]);
    // Lane 31 (v & 3 == 3) matches lanes 3, 7, ..., 31.
    assert_eq!(words[15 * 31 + 8], 0x8888_8888);
}

/// Lanes 0-15 and 16-31 take different arms; each reduces and matches over
/// its own half with a half mask, then both reduce with the full mask, which
/// gathers the two arms into one reduction.
const DIVERGENT: &str = r#"
.kernel divergent(.param .u64 IN, .param .u64 OUT)
{
    .reg .u32 %t, %v, %k, %r, %m, %q, %s;
    .reg .u64 %pi, %po, %off;
    .reg .pred %p;
    mov.u32 %t, %laneid;
    ld.param.u64 %pi, [IN];
    mul.wide.u32 %off, %t, 4;
    add.u64 %pi, %pi, %off;
    ld.global.u32 %v, [%pi];
    and.b32 %k, %v, 3;
    setp.lt.u32 %p, %t, 16;
@%p bra LOW;
    redux.sync.add.u32 %r, %v, 0xffff0000;      // @high_add
    match.any.sync.b32 %m, %k, 0xffff0000;
    redux.sync.max.u32 %s, %v, 0xffff0000;
    redux.sync.add.u32 %q, %v, 0xffffffff;      // @high_full
    bra JOIN;
LOW:
    redux.sync.add.u32 %r, %v, 0x0000ffff;      // @low_add
    match.any.sync.b32 %m, %k, 0x0000ffff;
    redux.sync.min.s32 %s, %v, 0x0000ffff;
    redux.sync.add.u32 %q, %v, 0xffffffff;      // @low_full
JOIN:
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 16;
    add.u64 %po, %po, %off;
    st.global.v4.u32 [%po], {%r, %m, %s, %q};
}
"#;

#[test]
fn divergent_arms_reduce_over_their_masks() {
    let values = inputs(32, 0x0bad_f00d);
    let out = run_kernel(DIVERGENT, 1, 32, &[Arg::u32s(&values), Arg::zeros(32 * 4)]).ok();
    let words = out.u32s(1);
    let total = values.iter().fold(0u32, |sum, &x| sum.wrapping_add(x));
    for half in 0..2 {
        let part = &values[16 * half..16 * half + 16];
        let sum = part.iter().fold(0u32, |sum, &x| sum.wrapping_add(x));
        let extreme = if half == 0 {
            part.iter().map(|&x| x as i32).min().unwrap() as u32
        } else {
            *part.iter().max().unwrap()
        };
        for lane in 16 * half..16 * half + 16 {
            let key = values[lane] & 3;
            let matching = (16 * half..16 * half + 16)
                .filter(|&other| values[other] & 3 == key)
                .fold(0u32, |mask, other| mask | 1 << other);
            assert_eq!(
                words[4 * lane..4 * lane + 4],
                [sum, matching, extreme, total],
                "lane {lane}"
            );
        }
    }
    assert_eq!(out.stats("@high_add"), counts(1, 16));
    assert_eq!(out.stats("@low_full"), counts(1, 16));
}

/// Only the lanes whose guard holds take part; their mask is the ballot of
/// the guard. The others keep the destination's old value (a marker).
const GUARDED: &str = r#"
.kernel guarded(.param .u64 IN, .param .u64 OUT)
{
    .reg .u32 %t, %v, %k, %r, %m, %b;
    .reg .u64 %pi, %po, %off;
    .reg .pred %p, %all;
    mov.u32 %t, %laneid;
    ld.param.u64 %pi, [IN];
    mul.wide.u32 %off, %t, 4;
    add.u64 %pi, %pi, %off;
    ld.global.u32 %v, [%pi];
    and.b32 %k, %v, 1;
    setp.eq.u32 %p, %k, 1;
    vote.sync.ballot.b32 %b, %p, 0xffffffff;
    mov.u32 %r, 0xcafe;
    mov.u32 %m, 0xcafe;
    setp.eq.u32 %all, %t, 99;
@%p redux.sync.add.u32 %r, %v, %b;
@%p match.all.sync.b32 %m|%all, %k, %b;
    selp.u32 %k, 1, 0, %all;
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 12;
    add.u64 %po, %po, %off;
    st.global.u32 [%po], %r;
    st.global.u32 [%po+4], %m;
    st.global.u32 [%po+8], %k;
}
"#;

#[test]
fn guarded_lanes_take_no_part() {
    let values = inputs(32, 0x5eed_0001);
    let out = run_kernel(GUARDED, 1, 32, &[Arg::u32s(&values), Arg::zeros(32 * 3)]).ok();
    let words = out.u32s(1);
    let odd: u32 = (0..32)
        .filter(|&l| values[l] & 1 == 1)
        .fold(0, |mask, l| mask | 1 << l);
    assert!(odd != 0 && odd != u32::MAX, "the inputs mix odd and even");
    let sum = (0..32)
        .filter(|&l| values[l] & 1 == 1)
        .fold(0u32, |sum, l| sum.wrapping_add(values[l]));
    for lane in 0..32 {
        let want = if values[lane] & 1 == 1 {
            // Every participant has k = 1: all equal.
            [sum, odd, 1]
        } else {
            [0xcafe, 0xcafe, 0]
        };
        assert_eq!(words[3 * lane..3 * lane + 3], want, "lane {lane}");
    }
}
