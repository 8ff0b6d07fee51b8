//! What an instruction computes: the semantics of every instruction over
//! the active lanes of a warp, as lane loops over the warp's registers.
//!
//! Memory instructions hand their lanes to `access.rs`; branches, exits,
//! barriers and warp-synchronous instructions change where the warp's paths
//! stand, which `block.rs` and `warp_sync.rs` own. Semantics follow the PTX
//! ISA (chapter 9, "Instruction Set"); rounding and NaN handling are
//! `arith.rs`'s.

use warpsim_ir::BoolOp;

use crate::access::{atomic, memory_access, order_lanes, printf, read_string, OrderingPoint};
use crate::arith::{self, f32_bits, f32_of, sign_extend, width_mask};
use crate::block::{barrier, branch, exit_lanes, thread_index, BlockState, LaunchEnv};
use crate::error::*;
use crate::program::*;
use crate::scalar_ops;
use crate::warp::{RegisterFile, Warp, WARP_SIZE};
use crate::warp_sync;

/// A fault and the lane that caused it; boxed so the happy path stays small.
pub(crate) type Fault = Box<(FaultKind, u32)>;

#[cold]
pub(crate) fn fault(kind: FaultKind, lane: u32) -> Fault {
    Box::new((kind, lane))
}

/// `out[lane] = f(lane)` for the active lanes: with every lane active (the
/// common case) a loop without tests, which vectorises.
#[inline(always)]
pub(crate) fn map_active<T: Copy + Default>(active: u32, f: impl Fn(usize) -> T) -> [T; WARP_SIZE] {
    let mut out = [T::default(); WARP_SIZE];
    if active == u32::MAX {
        for (lane, out) in out.iter_mut().enumerate() {
            *out = f(lane);
        }
    } else {
        for (lane, out) in out.iter_mut().enumerate() {
            if active >> lane & 1 != 0 {
                *out = f(lane);
            }
        }
    }
    out
}

/// `out[lane] = f(lane)` for every lane, active or not: the 32-bit paths
/// compute every lane and keep the active ones as they write
/// ([`RegisterFile::write_narrow`]): one loop without tests, which the
/// compiler vectorises. A test per lane, or a loop for each case, it turned
/// into a scalar per lane. The lane functions are total (integer division
/// by zero has its PTX result), so an inactive lane's value costs only its
/// time.
#[inline(always)]
fn every_lane(f: impl Fn(usize) -> u32) -> [u32; WARP_SIZE] {
    map_active(u32::MAX, f)
}

/// `dst = f(a)` on the active lanes. Lane `l` of the destination depends
/// only on lane `l` of the sources, and the sources are read before the
/// destination is written, so a destination may also be a source.
///
/// When the destination keeps 32 bits a lane and every source holds no
/// more, the lanes are read, computed and written as 32-bit words (half the
/// bytes, twice the lanes per vector instruction); `f` sees the same
/// zero-extended values either way, and only the low 32 bits of what it
/// returns are kept either way.
#[inline(always)]
pub(crate) fn map1(
    values: &mut RegisterFile,
    dst: u32,
    a: u32,
    active: u32,
    f: impl Fn(u64) -> u64,
) {
    if values.is_narrow(dst) && values.holds_narrow(a) {
        let mut scratch = [0; WARP_SIZE];
        let a = values.narrow_lanes(a, &mut scratch);
        let out = every_lane(|lane| f(u64::from(a[lane])) as u32);
        values.write_narrow(dst, active, &out);
        return;
    }
    let a = values.read(a);
    let out = map_active(active, |lane| f(a[lane]));
    values.write(dst, active, &out);
}

/// `dst = f(a, b)` on the active lanes, as [`map1`].
#[inline(always)]
pub(crate) fn map2(
    values: &mut RegisterFile,
    dst: u32,
    a: u32,
    b: u32,
    active: u32,
    f: impl Fn(u64, u64) -> u64,
) {
    if values.is_narrow(dst) && values.holds_narrow(a) && values.holds_narrow(b) {
        let mut scratch = [[0; WARP_SIZE]; 2];
        let [scratch_a, scratch_b] = &mut scratch;
        let (a, b) = (
            values.narrow_lanes(a, scratch_a),
            values.narrow_lanes(b, scratch_b),
        );
        let out = every_lane(|lane| f(u64::from(a[lane]), u64::from(b[lane])) as u32);
        values.write_narrow(dst, active, &out);
        return;
    }
    let (a, b) = (values.read(a), values.read(b));
    let out = map_active(active, |lane| f(a[lane], b[lane]));
    values.write(dst, active, &out);
}

/// `dst = f(a, b, c)` on the active lanes, as [`map1`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn map3(
    values: &mut RegisterFile,
    dst: u32,
    a: u32,
    b: u32,
    c: u32,
    active: u32,
    f: impl Fn(u64, u64, u64) -> u64,
) {
    if values.is_narrow(dst)
        && values.holds_narrow(a)
        && values.holds_narrow(b)
        && values.holds_narrow(c)
    {
        let mut scratch = [[0; WARP_SIZE]; 3];
        let [scratch_a, scratch_b, scratch_c] = &mut scratch;
        let (a, b, c) = (
            values.narrow_lanes(a, scratch_a),
            values.narrow_lanes(b, scratch_b),
            values.narrow_lanes(c, scratch_c),
        );
        let out =
            every_lane(|lane| f(u64::from(a[lane]), u64::from(b[lane]), u64::from(c[lane])) as u32);
        values.write_narrow(dst, active, &out);
        return;
    }
    let (a, b, c) = (values.read(a), values.read(b), values.read(c));
    let out = map_active(active, |lane| f(a[lane], b[lane], c[lane]));
    values.write(dst, active, &out);
}

/// The lanes where `test(lane)` holds, as a mask. The tests go into a byte
/// per lane first, a loop that vectorises, and each 8 bytes of 0 or 1 then
/// become 8 bits at once: multiplied by `0x0102040810204080`, byte `i`
/// lands on bit `56 + i` with no carries between them.
#[inline(always)]
pub(crate) fn lane_mask(test: impl Fn(usize) -> bool) -> u32 {
    let mut flags = [0u8; WARP_SIZE];
    for (lane, flag) in flags.iter_mut().enumerate() {
        *flag = u8::from(test(lane));
    }
    let mut mask = 0u32;
    for (index, chunk) in flags.chunks_exact(8).enumerate() {
        let bytes = u64::from_le_bytes(chunk.try_into().expect("chunks of 8 bytes"));
        let bits = bytes.wrapping_mul(0x0102_0408_1020_4080) >> 56;
        mask |= (bits as u32) << (8 * index);
    }
    mask
}

/// An integer comparison over a whole warp of each lane's order-preserving
/// keys `x(lane)` and `y(lane)`, chosen once outside the lane loop. The keys
/// are computed in the loop that compares them: kept in arrays between the
/// two, they end up a scalar per lane.
#[inline(always)]
fn compare_keys<Key: Ord>(
    cmp: warpsim_ir::CmpOp,
    x: impl Fn(usize) -> Key,
    y: impl Fn(usize) -> Key,
) -> u32 {
    use warpsim_ir::CmpOp::*;
    match cmp {
        Eq | Equ => lane_mask(|l| x(l) == y(l)),
        Ne | Neu => lane_mask(|l| x(l) != y(l)),
        Lt | Ltu | Lo => lane_mask(|l| x(l) < y(l)),
        Le | Leu | Ls => lane_mask(|l| x(l) <= y(l)),
        Gt | Gtu | Hi => lane_mask(|l| x(l) > y(l)),
        Ge | Geu | Hs => lane_mask(|l| x(l) >= y(l)),
        Num => u32::MAX,
        Nan => 0,
    }
}

/// A comparison over a whole warp of lanes read as 64 bits, for what
/// [`compare_registers`] does not compare as 32-bit words (other integer
/// widths, and floats): the comparison is chosen once, outside the lane
/// loop. Integers become order-preserving unsigned keys (signed values with
/// their sign bit flipped), so six loops serve every integer type.
#[inline(always)]
pub(crate) fn compare_lanes(
    cmp: warpsim_ir::CmpOp,
    ty: NumberType,
    a: &[u64; WARP_SIZE],
    b: &[u64; WARP_SIZE],
) -> u32 {
    match ty {
        NumberType::Int(int) => {
            let bits = int.bits;
            if int.signed && !cmp.is_unsigned_only() {
                let key = |value: u64| (sign_extend(value, bits) as u64) ^ (1 << 63);
                compare_keys(cmp, |l| key(a[l]), |l| key(b[l]))
            } else {
                let key = |value: u64| value & width_mask(bits);
                compare_keys(cmp, |l| key(a[l]), |l| key(b[l]))
            }
        }
        NumberType::Float(_) => lane_mask(|lane| arith::compare(cmp, ty, a[lane], b[lane])),
    }
}

