//! Tensor-core instructions: the warp-wide matrix loads and stores
//! `ldmatrix` and `stmatrix` (PTX ISA 9.7.14.5.15 and 9.7.14.5.16) and the
//! matrix multiply-accumulate `mma.sync` (9.7.14.5.14), with the fragment
//! layouts of "Matrix Fragments for mma.m16n8k16" and its siblings
//! (9.7.14.5.8 to 9.7.14.5.12).
//!
//! Each of them is `.sync.aligned`: the whole warp executes it together.
//! The machine runs it for the path that reaches it, and stops the kernel
//! with an error naming the lanes when that path does not hold every live
//! lane of the warp (the PTX ISA leaves the result undefined).
//!
//! # Matrix loads and stores
//!
//! Lanes `8i .. 8i + 7` give the 16-byte-aligned shared-memory addresses of
//! the eight rows of matrix `i`; lane `l` then holds, in register `i`, the
//! two 16-bit elements of matrix `i` at row `l / 4`, columns `2 (l % 4)` and
//! `2 (l % 4) + 1` (the first in the low half). `.trans` exchanges rows and
//! columns. The rows go through the bank arbiter's
//! [`warpsim_banks::BankArbiter::matrix_request`] (one phase per matrix,
//! as an H100's `LDSM`/`STSM`), and the initialization and race checkers
//! see the 16 bytes of every row.
//!
//! # Matrix multiply-accumulate
//!
//! Integer shapes are exact: products and sums of `.s32` wrap, and
//! `.satfinite` clamps the exact sum to the `.s32` range. `.f64` is a chain
//! of fused multiply-adds in `k` order starting from C, each rounded to
//! nearest. Both match all of the H100's random fragments
//! (`crates/machine/tests/mma_hardware.rs`).
//!
//! The `.f16`, `.bf16` and `.tf32` shapes follow the model fitted to an
//! H100 in `programs/tensor/hardware/fit-f16-f32-model.py`: every product
//! `a * b` is exact; the products and C are aligned to the largest exponent
//! among them, `emax` (a product's exponent is the sum of its factors'
//! exponents, its significand in [1, 4)), each term truncated toward zero to
//! a multiple of `2^(emax - 25)`; the terms are summed exactly and the sum
//! truncated toward zero to `f32`; a `.f16` D is that `f32` rounded to the
//! nearest `.f16`. This matches every element of the H100's random
//! fragments for m16n8k16 `.f16` and `.bf16` and m16n8k8 `.bf16` and
//! `.tf32` with `.f32` accumulators; m16n8k8 `.f16` with `.f32` misses 6 of
//! 131,072 elements and the `.f16` accumulators 3 each, all by one unit in
//! the last place. With every product zero, the result is C
//! itself (C keeps its 24 bits under the alignment). A NaN operand, an
//! infinite product of zero, or infinities of both signs give the
//! canonical NaN, other infinities their sign; a finite sum beyond the
//! range of `f32` becomes an infinity. None of these special cases were
//! measured.

use warpsim_ir::{MmaShape, MmaType, StateSpace, WmmaLayout, WmmaMatrix};

use crate::access::{
    lane_address, observe_initialization, out_of_bounds, record_wavefronts, resolve, InitAccess,
    Target,
};
use crate::block::{BlockState, LaunchEnv};
use crate::error::FaultKind;
use crate::memory::{read_bytes, write_bytes};
use crate::program::{LoweredAddress, ValueReg};
use crate::semantics::{fault, Fault};
use crate::warp::{Warp, WARP_SIZE};

/// The bytes of one matrix row.
const ROW_BYTES: u32 = 16;

/// An `mma.sync` as the machine runs it: the shape, the types and the
/// fragment registers (the first `fragments.x` of each array are used).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MmaOperation {
    pub shape: MmaShape,
    pub satfinite: bool,
    pub d_type: MmaType,
    pub a_type: MmaType,
    pub b_type: MmaType,
    pub c_type: MmaType,
    pub fragments: warpsim_ir::MmaFragments,
    pub d: [ValueReg; 4],
    pub a: [ValueReg; 4],
    pub b: [ValueReg; 2],
    pub c: [ValueReg; 4],
}

/// Lists lanes as `0, 3-5`.
fn lane_list(lanes: u32) -> String {
    let mut parts = Vec::new();
    let mut lane = 0;
    while lane < WARP_SIZE {
        if lanes >> lane & 1 == 0 {
            lane += 1;
            continue;
        }
        let start = lane;
        while lane + 1 < WARP_SIZE && lanes >> (lane + 1) & 1 != 0 {
            lane += 1;
        }
        parts.push(if start == lane {
            format!("{start}")
        } else {
            format!("{start}-{lane}")
        });
        lane += 1;
    }
    parts.join(", ")
}

/// The error of a warp-synchronous `.aligned` instruction that `active`
/// lanes run while other live lanes of the warp do not, if so.
pub(crate) fn check_whole_warp(warp: &Warp, active: u32, name: &str) -> Result<(), Fault> {
    let missing = warp.live() & !active;
    if missing == 0 {
        return Ok(());
    }
    Err(fault(
        FaultKind::InvalidAccess {
            message: format!(
                "`{name}` is `.sync.aligned`: every lane of the warp must execute it together, but lanes {} of the warp do not (divergent, guarded off or exited) while lanes {} do",
                lane_list(missing),
                lane_list(active)
            ),
        },
        active.trailing_zeros().min(31),
    ))
}

