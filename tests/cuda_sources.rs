//! CUDA sources as people write them (`programs/cpp/`): kernels with C++
//! linkage and templates found by their CUDA names, CUDA's own headers and
//! the user's, `<cstdio>` and `<cassert>`; and the commands that take a
//! `.cu` file directly: `run FILE.cu --kernel ... --arg ...`, `check
//! FILE.cu` and `init FILE.cu`. They need NVRTC and CUDA's headers, which
//! `.ci/run` installs (`pip install nvidia-cuda-nvrtc-cu12
//! nvidia-cuda-runtime-cu12 nvidia-cuda-cccl-cu12`).

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::{f32s, i32s, repo_root, run_program};

fn warpsim(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warpsim"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("warpsim runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("cuda_sources")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

#[test]
fn template_kernels_run_by_their_instantiation() {
    let run = run_program("cpp/scaleShift_float", None, 2);
    assert!(run.failure.is_none(), "{:?}", run.failure);
    assert_eq!(run.report.kernel, "scaleShift<float>");
    // data[i] = twice(i) + shift for i < n = 60; the rest untouched.
    let expected: Vec<f32> = (0..64)
        .map(|i| {
            if i < 60 {
                2.0 * i as f32 - 3.0
            } else {
                i as f32
            }
        })
        .collect();
    assert_eq!(f32s(&run.buffer("data")), expected);
    let run = run_program("cpp/scaleShift_int", None, 2);
    let expected: Vec<i32> = (0..64).map(|i| 2 * i - 100).collect();
    assert_eq!(i32s(&run.buffer("data")), expected);
}

#[test]
fn cpp_kernels_with_cuda_headers_run_by_their_names() {
    let run = run_program("cpp/tileSumHalf", None, 2);
    assert!(run.failure.is_none(), "{:?}", run.failure);
    assert_eq!(run.report.kernel, "tileSumHalf");
    // Each 32-thread tile sums the halves 32t .. 32t + 31 (exact in f32).
    let expected: Vec<f32> = (0..4)
        .map(|tile| (32 * tile..32 * tile + 32).sum::<u32>() as f32)
        .collect();
    assert_eq!(f32s(&run.buffer("out")), expected);
    // Code from cooperative_groups.h is reported at the user's lines.
    for instruction in &run.report.instructions {
        assert_eq!(
            instruction.file, "programs/cpp/cpp-kernels.cu",
            "{instruction:?}"
        );
    }
    assert!(run.report.instructions.iter().any(|instruction| instruction
        .inlined_from
        .iter()
        .any(|place| place.file.ends_with("cooperative_groups.h"))));
}

#[test]
fn a_source_runs_from_the_command_line() {
    let root = repo_root();
    let dump = scratch("command_line").join("data.bin");
    let dump_arg = format!("data={}", dump.display());
    // Named scalars; the pointer left out gets a buffer of one element per
    // thread (zeros: the kernel writes it).
    let output = warpsim(
        &root,
        &[
            "run",
            "programs/cpp/cpp-kernels.cu",
            "--kernel",
            "scaleShift<int>",
            "--grid",
            "2",
            "--block",
            "4",
            "--arg",
            "shift=-7",
            "--arg",
            "n=8",
            "--dump",
            &dump_arg,
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(text(&output.stdout).starts_with("scaleShift<int>  grid (2,1,1)  block (4,1,1)"));
    assert_eq!(i32s(&std::fs::read(&dump).unwrap()), vec![-7; 8]);
    // Positional, with a buffer given in full.
    let output = warpsim(
        &root,
        &[
            "run",
            "programs/cpp/cpp-kernels.cu",
            "--kernel",
            "scaleShift<float>",
            "--block",
            "4",
            "--arg",
            "f32[4]=iota",
            "--arg",
            "1",
            "--arg",
            "3",
            "--dump",
            &dump_arg,
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(f32s(&std::fs::read(&dump).unwrap()), [1.0, 3.0, 5.0, 3.0]);
    // A scalar left out, and a kernel the source does not have.
    let output = warpsim(
        &root,
        &[
            "run",
            "programs/cpp/cpp-kernels.cu",
            "--kernel",
            "scaleShift<int>",
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        text(&output.stderr),
        "error: <command line>: kernel `scaleShift<int>` takes 3 parameters; give an --arg for parameter 2 `shift` (int)\n"
    );
    let output = warpsim(
        &root,
        &["run", "programs/cpp/cpp-kernels.cu", "--kernel", "nope"],
    );
    assert_eq!(
        text(&output.stderr),
        "error: <command line>: no kernel `nope` in programs/cpp/cpp-kernels.cu; it has: scaleShift<float>, tileSumHalf, fx::axpy\n"
    );
    // A launch file says its launch itself.
    let output = warpsim(
        &root,
        &["run", "programs/cpp/tileSumHalf.toml", "--block", "64"],
    );
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn check_takes_a_cuda_source() {
    let output = warpsim(
        &repo_root(),
        &["check", "programs/barriers/skip-to-exit.cu"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains("[non-uniform-barrier]")
            && stdout.contains("programs/barriers/skip-to-exit.cu:15"),
        "{stdout}"
    );
    assert!(
        stdout.contains("check: kernel `evenThenExit`: 0 errors, 1 warning"),
        "{stdout}"
    );
    // C++ kernels by their CUDA names, not their mangled ones.
    let output = warpsim(&repo_root(), &["check", "programs/cpp/cpp-kernels.cu"]);
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains("check: kernel `scaleShift<float>`"),
        "{stdout}"
    );
    assert!(stdout.contains("check: kernel `tileSumHalf`"), "{stdout}");
    assert!(stdout.contains("check: kernel `fx::axpy`"), "{stdout}");
}

#[test]
fn kernels_in_namespaces_run_by_qualified_or_plain_names() {
    let root = repo_root();
    let dump = scratch("namespaces").join("y.bin");
    let dump_arg = format!("y={}", dump.display());
    for name in ["fx::axpy", "axpy"] {
        // Numbers go to the scalar parameters and buffers to the pointers,
        // each in order: `2` is `a`, the buffer is `x`, and `y` is left
        // out (zeros, one element per thread).
        let output = warpsim(
            &root,
            &[
                "run",
                "programs/cpp/cpp-kernels.cu",
                "--kernel",
                name,
                "--block",
                "8",
                "--arg",
                "f32[8]=iota",
                "--arg",
                "2",
                "--dump",
                &dump_arg,
            ],
        );
        assert_eq!(
            output.status.code(),
            Some(0),
            "{name}: {}",
            text(&output.stderr)
        );
        assert!(
            text(&output.stdout).starts_with("fx::axpy  grid (1,1,1)  block (8,1,1)"),
            "{name}: {}",
            text(&output.stdout)
        );
        let expected: Vec<f32> = (0..8).map(|i| 2.0 * i as f32).collect();
        assert_eq!(f32s(&std::fs::read(&dump).unwrap()), expected, "{name}");
    }
    let output = warpsim(
        &root,
        &["run", "programs/cpp/cpp-kernels.cu", "--kernel", "gx::axpy"],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("no kernel `gx::axpy`"));
}

#[test]
fn init_writes_launch_files_that_run() {
    let dir = scratch("init");
    let source = repo_root().join("programs/cpp/cpp-kernels.cu");
    let output = warpsim(
        &dir,
        &["init", &source.display().to_string(), "--out-dir", "."],
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(
        text(&output.stdout),
        "wrote scaleShift.toml (kernel `scaleShift`)\nwrote tileSumHalf.toml (kernel `tileSumHalf`)\nwrote fx_axpy.toml (kernel `fx::axpy`)\n"
    );
    let template = std::fs::read_to_string(dir.join("tileSumHalf.toml")).unwrap();
    assert!(
        template.contains("\"in\",    # const __half* in: input"),
        "{template}"
    );
    assert!(template.contains("type = \"f16\""), "{template}");
    assert!(template.contains("kernel = \"tileSumHalf\""), "{template}");
    let template = std::fs::read_to_string(dir.join("scaleShift.toml")).unwrap();
    assert!(
        template.contains("kernel = \"scaleShift<float>\""),
        "{template}"
    );
    let template = std::fs::read_to_string(dir.join("fx_axpy.toml")).unwrap();
    assert!(template.contains("kernel = \"fx::axpy\""), "{template}");
    for launch in ["scaleShift.toml", "tileSumHalf.toml", "fx_axpy.toml"] {
        let output = warpsim(&dir, &["run", launch]);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{launch}: {}",
            text(&output.stderr)
        );
    }
    // Again: the files exist.
    let output = warpsim(
        &dir,
        &["init", &source.display().to_string(), "--out-dir", "."],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("exists; --force replaces it"));
}

#[test]
fn a_kepler_machine_file_still_compiles_cuda() {
    let output = warpsim(
        &repo_root(),
        &[
            "run",
            "programs/cpp/scaleShift_int.toml",
            "--config",
            "programs/kepler-8byte.toml",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("on Kepler (sm_35), 8-byte banks"));
}
