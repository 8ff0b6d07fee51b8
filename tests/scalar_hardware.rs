//! The integer dot products, carry chains and narrow-float conversions against an H100, bit for bit: the
//! kernels of `programs/corpus/hardware/scalar/scalar-kernels.cu` (compiled
//! by NVRTC, every instruction under test written as inline PTX) run in
//! warpsim on the inputs the hardware harness generated, and every output
//! equals what the H100 wrote (`h100-*.bin`, see that directory's README):
//! `dp4a`/`dp2a` in every signedness, `mad24` (with `.sat`), carry chains of
//! `add.cc`/`addc`/`sub.cc`/`subc`/`mad.cc`/`madc` on 32 and 64 bits, `cvt`
//! to `.tf32` with its six sm_90 roundings, to and from `.e4m3x2` and
//! `.e5m2x2` (every f16 and fp8 bit pattern) and `cvt.relu` to `.bf16`.

mod support;

use support::{repo_root, run_program};

fn hardware(name: &str) -> Vec<u8> {
    let path = repo_root()
        .join("programs/corpus/hardware/scalar")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// Runs one launch of the harness and compares each named buffer with its
/// hardware file, reporting the first differing element.
fn equals_hardware(launch: &str, buffers: &[(&str, &str, usize)]) {
    let run = run_program(&format!("corpus/hardware/scalar/{launch}"), None, 1);
    assert!(run.failure.is_none(), "{launch}: {:?}", run.failure);
    for &(buffer, file, element_bytes) in buffers {
        let simulated = run.buffer(buffer);
        let expected = hardware(file);
        assert_eq!(simulated.len(), expected.len(), "{launch}: `{buffer}` size");
        if let Some(index) = simulated
            .chunks(element_bytes)
            .zip(expected.chunks(element_bytes))
            .position(|(a, b)| a != b)
        {
            let range = index * element_bytes..(index + 1) * element_bytes;
            panic!(
                "{launch}: `{buffer}` element {index}: warpsim {:02x?}, H100 {:02x?}",
                &simulated[range.clone()],
                &expected[range]
            );
        }
    }
}

#[test]
fn tf32_conversions_equal_the_h100() {
    equals_hardware("tf32_from_f32", &[("out", "h100-tf32.bin", 4)]);
}

#[test]
fn fp8_and_bf16_relu_conversions_of_floats_equal_the_h100() {
    equals_hardware(
        "fp8_from_f32",
        &[
            ("fp8", "h100-fp8-from-f32.bin", 2),
            ("bf16", "h100-bf16-relu.bin", 2),
        ],
    );
}

#[test]
fn fp8_conversions_of_every_half_equal_the_h100() {
    equals_hardware("fp8_from_f16x2", &[("out", "h100-fp8-from-f16x2.bin", 2)]);
}

#[test]
fn every_fp8_value_widens_as_on_the_h100() {
    equals_hardware("f16x2_from_fp8", &[("out", "h100-f16x2-from-fp8.bin", 4)]);
}

#[test]
fn dot_products_and_mad24_equal_the_h100() {
    equals_hardware("dot_products", &[("out", "h100-dot-products.bin", 4)]);
}

#[test]
fn carry_chains_equal_the_h100() {
    equals_hardware("carry_chains", &[("out", "h100-carry-chains.bin", 4)]);
}

/// The hardware's inputs are the launch files' inputs: the harness wrote
/// them, and they hold what its README says (a spot check of the chosen
/// floats: every exponent field and both signs).
#[test]
fn the_inputs_cover_every_exponent_and_sign() {
    let floats: Vec<u32> = hardware("f32-inputs.bin")
        .chunks(4)
        .map(|bytes| u32::from_le_bytes(bytes.try_into().unwrap()))
        .collect();
    assert_eq!(floats.len(), 65536);
    for sign in 0..2u32 {
        for exponent in 0..256u32 {
            assert!(
                floats
                    .iter()
                    .any(|&bits| bits >> 31 == sign && (bits >> 23) & 0xff == exponent),
                "sign {sign}, exponent field {exponent}"
            );
        }
    }
}