/// A comparison of registers `a` and `b` over a whole warp (`setp`, `set`).
///
/// A 32-bit integer comparison, by far the most common, reads both
/// registers as 32-bit words and compares them as such, eight lanes to a
/// host vector, rather than widening every lane to 64 bits first
/// (`compare_lanes`): a comparison of 32-bit integers reads the low half of
/// each lane, whatever the register's width.
#[inline(always)]
pub(crate) fn compare_registers<const HARDWARE_FMA: bool>(
    values: &RegisterFile,
    cmp: warpsim_ir::CmpOp,
    ty: NumberType,
    a: u32,
    b: u32,
) -> u32 {
    match ty {
        NumberType::Int(int) if int.bits == 32 => {
            // Signed words compare as they are; flipping the sign bit of
            // unsigned ones orders them as signed ones (the host's vector
            // comparisons of 32-bit words are signed).
            let flip = if int.signed && !cmp.is_unsigned_only() {
                0
            } else {
                0x8000_0000
            };
            let mut scratch = [[0; WARP_SIZE]; 2];
            let [scratch_a, scratch_b] = &mut scratch;
            let (a, b) = (
                values.narrow_lanes(a, scratch_a),
                values.narrow_lanes(b, scratch_b),
            );
            #[cfg(target_arch = "x86_64")]
            if HARDWARE_FMA {
                // SAFETY: the semantics are built with `HARDWARE_FMA` only
                // for hosts with AVX2 and FMA (`semantics_of`).
                return unsafe { avx2::compare_words(cmp, flip, a, b) };
            }
            compare_keys(cmp, |l| (a[l] ^ flip) as i32, |l| (b[l] ^ flip) as i32)
        }
        _ => compare_lanes(cmp, ty, &values.read(a), &values.read(b)),
    }
}

/// Lane loops written with AVX2's instructions, where the compiler's own
/// vectorisation of the portable loop is poor.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::{
        __m256i, _mm256_castsi256_ps, _mm256_cmpeq_epi32, _mm256_cmpgt_epi32, _mm256_loadu_si256,
        _mm256_movemask_ps, _mm256_set1_epi32, _mm256_xor_si256,
    };

    use super::WARP_SIZE;

    /// The lanes where 32-bit words `a` and `b`, each with `flip` applied
    /// (`compare_registers`: then they order as signed words), compare as
    /// `cmp` says: eight lanes a vector comparison, whose sign bits are the
    /// mask's. (The portable loop builds the mask from bytes, which on
    /// 32-bit keys the compiler turns into shuffles of every lane.)
    ///
    /// # Safety
    ///
    /// The running CPU has AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn compare_words(
        cmp: warpsim_ir::CmpOp,
        flip: u32,
        a: &[u32; WARP_SIZE],
        b: &[u32; WARP_SIZE],
    ) -> u32 {
        use warpsim_ir::CmpOp::*;
        // Every comparison is `==` or `>`, of the operands in order or
        // swapped, its result inverted or not: `a <= b` is `!(a > b)`.
        let (equal, swapped, inverted) = match cmp {
            Eq | Equ => (true, false, false),
            Ne | Neu => (true, false, true),
            Lt | Ltu | Lo => (false, true, false),
            Le | Leu | Ls => (false, false, true),
            Gt | Gtu | Hi => (false, false, false),
            Ge | Geu | Hs => (false, true, true),
            Num => return u32::MAX,
            Nan => return 0,
        };
        let (a, b) = if swapped { (b, a) } else { (a, b) };
        let flip = _mm256_set1_epi32(flip as i32);
        let mut mask = 0u32;
        for chunk in 0..WARP_SIZE / 8 {
            // SAFETY: the chunk's eight words lie within the arrays; the
            // loads are unaligned ones.
            let (x, y) = unsafe {
                (
                    _mm256_loadu_si256(a.as_ptr().add(chunk * 8).cast::<__m256i>()),
                    _mm256_loadu_si256(b.as_ptr().add(chunk * 8).cast::<__m256i>()),
                )
            };
            let (x, y) = (_mm256_xor_si256(x, flip), _mm256_xor_si256(y, flip));
            let lanes = if equal {
                _mm256_cmpeq_epi32(x, y)
            } else {
                _mm256_cmpgt_epi32(x, y)
            };
            mask |= (_mm256_movemask_ps(_mm256_castsi256_ps(lanes)) as u32) << (chunk * 8);
        }
        if inverted {
            !mask
        } else {
            mask
        }
    }
}

/// The value of a register that must be warp-uniform: the first active
/// lane's, or `Err` with the first active lane whose value differs.
pub(crate) fn uniform_value(values: &RegisterFile, reg: u32, active: u32) -> Result<u64, u32> {
    // A warp-uniform register (a barrier's constant number, most often)
    // holds one value for every lane.
    if let Some(value) = values.uniform_value(reg) {
        return Ok(value);
    }
    let lanes = values.read(reg);
    let first = lanes[active.trailing_zeros().min(31) as usize];
    match (0..WARP_SIZE).find(|&lane| active >> lane & 1 != 0 && lanes[lane] != first) {
        Some(lane) => Err(lane as u32),
        None => Ok(first),
    }
}

/// Whether [`execute`] of an instruction of `kind` reads and writes the
/// warp's registers and paths alone: no memory, no counters
/// (`BlockState::stats`), no bank arbiter. The SM lends its counters and
/// arbiter to a block only for the other instructions (`timing/sm.rs`),
/// so an instruction wrongly listed here would find none. The common
/// arithmetic and control instructions; the rest count as using them.
pub(crate) fn computes_on_registers_only(kind: &Kind) -> bool {
    matches!(
        kind,
        Kind::IntBinary { .. }
            | Kind::FloatBinary { .. }
            | Kind::IntUnary { .. }
            | Kind::FloatUnary { .. }
            | Kind::IntMulAdd { .. }
            | Kind::Fma { .. }
            | Kind::Setp { .. }
            | Kind::Set { .. }
            | Kind::Selp { .. }
            | Kind::PredBinary { .. }
            | Kind::Cvt { .. }
            | Kind::Branch { .. }
            | Kind::Lop3 { .. }
            | Kind::FunnelShift { .. }
            | Kind::BitFieldExtract { .. }
            | Kind::BitFieldInsert { .. }
            | Kind::Permute { .. }
            | Kind::Mul24 { .. }
            | Kind::MulAdd24 { .. }
    )
}

