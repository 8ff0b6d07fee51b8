//! The seed programs of `programs/seed/` run on the machine with the launches
//! of their `.toml` files: no fault, the functional results where they are
//! easy to state (transposes, reduction, tiled matrix multiply), and the
//! shared-memory totals of reference/bank-rules.md ("Seed kernels on the same
//! GPU") as (instructions executed, wavefronts, bank conflicts) for loads and
//! stores.

mod common;
use common::*;
use warpsim_ir::StateSpace;
use warpsim_machine::program::Kind;
use warpsim_machine::InstrStats;

/// Shared loads and stores of the whole launch, each as (executed, wavefronts, conflicts).
fn shared_totals(out: &Outcome) -> ((u64, u64, u64), (u64, u64, u64)) {
    let mut loads = InstrStats::default();
    let mut stores = InstrStats::default();
    for (pc, instruction) in out.program.code.iter().enumerate() {
        let stats = &out.outcome.stats.per_instruction[pc];
        match instruction.kind {
            Kind::Load {
                space: StateSpace::Shared,
                ..
            } => loads.add(stats),
            Kind::Store {
                space: StateSpace::Shared,
                ..
            } => stores.add(stats),
            _ => {}
        }
    }
    let triple = |s: InstrStats| (s.executed, s.wavefronts, s.bank_conflicts);
    (triple(loads), triple(stores))
}

fn random_u32s(seed: u64, n: usize) -> Vec<u32> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as u32
        })
        .collect()
}

fn random_f32s(seed: u64, n: usize) -> Vec<f32> {
    random_u32s(seed, n)
        .into_iter()
        .map(|v| (v % 1000) as f32 / 256.0 - 2.0)
        .collect()
}

#[test]
fn seed1_kernels_match_the_measured_bank_counts() {
    let a: Vec<i32> = random_u32s(1, 64).into_iter().map(|v| v as i32).collect();
    for (source, loads, stores) in [
        (
            include_str!("../../../programs/seed/seed1_noconflict.kir"),
            (2, 2, 0),
            (2, 2, 0),
        ),
        (
            include_str!("../../../programs/seed/seed1_st_conflict.kir"),
            (2, 2, 0),
            (2, 4, 2),
        ),
        (
            include_str!("../../../programs/seed/seed1_ld_conflict.kir"),
            (1, 2, 1),
            (2, 2, 0),
        ),
    ] {
        let out = run_kernel(source, 1, 128, &[Arg::i32s(&a), Arg::zeros(64)]).ok();
        assert_eq!(
            shared_totals(&out),
            (loads, stores),
            "{}",
            out.program.kernel_name
        );
    }
}

#[test]
fn row_and_column_tile_kernels_match_the_measured_bank_counts() {
    for (source, dynamic, loads, stores) in [
        (
            include_str!("../../../programs/seed/setRowReadRow.kir"),
            0,
            (32, 32, 0),
            (32, 32, 0),
        ),
        (
            include_str!("../../../programs/seed/setColReadCol.kir"),
            0,
            (32, 1024, 992),
            (32, 1024, 992),
        ),
        (
            include_str!("../../../programs/seed/setRowReadCol.kir"),
            0,
            (32, 1024, 992),
            (32, 32, 0),
        ),
        (
            include_str!("../../../programs/seed/setRowReadColDyn.kir"),
            4096,
            (32, 1024, 992),
            (32, 32, 0),
        ),
        (
            include_str!("../../../programs/seed/setRowReadColPad.kir"),
            0,
            (32, 32, 0),
            (32, 32, 0),
        ),
    ] {
        let out = kernel(source)
            .block([32, 32, 1])
            .dynamic_shared(dynamic)
            .arg(Arg::zeros(1024))
            .run()
            .ok();
        assert_eq!(
            shared_totals(&out),
            (loads, stores),
            "{}",
            out.program.kernel_name
        );
    }
}

#[test]
fn transposes_transpose_and_match_the_measured_bank_counts() {
    let n = 64usize;
    let floats = random_f32s(1, n * n);
    let doubles: Vec<f64> = floats.iter().map(|&f| f64::from(f) * 3.0).collect();
    let double_bytes: Vec<u8> = doubles.iter().flat_map(|d| d.to_le_bytes()).collect();
    for (source, double, loads, stores) in [
        (
            include_str!("../../../programs/seed/transposeSmemF.kir"),
            false,
            (128, 4096, 3968),
            (128, 128, 0),
        ),
        (
            include_str!("../../../programs/seed/transposePadF.kir"),
            false,
            (128, 128, 0),
            (128, 128, 0),
        ),
        (
            include_str!("../../../programs/seed/transposeSmemD.kir"),
            true,
            (128, 4096, 3840),
            (128, 256, 0),
        ),
        (
            include_str!("../../../programs/seed/transposePadD.kir"),
            true,
            (128, 256, 0),
            (128, 256, 0),
        ),
    ] {
        let (input, output) = if double {
            (Arg::bytes(&double_bytes), Arg::Buffer(vec![0; n * n * 8]))
        } else {
            (Arg::f32s(&floats), Arg::zeros(n * n))
        };
        let out = kernel(source)
            .grid([2, 2, 1])
            .block([32, 32, 1])
            .args(&[input, output, Arg::S32(n as i32)])
            .run()
            .ok();
        let name = out.program.kernel_name.clone();
        assert_eq!(shared_totals(&out), (loads, stores), "{name}");
        for row in 0..n {
            for col in 0..n {
                if double {
                    let b = out.u64s(1);
                    assert_eq!(
                        f64::from_bits(b[col * n + row]),
                        doubles[row * n + col],
                        "{name} ({row}, {col})"
                    );
                } else {
                    let b = out.f32s(1);
                    assert_eq!(
                        b[col * n + row],
                        floats[row * n + col],
                        "{name} ({row}, {col})"
                    );
                }
            }
        }
    }
}

#[test]
fn reduce_shared_sums_each_block() {
    let input: Vec<i32> = random_u32s(1, 4096)
        .into_iter()
        .map(|v| (v % 2001) as i32 - 1000)
        .collect();
    let out = run_kernel(
        include_str!("../../../programs/seed/reduceShared.kir"),
        16,
        256,
        &[Arg::i32s(&input), Arg::zeros(16)],
    )
    .ok();
    let want: Vec<i32> = input.chunks(256).map(|c| c.iter().sum()).collect();
    assert_eq!(out.i32s(1), want);
    assert_eq!(shared_totals(&out), ((400, 400, 0), (320, 320, 0)));
}

#[test]
fn tiled_matrix_multiply_multiplies() {
    let n = 64usize;
    let a = random_f32s(1, n * n);
    let b = random_f32s(2, n * n);
    let out = kernel(include_str!("../../../programs/seed/matmulTiled16.kir"))
        .grid([4, 4, 1])
        .block([16, 16, 1])
        .args(&[
            Arg::f32s(&a),
            Arg::f32s(&b),
            Arg::zeros(n * n),
            Arg::S32(64),
            Arg::S32(64),
            Arg::S32(64),
        ])
        .run()
        .ok();
    assert_eq!(shared_totals(&out), ((16384, 16384, 0), (1024, 1024, 0)));
    let c = out.f32s(2);
    for row in 0..n {
        for col in 0..n {
            // The kernel adds the products in k order, one fused multiply-add or
            // one multiply and one add each; both are exact for these inputs
            // (multiples of 1/256 below 2 in magnitude, sums well inside f32).
            let want: f32 = (0..n).map(|k| a[row * n + k] * b[k * n + col]).sum();
            assert_eq!(c[row * n + col], want, "C[{row}][{col}]");
        }
    }
}
