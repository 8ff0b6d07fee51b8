//! What the CUDA runtime brings beyond arithmetic (`programs/runtime/`):
//! `printf`, `__device__` variables (written, read, initialised by the launch
//! file, dumped), structs passed by value, `warpSize` (PTX's `WARP_SZ`), and
//! generic pointers into `__constant__` memory (`cvta.const`). Faults of
//! `assert`, `__trap` and null pointers are in `tests/fail/`; what an H100
//! printed for them is in `programs/runtime/hardware/`.

mod support;

use support::{f32s, i32s, run_program};

#[test]
fn printf_prints_every_thread_in_block_warp_and_lane_order() {
    let run = run_program("runtime/printEveryThread", None, 2);
    assert!(run.failure.is_none(), "{:?}", run.failure);
    let output = &run.report.printf_output;
    let lines: Vec<&str> = output.lines().collect();
    // 2 blocks, 36 printing threads each (warp 1 prints for lanes 0-3).
    assert_eq!(lines.len(), 72);
    for (index, line) in lines.iter().enumerate() {
        let (block, thread) = (index / 36, index % 36);
        assert!(
            line.starts_with(&format!("block {block} thread {thread:2}: ")),
            "line {index}: {line}"
        );
    }
    // Line for line what an H100 printed, which came in another order
    // (warps finish in an order the hardware's timing decides).
    let hardware = std::fs::read_to_string(
        support::repo_root().join("programs/runtime/hardware/printEveryThread.stdout"),
    )
    .expect("the H100's output");
    let mut ours = lines.clone();
    let mut theirs: Vec<&str> = hardware
        .lines()
        .filter(|line| line.starts_with("block "))
        .collect();
    ours.sort_unstable();
    theirs.sort_unstable();
    assert_eq!(ours, theirs);
    // The formats, worked out by hand from the C library's rules:
    // %5.2f of 0.25, %x of 17, %s, %-3c, %+d, %e of 1000.0, %g of 1/3.
    assert_eq!(
        lines[1],
        "block 0 thread  1:  0.25 11 odd|b  |-1 1.000000e+03 0.333333"
    );
    assert_eq!(
        lines[36 + 35],
        "block 1 thread 35:  8.75 253 odd|j  |+33 3.500000e+04 11.6667"
    );
    assert_eq!(run.report.printf_dropped_bytes, 0);
}

#[test]
fn printf_output_past_the_buffer_is_dropped_with_a_count() {
    let config = support::repo_root().join("programs/runtime/printf-buffer-100.sim.toml");
    let run = run_program("runtime/printEveryThread", Some(&config), 1);
    // Lines are 63 bytes: one whole line fits 100 bytes; the rest of the
    // block's output goes, and block 1's (whole) output too.
    let kept = run.report.printf_output.len() as u64;
    assert_eq!(run.report.printf_output.lines().count(), 1);
    let all = run_program("runtime/printEveryThread", None, 1)
        .report
        .printf_output
        .len() as u64;
    assert_eq!(kept + run.report.printf_dropped_bytes, all);
}

/// `{ float scale = 0.5; int offset = 3; double bias = 0.25; const int* table }`
/// with table = 0, 1, 2, 3: thread t computes 0.5 t + 3 + 0.25 + table[t % 4].
fn expected_values() -> Vec<f32> {
    (0..64)
        .map(|t| 0.5 * t as f32 + 3.0 + 0.25 + (t % 4) as f32)
        .collect()
}

#[test]
fn structs_by_value_and_device_variables() {
    let run = run_program("runtime/structAndGlobals", None, 2);
    assert!(run.failure.is_none(), "{:?}", run.failure);
    let values = expected_values();
    assert_eq!(f32s(&run.buffer("d_CallValue")), values);
    // out = value + warpSize (32).
    let out: Vec<f32> = values.iter().map(|value| value + 32.0).collect();
    assert_eq!(f32s(&run.buffer("out")), out);
    // `__device__ int d_launches = 40;`, incremented once.
    assert_eq!(i32s(&run.initial("d_launches")), [40]);
    assert_eq!(i32s(&run.buffer("d_launches")), [41]);
}

#[test]
fn a_launch_file_initialises_a_device_variable() {
    let run = run_program("runtime/structAndGlobalsInitialised", None, 2);
    assert!(run.failure.is_none(), "{:?}", run.failure);
    assert_eq!(i32s(&run.buffer("d_launches")), [101]);
    assert_eq!(f32s(&run.buffer("d_CallValue")), expected_values());
}

#[test]
fn generic_pointers_reach_constant_memory() {
    let run = run_program("runtime/constantThroughGenericPointer", None, 2);
    assert!(run.failure.is_none(), "{:?}", run.failure);
    // `c_weights = {0.5, 1.5, 2.5, 3.5}`, doubled.
    assert_eq!(
        f32s(&run.buffer("out")),
        [1.0, 3.0, 5.0, 7.0, 1.0, 3.0, 5.0, 7.0]
    );
}