/// Defines `$compiled::<HARDWARE_FMA>`, which calls `$inner::<true>`
/// compiled for hosts with AVX2 and FMA when `HARDWARE_FMA`, else
/// `$inner::<false>` compiled for any host; each out of line, apart from
/// its caller. Its caller is itself one of the functions of
/// [`semantics_for_host!`], and passes its own `HARDWARE_FMA` on.
macro_rules! compiled_for_host {
    ($(#[$doc:meta])* $compiled:ident, $portable:ident, $avx2_fma:ident, $inner:ident) => {
        $(#[$doc])*
        #[inline(always)]
        pub(crate) fn $compiled<const HARDWARE_FMA: bool>(
            env: &LaunchEnv,
            warp: &mut Warp,
            state: &mut BlockState,
            path_index: usize,
            pc: u32,
            active: u32,
        ) -> Result<(), Fault> {
            #[cfg(target_arch = "x86_64")]
            if HARDWARE_FMA {
                // SAFETY: `HARDWARE_FMA` is set only in the functions of
                // `avx2_fma`, which `semantics_of` chooses only when the
                // running CPU reports AVX2, FMA, POPCNT, LZCNT, BMI1 and
                // BMI2 (`HostInstructions`), the one requirement of a
                // `target_feature` function.
                return unsafe { $avx2_fma(env, warp, state, path_index, pc, active) };
            }
            $portable(env, warp, state, path_index, pc, active)
        }

        #[inline(never)]
        fn $portable(
            env: &LaunchEnv,
            warp: &mut Warp,
            state: &mut BlockState,
            path_index: usize,
            pc: u32,
            active: u32,
        ) -> Result<(), Fault> {
            $inner::<false>(env, warp, state, path_index, pc, active)
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma,popcnt,lzcnt,bmi1,bmi2")]
        #[inline(never)]
        unsafe fn $avx2_fma(
            env: &LaunchEnv,
            warp: &mut Warp,
            state: &mut BlockState,
            path_index: usize,
            pc: u32,
            active: u32,
        ) -> Result<(), Fault> {
            $inner::<true>(env, warp, state, path_index, pc, active)
        }
    };
}

/// Executes `instruction`, the one at `pc`, for the active lanes of path
/// `path_index`: the kinds that [`semantics_of`] gives no function of their
/// own. `HARDWARE_FMA`: the caller is compiled with the FMA instruction set.
///
/// The instructions' lane loops are most of the machine's code. Inlined
/// into the SMs' issue loop they made one function of about a megabyte,
/// twice (with and without the instruction sets), which took LLVM most of
/// half an hour to optimise on two cores and gave the loop a stack frame
/// of five kilobytes to spill its state into; so every kind's semantics are
/// compiled apart from the loop, which calls them through a pointer.
#[inline(always)]
fn execute<const HARDWARE_FMA: bool>(
    env: &LaunchEnv,
    warp: &mut Warp,
    state: &mut BlockState,
    instruction: &Instruction,
    path_index: usize,
    pc: u32,
    active: u32,
) -> Result<(), Fault> {
    let values = &mut warp.values;
    match instruction.kind {
        // One closure per operation, so each lane loop is monomorphic. Sign
        // operations change the sign bit only; the others give NVIDIA's
        // canonical NaN. The approximate forms (`ex2`, `lg2`, `sin`, `cos`)
        // are computed exactly: within the PTX ISA's bounds, the same on every host.
        Kind::FloatUnary { op, ty, dst, a } => match ty {
            FloatType::F32 => match op {
                FloatUnary::Neg => map1(values, dst, a, active, f32_sign_lane(|x| -x)),
                FloatUnary::Abs => map1(values, dst, a, active, f32_sign_lane(f32::abs)),
                FloatUnary::Sqrt => map1(values, dst, a, active, f32_value_lane(f32::sqrt)),
                FloatUnary::Rcp => map1(values, dst, a, active, f32_value_lane(|x| 1.0 / x)),
                FloatUnary::Rsqrt => {
                    map1(values, dst, a, active, f32_value_lane(|x| 1.0 / x.sqrt()))
                }
                FloatUnary::Ex2 => map1(values, dst, a, active, f32_value_lane(f32::exp2)),
                FloatUnary::Lg2 => map1(values, dst, a, active, f32_value_lane(f32::log2)),
                FloatUnary::Sin => map1(values, dst, a, active, f32_value_lane(f32::sin)),
                FloatUnary::Cos => map1(values, dst, a, active, f32_value_lane(f32::cos)),
            },
            FloatType::F64 => match op {
                FloatUnary::Neg => map1(values, dst, a, active, f64_lane(|x| -x)),
                FloatUnary::Abs => map1(values, dst, a, active, f64_lane(f64::abs)),
                FloatUnary::Sqrt => map1(values, dst, a, active, f64_lane(f64::sqrt)),
                FloatUnary::Rcp => map1(values, dst, a, active, f64_lane(|x| 1.0 / x)),
                FloatUnary::Rsqrt => map1(values, dst, a, active, f64_lane(|x| 1.0 / x.sqrt())),
                FloatUnary::Ex2 => map1(values, dst, a, active, f64_lane(f64::exp2)),
                FloatUnary::Lg2 => map1(values, dst, a, active, f64_lane(f64::log2)),
                FloatUnary::Sin => map1(values, dst, a, active, f64_lane(f64::sin)),
                FloatUnary::Cos => map1(values, dst, a, active, f64_lane(f64::cos)),
            },
        },
        Kind::Set {
            cmp,
            ty,
            half,
            float_result,
            dst,
            a,
            b,
            combine,
        } => {
            let mut result = match half {
                Some(HalfFormat::F16) => {
                    let (a, b) = (values.read(a), values.read(b));
                    lane_mask(|lane| arith::f16_compare(cmp, a[lane], b[lane]))
                }
                Some(HalfFormat::Bf16) => {
                    let (a, b) = (values.read(a), values.read(b));
                    lane_mask(|lane| arith::bf16_compare(cmp, a[lane], b[lane]))
                }
                None => compare_registers::<HARDWARE_FMA>(values, cmp, ty, a, b),
            };
            if let Some((op, pred, negated)) = combine {
                result = combine_bits(op, result, warp.pred_bits(pred, negated));
            }
            let truth = if float_result {
                u64::from(1.0f32.to_bits())
            } else {
                0xffff_ffff
            };
            let out = map_active(
                active,
                |lane| if result >> lane & 1 != 0 { truth } else { 0 },
            );
            warp.values.write(dst, active, &out);
        }
        Kind::PredBinary {
            op,
            dst,
            a,
            a_negated,
            b,
            b_negated,
        } => {
            let result = combine_bits(
                op,
                warp.pred_bits(a, a_negated),
                warp.pred_bits(b, b_negated),
            );
            warp.set_pred(dst, active, result);
        }
        Kind::ReadClock { dst, wide } => {
            let clock = if wide {
                state.clock
            } else {
                state.clock & 0xffff_ffff
            };
            warp.values.fill(dst, active, clock);
        }
        Kind::Load {
            space,
            order,
            value,
            dst,
            count,
            addr,
        } => memory_access(
            env, warp, state, pc, active, space, order, value, &dst, count, addr, false,
        )?,
        Kind::Store {
            space,
            order,
            value,
            src,
            count,
            addr,
        } => {
            state.checker.last_progress = state.instructions;
            memory_access(
                env, warp, state, pc, active, space, order, value, &src, count, addr, true,
            )?
        }
        Kind::Atom {
            space,
            order,
            op,
            ty,
            size,
            dst,
            addr,
            a,
            b,
        } => atomic(
            env, warp, state, pc, active, space, order, op, ty, size, dst, addr, a, b,
        )?,
        Kind::Barrier {
            kind,
            id,
            count,
            reduction,
        } => {
            order_lanes(env, state, warp, active, OrderingPoint::Barrier { id });
            return barrier(
                env.program,
                env.config.barriers.semantics,
                warp,
                state,
                path_index,
                active,
                kind,
                id,
                count,
                reduction,
            );
        }
        Kind::WarpSync { mask }
        | Kind::Shuffle { mask, .. }
        | Kind::Vote { mask, .. }
        | Kind::Redux { mask, .. }
        | Kind::ReduxFloat { mask, .. }
        | Kind::Match { mask, .. } => {
            if active == 0 {
                // Every lane's guard is false: nobody arrives, the path moves on.
                warp.paths[path_index].pc = pc + 1;
                return Ok(());
            }
            // Each lane names its own mask (cooperative groups' tiles give
            // each tile its own); the path waits for the lanes of them all.
            let masks = values.read(mask);
            let mut union = 0u32;
            let mut outside = 0u32;
            for (lane, &lane_mask) in masks.iter().enumerate() {
                if active >> lane & 1 != 0 {
                    union |= lane_mask as u32;
                    outside |= (!(lane_mask as u32) >> lane & 1) << lane;
                }
            }
            let mask = union;
            warp_sync::arrive(
                env.program,
                warp,
                &mut state.checker,
                path_index,
                active,
                mask,
                outside,
            );
            return Ok(());
        }
        Kind::MulAdd24 {
            hi,
            signed,
            saturate,
            dst,
            a,
            b,
            c,
        } => map3(values, dst, a, b, c, active, |x, y, z| {
            scalar_ops::mad24(x, y, z, hi, signed, saturate)
        }),
        Kind::Mul24 {
            hi,
            signed,
            dst,
            a,
            b,
        } => map2(values, dst, a, b, active, |x, y| {
            arith::mul24(x, y, hi, signed)
        }),
        Kind::Fence { kind, scope } => {
            order_lanes(env, state, warp, active, OrderingPoint::Fence(kind, scope))
        }
        Kind::BitFieldExtract {
            ty,
            dst,
            a,
            position,
            length,
        } => map3(values, dst, a, position, length, active, |x, p, l| {
            arith::bit_field_extract(x, p, l, ty)
        }),
        Kind::BitFieldInsert {
            bits,
            dst,
            field,
            base,
            position,
            length,
        } => {
            // Four inputs: read them all before writing, as `dst` may be one.
            let (field, base, position, length) = (
                values.read(field),
                values.read(base),
                values.read(position),
                values.read(length),
            );
            let out = map_active(active, |lane| {
                arith::bit_field_insert(field[lane], base[lane], position[lane], length[lane], bits)
            });
            values.write(dst, active, &out);
        }
        Kind::Permute {
            dst,
            a,
            b,
            selector,
        } => map3(values, dst, a, b, selector, active, arith::permute),
        Kind::ActiveMask { dst } => {
            // The lanes of the path executing it, whatever the guard said.
            warp.values
                .fill(dst, active, u64::from(warp.paths[path_index].mask));
        }
        Kind::FunnelShift {
            left,
            clamp,
            dst,
            a,
            b,
            c,
        } => map3(values, dst, a, b, c, active, |x, y, z| {
            arith::funnel_shift(x, y, z, left, clamp)
        }),
        Kind::Lop3 { lut, dst, a, b, c } => map3(values, dst, a, b, c, active, |x, y, z| {
            arith::lop3(x, y, z, lut)
        }),
        Kind::Cvta {
            window,
            to_generic,
            bits,
            dst,
            src,
        } => {
            let mask = width_mask(bits);
            if to_generic {
                map1(values, dst, src, active, |x| x.wrapping_add(window) & mask);
            } else {
                map1(values, dst, src, active, |x| x.wrapping_sub(window) & mask);
            }
        }
        // Exits leave the paths where they are (only masks and waits change).
        Kind::Exit => exit_lanes(env.program, warp, state, active),
        // The rest, compiled apart (`execute_other`); the common arithmetic
        // and branches never come here (`semantics_of`).
        _ => {
            return execute_other_compiled::<HARDWARE_FMA>(env, warp, state, path_index, pc, active)
        }
    }
    warp.paths[path_index].pc = pc + 1;
    Ok(())
}

/// The semantics of one instruction: its lane loops over the active lanes
/// `active` of path `path_index` of `warp`, with the instruction at `pc`
/// passed in. [`semantics_of`] chooses one per program counter when a
/// launch starts, so that an issue calls it through one pointer rather than
/// matching on the instruction's kind each time (as wasmi translates its
/// code once into a form that dispatches directly).
///
/// `unsafe`, since the functions compiled for AVX2 and FMA may run only on
/// a host that has them (see [`semantics_of`]).
pub(crate) type Semantics = unsafe fn(
    &LaunchEnv,
    &mut Warp,
    &mut BlockState,
    &Instruction,
    usize,
    u32,
    u32,
) -> Result<(), Fault>;

/// Defines the semantics functions of `semantics_of` twice: in `portable`,
/// compiled for any host, and in `avx2_fma`, compiled for hosts with AVX2
/// and FMA (and the bit instructions every such CPU has: the lane loops
/// vectorise far better, hardware FMA gives `fma.rn.f32` its single
/// rounding directly, counting a mask's lanes is one instruction). Each is
/// a function of its own, whose stack frame holds only its own operands.
///
/// A `computing` kind's function is its lane loops alone
/// (`fn(&mut Warp, &Instruction, active)`); the path then goes on to the
/// next instruction. A `controlling` one (`name => inner`) has the whole
/// [`Semantics`] signature and moves the path itself.
macro_rules! semantics_for_host {
    (
        computing: [$($computing:ident),* $(,)?],
        controlling: [$($name:ident => $inner:ident),* $(,)?] $(,)?
    ) => {
        semantics_for_host!(@module portable, false, for_any_host, [$($computing),*], [$($name => $inner),*]);
        #[cfg(target_arch = "x86_64")]
        semantics_for_host!(@module avx2_fma, true, for_avx2_fma, [$($computing),*], [$($name => $inner),*]);
    };
    (
        @module $module:ident,
        $hardware_fma:literal,
        $compiled:ident,
        [$($computing:ident),*],
        [$($name:ident => $inner:ident),*]
    ) => {
        mod $module {
            use super::*;
            $(
                $compiled! {
                    fn $computing(
                        _env: &LaunchEnv,
                        warp: &mut Warp,
                        _state: &mut BlockState,
                        instruction: &Instruction,
                        path_index: usize,
                        pc: u32,
                        active: u32,
                    ) -> Result<(), Fault> {
                        super::$computing::<$hardware_fma>(warp, instruction, active);
                        warp.paths[path_index].pc = pc + 1;
                        Ok(())
                    }
                }
            )*
            $(
                $compiled! {
                    fn $name(
                        env: &LaunchEnv,
                        warp: &mut Warp,
                        state: &mut BlockState,
                        instruction: &Instruction,
                        path_index: usize,
                        pc: u32,
                        active: u32,
                    ) -> Result<(), Fault> {
                        super::$inner::<$hardware_fma>(env, warp, state, instruction, path_index, pc, active)
                    }
                }
            )*
        }
    };
}

/// A semantics function compiled for any host.
macro_rules! for_any_host {
    (fn $($rest:tt)*) => {
        pub(super) fn $($rest)*
    };
}

/// A semantics function compiled for hosts with AVX2 and FMA, `unsafe` to
/// call where they are missing.
macro_rules! for_avx2_fma {
    (fn $($rest:tt)*) => {
        #[target_feature(enable = "avx2,fma,popcnt,lzcnt,bmi1,bmi2")]
        pub(super) unsafe fn $($rest)*
    };
}

semantics_for_host!(
    computing: [int_binary, float_binary, int_unary, int_mul_add, fma, setp, selp, cvt],
    controlling: [branch => branch_instruction, any_other => execute],
);

/// The instruction sets of the running CPU that the semantics can be
/// compiled for. Only [`HostInstructions::detect`] makes one, so a function
/// compiled for AVX2 and FMA is chosen only where the CPU has them, the one
/// requirement of a `target_feature` function.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HostInstructions {
    avx2_fma: bool,
}

impl HostInstructions {
    /// What the running CPU reports: AVX2 and FMA, and the bit
    /// instructions every such CPU has (POPCNT, LZCNT, BMI1, BMI2).
    pub(crate) fn detect() -> HostInstructions {
        #[cfg(target_arch = "x86_64")]
        let avx2_fma = std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma")
            && std::arch::is_x86_feature_detected!("popcnt")
            && std::arch::is_x86_feature_detected!("lzcnt")
            && std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("bmi2");
        #[cfg(not(target_arch = "x86_64"))]
        let avx2_fma = false;
        HostInstructions { avx2_fma }
    }

    /// Whether the CPU has AVX2, FMA and the bit instructions.
    pub(crate) fn has_avx2_fma(self) -> bool {
        self.avx2_fma
    }
}

/// The semantics of an instruction of `kind`, compiled for AVX2 and FMA
/// where `host` has them.
///
/// The common arithmetic, comparison, conversion and branch instructions
/// have a function each; every other kind goes to [`execute`].
pub(crate) fn semantics_of(kind: &Kind, host: HostInstructions) -> Semantics {
    macro_rules! compiled_for {
        ($name:ident) => {{
            #[cfg(target_arch = "x86_64")]
            if host.avx2_fma {
                return avx2_fma::$name;
            }
            portable::$name
        }};
    }
    match kind {
        Kind::IntBinary { .. } => compiled_for!(int_binary),
        Kind::FloatBinary { .. } => compiled_for!(float_binary),
        Kind::IntUnary { .. } => compiled_for!(int_unary),
        Kind::IntMulAdd { .. } => compiled_for!(int_mul_add),
        Kind::Fma { .. } => compiled_for!(fma),
        Kind::Setp { .. } => compiled_for!(setp),
        Kind::Selp { .. } => compiled_for!(selp),
        Kind::Cvt { .. } => compiled_for!(cvt),
        Kind::Branch { .. } => compiled_for!(branch),
        _ => compiled_for!(any_other),
    }
}

/// `bra`: the taken lanes go to `target`, the others on.
#[inline(always)]
fn branch_instruction<const HARDWARE_FMA: bool>(
    _env: &LaunchEnv,
    warp: &mut Warp,
    _state: &mut BlockState,
    instruction: &Instruction,
    path_index: usize,
    _pc: u32,
    active: u32,
) -> Result<(), Fault> {
    let Kind::Branch { target, reconverge } = instruction.kind else {
        unreachable!("branch_instruction given another kind")
    };
    branch(warp, path_index, active, target, reconverge);
    Ok(())
}

/// Integer `add`, `sub`, `mul`, `div`, `rem`, `min`, `max`, the bitwise operations and the shifts.
#[inline(always)]
fn int_binary<const HARDWARE_FMA: bool>(warp: &mut Warp, instruction: &Instruction, active: u32) {
    let values = &mut warp.values;
    match instruction.kind {
        Kind::IntBinary { op, ty, dst, a, b } => match op {
            IntBinary::Add => map2(values, dst, a, b, active, |x, y| arith::int_add(x, y, ty)),
            IntBinary::Sub => map2(values, dst, a, b, active, |x, y| arith::int_sub(x, y, ty)),
            IntBinary::MulLo => map2(values, dst, a, b, active, |x, y| {
                arith::int_mul_lo(x, y, ty)
            }),
            IntBinary::MulHi => map2(values, dst, a, b, active, |x, y| {
                arith::int_mul_hi(x, y, ty)
            }),
            IntBinary::MulWide => map2(values, dst, a, b, active, |x, y| {
                arith::int_mul_wide(x, y, ty)
            }),
            IntBinary::Div => map2(values, dst, a, b, active, |x, y| arith::int_div(x, y, ty)),
            IntBinary::Rem => map2(values, dst, a, b, active, |x, y| arith::int_rem(x, y, ty)),
            IntBinary::Min => map2(values, dst, a, b, active, |x, y| arith::int_min(x, y, ty)),
            IntBinary::Max => map2(values, dst, a, b, active, |x, y| arith::int_max(x, y, ty)),
            IntBinary::And => map2(values, dst, a, b, active, |x, y| x & y),
            IntBinary::Or => map2(values, dst, a, b, active, |x, y| x | y),
            IntBinary::Xor => map2(values, dst, a, b, active, |x, y| x ^ y),
            IntBinary::Shl => map2(values, dst, a, b, active, |x, y| arith::int_shl(x, y, ty)),
            // The signedness is settled outside the lane loop, which then
            // has no branch and vectorises.
            IntBinary::Shr if ty.signed => {
                let ty = IntType { signed: true, ..ty };
                map2(values, dst, a, b, active, |x, y| arith::int_shr(x, y, ty))
            }
            IntBinary::Shr => {
                let ty = IntType {
                    signed: false,
                    ..ty
                };
                map2(values, dst, a, b, active, |x, y| arith::int_shr(x, y, ty))
            }
        },
        _ => unreachable!("int_binary given another kind"),
    }
}

/// Floating-point `add`, `sub`, `mul`, `div`, `min` and `max` of `f32` and `f64`.
#[inline(always)]
fn float_binary<const HARDWARE_FMA: bool>(warp: &mut Warp, instruction: &Instruction, active: u32) {
    let values = &mut warp.values;
    match instruction.kind {
        Kind::FloatBinary { op, ty, dst, a, b } => match ty {
            // One closure per operation, so each lane loop is monomorphic.
            // NaN results are the canonical NaN, as on NVIDIA GPUs.
            FloatType::F32 => {
                let result = arith::f32_result;
                match op {
                    FloatBinary::Add => map2(values, dst, a, b, active, |x, y| {
                        result(f32_of(x) + f32_of(y))
                    }),
                    FloatBinary::Sub => map2(values, dst, a, b, active, |x, y| {
                        result(f32_of(x) - f32_of(y))
                    }),
                    FloatBinary::Mul => map2(values, dst, a, b, active, |x, y| {
                        result(f32_of(x) * f32_of(y))
                    }),
                    FloatBinary::Div => map2(values, dst, a, b, active, |x, y| {
                        result(f32_of(x) / f32_of(y))
                    }),
                    FloatBinary::Min => map2(values, dst, a, b, active, |x, y| {
                        result(arith::f32_min(f32_of(x), f32_of(y)))
                    }),
                    FloatBinary::Max => map2(values, dst, a, b, active, |x, y| {
                        result(arith::f32_max(f32_of(x), f32_of(y)))
                    }),
                }
            }
            FloatType::F64 => {
                let (x, y) = (f64::from_bits, f64::from_bits);
                match op {
                    FloatBinary::Add => {
                        map2(values, dst, a, b, active, |p, q| (x(p) + y(q)).to_bits())
                    }
                    FloatBinary::Sub => {
                        map2(values, dst, a, b, active, |p, q| (x(p) - y(q)).to_bits())
                    }
                    FloatBinary::Mul => {
                        map2(values, dst, a, b, active, |p, q| (x(p) * y(q)).to_bits())
                    }
                    FloatBinary::Div => {
                        map2(values, dst, a, b, active, |p, q| (x(p) / y(q)).to_bits())
                    }
                    FloatBinary::Min => map2(values, dst, a, b, active, |p, q| {
                        arith::f64_min(x(p), y(q)).to_bits()
                    }),
                    FloatBinary::Max => map2(values, dst, a, b, active, |p, q| {
                        arith::f64_max(x(p), y(q)).to_bits()
                    }),
                }
            }
        },
        _ => unreachable!("float_binary given another kind"),
    }
}

/// Integer `mov`, `neg`, `abs`, `not`, `popc`, `clz`, `brev` and `bfind`.
#[inline(always)]
fn int_unary<const HARDWARE_FMA: bool>(warp: &mut Warp, instruction: &Instruction, active: u32) {
    let values = &mut warp.values;
    match instruction.kind {
        Kind::IntUnary { op, ty, dst, a } => match op {
            IntUnary::Mov => map1(values, dst, a, active, |x| x & width_mask(ty.bits)),
            IntUnary::Neg => map1(values, dst, a, active, |x| arith::int_neg(x, ty)),
            IntUnary::Abs => map1(values, dst, a, active, |x| arith::int_abs(x, ty)),
            IntUnary::Not => map1(values, dst, a, active, |x| !x & width_mask(ty.bits)),
            IntUnary::Popc => map1(values, dst, a, active, |x| arith::int_popc(x, ty)),
            IntUnary::Clz => map1(values, dst, a, active, |x| arith::int_clz(x, ty)),
            IntUnary::Brev => map1(values, dst, a, active, |x| arith::int_brev(x, ty)),
            IntUnary::Bfind => map1(values, dst, a, active, |x| arith::int_bfind(x, ty, false)),
            IntUnary::BfindShiftAmount => {
                map1(values, dst, a, active, |x| arith::int_bfind(x, ty, true))
            }
        },
        _ => unreachable!("int_unary given another kind"),
    }
}

/// Integer `mad`.
#[inline(always)]
fn int_mul_add<const HARDWARE_FMA: bool>(warp: &mut Warp, instruction: &Instruction, active: u32) {
    let values = &mut warp.values;
    match instruction.kind {
        Kind::IntMulAdd {
            mode,
            ty,
            dst,
            a,
            b,
            c,
        } => match mode {
            // The mode is chosen once, outside the lane loop, so that the
            // common `mad.lo` vectorises.
            warpsim_ir::MulAddMode::Hi | warpsim_ir::MulAddMode::Wide => {
                map3(values, dst, a, b, c, active, |x, y, z| {
                    arith::int_mad(mode, x, y, z, ty)
                })
            }
            _ => {
                let mask = width_mask(ty.bits);
                map3(values, dst, a, b, c, active, |x, y, z| {
                    x.wrapping_mul(y).wrapping_add(z) & mask
                })
            }
        },
        _ => unreachable!("int_mul_add given another kind"),
    }
}

/// `fma` of `f32` and `f64`.
#[inline(always)]
fn fma<const HARDWARE_FMA: bool>(warp: &mut Warp, instruction: &Instruction, active: u32) {
    let values = &mut warp.values;
    match instruction.kind {
        Kind::Fma { ty, dst, a, b, c } => match ty {
            // With the FMA instruction set, `mul_add` is one correctly rounded instruction.
            FloatType::F32 if HARDWARE_FMA => map3(values, dst, a, b, c, active, |x, y, z| {
                arith::f32_result(f32_of(x).mul_add(f32_of(y), f32_of(z)))
            }),
            // All lanes first through `f64` in one branch-free (vectorisable)
            // pass, then the rare lanes where that could round differently again.
            FloatType::F32 if active == u32::MAX => {
                let (a, b, c) = (values.read(a), values.read(b), values.read(c));
                let mut wide = [0f64; WARP_SIZE];
                for (lane, wide) in wide.iter_mut().enumerate() {
                    *wide = arith::fma_f32_wide(f32_of(a[lane]), f32_of(b[lane]), f32_of(c[lane]));
                }
                let mut fallback = 0u32;
                for (lane, &wide) in wide.iter().enumerate() {
                    fallback |= u32::from(arith::fma_f32_needs_fallback(wide)) << lane;
                }
                // The rare lanes are recomputed before any lane of `dst` is
                // written, since `dst` may be one of the sources.
                let mut exact = [0f32; WARP_SIZE];
                let mut pending = fallback;
                while pending != 0 {
                    let lane = pending.trailing_zeros() as usize;
                    exact[lane] = arith::fma_f32(f32_of(a[lane]), f32_of(b[lane]), f32_of(c[lane]));
                    pending &= pending - 1;
                }
                let out = map_active(u32::MAX, |lane| {
                    let value = if fallback >> lane & 1 != 0 {
                        exact[lane]
                    } else {
                        wide[lane] as f32
                    };
                    arith::f32_result(value)
                });
                values.write(dst, u32::MAX, &out);
            }
            FloatType::F32 => map3(values, dst, a, b, c, active, |x, y, z| {
                f32_bits(arith::fma_f32(f32_of(x), f32_of(y), f32_of(z)))
            }),
            FloatType::F64 => map3(values, dst, a, b, c, active, |x, y, z| {
                f64::from_bits(x)
                    .mul_add(f64::from_bits(y), f64::from_bits(z))
                    .to_bits()
            }),
        },
        _ => unreachable!("fma given another kind"),
    }
}

/// `setp`: a comparison into one predicate, or two.
#[inline(always)]
fn setp<const HARDWARE_FMA: bool>(warp: &mut Warp, instruction: &Instruction, active: u32) {
    let values = &mut warp.values;
    match instruction.kind {
        Kind::Setp {
            cmp,
            ty,
            dst,
            dst_not,
            a,
            b,
            combine,
        } => {
            let result = compare_registers::<HARDWARE_FMA>(values, cmp, ty, a, b);
            set_preds(warp, active, result, dst, dst_not, combine);
        }
        _ => unreachable!("setp given another kind"),
    }
}

/// `selp`: a choice between two registers by a predicate.
#[inline(always)]
fn selp<const HARDWARE_FMA: bool>(warp: &mut Warp, instruction: &Instruction, active: u32) {
    let values = &mut warp.values;
    match instruction.kind {
        Kind::Selp {
            dst,
            a,
            b,
            cond,
            negated,
        } => {
            let a = values.read(a);
            let b = values.read(b);
            let bits = warp.pred_bits(cond, negated);
            let out = map_active(active, |lane| {
                if bits >> lane & 1 != 0 {
                    a[lane]
                } else {
                    b[lane]
                }
            });
            warp.values.write(dst, active, &out);
        }
        _ => unreachable!("selp given another kind"),
    }
}

/// `cvt` between integer and floating-point types.
#[inline(always)]
fn cvt<const HARDWARE_FMA: bool>(warp: &mut Warp, instruction: &Instruction, active: u32) {
    let values = &mut warp.values;
    match instruction.kind {
        Kind::Cvt {
            dst_ty,
            src_ty,
            rounding,
            saturate,
            dst,
            src,
        } => match (src_ty, dst_ty, saturate) {
            // Integer widening and narrowing, by far the most common conversion.
            (NumberType::Int(from), NumberType::Int(to), false) => {
                map1(values, dst, src, active, |x| arith::resize_int(x, from, to))
            }
            _ => map1(values, dst, src, active, |x| {
                arith::convert(x, src_ty, dst_ty, rounding, saturate)
            }),
        },
        _ => unreachable!("cvt given another kind"),
    }
}

compiled_for_host!(
    /// [`execute`] of the instructions it does not handle itself
    /// ([`execute_other`]): the 16-bit and 8-bit floats, tensor cores,
    /// asynchronous copies, `printf` and the rest that real kernels run
    /// seldom. Their lane loops and operand arrays kept `execute`'s stack
    /// frame at twenty kilobytes, which every instruction paid for on entry
    /// (a page probe per four kilobytes and the cache lines of a frame that
    /// size); apart, the common instructions' frame is smaller.
    execute_other_compiled,
    execute_other_portable,
    execute_other_avx2_fma,
    execute_other
);

#[inline(always)]
fn execute_other<const HARDWARE_FMA: bool>(
    env: &LaunchEnv,
    warp: &mut Warp,
    state: &mut BlockState,
    path_index: usize,
    pc: u32,
    active: u32,
) -> Result<(), Fault> {
    let instruction = &env.program.code[pc as usize];
    let values = &mut warp.values;
    match instruction.kind {
        Kind::CvtHalf {
            to_half,
            other,
            rounding,
            saturate,
            dst,
            src,
        } => {
            let single = NumberType::Float(FloatType::F32);
            if to_half {
                map1(values, dst, src, active, |x| {
                    u64::from(arith::f32_to_f16(f32_of(x)))
                });
            } else {
                map1(values, dst, src, active, |x| {
                    let value = f32_bits(arith::f16_to_f32(x as u16));
                    arith::convert(value, single, other, rounding, saturate)
                });
            }
        }
        Kind::HalfBinary {
            op,
            packed,
            dst,
            a,
            b,
        } => half_binary(values, op, packed, dst, a, b, active),
        Kind::HalfUnary { op, packed, dst, a } => half_unary(values, op, packed, dst, a, active),
        Kind::HalfFma {
            packed: false,
            relu: false,
            dst,
            a,
            b,
            c,
        } => map3(values, dst, a, b, c, active, arith::f16_fma),
        Kind::HalfFma {
            packed: true,
            relu: false,
            dst,
            a,
            b,
            c,
        } => map3(values, dst, a, b, c, active, |x, y, z| {
            arith::f16x2_ternary(x, y, z, arith::f16_fma)
        }),
        Kind::HalfFma {
            packed,
            relu: true,
            dst,
            a,
            b,
            c,
        } => half_fma_relu(values, packed, dst, a, b, c, active),
        Kind::Bf16Binary {
            op,
            packed,
            dst,
            a,
            b,
        } => bf16_binary(values, op, packed, dst, a, b, active),
        Kind::Bf16Unary { op, packed, dst, a } => bf16_unary(values, op, packed, dst, a, active),
        Kind::Bf16Fma {
            packed,
            relu,
            dst,
            a,
            b,
            c,
        } => bf16_fma(values, packed, relu, dst, a, b, c, active),
        Kind::Bf16Setp {
            cmp,
            dst,
            dst_not,
            a,
            b,
            combine,
        } => {
            let a = values.read(a);
            let b = values.read(b);
            let result = lane_mask(|lane| arith::bf16_compare(cmp, a[lane], b[lane]));
            set_preds(warp, active, result, dst, dst_not, combine);
        }
        Kind::HalfSet {
            cmp,
            format,
            packed,
            dst,
            a,
            b,
            combine,
        } => half_set(warp, cmp, format, packed, dst, a, b, combine, active),
        Kind::CvtToBf16 {
            from,
            rounding,
            saturate,
            dst,
            src,
        } => convert_to_bf16(values, from, rounding, saturate, dst, src, active),
        Kind::CvtFromBf16 {
            to,
            rounding,
            saturate,
            dst,
            src,
        } => convert_from_bf16(values, to, rounding, saturate, dst, src, active),
        Kind::CvtPair {
            format,
            rounding,
            dst,
            a,
            b,
        } => convert_pair(values, format, rounding, dst, a, b, active),
        Kind::HalfSetp {
            cmp,
            dst,
            dst_not,
            a,
            b,
            combine,
        } => {
            let a = values.read(a);
            let b = values.read(b);
            let result = lane_mask(|lane| arith::f16_compare(cmp, a[lane], b[lane]));
            set_preds(warp, active, result, dst, dst_not, combine);
        }
        Kind::SatS32 { op, dst, a, b, c } => match op {
            SatOp::Add => map2(values, dst, a, b, active, arith::s32_add_sat),
            SatOp::Sub => map2(values, dst, a, b, active, arith::s32_sub_sat),
            SatOp::Mul | SatOp::MulAdd => map3(values, dst, a, b, c, active, arith::s32_mad_hi_sat),
        },
        Kind::SatF32 { op, dst, a, b, c } => match op {
            SatOp::Add => map2(values, dst, a, b, active, |x, y| {
                arith::f32_saturate(f32_of(x) + f32_of(y))
            }),
            SatOp::Sub => map2(values, dst, a, b, active, |x, y| {
                arith::f32_saturate(f32_of(x) - f32_of(y))
            }),
            SatOp::Mul => map2(values, dst, a, b, active, |x, y| {
                arith::f32_saturate(f32_of(x) * f32_of(y))
            }),
            SatOp::MulAdd => map3(values, dst, a, b, c, active, |x, y, z| {
                arith::f32_saturate(arith::fma_f32(f32_of(x), f32_of(y), f32_of(z)))
            }),
        },
        Kind::FmaDirected {
            rounding,
            dst,
            a,
            b,
            c,
        } => map3(values, dst, a, b, c, active, |x, y, z| {
            arith::f32_result(arith::fma_f32_directed(
                f32_of(x),
                f32_of(y),
                f32_of(z),
                rounding,
            ))
        }),
        // Integer dot products, carry chains and narrow-float conversions.
        Kind::DotProduct {
            shape,
            a_signed,
            b_signed,
            dst,
            a,
            b,
            c,
        } => map3(values, dst, a, b, c, active, |x, y, z| {
            scalar_ops::dot_product(shape, a_signed, b_signed, x, y, z)
        }),
        Kind::CarryArith {
            op,
            carry_in,
            carry_out,
            wide,
            signed,
            dst,
            a,
            b,
            c,
            carry,
        } => {
            // Two destinations, the result and the flag: a lane loop of its
            // own, reading every source before writing.
            let (a, b, c) = (values.read(a), values.read(b), values.read(c));
            let flags = values.read(carry);
            for lane in 0..WARP_SIZE {
                if active >> lane & 1 == 0 {
                    continue;
                }
                let (result, carry_out_bit) = scalar_ops::carry_arith(
                    op,
                    carry_in.then_some(flags[lane]),
                    wide,
                    signed,
                    a[lane],
                    b[lane],
                    c[lane],
                );
                values.set(dst, lane, result);
                if carry_out {
                    values.set(carry, lane, carry_out_bit);
                }
            }
        }
        Kind::CvtTf32 {
            rounding,
            satfinite,
            relu,
            dst,
            src,
        } => map1(values, dst, src, active, |x| {
            scalar_ops::cvt_tf32(x, rounding, satfinite, relu)
        }),
        Kind::CvtToFp8 {
            format,
            relu,
            from_f32,
            dst,
            a,
            b,
        } => {
            if from_f32 {
                map2(values, dst, a, b, active, |x, y| {
                    scalar_ops::fp8_pair_from_f32(format, relu, x, y)
                })
            } else {
                map1(values, dst, a, active, |x| {
                    scalar_ops::fp8_pair_from_f16x2(format, relu, x)
                })
            }
        }
        Kind::CvtBf16Relu {
            toward_zero,
            dst,
            src,
        } => map1(values, dst, src, active, |x| {
            scalar_ops::bf16_relu_from_f32(x, toward_zero)
        }),
        Kind::CvtFromFp8 {
            format,
            relu,
            dst,
            src,
        } => map1(values, dst, src, active, |x| {
            scalar_ops::f16x2_from_fp8_pair(format, relu, x)
        }),
        Kind::NarrowFloat {
            function,
            element,
            dst,
            a,
            b,
            ..
        } => map2(values, dst, a, b, active, |x, y| {
            scalar_ops::narrow_float(function, element, x, y)
        }),
        Kind::Sad { ty, dst, a, b, c } => map3(values, dst, a, b, c, active, |x, y, z| {
            arith::sad(x, y, z, ty)
        }),
        Kind::Testp { class, ty, dst, a } => {
            let a = values.read(a);
            let result = lane_mask(|lane| arith::float_class(a[lane], ty, class));
            warp.set_pred(dst, active, result);
        }
        Kind::CopySign { ty, dst, a, b } => {
            map2(values, dst, a, b, active, |x, y| arith::copysign(x, y, ty))
        }
        Kind::Pack {
            element_bits,
            count,
            dst,
            src,
        } => {
            let mut elements = [[0u64; WARP_SIZE]; 4];
            for (element, &reg) in elements.iter_mut().zip(&src).take(count as usize) {
                *element = values.read(reg);
            }
            let out = map_active(active, |lane| {
                let lane_elements = elements.map(|element| element[lane]);
                arith::pack(&lane_elements[..count as usize], element_bits)
            });
            values.write(dst, active, &out);
        }
        Kind::Unpack {
            element_bits,
            count,
            keep,
            dst,
            src,
        } => {
            // The source first: it may also be a destination.
            let source = values.read(src);
            for (index, &reg) in dst.iter().enumerate().take(count as usize) {
                if keep >> index & 1 == 0 {
                    continue;
                }
                let out = map_active(active, |lane| {
                    arith::unpack(source[lane], index as u32, element_bits)
                });
                values.write(reg, active, &out);
            }
        }
        Kind::Printf {
            dst,
            format,
            arguments,
        } => printf(env, warp, state, active, dst, format, arguments),
        Kind::AssertFail {
            message,
            file,
            line,
            function,
        } => {
            if active != 0 {
                let lane = active.trailing_zeros() as usize;
                let thread = warp.index as usize * WARP_SIZE + lane;
                let text = |register: ValueReg| {
                    let address = values.get(register, lane);
                    String::from_utf8_lossy(&read_string(env, state, thread, address)).into_owned()
                };
                // Every failing thread prints its message, as on a GPU.
                let threads = (0..WARP_SIZE as u32)
                    .filter(|lane| active >> lane & 1 != 0)
                    .map(|lane| thread_index(warp.index * WARP_SIZE as u32 + lane, env.block_dim))
                    .collect();
                return Err(fault(
                    FaultKind::AssertionFailed {
                        expression: text(message),
                        file: text(file),
                        line: values.get(line, lane) as u32,
                        function: text(function),
                        threads,
                    },
                    lane as u32,
                ));
            }
        }
        Kind::Trap => {
            if active != 0 {
                return Err(fault(FaultKind::Trap, active.trailing_zeros()));
            }
        }
        Kind::Nop => {}
        // Asynchronous copies and mbarriers.
        Kind::CpAsync {
            size,
            dst,
            src,
            src_size,
            ignore_src,
        } => crate::async_copy::cp_async(
            env, warp, state, pc, active, size, dst, src, src_size, ignore_src,
        )?,
        Kind::CpAsyncCommitGroup => crate::async_copy::commit_group(warp, state, active),
        Kind::CpAsyncWait { pending } => {
            crate::async_copy::wait_group(env, warp, state, active, pending)
        }
        Kind::CpAsyncMbarrierArrive { noinc, addr } => {
            crate::async_copy::cp_async_mbarrier_arrive(env, warp, state, active, noinc, addr)?
        }
        Kind::CpAsyncBulk {
            dst,
            src,
            size,
            mbarrier,
        } => crate::async_copy::cp_async_bulk(env, warp, state, active, dst, src, size, mbarrier)?,
        Kind::Mbarrier {
            action,
            space,
            addr,
        } => crate::async_copy::mbarrier(warp, state, active, action, space, addr)?,
        Kind::MbarrierPendingCount { dst, state: source } => {
            crate::async_copy::pending_count(warp, active, dst, source)
        }
        // Tensor-core instructions.
        Kind::MatrixAccess {
            store,
            space,
            transpose,
            matrices,
            registers,
            addr,
        } => {
            if store {
                state.checker.last_progress = state.instructions;
            }
            crate::tensor::matrix_access(
                env, warp, state, pc, active, store, space, transpose, matrices, &registers, addr,
            )?
        }
        Kind::Mma { ref operation } => crate::tensor::mma(warp, active, operation)?,
        Kind::Wmma { ref operation } => {
            crate::tensor::wmma(env, warp, state, pc, active, operation)?
        }
        // `execute` ran these itself.
        _ => unreachable!("instruction {pc} is one `execute` runs"),
    }
    warp.paths[path_index].pc = pc + 1;
    Ok(())
}

/// The destinations of `setp d[|q]`: `d = cmp boolop c`, `q = !cmp boolop c`
/// (PTX ISA, `setp`), written after the comparison, so `c` may be either.
#[inline(always)]
pub(crate) fn set_preds(
    warp: &mut Warp,
    active: u32,
    compared: u32,
    dst: u32,
    dst_not: Option<u32>,
    combine: Option<(BoolOp, u32, bool)>,
) {
    let (p, q) = match combine {
        Some((op, pred, negated)) => {
            let c = warp.pred_bits(pred, negated);
            (
                combine_bits(op, compared, c),
                combine_bits(op, !compared, c),
            )
        }
        None => (compared, !compared),
    };
    warp.set_pred(dst, active, p);
    if let Some(q_reg) = dst_not {
        warp.set_pred(q_reg, active, q);
    }
}

/// Combines two lane masks of predicates.
#[inline(always)]
pub(crate) fn combine_bits(op: BoolOp, x: u32, y: u32) -> u32 {
    match op {
        BoolOp::And => x & y,
        BoolOp::Or => x | y,
        BoolOp::Xor => x ^ y,
    }
}

/// An `f32` operation on a lane's register bits that changes the sign bit only.
#[inline(always)]
pub(crate) fn f32_sign_lane(f: impl Fn(f32) -> f32) -> impl Fn(u64) -> u64 {
    move |x| f32_bits(f(f32_of(x)))
}

/// An `f32` arithmetic operation on a lane's register bits (canonical NaN).
#[inline(always)]
pub(crate) fn f32_value_lane(f: impl Fn(f32) -> f32) -> impl Fn(u64) -> u64 {
    move |x| arith::f32_result(f(f32_of(x)))
}

/// An `f64` operation on a lane's register bits.
#[inline(always)]
pub(crate) fn f64_lane(f: impl Fn(f64) -> f64) -> impl Fn(u64) -> u64 {
    move |x| f(f64::from_bits(x)).to_bits()
}

/// A unary operation on 16-bit floats of either format, applied to each
/// active lane's value, or (`packed`) to both halves of each lane's pair.
#[inline(always)]
pub(crate) fn map1_halves(
    values: &mut RegisterFile,
    packed: bool,
    dst: u32,
    a: u32,
    active: u32,
    f: impl Fn(u64) -> u64 + Copy,
) {
    if packed {
        map1(values, dst, a, active, |x| arith::f16x2_unary(x, f));
    } else {
        map1(values, dst, a, active, f);
    }
}

/// A binary operation on 16-bit floats of either format, applied to each
/// active lane's value, or (`packed`) to both halves of each lane's pair.
#[inline(always)]
pub(crate) fn map2_halves(
    values: &mut RegisterFile,
    packed: bool,
    dst: u32,
    a: u32,
    b: u32,
    active: u32,
    f: impl Fn(u64, u64) -> u64 + Copy,
) {
    if packed {
        map2(values, dst, a, b, active, |x, y| {
            arith::f16x2_binary(x, y, f)
        });
    } else {
        map2(values, dst, a, b, active, f);
    }
}

/// `.f16` (or, `packed`, `.f16x2`) binary arithmetic on the active lanes:
/// one monomorphic lane loop per operation, the rounding done by arith.rs.
#[inline(always)]
pub(crate) fn half_binary(
    values: &mut RegisterFile,
    op: HalfBinary,
    packed: bool,
    dst: u32,
    a: u32,
    b: u32,
    active: u32,
) {
    match op {
        HalfBinary::Add => map2_halves(values, packed, dst, a, b, active, arith::f16_add),
        HalfBinary::Sub => map2_halves(values, packed, dst, a, b, active, arith::f16_sub),
        HalfBinary::Mul => map2_halves(values, packed, dst, a, b, active, arith::f16_mul),
        HalfBinary::Min => map2_halves(values, packed, dst, a, b, active, arith::f16_min),
        HalfBinary::Max => map2_halves(values, packed, dst, a, b, active, arith::f16_max),
        HalfBinary::MinNan => map2_halves(values, packed, dst, a, b, active, arith::f16_min_nan),
        HalfBinary::MaxNan => map2_halves(values, packed, dst, a, b, active, arith::f16_max_nan),
    }
}

/// `fma.rn.relu.f16` (or, `packed`, `.f16x2`) on the active lanes. Out of
/// line, as are the bfloat16 operations below, so that the instructions
/// most kernels run keep the interpreter loop to themselves.
#[inline(never)]
pub(crate) fn half_fma_relu(
    values: &mut RegisterFile,
    packed: bool,
    dst: u32,
    a: u32,
    b: u32,
    c: u32,
    active: u32,
) {
    if packed {
        map3(values, dst, a, b, c, active, |x, y, z| {
            arith::f16x2_ternary(x, y, z, arith::f16_fma_relu)
        });
    } else {
        map3(values, dst, a, b, c, active, arith::f16_fma_relu);
    }
}

/// `.bf16` (or, `packed`, `.bf16x2`) binary arithmetic on the active lanes.
#[inline(never)]
pub(crate) fn bf16_binary(
    values: &mut RegisterFile,
    op: HalfBinary,
    packed: bool,
    dst: u32,
    a: u32,
    b: u32,
    active: u32,
) {
    match op {
        HalfBinary::Add => map2_halves(values, packed, dst, a, b, active, arith::bf16_add),
        HalfBinary::Sub => map2_halves(values, packed, dst, a, b, active, arith::bf16_sub),
        HalfBinary::Mul => map2_halves(values, packed, dst, a, b, active, arith::bf16_mul),
        HalfBinary::Min => map2_halves(values, packed, dst, a, b, active, arith::bf16_min),
        HalfBinary::Max => map2_halves(values, packed, dst, a, b, active, arith::bf16_max),
        HalfBinary::MinNan => map2_halves(values, packed, dst, a, b, active, arith::bf16_min_nan),
        HalfBinary::MaxNan => map2_halves(values, packed, dst, a, b, active, arith::bf16_max_nan),
    }
}

/// `neg`/`abs` on `.bf16` (or, `packed`, `.bf16x2`) lanes.
#[inline(never)]
pub(crate) fn bf16_unary(
    values: &mut RegisterFile,
    op: HalfUnary,
    packed: bool,
    dst: u32,
    a: u32,
    active: u32,
) {
    let f = match op {
        HalfUnary::Neg => arith::bf16_neg,
        HalfUnary::Abs => arith::bf16_abs,
    };
    map1_halves(values, packed, dst, a, active, f);
}

/// `fma.rn[.relu].bf16` (or, `packed`, `.bf16x2`) on the active lanes.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
pub(crate) fn bf16_fma(
    values: &mut RegisterFile,
    packed: bool,
    relu: bool,
    dst: u32,
    a: u32,
    b: u32,
    c: u32,
    active: u32,
) {
    let f = if relu {
        arith::bf16_fma_relu
    } else {
        arith::bf16_fma
    };
    if packed {
        map3(values, dst, a, b, c, active, |x, y, z| {
            arith::f16x2_ternary(x, y, z, f)
        });
    } else {
        map3(values, dst, a, b, c, active, f);
    }
}

/// `set.cmp.ty.ty` of a 16-bit float type: each element of the result is
/// 1.0 in `format` where its comparison (combined with the predicate, if
/// any) holds, else 0.0.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
pub(crate) fn half_set(
    warp: &mut Warp,
    cmp: warpsim_ir::CmpOp,
    format: HalfFormat,
    packed: bool,
    dst: u32,
    a: u32,
    b: u32,
    combine: Option<(BoolOp, PredReg, bool)>,
    active: u32,
) {
    let (compare, one): (fn(warpsim_ir::CmpOp, u64, u64) -> bool, u64) = match format {
        HalfFormat::F16 => (arith::f16_compare, 0x3c00),
        HalfFormat::Bf16 => (arith::bf16_compare, 0x3f80),
    };
    let (a, b) = (warp.values.read(a), warp.values.read(b));
    let predicate = combine.map(|(op, pred, negated)| (op, warp.pred_bits(pred, negated)));
    let elements = if packed { 2 } else { 1 };
    // One lane mask per element: where its comparison holds.
    let mut holds = [0u32; 2];
    for (element, mask) in holds.iter_mut().enumerate().take(elements) {
        let shift = 16 * element;
        *mask = lane_mask(|lane| {
            compare(
                cmp,
                (a[lane] >> shift) & 0xffff,
                (b[lane] >> shift) & 0xffff,
            )
        });
        if let Some((op, bits)) = predicate {
            *mask = combine_bits(op, *mask, bits);
        }
    }
    let out = map_active(active, |lane| {
        (0..elements)
            .filter(|&element| holds[element] >> lane & 1 != 0)
            .map(|element| one << (16 * element))
            .sum()
    });
    warp.values.write(dst, active, &out);
}

/// `cvt` to `.bf16` on the active lanes.
#[inline(never)]
pub(crate) fn convert_to_bf16(
    values: &mut RegisterFile,
    from: Bf16Source,
    rounding: warpsim_ir::Rounding,
    saturate: bool,
    dst: u32,
    src: u32,
    active: u32,
) {
    map1(values, dst, src, active, |x| {
        arith::convert_to_bf16(x, from, rounding, saturate)
    });
}

/// `cvt` from `.bf16` on the active lanes.
#[inline(never)]
pub(crate) fn convert_from_bf16(
    values: &mut RegisterFile,
    to: NumberType,
    rounding: Option<warpsim_ir::Rounding>,
    saturate: bool,
    dst: u32,
    src: u32,
    active: u32,
) {
    map1(values, dst, src, active, |x| {
        arith::convert_from_bf16(x, to, rounding, saturate)
    });
}

/// `cvt.rn/.rz.f16x2/.bf16x2.f32 d, a, b` on the active lanes.
#[inline(never)]
pub(crate) fn convert_pair(
    values: &mut RegisterFile,
    format: HalfFormat,
    rounding: warpsim_ir::Rounding,
    dst: u32,
    a: u32,
    b: u32,
    active: u32,
) {
    map2(values, dst, a, b, active, |x, y| {
        arith::convert_pair(x, y, format, rounding)
    });
}

/// `neg`/`abs` on `.f16` (or, `packed`, `.f16x2`) lanes: sign bits only.
#[inline(always)]
pub(crate) fn half_unary(
    values: &mut RegisterFile,
    op: HalfUnary,
    packed: bool,
    dst: u32,
    a: u32,
    active: u32,
) {
    let f = match op {
        HalfUnary::Neg => arith::f16_neg,
        HalfUnary::Abs => arith::f16_abs,
    };
    map1_halves(values, packed, dst, a, active, f);
}

#[cfg(test)]
mod tests {
    use super::{compare_registers, lane_mask, HostInstructions};
    use crate::arith;
    use crate::program::{IntType, NumberType};
    use crate::warp::{RegisterFile, WARP_SIZE};

    /// Every integer comparison of 32-bit and 16-bit registers over a whole
    /// warp, portable and (on a host with them) with AVX2's instructions,
    /// against `arith::compare` lane by lane: around the sign bit, equal
    /// pairs, and a spread of words, with a warp-uniform operand too.
    #[test]
    fn comparisons_of_registers_agree_with_the_lane_by_lane_comparison() {
        let edges = [
            0u32,
            1,
            2,
            0x7fff,
            0x8000,
            0xffff,
            0x7fff_ffff,
            0x8000_0000,
            0x8000_0001,
            u32::MAX,
        ];
        let mut word = 0x2545_f491u32;
        let mut next = || {
            word = word.wrapping_mul(0x9e37_79b9).wrapping_add(0x7f4a_7c15);
            word
        };
        let mut rounds: Vec<([u32; WARP_SIZE], [u32; WARP_SIZE])> = Vec::new();
        for &x in &edges {
            let a: [u32; WARP_SIZE] = std::array::from_fn(|lane| edges[lane % edges.len()]);
            let mut b = [x; WARP_SIZE];
            // Some lanes equal to their pair.
            b[3] = a[3];
            b[17] = a[17];
            rounds.push((a, b));
        }
        for _ in 0..20 {
            let a: [u32; WARP_SIZE] = std::array::from_fn(|_| next());
            let b: [u32; WARP_SIZE] =
                std::array::from_fn(|lane| if lane % 5 == 0 { a[lane] } else { next() });
            rounds.push((a, b));
        }
        let avx2 = HostInstructions::detect().has_avx2_fma();
        let mut values = RegisterFile::default();
        for (a, b) in rounds {
            // Registers 0 and 1 held per lane; 2 is warp-uniform, set to
            // lane 7 of `b`.
            values.reset(2, 0, 1);
            values.write_narrow(0, u32::MAX, &a);
            values.write_narrow(1, u32::MAX, &b);
            values.set_uniform(2, u64::from(b[7]));
            for bits in [32, 16] {
                for signed in [true, false] {
                    let ty = NumberType::Int(IntType { bits, signed });
                    for cmp in warpsim_ir::CmpOp::ALL {
                        for (second, words) in [(1, b), (2, [b[7]; WARP_SIZE])] {
                            let expected = lane_mask(|lane| {
                                arith::compare(cmp, ty, u64::from(a[lane]), u64::from(words[lane]))
                            });
                            let portable = compare_registers::<false>(&values, cmp, ty, 0, second);
                            assert_eq!(portable, expected, "{cmp:?} {ty:?} {a:x?} {words:x?}");
                            if avx2 {
                                let vector = compare_registers::<true>(&values, cmp, ty, 0, second);
                                assert_eq!(vector, expected, "{cmp:?} {ty:?} {a:x?} {words:x?}");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn lane_mask_packs_every_lane_in_place() {
        // Every single lane, and a spread of patterns from a multiplicative
        // sequence (each bit of each byte set and clear many times).
        let mut patterns: Vec<u32> = (0..32).map(|lane| 1 << lane).collect();
        patterns.extend([0, u32::MAX, 0x5555_5555, 0xaaaa_aaaa, 0x8000_0001]);
        let mut pattern = 0x1234_5678u32;
        for _ in 0..1000 {
            pattern = pattern.wrapping_mul(0x9e37_79b9).wrapping_add(0x7f4a_7c15);
            patterns.push(pattern);
        }
        for pattern in patterns {
            assert_eq!(lane_mask(|lane| pattern >> lane & 1 == 1), pattern);
        }
    }
}