/// `ldmatrix` (`store` false) or `stmatrix` of `matrices` 8x8 matrices of
/// 16-bit elements between shared memory and `registers`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn matrix_access(
    env: &LaunchEnv,
    warp: &mut Warp,
    state: &mut BlockState,
    pc: u32,
    active: u32,
    store: bool,
    space: StateSpace,
    transpose: bool,
    matrices: u8,
    registers: &[ValueReg; 4],
    addr: LoweredAddress,
) -> Result<(), Fault> {
    if active == 0 {
        return Ok(());
    }
    let name = if store { "stmatrix" } else { "ldmatrix" };
    check_whole_warp(warp, active, name)?;
    let row_lanes_mask = if matrices == 4 {
        u32::MAX
    } else {
        (1u32 << (8 * u32::from(matrices))) - 1
    };
    let absent = row_lanes_mask & !active;
    if absent != 0 {
        return Err(fault(
            FaultKind::InvalidAccess {
                message: format!(
                    "`{name}.x{matrices}` takes row addresses from lanes 0-{}, but lanes {} hold no thread",
                    8 * u32::from(matrices) - 1,
                    lane_list(absent)
                ),
            },
            absent.trailing_zeros(),
        ));
    }
    // Every row address first: alignment and state space, all lanes named.
    let mut offsets = [0u32; WARP_SIZE];
    let mut misaligned = 0u32;
    for (lane, slot) in offsets
        .iter_mut()
        .enumerate()
        .take(8 * usize::from(matrices))
    {
        let address = lane_address(&warp.values, addr, lane);
        if !address.is_multiple_of(u64::from(ROW_BYTES)) {
            misaligned |= 1 << lane;
            continue;
        }
        match resolve(space, address) {
            Target::Shared(offset) => *slot = offset as u32,
            _ => {
                return Err(fault(
                    FaultKind::InvalidAccess {
                        message: format!(
                            "`{name}` accesses shared memory, but lane {lane}'s row address {address:#x} is not in the shared window"
                        ),
                    },
                    lane as u32,
                ))
            }
        }
    }
    if misaligned != 0 {
        let first = misaligned.trailing_zeros() as usize;
        return Err(fault(
            FaultKind::InvalidAccess {
                message: format!(
                    "`{name}` row addresses must be 16-byte aligned, but those of lanes {} are not (lane {first}: {:#x})",
                    lane_list(misaligned),
                    lane_address(&warp.values, addr, first)
                ),
            },
            first as u32,
        ));
    }
    let row_lanes = row_lanes_mask;
    if state.written.is_some() {
        let access = InitAccess {
            reads: !store,
            writes: store,
            atomic: false,
        };
        observe_initialization(
            env, warp, state, pc, row_lanes, space, addr, ROW_BYTES, access,
        );
    }
    if let Some(races) = &mut state.races {
        let epoch = crate::warp::barrier_openings(&state.barriers);
        for (lane, &offset) in offsets.iter().enumerate().take(8 * usize::from(matrices)) {
            let accessor = crate::racecheck::Accessor {
                thread: (warp.index as usize * WARP_SIZE + lane) as u32,
                pc,
                epoch,
                instruction: state.instructions,
                warp_syncs: warp.syncs,
            };
            races.observe(accessor, u64::from(offset), ROW_BYTES, store);
        }
    }
    // Element (row, column) of matrix `i` is at this shared offset; a
    // fragment element (row, column) of lane `l` is (l / 4, 2 (l % 4) + h),
    // transposed with `.trans`.
    let element_offset = |matrix: usize, fragment_row: usize, fragment_column: usize| {
        let (row, column) = if transpose {
            (fragment_column, fragment_row)
        } else {
            (fragment_row, fragment_column)
        };
        offsets[8 * matrix + row] as usize + 2 * column
    };
    let shared_len = state.shared.len();
    let check = |offset: usize, lane: usize| {
        if offset + 2 > shared_len {
            Err(out_of_bounds(
                env,
                Target::Shared(offset as u64),
                offset as u64,
                2,
                store,
                lane,
            ))
        } else {
            Ok(())
        }
    };
    for (matrix, &register) in registers.iter().enumerate().take(usize::from(matrices)) {
        for lane in 0..WARP_SIZE {
            if active >> lane & 1 == 0 {
                continue;
            }
            let row = lane / 4;
            let column = 2 * (lane % 4);
            let low = element_offset(matrix, row, column);
            let high = element_offset(matrix, row, column + 1);
            check(low, lane)?;
            check(high, lane)?;
            if store {
                let bits = warp.values.get(register, lane);
                write_bytes(&mut state.shared, low, 2, bits & 0xffff);
                write_bytes(&mut state.shared, high, 2, bits >> 16 & 0xffff);
            } else {
                let low = read_bytes(&state.shared, low, 2).unwrap_or(0);
                let high = read_bytes(&state.shared, high, 2).unwrap_or(0);
                warp.values.set(register, lane, low | high << 16);
            }
        }
    }
    let verdict = state
        .arbiter
        .get()
        .matrix_request(u32::from(matrices), row_lanes, &offsets);
    record_wavefronts(&mut state.stats.per_instruction[pc as usize], verdict);
    state.last_wavefronts = verdict;
    Ok(())
}

