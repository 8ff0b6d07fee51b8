//! The seed kernels against the hardware: every row of the table "Seed kernels
//! on the same GPU" in `../shared/reference/bank-rules.md` (measured on an
//! H200 with Nsight Compute) is asserted exactly, and every kernel's output is
//! checked against a computation on the host.

mod support;

use support::{f32s, f64s, i32s, repo_root, run_program, u32s};
use warpsim_driver::report::Totals;

/// One row of the measured table: shared loads and stores as
/// (instructions executed, wavefronts, bank conflicts).
struct HardwareRow {
    program: &'static str,
    loads: (u64, u64, u64),
    stores: (u64, u64, u64),
}

/// The table of bank-rules.md, transcribed. These numbers were measured on an
/// H200; the simulator must compute them.
const MEASURED_ON_H200: [HardwareRow; 12] = [
    HardwareRow {
        program: "seed/seed1_noconflict",
        loads: (2, 2, 0),
        stores: (2, 2, 0),
    },
    HardwareRow {
        program: "seed/seed1_st_conflict",
        loads: (2, 2, 0),
        stores: (2, 4, 2),
    },
    HardwareRow {
        program: "seed/seed1_ld_conflict",
        loads: (1, 2, 1),
        stores: (2, 2, 0),
    },
    HardwareRow {
        program: "seed/setRowReadRow",
        loads: (32, 32, 0),
        stores: (32, 32, 0),
    },
    HardwareRow {
        program: "seed/setColReadCol",
        loads: (32, 1024, 992),
        stores: (32, 1024, 992),
    },
    HardwareRow {
        program: "seed/setRowReadCol",
        loads: (32, 1024, 992),
        stores: (32, 32, 0),
    },
    HardwareRow {
        program: "seed/setRowReadColDyn",
        loads: (32, 1024, 992),
        stores: (32, 32, 0),
    },
    HardwareRow {
        program: "seed/setRowReadColPad",
        loads: (32, 32, 0),
        stores: (32, 32, 0),
    },
    HardwareRow {
        program: "seed/transposeSmemF",
        loads: (128, 4096, 3968),
        stores: (128, 128, 0),
    },
    HardwareRow {
        program: "seed/transposePadF",
        loads: (128, 128, 0),
        stores: (128, 128, 0),
    },
    HardwareRow {
        program: "seed/transposeSmemD",
        loads: (128, 4096, 3840),
        stores: (128, 256, 0),
    },
    HardwareRow {
        program: "seed/transposePadD",
        loads: (128, 256, 0),
        stores: (128, 256, 0),
    },
];

fn shared_counts(totals: &Totals) -> ((u64, u64, u64), (u64, u64, u64)) {
    let load = totals.shared_load;
    let store = totals.shared_store;
    (
        (load.requests, load.wavefronts, load.bank_conflicts),
        (store.requests, store.wavefronts, store.bank_conflicts),
    )
}

