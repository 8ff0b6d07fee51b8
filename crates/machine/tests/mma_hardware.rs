//! `mma.sync` numerics against an H100: the machine's fragment function on
//! the random operands of `programs/tensor/hardware/mma-probe.cu`, drawn
//! here again with the same splitmix64 stream, compared bit for bit with
//! the D registers the H100 gave (`programs/tensor/hardware/probe/*.random.bin`).

use warpsim_ir::{mma_fragments, MmaShape, MmaType};
use warpsim_machine::tensor::{mma_fragment, MmaInputs, MmaOperation};

/// The fragments of each probe.
const FRAGMENTS: usize = 1024;

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `random_register` of mma-probe.cu: one register of `ty` from one draw.
fn random_register(ty: MmaType, r: u64, wide: bool) -> u64 {
    let f16 = |u: u32| -> u32 {
        let exponent = if wide {
            (u >> 10) % 31
        } else {
            12 + (u >> 10) % 7
        };
        ((u >> 31) << 15) | (exponent << 10) | (u & 0x3ff)
    };
    let bf16 = |u: u32| -> u32 {
        let exponent = if wide {
            87 + (u >> 7) % 81
        } else {
            124 + (u >> 7) % 7
        };
        ((u >> 31) << 15) | (exponent << 7) | (u & 0x7f)
    };
    let f32 = |u: u32, mantissa: u32| -> u32 {
        let exponent = if wide { 87 + u % 81 } else { 124 + u % 7 };
        ((mantissa >> 31) << 31) | (exponent << 23) | (mantissa & 0x7fffff)
    };
    let (low, high) = (r as u32, (r >> 32) as u32);
    match ty {
        MmaType::F16 => u64::from(f16(low) | (f16(high) << 16)),
        MmaType::Bf16 => u64::from(bf16(low) | (bf16(high) << 16)),
        MmaType::Tf32 | MmaType::F32 => u64::from(f32(low, high)),
        MmaType::F64 => {
            let exponent = if wide {
                923 + u64::from(low >> 20) % 201
            } else {
                1020 + u64::from(low >> 20) % 7
            };
            (r & 0x800f_ffff_ffff_ffff) | (exponent << 52)
        }
        MmaType::S8 | MmaType::U8 | MmaType::S32 => u64::from(low),
    }
}

/// The probe's variant `index` (its order in mma-probe.cu) compared with
/// the H100: returns (elements that match, elements).
fn compare(
    file: &str,
    index: u64,
    shape: MmaShape,
    types: [MmaType; 4],
    satfinite: bool,
) -> (usize, usize) {
    let [d_type, a_type, b_type, c_type] = types;
    let fragments = mma_fragments(shape, d_type, a_type, b_type, c_type).expect("a valid mma");
    let operation = MmaOperation {
        shape,
        satfinite,
        d_type,
        a_type,
        b_type,
        c_type,
        fragments,
        d: [0; 4],
        a: [0; 4],
        b: [0; 2],
        c: [0; 4],
    };
    let path = format!(
        "{}/../../programs/tensor/hardware/probe/{file}.random.bin",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).expect("the committed H100 outputs");
    let wide64 = d_type == MmaType::F64;
    let word_bytes = if wide64 { 8 } else { 4 };
    let words: Vec<u64> = bytes
        .chunks_exact(word_bytes)
        .map(|chunk| {
            let mut padded = [0u8; 8];
            padded[..word_bytes].copy_from_slice(chunk);
            u64::from_le_bytes(padded)
        })
        .collect();
    assert_eq!(words.len(), FRAGMENTS * 32 * fragments.c);
    let mut state = 1000 + index;
    let (mut matching, mut total) = (0, 0);
    for fragment in 0..FRAGMENTS {
        let wide = fragment % 2 == 1;
        let mut inputs = MmaInputs::default();
        for lane in 0..32 {
            for register in 0..fragments.a {
                inputs.a[lane][register] = random_register(a_type, splitmix64(&mut state), wide);
            }
            for register in 0..fragments.b {
                inputs.b[lane][register] = random_register(b_type, splitmix64(&mut state), wide);
            }
            for register in 0..fragments.c {
                inputs.c[lane][register] = random_register(c_type, splitmix64(&mut state), wide);
            }
        }
        let d = mma_fragment(&operation, &inputs);
        for lane in 0..32 {
            for register in 0..fragments.d {
                let hardware = words[(fragment * 32 + lane) * fragments.d + register];
                let elements: &[(u32, u64)] = if d_type == MmaType::F16 {
                    &[(0, 0xffff), (16, 0xffff)]
                } else {
                    &[(0, u64::MAX)]
                };
                for &(shift, mask) in elements {
                    total += 1;
                    if (d[lane][register] >> shift) & mask == (hardware >> shift) & mask {
                        matching += 1;
                    } else if std::env::var("MMA_DEBUG").is_ok() {
                        eprintln!(
                            "{file} fragment {fragment} lane {lane} register {register} shift {shift}: machine {:#x} hardware {:#x}",
                            (d[lane][register] >> shift) & mask,
                            (hardware >> shift) & mask
                        );
                    }
                }
            }
        }
    }
    (matching, total)
}