/// `mma.sync` for the warp: reads every lane's A, B and C registers and
/// writes every lane's D.
pub(crate) fn mma(warp: &mut Warp, active: u32, operation: &MmaOperation) -> Result<(), Fault> {
    if active == 0 {
        return Ok(());
    }
    check_whole_warp(warp, active, "mma.sync")?;
    let fragments = operation.fragments;
    let mut inputs = MmaInputs::default();
    for lane in 0..WARP_SIZE {
        let value = |register: ValueReg| warp.values.get(register, lane);
        for index in 0..fragments.a {
            inputs.a[lane][index] = value(operation.a[index]);
        }
        for index in 0..fragments.b {
            inputs.b[lane][index] = value(operation.b[index]);
        }
        for index in 0..fragments.c {
            inputs.c[lane][index] = value(operation.c[index]);
        }
    }
    let outputs = mma_fragment(operation, &inputs);
    for (lane, output) in outputs.iter().enumerate() {
        if active >> lane & 1 == 0 {
            continue;
        }
        for (&register, &value) in operation.d.iter().zip(output).take(fragments.d) {
            warp.values.set(register, lane, value);
        }
    }
    Ok(())
}

/// Every lane's A, B and C registers of one `mma` (64-bit slots; 32-bit
/// registers in the low half).
#[derive(Clone, Debug, Default)]
pub struct MmaInputs {
    pub a: [[u64; 4]; WARP_SIZE],
    pub b: [[u64; 2]; WARP_SIZE],
    pub c: [[u64; 4]; WARP_SIZE],
}

/// One element's place in a fragment: the lane holding it, the register and
/// the element within the register (for packed types).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Place {
    lane: usize,
    register: usize,
    element: usize,
}

/// The place of element `index` of a lane's A fragment: (row, column).
fn a_position(shape: MmaShape, a_type: MmaType, lane: usize, index: usize) -> (usize, usize) {
    let group = lane / 4;
    let thread = lane % 4;
    match (shape, a_type) {
        (MmaShape::M16N8K16, _) => (
            group + if matches!(index, 2 | 3 | 6 | 7) { 8 } else { 0 },
            thread * 2 + (index & 1) + if index >= 4 { 8 } else { 0 },
        ),
        (MmaShape::M16N8K8, MmaType::Tf32) => (
            group + if matches!(index, 1 | 3) { 8 } else { 0 },
            thread + if index >= 2 { 4 } else { 0 },
        ),
        (MmaShape::M16N8K8, _) => (
            group + if index >= 2 { 8 } else { 0 },
            thread * 2 + (index & 1),
        ),
        (MmaShape::M8N8K4, _) => (group, thread),
        (MmaShape::M16N8K32, _) => (
            group
                + if matches!(index, 4..=7 | 12..=15) {
                    8
                } else {
                    0
                },
            thread * 4 + (index & 3) + if index >= 8 { 16 } else { 0 },
        ),
    }
}

/// The place of element `index` of a lane's B fragment: (row k, column).
fn b_position(shape: MmaShape, a_type: MmaType, lane: usize, index: usize) -> (usize, usize) {
    let group = lane / 4;
    let thread = lane % 4;
    let k = match (shape, a_type) {
        (MmaShape::M16N8K16, _) => thread * 2 + (index & 1) + if index >= 2 { 8 } else { 0 },
        (MmaShape::M16N8K8, MmaType::Tf32) => thread + if index >= 1 { 4 } else { 0 },
        (MmaShape::M16N8K8, _) => thread * 2 + (index & 1),
        (MmaShape::M8N8K4, _) => thread,
        (MmaShape::M16N8K32, _) => thread * 4 + (index & 3) + if index >= 4 { 16 } else { 0 },
    };
    (k, group)
}

/// The place of element `index` of a lane's C or D fragment: (row, column).
fn c_position(shape: MmaShape, lane: usize, index: usize) -> (usize, usize) {
    let group = lane / 4;
    let thread = lane % 4;
    match shape {
        MmaShape::M8N8K4 => (group, thread * 2 + index),
        _ => (
            group + if index >= 2 { 8 } else { 0 },
            thread * 2 + (index & 1),
        ),
    }
}

/// The bits of an element of `ty` and how many fit a register.
fn element_bits(ty: MmaType) -> usize {
    match ty {
        MmaType::F16 | MmaType::Bf16 => 16,
        MmaType::S8 | MmaType::U8 => 8,
        MmaType::F64 => 64,
        MmaType::Tf32 | MmaType::F32 | MmaType::S32 => 32,
    }
}

/// Element `index` of a fragment whose registers are `registers`.
fn element(registers: &[u64], ty: MmaType, index: usize) -> u64 {
    let bits = element_bits(ty);
    if bits >= 32 {
        return registers[index];
    }
    let per_register = 32 / bits;
    let register = registers[index / per_register];
    register >> (bits * (index % per_register)) & ((1u64 << bits) - 1)
}

