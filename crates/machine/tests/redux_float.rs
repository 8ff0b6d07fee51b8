//! `redux.sync.min/.max{.abs}{.NaN}.f32` (PTX ISA 9.7.13.11, redux.sync) on
//! the machine, against a reference written here from the ISA's text: the
//! minimum or maximum over the lanes of the mask, of the absolute values with
//! `.abs`; +0.0 is greater than -0.0; without `.NaN` a NaN input is left out
//! and the result is the canonical NaN (`0x7fffffff`) only when every input
//! is NaN; with `.NaN` any NaN input makes the result the canonical NaN.
//! Each warp holds a set of inputs chosen for one rule (signed zeros, NaNs
//! among numbers, NaNs only, infinities, subnormals), and a divergent arm
//! reduces over half a warp with a mask of its own.

mod common;
use common::*;

/// Each thread loads `v = IN[i]` and writes 9 words: min, max, min.abs,
/// max.abs, min.NaN, max.NaN, min.abs.NaN, max.abs.NaN over the full warp,
/// then, in lanes 0-15 only (the others skip the arm and store nothing),
/// max.abs over those 16 lanes.
const REDUCTIONS: &str = r#"
.kernel redux_float(.param .u64 IN, .param .u64 OUT)
{
    .reg .u32 %t, %c, %lane;
    .reg .f32 %v, %r;
    .reg .u64 %pi, %po, %off;
    .reg .pred %p;
    mov.u32 %t, %ntid.x;
    mov.u32 %c, %ctaid.x;
    mul.lo.u32 %t, %t, %c;
    mov.u32 %c, %tid.x;
    add.u32 %t, %t, %c;
    ld.param.u64 %pi, [IN];
    mul.wide.u32 %off, %t, 4;
    add.u64 %pi, %pi, %off;
    ld.global.f32 %v, [%pi];
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 36;
    add.u64 %po, %po, %off;
    redux.sync.min.f32 %r, %v, 0xffffffff;          st.global.f32 [%po], %r;
    redux.sync.max.f32 %r, %v, 0xffffffff;          st.global.f32 [%po+4], %r;
    redux.sync.min.abs.f32 %r, %v, 0xffffffff;      st.global.f32 [%po+8], %r;
    redux.sync.max.abs.f32 %r, %v, 0xffffffff;      st.global.f32 [%po+12], %r;
    redux.sync.min.NaN.f32 %r, %v, 0xffffffff;      st.global.f32 [%po+16], %r;
    redux.sync.max.NaN.f32 %r, %v, 0xffffffff;      st.global.f32 [%po+20], %r;
    redux.sync.min.abs.NaN.f32 %r, %v, 0xffffffff;  st.global.f32 [%po+24], %r;
    redux.sync.max.abs.NaN.f32 %r, %v, 0xffffffff;  st.global.f32 [%po+28], %r;
    mov.u32 %lane, %laneid;
    setp.ge.u32 %p, %lane, 16;
@%p bra DONE;
    redux.sync.max.abs.f32 %r, %v, 0x0000ffff;      st.global.f32 [%po+32], %r;
DONE:
    exit;
}
"#;

/// The canonical NaN of `.f32` results.
const CANONICAL_NAN: u32 = 0x7fff_ffff;

/// The reference: plain float comparisons, with the signed zeros ordered by
/// their sign bit where the comparison says they are equal.
fn reference(values: &[u32], max: bool, abs: bool, nan: bool) -> u32 {
    let operands: Vec<f32> = values
        .iter()
        .map(|&bits| {
            let value = f32::from_bits(bits);
            if abs {
                value.abs()
            } else {
                value
            }
        })
        .collect();
    if nan && operands.iter().any(|value| value.is_nan()) {
        return CANONICAL_NAN;
    }
    let better = |candidate: f32, current: f32| {
        if candidate == current {
            // Only the zeros compare equal with different bits.
            let candidate_negative = candidate.is_sign_negative();
            candidate_negative != current.is_sign_negative() && candidate_negative != max
        } else if max {
            candidate > current
        } else {
            candidate < current
        }
    };
    operands
        .into_iter()
        .filter(|value| !value.is_nan())
        .reduce(|current, candidate| {
            if better(candidate, current) {
                candidate
            } else {
                current
            }
        })
        .map_or(CANONICAL_NAN, f32::to_bits)
}

