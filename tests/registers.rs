//! Registers per thread: what nvJitLink reports for committed PTX kernels,
//! the launch file's `registers` winning over it, and the default for
//! `.kir` programs, on the prepared launch and in the report. nvJitLink is
//! needed, as NVRTC is for the CUDA tests: `.ci/run` installs it (`pip
//! install nvidia-nvjitlink-cu12`), and these tests fail where it is
//! missing. The bad values of `registers` are cases of `tests/fail/`.

mod support;

use std::path::{Path, PathBuf};

use support::repo_root;
use warpsim_driver::nvjitlink::{self, KernelResources};
use warpsim_driver::{RegisterSource, Registers};

/// The counts below are those of nvJitLink 12.9 (pip package
/// `nvidia-nvjitlink-cu12` 12.9.86), compiling for `sm_90`. ptxas is
/// deterministic for one version; another version may allocate registers
/// differently, and then these numbers change with it.
const VERSION: (u32, u32) = (12, 9);

/// Every kernel of `programs/cuda/seed-kernels.ptx` and its registers.
const SEED_KERNELS: [(&str, u32); 13] = [
    ("matmulTiled16", 31),
    ("transposePadD", 16),
    ("transposeSmemD", 16),
    ("transposePadF", 14),
    ("transposeSmemF", 14),
    ("setRowReadColPad", 10),
    ("setRowReadColDyn", 10),
    ("setRowReadCol", 10),
    ("setColReadCol", 10),
    ("setRowReadRow", 10),
    ("seed1_ld_conflict", 10),
    ("seed1_st_conflict", 14),
    ("seed1_noconflict", 10),
];

/// A PTX file of the repository's, and the version check that makes a
/// count that differs on another version say so.
fn ptx(path: &str) -> String {
    let version = nvjitlink::version().unwrap_or_else(|error| {
        panic!("these tests need nvJitLink (`pip install nvidia-nvjitlink-cu12`): {error}")
    });
    if version != VERSION {
        eprintln!(
            "note: nvJitLink {}.{} is installed; the counts were recorded with {}.{}",
            version.0, version.1, VERSION.0, VERSION.1
        );
    }
    std::fs::read_to_string(repo_root().join(path)).expect("the PTX file exists")
}

fn resources(ptx_text: &str, kernel: &str) -> KernelResources {
    nvjitlink::kernel_resources(ptx_text, kernel, "sm_90")
        .unwrap_or_else(|error| panic!("{kernel}: {error}"))
}

#[test]
fn nvjitlink_counts_the_registers_of_the_seed_kernels() {
    let text = ptx("programs/cuda/seed-kernels.ptx");
    let counts: Vec<(&str, u32)> = SEED_KERNELS
        .iter()
        .map(|&(kernel, _)| (kernel, resources(&text, kernel).registers))
        .collect();
    assert_eq!(counts, SEED_KERNELS);
    // The transposes' tiles as ptxas and the linker see them: the
    // linker adds the 1 KiB the runtime reserves per block on sm_90.
    let transpose = resources(&text, "transposeSmemF");
    assert_eq!(transpose.shared_bytes, 4096);
    assert_eq!(transpose.linked_shared_bytes, Some(5120));
    assert_eq!(transpose.barriers, 1);
    assert_eq!(
        (transpose.spill_store_bytes, transpose.spill_load_bytes),
        (0, 0)
    );
    let padded = resources(&text, "transposePadD");
    assert_eq!(padded.shared_bytes, 33 * 32 * 8);
}

#[test]
fn nvjitlink_counts_the_registers_of_corpus_kernels() {
    for (path, kernel, registers) in [
        ("programs/corpus/convolution.ptx", "convolution2d_tiled", 32),
        (
            "programs/corpus/bitonic-sort.ptx",
            "bitonic_sort_shared",
            30,
        ),
        (
            "programs/corpus/histogram.ptx",
            "histogram256_shared_atomics",
            10,
        ),
        (
            "programs/corpus/matmul-register-tiled.ptx",
            "matmul_register_tiled",
            32,
        ),
        ("programs/corpus/layernorm.ptx", "layernorm_rows", 24),
        ("programs/corpus/scans.ptx", "scan_blelloch", 22),
        ("programs/corpus/scans.ptx", "scan_warp_shuffle", 17),
    ] {
        assert_eq!(
            resources(&ptx(path), kernel).registers,
            registers,
            "{path}: {kernel}"
        );
    }
}

/// A kernel that calls functions ptxas did not inline: the linker counts
/// the registers, stack and shared memory of the whole call graph, more
/// than ptxas's 24 registers for the kernel alone.
#[test]
fn calls_that_are_not_inlined_count_for_the_kernel() {
    let text = ptx("programs/corpus/noinline-shared.ptx");
    let calls = resources(&text, "noinline_shared_calls");
    assert_eq!(calls.registers, 35);
    assert_eq!(calls.stack_frame_bytes, 8);
    assert_eq!(calls.shared_bytes, 0);
    assert_eq!(calls.linked_shared_bytes, Some(2048));
}