/// D's registers for every lane of an `mma` with these inputs: the whole
/// instruction on fragments, as a pure function (tests compare it with the
/// H100's outputs).
pub fn mma_fragment(operation: &MmaOperation, inputs: &MmaInputs) -> [[u64; 4]; WARP_SIZE] {
    let (m, n, k) = operation.shape.dimensions();
    let (m, n, k) = (m as usize, n as usize, k as usize);
    let fragments = operation.fragments;
    let a_elements = m * k / WARP_SIZE;
    let b_elements = k * n / WARP_SIZE;
    let c_elements = m * n / WARP_SIZE;
    let mut a = vec![0u64; m * k];
    let mut b = vec![0u64; k * n];
    let mut c = vec![0u64; m * n];
    let mut d_place = vec![
        Place {
            lane: 0,
            register: 0,
            element: 0
        };
        m * n
    ];
    for lane in 0..WARP_SIZE {
        for index in 0..a_elements {
            let (row, column) = a_position(operation.shape, operation.a_type, lane, index);
            a[row * k + column] = element(&inputs.a[lane][..fragments.a], operation.a_type, index);
        }
        for index in 0..b_elements {
            let (row, column) = b_position(operation.shape, operation.a_type, lane, index);
            b[row * n + column] = element(&inputs.b[lane][..fragments.b], operation.b_type, index);
        }
        for index in 0..c_elements {
            let (row, column) = c_position(operation.shape, lane, index);
            c[row * n + column] = element(&inputs.c[lane][..fragments.c], operation.c_type, index);
            let per_register = if operation.d_type == MmaType::F16 {
                2
            } else {
                1
            };
            d_place[row * n + column] = Place {
                lane,
                register: index / per_register,
                element: index % per_register,
            };
        }
    }
    let mut d = [[0u64; 4]; WARP_SIZE];
    for row in 0..m {
        for column in 0..n {
            let a_row = &a[row * k..row * k + k];
            let b_column: Vec<u64> = (0..k).map(|kk| b[kk * n + column]).collect();
            let value = dot(operation, a_row, &b_column, c[row * n + column]);
            let place = d_place[row * n + column];
            let shift = 16 * place.element;
            d[place.lane][place.register] |= value << shift;
        }
    }
    d
}

/// One element of D: the dot product of a row of A and a column of B, plus
/// C, in D's type (bits).
fn dot(operation: &MmaOperation, a: &[u64], b: &[u64], c: u64) -> u64 {
    match operation.a_type {
        MmaType::S8 | MmaType::U8 => {
            let value = |bits: u64, ty: MmaType| {
                if ty == MmaType::S8 {
                    i64::from(bits as u8 as i8)
                } else {
                    bits as i64
                }
            };
            let sum = a
                .iter()
                .zip(b)
                .fold(i64::from(c as u32 as i32), |sum, (&x, &y)| {
                    sum + value(x, operation.a_type) * value(y, operation.b_type)
                });
            let result = if operation.satfinite {
                sum.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
            } else {
                sum as i32
            };
            u64::from(result as u32)
        }
        MmaType::F64 => {
            // A chain of fused multiply-adds in k order from C.
            let mut accumulator = f64::from_bits(c);
            for (&x, &y) in a.iter().zip(b) {
                accumulator = f64::from_bits(x).mul_add(f64::from_bits(y), accumulator);
            }
            if accumulator.is_nan() {
                return 0x7fff_ffff_ffff_ffff;
            }
            accumulator.to_bits()
        }
        _ => {
            let c_value = match operation.c_type {
                MmaType::F16 => Exact::of_f16(c as u16),
                _ => Exact::of_f32(c as u32),
            };
            let terms: Vec<Term> = a
                .iter()
                .zip(b)
                .map(|(&x, &y)| {
                    let x = Exact::of_input(x, operation.a_type);
                    let y = Exact::of_input(y, operation.b_type);
                    x.times(y)
                })
                .chain(std::iter::once(Term::Value(c_value)))
                .collect();
            let sum = aligned_sum(&terms);
            match operation.d_type {
                MmaType::F16 => u64::from(f32_to_f16_nearest(sum)),
                _ => u64::from(sum),
            }
        }
    }
}

/// A finite floating-point value as `sign * significand * 2^exponent`
/// with an integer significand, or a special value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Exact {
    Finite {
        negative: bool,
        significand: u64,
        exponent: i32,
    },
    Infinity {
        negative: bool,
    },
    NotANumber,
}

/// A term of the sum: a product of two values (with the exponent the
/// alignment uses) or C.
#[derive(Clone, Copy, Debug)]
enum Term {
    Product(Exact, i32),
    Value(Exact),
}