use MmaType::*;

#[test]
fn f16_inputs_f32_accumulator_m16n8k16_match_the_h100_bit_for_bit() {
    let result = compare(
        "f16_f32_m16n8k16",
        0,
        MmaShape::M16N8K16,
        [F32, F16, F16, F32],
        false,
    );
    assert_eq!(result, (131_072, 131_072));
}

#[test]
fn bf16_inputs_f32_accumulator_m16n8k16_match_the_h100_bit_for_bit() {
    let result = compare(
        "bf16_f32_m16n8k16",
        1,
        MmaShape::M16N8K16,
        [F32, Bf16, Bf16, F32],
        false,
    );
    assert_eq!(result, (131_072, 131_072));
}

#[test]
/// The model, fitted to the `.f32` accumulator, with D rounded to the
/// nearest `.f16`, gives all but 3 of the H100's elements; the 3 differ by
/// one unit in the last place (`MMA_DEBUG=1` lists them).
fn f16_inputs_f16_accumulator_m16n8k16_against_the_h100() {
    let result = compare(
        "f16_f16_m16n8k16",
        2,
        MmaShape::M16N8K16,
        [F16, F16, F16, F16],
        false,
    );
    assert_eq!(result, (131_069, 131_072));
}

#[test]
/// The m16n8k16 model gives all but 6 elements of m16n8k8 with `.f16`
/// inputs (each one unit in the last place apart), where `.bf16` inputs
/// match exactly: the H100 does something for 8 `.f16` products that the
/// random fragments show only 6 times, and this model does not capture.
fn f16_inputs_f32_accumulator_m16n8k8_against_the_h100() {
    let result = compare(
        "f16_f32_m16n8k8",
        3,
        MmaShape::M16N8K8,
        [F32, F16, F16, F32],
        false,
    );
    assert_eq!(result, (131_066, 131_072));
}

#[test]
fn bf16_inputs_f32_accumulator_m16n8k8_match_the_h100_bit_for_bit() {
    let result = compare(
        "bf16_f32_m16n8k8",
        4,
        MmaShape::M16N8K8,
        [F32, Bf16, Bf16, F32],
        false,
    );
    assert_eq!(result, (131_072, 131_072));
}

#[test]
/// As for m16n8k16: all but 3 elements, those 3 one unit apart.
fn f16_inputs_f16_accumulator_m16n8k8_against_the_h100() {
    let result = compare(
        "f16_f16_m16n8k8",
        5,
        MmaShape::M16N8K8,
        [F16, F16, F16, F16],
        false,
    );
    assert_eq!(result, (131_069, 131_072));
}

#[test]
fn tf32_inputs_m16n8k8_against_the_h100() {
    let result = compare(
        "tf32_f32_m16n8k8",
        6,
        MmaShape::M16N8K8,
        [F32, Tf32, Tf32, F32],
        false,
    );
    assert_eq!(result, (131_072, 131_072));
}

#[test]
fn integer_m16n8k32_matches_the_h100_exactly() {
    for (file, index, a, b, satfinite) in [
        ("s8_s32_m16n8k32", 7, S8, S8, false),
        ("u8s8_s32_m16n8k32", 8, U8, S8, false),
        ("u8_s32_m16n8k32", 9, U8, U8, false),
        ("s8_s32_m16n8k32_satfinite", 10, S8, S8, true),
    ] {
        let result = compare(file, index, MmaShape::M16N8K32, [S32, a, b, S32], satfinite);
        assert_eq!(result, (131_072, 131_072), "{file}");
    }
}

#[test]
fn f64_m8n8k4_against_the_h100() {
    let result = compare(
        "f64_f64_m8n8k4",
        11,
        MmaShape::M8N8K4,
        [F64, F64, F64, F64],
        false,
    );
    assert_eq!(result, (65_536, 65_536));
}