/// Seven warps of inputs, each built around one rule.
fn inputs() -> Vec<u32> {
    let negative_zero = 0x8000_0000;
    let positive_zero = 0x0000_0000;
    let quiet_nan = 0x7fc0_0000;
    let negative_nan = 0xffc0_0001;
    let signalling_nan = 0x7f80_0001;
    let mut warps: Vec<Vec<u32>> = Vec::new();
    // Only zeros of both signs: min is -0, max +0, and with .abs both +0.
    warps.push(
        (0..32)
            .map(|lane| {
                if lane % 3 == 0 {
                    negative_zero
                } else {
                    positive_zero
                }
            })
            .collect(),
    );
    // Numbers of both signs and a NaN in lane 7 (and one in lane 20 for
    // the half-warp arm not to see): .NaN forms give the canonical NaN,
    // the others ignore it.
    warps.push(
        (0..32)
            .map(|lane| match lane {
                7 => negative_nan,
                20 => quiet_nan,
                _ => (lane as f32 * 1.25 - 17.0).to_bits(),
            })
            .collect(),
    );
    // Only NaNs, of different signs and payloads: every form gives the
    // canonical NaN.
    warps.push(
        (0..32)
            .map(|lane| match lane % 3 {
                0 => quiet_nan,
                1 => negative_nan,
                _ => signalling_nan,
            })
            .collect(),
    );
    // Infinities and the largest finite values: -inf is the minimum, +inf
    // the maximum; with .abs the smallest is the finite 3.0 in lane 5.
    warps.push(
        (0..32)
            .map(|lane| match lane {
                0 => f32::NEG_INFINITY.to_bits(),
                31 => f32::INFINITY.to_bits(),
                5 => 3.0f32.to_bits(),
                _ if lane % 2 == 0 => f32::MAX.to_bits(),
                _ => (-f32::MAX).to_bits(),
            })
            .collect(),
    );
    // Subnormals of both signs with a -0 among them: the smallest
    // magnitude is the zero, the smallest value the most negative
    // subnormal.
    warps.push(
        (0..32)
            .map(|lane: u32| match lane {
                11 => negative_zero,
                _ if lane.is_multiple_of(2) => lane + 1,
                _ => 0x8000_0000 | (lane + 1),
            })
            .collect(),
    );
    // A single NaN beside one number: only the number survives without
    // .NaN; the half-warp arm sees the NaN in lane 0.
    warps.push(
        (0..32)
            .map(|lane| match lane {
                0 => signalling_nan,
                _ => (-2.5f32).to_bits(),
            })
            .collect(),
    );
    // -0 as the only value besides NaNs: the min over the numbers is -0,
    // and with .abs it becomes +0.
    warps.push(
        (0..32)
            .map(|lane| if lane == 30 { negative_zero } else { quiet_nan })
            .collect(),
    );
    warps.concat()
}

#[test]
fn float_reductions_follow_the_isa_on_zeros_nans_and_absolute_values() {
    let values = inputs();
    let warps = values.len() / 32;
    // Blocks of three warps: 7 warps of inputs in 3 blocks, the last warp
    // padded with zeros.
    let block = 96;
    let grid = (warps * 32).div_ceil(block);
    let mut padded = values.clone();
    padded.resize(grid * block, 0);
    let out = run_kernel(
        REDUCTIONS,
        grid as u32,
        block as u32,
        &[Arg::u32s(&padded), Arg::zeros(grid * block * 9)],
    )
    .ok()
    .u32s(1);
    for warp in 0..warps {
        let lanes = &values[warp * 32..warp * 32 + 32];
        let mut want = Vec::new();
        for (abs, nan) in [(false, false), (true, false), (false, true), (true, true)] {
            want.push(reference(lanes, false, abs, nan));
            want.push(reference(lanes, true, abs, nan));
        }
        let half_warp = reference(&lanes[..16], true, true, false);
        for lane in 0..32 {
            let thread = warp * 32 + lane;
            let got = &out[9 * thread..9 * thread + 9];
            assert_eq!(
                got[..8],
                want[..],
                "warp {warp} lane {lane}: min, max, min.abs, max.abs, then the .NaN forms"
            );
            let arm = if lane < 16 { half_warp } else { 0 };
            assert_eq!(
                got[8], arm,
                "warp {warp} lane {lane}: max.abs over lanes 0-15"
            );
        }
    }
    // The rules the warps were built for, spelled out for the first ones,
    // so that a reference that went wrong the same way as the machine
    // would not pass unnoticed.
    let first = &out[..9];
    assert_eq!(first[0], 0x8000_0000, "min of the zeros is -0");
    assert_eq!(first[1], 0x0000_0000, "max of the zeros is +0");
    assert_eq!(first[2], 0x0000_0000, "min.abs of the zeros is +0");
    let second = &out[9 * 32..9 * 32 + 9];
    assert_eq!(f32::from_bits(second[0]), -17.0);
    assert_eq!(f32::from_bits(second[1]), 31.0 * 1.25 - 17.0);
    assert_eq!(second[4], CANONICAL_NAN);
    assert_eq!(second[5], CANONICAL_NAN);
    let only_nans = &out[9 * 64..9 * 64 + 9];
    assert!(only_nans.iter().all(|&bits| bits == CANONICAL_NAN));
    let infinities = &out[9 * 96..9 * 96 + 9];
    assert_eq!(infinities[0], f32::NEG_INFINITY.to_bits());
    assert_eq!(infinities[1], f32::INFINITY.to_bits());
    assert_eq!(f32::from_bits(infinities[2]), 3.0);
}

/// The same at one host thread and at three: the reductions do not depend on
/// the order the machine runs the warps in.
#[test]
fn float_reductions_are_deterministic() {
    let mut values = inputs();
    values.resize(7 * 32, 0);
    let run = |threads| {
        kernel(REDUCTIONS)
            .grid([7, 1, 1])
            .block([32, 1, 1])
            .args(&[Arg::u32s(&values), Arg::zeros(7 * 32 * 9)])
            .host_threads(threads)
            .run()
            .ok()
            .u32s(1)
    };
    assert_eq!(run(1), run(3));
}