impl Exact {
    /// A value with `exponent_bits` and `mantissa_bits` of IEEE layout.
    fn of_ieee(bits: u64, exponent_bits: u32, mantissa_bits: u32) -> Exact {
        let negative = bits >> (exponent_bits + mantissa_bits) & 1 != 0;
        let biased = (bits >> mantissa_bits & ((1 << exponent_bits) - 1)) as i32;
        let mantissa = bits & ((1 << mantissa_bits) - 1);
        let bias = (1 << (exponent_bits - 1)) - 1;
        if biased == (1 << exponent_bits) - 1 {
            return if mantissa == 0 {
                Exact::Infinity { negative }
            } else {
                Exact::NotANumber
            };
        }
        let (significand, exponent) = if biased == 0 {
            (mantissa, 1 - bias - mantissa_bits as i32)
        } else {
            (
                mantissa | 1 << mantissa_bits,
                biased - bias - mantissa_bits as i32,
            )
        };
        Exact::Finite {
            negative,
            significand,
            exponent,
        }
    }

    fn of_f16(bits: u16) -> Exact {
        Exact::of_ieee(u64::from(bits), 5, 10)
    }

    fn of_f32(bits: u32) -> Exact {
        Exact::of_ieee(u64::from(bits), 8, 23)
    }

    /// An A or B element: `.tf32` is an `f32` register whose 13 low
    /// mantissa bits the tensor cores ignore.
    fn of_input(bits: u64, ty: MmaType) -> Exact {
        match ty {
            MmaType::F16 => Exact::of_ieee(bits, 5, 10),
            MmaType::Bf16 => Exact::of_ieee(bits, 8, 7),
            MmaType::Tf32 => Exact::of_f32(bits as u32 & !0x1fff),
            _ => Exact::of_f32(bits as u32),
        }
    }

    /// The exponent `e` with `2^e <= |value| < 2^(e+1)`, for a nonzero value.
    fn magnitude_exponent(self) -> Option<i32> {
        match self {
            Exact::Finite {
                significand,
                exponent,
                ..
            } if significand != 0 => Some(exponent + 63 - significand.leading_zeros() as i32),
            _ => None,
        }
    }

    /// The exact product, as a term whose alignment exponent is the sum of
    /// the factors' exponents.
    fn times(self, other: Exact) -> Term {
        match (self, other) {
            (Exact::NotANumber, _) | (_, Exact::NotANumber) => Term::Value(Exact::NotANumber),
            (Exact::Infinity { negative }, Exact::Finite { significand: 0, .. })
            | (Exact::Finite { significand: 0, .. }, Exact::Infinity { negative }) => {
                let _ = negative;
                Term::Value(Exact::NotANumber)
            }
            (Exact::Infinity { negative: x }, Exact::Infinity { negative: y })
            | (Exact::Infinity { negative: x }, Exact::Finite { negative: y, .. })
            | (Exact::Finite { negative: x, .. }, Exact::Infinity { negative: y }) => {
                Term::Value(Exact::Infinity { negative: x != y })
            }
            (
                Exact::Finite {
                    negative: x_negative,
                    significand: x_significand,
                    exponent: x_exponent,
                },
                Exact::Finite {
                    negative: y_negative,
                    significand: y_significand,
                    exponent: y_exponent,
                },
            ) => {
                let product = Exact::Finite {
                    negative: x_negative != y_negative,
                    significand: x_significand * y_significand,
                    exponent: x_exponent + y_exponent,
                };
                let alignment = match (self.magnitude_exponent(), other.magnitude_exponent()) {
                    (Some(x), Some(y)) => x + y,
                    _ => i32::MIN,
                };
                Term::Product(product, alignment)
            }
        }
    }
}

/// The fitted sum: terms aligned to the largest exponent, each truncated
/// toward zero to `2^(emax - 25)`, summed exactly, truncated to `f32`.
fn aligned_sum(terms: &[Term]) -> u32 {
    const CANONICAL_NAN: u32 = 0x7fff_ffff;
    let mut positive_infinity = false;
    let mut negative_infinity = false;
    let mut finite = Vec::with_capacity(terms.len());
    for term in terms {
        let (value, alignment) = match *term {
            Term::Product(value, alignment) => (value, alignment),
            Term::Value(value) => (value, value.magnitude_exponent().unwrap_or(i32::MIN)),
        };
        match value {
            Exact::NotANumber => return CANONICAL_NAN,
            Exact::Infinity { negative: true } => negative_infinity = true,
            Exact::Infinity { negative: false } => positive_infinity = true,
            Exact::Finite {
                negative,
                significand,
                exponent,
            } => {
                if significand != 0 {
                    finite.push((negative, significand, exponent, alignment));
                }
            }
        }
    }
    match (positive_infinity, negative_infinity) {
        (true, true) => return CANONICAL_NAN,
        (true, false) => return 0x7f80_0000,
        (false, true) => return 0xff80_0000,
        (false, false) => {}
    }
    let Some(largest) = finite.iter().map(|term| term.3).max() else {
        return 0;
    };
    let unit = largest - 25;
    let mut sum: i128 = 0;
    for &(negative, significand, exponent, _) in &finite {
        let shift = exponent - unit;
        let magnitude = if shift >= 0 {
            i128::from(significand) << shift
        } else if shift > -64 {
            i128::from(significand >> -shift)
        } else {
            0
        };
        sum += if negative { -magnitude } else { magnitude };
    }
    truncate_to_f32(sum, unit)
}