#[test]
fn shared_memory_counts_match_the_h200_measurements() {
    let mut mismatches = Vec::new();
    for row in &MEASURED_ON_H200 {
        let run = run_program(row.program, None, 2);
        assert!(run.failure.is_none(), "{}: {:?}", row.program, run.failure);
        let (loads, stores) = shared_counts(&run.report.totals);
        if loads != row.loads || stores != row.stores {
            mismatches.push(format!(
                "{}: loads {loads:?} stores {stores:?}, measured {:?} {:?}",
                row.program, row.loads, row.stores
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// Seed document 003 measured setColReadCol on a Tesla K40c in eight-byte bank
/// mode: 16 transactions per request for both the load and the store.
#[test]
fn eight_byte_banks_halve_set_col_read_col_conflicts_as_on_a_k40c() {
    let config = repo_root().join("programs/kepler-8byte.toml");
    let run = run_program("seed/setColReadCol", Some(&config), 1);
    let ((loads, load_wavefronts, _), (stores, store_wavefronts, _)) =
        shared_counts(&run.report.totals);
    assert_eq!((loads, load_wavefronts), (32, 32 * 16));
    assert_eq!((stores, store_wavefronts), (32, 32 * 16));
}

#[test]
fn the_repository_sim_toml_is_the_built_in_hopper_machine() {
    let config = warpsim_driver::load_config(Some(&repo_root().join("sim.toml"))).unwrap();
    assert_eq!(config, warpsim_machine::MachineConfig::hopper());
}

#[test]
fn seed1_kernels_copy_through_shared_memory() {
    let run = run_program("seed/seed1_noconflict", None, 1);
    let a = i32s(&run.initial("a"));
    assert_eq!(i32s(&run.buffer("c")), a);

    // shm[(i % 2) * 32 + i / 2] = a[i]; c[k] = shm[k].
    let run = run_program("seed/seed1_st_conflict", None, 1);
    let a = i32s(&run.initial("a"));
    let expected: Vec<i32> = (0..64)
        .map(|k| {
            if k < 32 {
                a[2 * k]
            } else {
                a[2 * (k - 32) + 1]
            }
        })
        .collect();
    assert_eq!(i32s(&run.buffer("c")), expected);

    // Only warp 0 reads: c[l] = shm[l / 8 + (l % 2) * 32] = a[l / 8 + (l % 2) * 32].
    let run = run_program("seed/seed1_ld_conflict", None, 1);
    let a = i32s(&run.initial("a"));
    let mut expected = vec![0; 64];
    for (lane, value) in expected.iter_mut().enumerate().take(32) {
        *value = a[lane / 8 + (lane % 2) * 32];
    }
    assert_eq!(i32s(&run.buffer("c")), expected);
}

#[test]
fn row_and_column_tiles_read_back_what_was_written() {
    let identity: Vec<u32> = (0..1024).collect();
    let transposed: Vec<u32> = (0..1024).map(|i| (i % 32) * 32 + i / 32).collect();
    for (program, expected) in [
        ("seed/setRowReadRow", &identity),
        ("seed/setColReadCol", &identity),
        ("seed/setRowReadCol", &transposed),
        ("seed/setRowReadColDyn", &transposed),
        ("seed/setRowReadColPad", &transposed),
    ] {
        let run = run_program(program, None, 1);
        assert_eq!(&u32s(&run.buffer("out")), expected, "{program}");
    }
}

#[test]
fn transposes_transpose() {
    let n = 64;
    for program in ["seed/transposeSmemF", "seed/transposePadF"] {
        let run = run_program(program, None, 2);
        let a = f32s(&run.initial("A"));
        let b = f32s(&run.buffer("B"));
        for row in 0..n {
            for column in 0..n {
                assert_eq!(
                    b[column * n + row].to_bits(),
                    a[row * n + column].to_bits(),
                    "{program}"
                );
            }
        }
    }
    for program in ["seed/transposeSmemD", "seed/transposePadD"] {
        let run = run_program(program, None, 2);
        let a = f64s(&run.initial("A"));
        let b = f64s(&run.buffer("B"));
        for row in 0..n {
            for column in 0..n {
                assert_eq!(
                    b[column * n + row].to_bits(),
                    a[row * n + column].to_bits(),
                    "{program}"
                );
            }
        }
    }
    let run = run_program("bench/transposeSmem", None, 2);
    let a = f32s(&run.initial("A"));
    let b = f32s(&run.buffer("B"));
    let n = 512;
    assert!((0..n * n).all(|i| b[(i % n) * n + i / n] == a[i]));
}

/// C = A x B for 64 x 64 floats, accumulated with one fma per k in k order,
/// as the kernel does: bit for bit.
fn assert_matmul_matches_the_host(program: &str) {
    let run = run_program(program, None, 2);
    let a = f32s(&run.initial("A"));
    let b = f32s(&run.initial("B"));
    let c = f32s(&run.buffer("C"));
    let n = 64;
    for row in 0..n {
        for column in 0..n {
            let expected = (0..n).fold(0.0f32, |sum, k| {
                a[row * n + k].mul_add(b[k * n + column], sum)
            });
            assert_eq!(
                c[row * n + column].to_bits(),
                expected.to_bits(),
                "{program}: C[{row}][{column}]"
            );
        }
    }
}

#[test]
fn tiled_matrix_multiply_matches_the_host_bit_for_bit() {
    assert_matmul_matches_the_host("seed/matmulTiled16");
}

#[test]
fn reductions_sum_each_block() {
    let run = run_program("seed/reduceShared", None, 2);
    let input = i32s(&run.initial("in"));
    let expected: Vec<i32> = input
        .chunks(256)
        .map(|chunk| chunk.iter().fold(0i32, |sum, &x| sum.wrapping_add(x)))
        .collect();
    assert_eq!(i32s(&run.buffer("out")), expected);

    let run = run_program("bench/reduceSequential", None, 2);
    let output = i32s(&run.buffer("out"));
    for (block, &sum) in output.iter().enumerate().take(1024) {
        let first = block as i64 * 256;
        assert_eq!(
            i64::from(sum),
            (first..first + 256).sum::<i64>(),
            "block {block}"
        );
    }
}

#[test]
fn fma_loop_matches_the_host() {
    let run = run_program("bench/fmaLoop", None, 2);
    let out = f32s(&run.buffer("out"));
    for (gid, &value) in out.iter().enumerate() {
        let mut a = gid as f32 * 0.001f32;
        for _ in 0..100 {
            a = a.mul_add(1.0001f32, 0.5f32);
        }
        assert_eq!(value.to_bits(), a.to_bits(), "thread {gid}");
    }
}

#[test]
fn constant_memory_filter_matches_the_host() {
    let run = run_program("examples/convolve5", None, 2);
    let input = f32s(&run.initial("in"));
    let output = f32s(&run.buffer("out"));
    let coefficients = [0.0625f32, 0.25, 0.375, 0.25, 0.0625];
    for (i, &value) in output.iter().enumerate() {
        let expected = if i < input.len() - 4 {
            (0..5).fold(0.0f32, |sum, k| coefficients[k].mul_add(input[i + k], sum))
        } else {
            0.0
        };
        assert_eq!(value.to_bits(), expected.to_bits(), "out[{i}]");
    }
}

/// The line of the first line containing `needle` after `function`'s
/// definition in the CUDA source.
fn line_in_function(source: &str, function: &str, needle: &str) -> u32 {
    let start = source
        .lines()
        .position(|line| line.contains(&format!("void {function}(")))
        .unwrap_or_else(|| panic!("no function {function}"));
    let offset = source
        .lines()
        .skip(start)
        .position(|line| line.contains(needle))
        .unwrap_or_else(|| panic!("no `{needle}` in {function}"));
    (start + offset + 1) as u32
}

/// The same kernels compiled from CUDA by NVRTC (programs/cuda/seed-kernels.ptx,
/// committed): the counts still match the H200, and every bank conflict is
/// reported at the CUDA line of the shared-memory access that causes it.
#[test]
fn cuda_seed_kernels_conflict_where_the_hardware_does() {
    let source =
        std::fs::read_to_string(repo_root().join("programs/cuda/seed-kernels.cu")).unwrap();
    // The statements whose shared-memory access conflicts, per kernel.
    let conflicting: [(&str, &[&str]); 12] = [
        ("seed1_noconflict", &[]),
        (
            "seed1_st_conflict",
            &["shm[(i % 2) * SIZE_A / 2 + i / 2] = a[i];"],
        ),
        (
            "seed1_ld_conflict",
            &["shm[warp_in_block * 32 + lane_id / 8 + (lane_id % 2) * 32]"],
        ),
        ("setRowReadRow", &[]),
        (
            "setColReadCol",
            &[
                "tile[threadIdx.x][threadIdx.y] = idx;",
                "out[idx] = tile[threadIdx.x][threadIdx.y];",
            ],
        ),
        (
            "setRowReadCol",
            &["out[idx] = tile[threadIdx.x][threadIdx.y];"],
        ),
        ("setRowReadColDyn", &["out[row_idx] = dtile[col_idx];"]),
        ("setRowReadColPad", &[]),
        (
            "transposeSmemF",
            &["B[nx2 * N + ny2] = S[threadIdx.x][threadIdx.y];"],
        ),
        ("transposePadF", &[]),
        (
            "transposeSmemD",
            &["B[nx2 * N + ny2] = S[threadIdx.x][threadIdx.y];"],
        ),
        ("transposePadD", &[]),
    ];
    for (row, (kernel, statements)) in MEASURED_ON_H200.iter().zip(conflicting) {
        assert!(row.program.ends_with(kernel));
        let run = run_program(&format!("cuda/{kernel}"), None, 2);
        assert!(run.failure.is_none(), "{kernel}: {:?}", run.failure);
        let (loads, stores) = shared_counts(&run.report.totals);
        assert_eq!((loads, stores), (row.loads, row.stores), "{kernel}");
        let mut lines: Vec<u32> = run
            .report
            .instructions
            .iter()
            .filter(|instruction| instruction.counts.bank_conflicts > 0)
            .map(|instruction| {
                assert_eq!(instruction.file, "programs/cuda/seed-kernels.cu");
                instruction.line
            })
            .collect();
        lines.dedup();
        let mut expected: Vec<u32> = statements
            .iter()
            .map(|statement| line_in_function(&source, kernel, statement))
            .collect();
        expected.sort_unstable();
        assert_eq!(lines, expected, "{kernel}");
    }
}

#[test]
fn cuda_matmul_matches_the_host() {
    assert_matmul_matches_the_host("cuda/matmulTiled16");
}

/// A launch that names the `.cu` file itself compiles it with NVRTC at run
/// time. Where NVRTC is installed (CI installs it), the counts are the H200's
/// at the CUDA line; where it is not, the error says how to install it.
#[test]
fn cuda_sources_compile_through_nvrtc_or_say_how_to_get_it() {
    let dir = std::env::temp_dir().join(format!("warpsim-cuda-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let launch = std::fs::read_to_string(repo_root().join("programs/cuda/transposeSmemF.toml"))
        .unwrap()
        .replace(
            "source = \"seed-kernels.ptx\"",
            &format!(
                "source = \"{}\"",
                repo_root().join("programs/cuda/seed-kernels.cu").display()
            ),
        );
    let launch_path = dir.join("transposeSmemF.toml");
    std::fs::write(&launch_path, launch).unwrap();
    let config = warpsim_driver::load_config(None).unwrap();
    match warpsim_driver::prepare(&launch_path, config) {
        Ok(prepared) => {
            let result = prepared.execute(1).unwrap();
            let conflicts: Vec<(u32, u64)> = result
                .report
                .instructions
                .iter()
                .filter(|instruction| instruction.counts.bank_conflicts > 0)
                .map(|instruction| (instruction.line, instruction.counts.bank_conflicts))
                .collect();
            let source =
                std::fs::read_to_string(repo_root().join("programs/cuda/seed-kernels.cu")).unwrap();
            let line = line_in_function(
                &source,
                "transposeSmemF",
                "B[nx2 * N + ny2] = S[threadIdx.x][threadIdx.y];",
            );
            assert_eq!(conflicts, vec![(line, 3968)]);
        }
        Err(error) => {
            let message = error.to_string();
            assert!(
                message.contains("pip install nvidia-cuda-nvrtc-cu12"),
                "{message}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