#[test]
fn a_kernel_the_ptx_lacks_and_ptx_nvjitlink_rejects_are_errors() {
    let text = ptx("programs/cuda/seed-kernels.ptx");
    let missing = nvjitlink::kernel_resources(&text, "noSuchKernel", "sm_90").unwrap_err();
    assert_eq!(
        missing.to_string(),
        "nvJitLink's log for sm_90 does not report kernel `noSuchKernel`"
    );
    let rejected =
        nvjitlink::kernel_resources(".version 8.0\n.target sm_90\nnot ptx", "k", "sm_90")
            .unwrap_err();
    match rejected {
        nvjitlink::LinkError::Failed { architecture, log } => {
            assert_eq!(architecture, "sm_90");
            assert!(
                log.starts_with("status 4 (NVJITLINK_ERROR_PTX_COMPILE)"),
                "{log}"
            );
        }
        other => panic!("{other:?}"),
    }
}

/// A copy of `programs/<launch>` in a scratch directory with `line` added
/// at its top and its source made absolute.
fn launch_with(launch: &str, line: &str) -> PathBuf {
    let original = repo_root().join("programs").join(launch);
    let text = std::fs::read_to_string(&original).expect("the launch file exists");
    let directory = original.parent().unwrap().display().to_string();
    let text: String = text
        .lines()
        .map(|text_line| match text_line.strip_prefix("source = \"") {
            Some(rest) => format!("source = \"{directory}/{rest}\n"),
            None => format!("{text_line}\n"),
        })
        .collect();
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("registers");
    std::fs::create_dir_all(&scratch).expect("a scratch directory");
    let path = scratch.join(launch.replace('/', "_"));
    std::fs::write(&path, format!("{line}\n{text}")).expect("the launch is written");
    path
}

fn prepare(launch: &Path) -> warpsim_driver::PreparedLaunch {
    let config = warpsim_driver::load_config(None).unwrap();
    warpsim_driver::prepare(launch, config).unwrap_or_else(|error| panic!("{error}"))
}

#[test]
fn ptx_and_cuda_launches_take_nvjitlinks_count() {
    ptx("programs/cuda/seed-kernels.ptx");
    let prepared = prepare(&repo_root().join("programs/cuda/transposeSmemF.toml"));
    assert_eq!(
        prepared.registers_per_thread,
        Registers {
            count: 14,
            source: RegisterSource::JitLink,
            note: None
        }
    );
    assert_eq!(
        prepared
            .kernel_resources
            .map(|resources| resources.shared_bytes),
        Some(4096)
    );
    let report = prepared.execute(1).unwrap().report;
    assert!(report
        .to_table()
        .lines()
        .next()
        .unwrap()
        .ends_with("on Hopper (sm_90)  regs 14 (nvJitLink)"));
    let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    assert_eq!(json["registers_per_thread"], 14);
    assert_eq!(json["registers_source"], "nvJitLink");
    assert!(json.get("registers_note").is_none());
    // A C++ template kernel, found in NVRTC's PTX by its mangled name.
    let prepared = prepare(&repo_root().join("programs/cpp/scaleShift_float.toml"));
    assert_eq!(
        prepared.registers_per_thread.source,
        RegisterSource::JitLink
    );
    assert_eq!(prepared.registers_per_thread.count, 8);
}

#[test]
fn registers_from_the_launch_file_win() {
    for launch in ["cuda/transposeSmemF.toml", "seed/setRowReadCol.toml"] {
        let prepared = prepare(&launch_with(launch, "registers = 40"));
        assert_eq!(
            prepared.registers_per_thread,
            Registers {
                count: 40,
                source: RegisterSource::LaunchFile,
                note: None
            },
            "{launch}"
        );
        // nvJitLink does not run when the launch file says.
        assert_eq!(prepared.kernel_resources, None, "{launch}");
        let report = prepared.execute(1).unwrap().report;
        assert!(report.header_line().ends_with("  regs 40 (launch file)\n"));
        let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
        assert_eq!(json["registers_per_thread"], 40);
        assert_eq!(json["registers_source"], "launch file");
    }
}

#[test]
fn kir_programs_get_the_default_with_a_note_in_the_report() {
    let prepared = prepare(&repo_root().join("programs/seed/setRowReadCol.toml"));
    assert_eq!(prepared.registers_per_thread.count, 32);
    assert_eq!(
        prepared.registers_per_thread.source,
        RegisterSource::Default
    );
    let report = prepared.execute(1).unwrap().report;
    let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    assert_eq!(json["registers_per_thread"], 32);
    assert_eq!(json["registers_source"], "default");
    assert_eq!(
        json["registers_note"],
        "a .kir program has no PTX for nvJitLink to compile: 32 registers per thread assumed \
         (`registers = N` in the launch file sets them)"
    );
}