/// `sum * 2^unit` truncated toward zero to `f32` bits (beyond the range:
/// an infinity).
fn truncate_to_f32(sum: i128, unit: i32) -> u32 {
    if sum == 0 {
        return 0;
    }
    let sign = if sum < 0 { 0x8000_0000u32 } else { 0 };
    let magnitude = sum.unsigned_abs();
    let top = 127 - magnitude.leading_zeros() as i32 + unit;
    if top > 127 {
        return sign | 0x7f80_0000;
    }
    // The value of the last bit f32 keeps at this magnitude.
    let kept_unit = (top - 23).max(-149);
    let shift = kept_unit - unit;
    let kept = if shift >= 0 {
        if shift >= 128 {
            0
        } else {
            magnitude >> shift
        }
    } else {
        magnitude << -shift
    };
    sign | ((((kept_unit + 149) as u32) << 23) + kept as u32)
}

/// Rounds `f32` bits to the nearest `f16` (ties to even), for D in `.f16`.
fn f32_to_f16_nearest(bits: u32) -> u16 {
    crate::arith::f32_to_f16(f32::from_bits(bits))
}

/// A WMMA instruction as the machine runs it (m16n16k16 only).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WmmaOperation {
    Load {
        matrix: WmmaMatrix,
        layout: WmmaLayout,
        space: StateSpace,
        ty: MmaType,
        registers: Vec<ValueReg>,
        addr: LoweredAddress,
        stride: Option<ValueReg>,
    },
    Store {
        layout: WmmaLayout,
        space: StateSpace,
        ty: MmaType,
        registers: Vec<ValueReg>,
        addr: LoweredAddress,
        stride: Option<ValueReg>,
    },
    Mma {
        input_type: MmaType,
        d_type: MmaType,
        c_type: MmaType,
        d: Vec<ValueReg>,
        a: Vec<ValueReg>,
        b: Vec<ValueReg>,
        c: Vec<ValueReg>,
    },
}

/// Where element `index` of lane `lane`'s WMMA fragment lies in the 16x16
/// matrix, and in which register and half it is held. The PTX ISA leaves
/// the distribution unspecified; the machine uses the one ptxas's code
/// implies on sm_90, where `wmma.load.a/.b` become `LDSM.x4` and `wmma.mma`
/// two m16n8k16 `HMMA` (programs/tensor/hardware/ncu/wmma_gemm.sass.csv):
/// registers 0-3 of A hold the m16n8k16 A fragment; registers 0-1 of B the
/// m16n8k16 B fragment of columns 0-7 and registers 2-3 that of columns
/// 8-15; `.f16` A and B repeat registers 0-3 in 4-7. An `.f32` C or D holds
/// the m16n8k16 C fragment of columns 0-7 in registers 0-3 and of columns
/// 8-15 in 4-7; an `.f16` C or D the same in registers 0-1 and 2-3, two
/// elements each.
fn wmma_elements(
    matrix: WmmaMatrix,
    ty: MmaType,
    lane: usize,
) -> Vec<((usize, usize), usize, usize)> {
    let mut elements = Vec::new();
    match matrix {
        WmmaMatrix::A => {
            for index in 0..8 {
                let position = a_position(MmaShape::M16N8K16, MmaType::F16, lane, index);
                elements.push((position, index / 2, index % 2));
            }
        }
        WmmaMatrix::B => {
            for half in 0..2 {
                for index in 0..4 {
                    let (k, n) = b_position(MmaShape::M16N8K16, MmaType::F16, lane, index);
                    elements.push(((k, n + 8 * half), 2 * half + index / 2, index % 2));
                }
            }
        }
        WmmaMatrix::C => {
            for half in 0..2 {
                for index in 0..4 {
                    let (row, column) = c_position(MmaShape::M16N8K16, lane, index);
                    let element = 4 * half + index;
                    let (register, part) = if ty == MmaType::F16 {
                        (element / 2, element % 2)
                    } else {
                        (element, 0)
                    };
                    elements.push(((row, column + 8 * half), register, part));
                }
            }
        }
    }
    elements
}

/// The bytes of one element of a WMMA fragment of `ty`.
fn wmma_element_bytes(ty: MmaType) -> u32 {
    if ty == MmaType::F32 {
        4
    } else {
        2
    }
}

/// `wmma.load` (`store` false) or `wmma.store` of a 16x16 fragment.
#[allow(clippy::too_many_arguments)]
fn wmma_access(
    env: &LaunchEnv,
    warp: &mut Warp,
    state: &mut BlockState,
    pc: u32,
    active: u32,
    store: bool,
    matrix: WmmaMatrix,
    layout: WmmaLayout,
    space: StateSpace,
    ty: MmaType,
    registers: &[ValueReg],
    addr: LoweredAddress,
    stride: Option<ValueReg>,
) -> Result<(), Fault> {
    let name = if store { "wmma.store" } else { "wmma.load" };
    let first = active.trailing_zeros() as usize;
    // Every lane names the same matrix: its address and stride.
    let base = lane_address(&warp.values, addr, first);
    let stride_of =
        |lane: usize| stride.map_or(16, |register| warp.values.get(register, lane) & 0xffff_ffff);
    let elements_apart = stride_of(first);
    for lane in 0..WARP_SIZE {
        if active >> lane & 1 != 0
            && (lane_address(&warp.values, addr, lane) != base || stride_of(lane) != elements_apart)
        {
            return Err(fault(
                FaultKind::InvalidAccess {
                    message: format!(
                        "`{name}` needs the same address and stride in every lane, but lane {lane} gives {:#x} and {} where lane {first} gives {base:#x} and {elements_apart}",
                        lane_address(&warp.values, addr, lane),
                        stride_of(lane)
                    ),
                },
                lane as u32,
            ));
        }
    }
    let size = wmma_element_bytes(ty);
    let element_address = |row: usize, column: usize| {
        let index = match layout {
            WmmaLayout::Row => row as u64 * elements_apart + column as u64,
            WmmaLayout::Column => column as u64 * elements_apart + row as u64,
        };
        base.wrapping_add(index * u64::from(size))
    };
    let registers_used = if matches!(matrix, WmmaMatrix::A | WmmaMatrix::B) {
        4
    } else {
        registers.len()
    };
    state.sectors.clear();
    let mut global_lanes = 0u32;
    let race_epoch = crate::warp::barrier_openings(&state.barriers);
    // The lanes that read shared bytes no store wrote, and those bytes
    // (first, end), for the initialization checker.
    let mut unwritten = (0u32, u64::MAX, 0u64);
    for lane in 0..WARP_SIZE {
        if active >> lane & 1 == 0 {
            continue;
        }
        let mut words = [0u64; 8];
        if store {
            for (word, &register) in words.iter_mut().zip(registers) {
                *word = warp.values.get(register, lane);
            }
        }
        for ((row, column), register, part) in wmma_elements(matrix, ty, lane) {
            if register >= registers_used {
                continue;
            }
            let address = element_address(row, column);
            let shift = 16 * part;
            let mask = if size == 4 { 0xffff_ffff } else { 0xffff };
            let target = resolve(space, address);
            let bits = words[register] >> shift & mask;
            let done = match target {
                Target::Shared(offset) => {
                    if let Some(written) = &mut state.written {
                        let (start, len) = (offset as usize, size as usize);
                        if store {
                            written.write_shared(start, len);
                        } else if !written.shared_written(start, len) {
                            unwritten.0 |= 1 << lane;
                            unwritten.1 = unwritten.1.min(offset);
                            unwritten.2 = unwritten.2.max(offset + u64::from(size));
                        }
                    }
                    if let Some(races) = &mut state.races {
                        let accessor = crate::racecheck::Accessor {
                            thread: (warp.index as usize * WARP_SIZE + lane) as u32,
                            pc,
                            epoch: race_epoch,
                            instruction: state.instructions,
                            warp_syncs: warp.syncs,
                        };
                        races.observe(accessor, offset, size, store);
                    }
                    if store {
                        write_bytes(&mut state.shared, offset as usize, size, bits).map(|_| 0)
                    } else {
                        read_bytes(&state.shared, offset as usize, size)
                    }
                }
                Target::Global(address) => {
                    global_lanes |= 1 << lane;
                    crate::access::push_sectors(&mut state.sectors, address, size);
                    if store {
                        state.stores.write(env.global, address, size, bits).ok().map(|_| 0)
                    } else {
                        state.stores.read(env.global, address, size).ok()
                    }
                }
                _ => {
                    return Err(fault(
                        FaultKind::InvalidAccess {
                            message: format!(
                                "`{name}` accesses shared or global memory, but the element at {address:#x} is in neither"
                            ),
                        },
                        lane as u32,
                    ))
                }
            };
            let value =
                done.ok_or_else(|| out_of_bounds(env, target, address, size, store, lane))?;
            if !store {
                words[register] = words[register] & !(mask << shift) | (value & mask) << shift;
            }
        }
        if !store {
            // `.f16` A and B repeat their four registers.
            for (index, &register) in registers.iter().enumerate() {
                warp.values
                    .set(register, lane, words[index % registers_used]);
            }
        }
    }
    if unwritten.0 != 0 {
        state.checker.uninitialized_read(
            pc,
            crate::initcheck::ReadSpace::Shared,
            false,
            warp.index,
            unwritten.0,
            unwritten.1,
            unwritten.2,
        );
    }
    let counters = &mut state.stats.per_instruction[pc as usize];
    if global_lanes != 0 {
        crate::access::record_sectors(counters, &mut state.sectors);
    }
    state.last_wavefronts = warpsim_banks::Wavefronts::default();
    if !matches!(resolve(space, base), Target::Shared(_)) {
        return Ok(());
    }
    let offset_of = |address: u64| match resolve(space, address) {
        Target::Shared(offset) => offset as u32,
        _ => 0,
    };
    let verdict = if matches!(matrix, WmmaMatrix::A | WmmaMatrix::B) {
        // `LDSM.x4`: one 8x8 block of the matrix per phase, its eight
        // 16-byte rows along the layout's contiguous dimension.
        let mut rows = [0u32; WARP_SIZE];
        for (block, (block_row, block_column)) in
            [(0, 0), (1, 0), (0, 1), (1, 1)].into_iter().enumerate()
        {
            for line in 0..8 {
                let (row, column) = match layout {
                    WmmaLayout::Row => (8 * block_row + line, 8 * block_column),
                    WmmaLayout::Column => (8 * block_row, 8 * block_column + line),
                };
                rows[8 * block + line] = offset_of(element_address(row, column));
            }
        }
        state.arbiter.get().matrix_request(4, active, &rows)
    } else {
        // `LDS`/`STS` per 8x8 quarter of C: each lane's two elements in
        // one access where they are adjacent (`.row`), else one each.
        let kind = if store {
            warpsim_banks::AccessKind::Store
        } else {
            warpsim_banks::AccessKind::Load
        };
        let mut total = warpsim_banks::Wavefronts::default();
        let pair_adjacent = layout == WmmaLayout::Row;
        for quarter in 0..4 {
            let (row_half, column_half) = (quarter / 2, quarter % 2);
            let parts: &[usize] = if pair_adjacent { &[0] } else { &[0, 1] };
            for &part in parts {
                let mut addresses = [0u32; WARP_SIZE];
                for (lane, slot) in addresses.iter_mut().enumerate() {
                    let row = lane / 4 + 8 * row_half;
                    let column = 2 * (lane % 4) + 8 * column_half + part;
                    *slot = offset_of(element_address(row, column));
                }
                let bytes = if pair_adjacent { 2 * size } else { size };
                let verdict = state.arbiter.get().request(kind, bytes, active, &addresses);
                total.wavefronts += verdict.wavefronts;
                total.ideal += verdict.ideal;
            }
        }
        total
    };
    record_wavefronts(&mut state.stats.per_instruction[pc as usize], verdict);
    state.last_wavefronts = verdict;
    Ok(())
}

/// Runs a WMMA instruction for the warp.
pub(crate) fn wmma(
    env: &LaunchEnv,
    warp: &mut Warp,
    state: &mut BlockState,
    pc: u32,
    active: u32,
    operation: &WmmaOperation,
) -> Result<(), Fault> {
    if active == 0 {
        return Ok(());
    }
    check_whole_warp(warp, active, "wmma")?;
    match operation {
        WmmaOperation::Load {
            matrix,
            layout,
            space,
            ty,
            registers,
            addr,
            stride,
        } => wmma_access(
            env, warp, state, pc, active, false, *matrix, *layout, *space, *ty, registers, *addr,
            *stride,
        ),
        WmmaOperation::Store {
            layout,
            space,
            ty,
            registers,
            addr,
            stride,
        } => {
            state.checker.last_progress = state.instructions;
            wmma_access(
                env,
                warp,
                state,
                pc,
                active,
                true,
                WmmaMatrix::C,
                *layout,
                *space,
                *ty,
                registers,
                *addr,
                *stride,
            )
        }
        WmmaOperation::Mma {
            input_type,
            d_type,
            c_type,
            d,
            a,
            b,
            c,
        } => {
            let fragments = warpsim_ir::mma_fragments(
                MmaShape::M16N8K16,
                *d_type,
                *input_type,
                *input_type,
                *c_type,
            )
            .expect("the parser admits only m16n8k16 types");
            let operation = MmaOperation {
                shape: MmaShape::M16N8K16,
                satfinite: false,
                d_type: *d_type,
                a_type: *input_type,
                b_type: *input_type,
                c_type: *c_type,
                fragments,
                d: [0; 4],
                a: [0; 4],
                b: [0; 2],
                c: [0; 4],
            };
            let value = |register: ValueReg, lane: usize| warp.values.get(register, lane);
            let mut results = [[0u64; 8]; WARP_SIZE];
            for half in 0..2 {
                let mut inputs = MmaInputs::default();
                for lane in 0..WARP_SIZE {
                    for (slot, &register) in inputs.a[lane].iter_mut().zip(a) {
                        *slot = value(register, lane);
                    }
                    for index in 0..2 {
                        inputs.b[lane][index] = value(b[2 * half + index], lane);
                    }
                    for index in 0..fragments.c {
                        inputs.c[lane][index] = value(c[fragments.c * half + index], lane);
                    }
                }
                let outputs = mma_fragment(&operation, &inputs);
                for (lane, output) in outputs.iter().enumerate() {
                    for index in 0..fragments.d {
                        results[lane][fragments.d * half + index] = output[index];
                    }
                }
            }
            for (lane, result) in results.iter().enumerate() {
                if active >> lane & 1 == 0 {
                    continue;
                }
                for (&register, &value) in d.iter().zip(result) {
                    warp.values.set(register, lane, value);
                }
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_keeps_24_bits_toward_zero() {
        // 1 + 2^-23 + 2^-24, in units of 2^-25: the 2^-24 is cut.
        let sum = (1i128 << 25) + (1 << 2) + (1 << 1);
        assert_eq!(truncate_to_f32(sum, -25), 0x3f80_0001);
        assert_eq!(truncate_to_f32(-sum, -25), 0xbf80_0001);
        // The smallest subnormal and half of it.
        assert_eq!(truncate_to_f32(1, -149), 1);
        assert_eq!(truncate_to_f32(1, -150), 0);
        assert_eq!(truncate_to_f32(1, 128), 0x7f80_0000);
    }

    #[test]
    fn lane_lists_name_ranges() {
        assert_eq!(lane_list(0b1011_1001), "0, 3-5, 7");
        assert_eq!(lane_list(u32::MAX), "0-31");
    }
}
