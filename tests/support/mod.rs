//! Helpers shared by the repository-level tests: locating the repository,
//! running a program of `programs/` through the driver, and reading buffers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use warpsim_driver::Report;

/// What `warpsim check` prints for a launch (paths relative to the
/// repository root), the findings, and the run.
pub fn check_launch(
    launch: &Path,
    config: warpsim_machine::MachineConfig,
    host_threads: usize,
) -> (
    String,
    warpsim_driver::check::CheckOutcome,
    warpsim_driver::RunResult,
) {
    let prepared = warpsim_driver::prepare(launch, config)
        .unwrap_or_else(|error| panic!("{}: {error}", launch.display()));
    let (result, outcome) = prepared
        .check(host_threads)
        .unwrap_or_else(|error| panic!("{}: {error}", launch.display()));
    let root = format!("{}/", repo_root().display());
    (outcome.text.replace(&root, ""), outcome, result)
}

/// The repository's root directory.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root exists")
}

/// Runs the `warpsim` binary on the launch `programs/timing/NAME.toml` with
/// the H200's machine file (`programs/h200.toml`) and `extra` arguments,
/// from the repository's root, and returns its output once it succeeded.
pub fn run_timing_launch_on_h200(name: &str, extra: &[String]) -> std::process::Output {
    let launch = repo_root().join(format!("programs/timing/{name}.toml"));
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_warpsim"))
        .current_dir(repo_root())
        .arg("run")
        .arg(&launch)
        .args(["--config", "programs/h200.toml"])
        .args(extra)
        .output()
        .unwrap();
    assert!(output.status.success(), "{name}: {output:?}");
    output
}

/// Fails, listing `misses` and then every line of `report` (hardware,
/// warpsim, error), unless no launch compared against hardware missed.
pub fn assert_hardware_comparison(misses: &[String], report: &[String]) {
    assert!(
        misses.is_empty(),
        "not as expected:\n{}\n\nall (hardware, warpsim, error):\n{}",
        misses.join("\n"),
        report.join("\n")
    );
}

/// What one run of a program produced.
pub struct ProgramRun {
    pub report: Report,
    pub failure: Option<String>,
    pub initial: Vec<(String, Vec<u8>)>,
    pub buffers: Vec<(String, Vec<u8>)>,
}

impl ProgramRun {
    pub fn buffer(&self, name: &str) -> Vec<u8> {
        find(&self.buffers, name)
    }

    pub fn initial(&self, name: &str) -> Vec<u8> {
        find(&self.initial, name)
    }
}

fn find(buffers: &[(String, Vec<u8>)], name: &str) -> Vec<u8> {
    buffers
        .iter()
        .find(|(buffer, _)| buffer == name)
        .map(|(_, bytes)| bytes.clone())
        .unwrap_or_else(|| panic!("no buffer `{name}`"))
}

/// Runs `programs/<name>.toml` with an optional machine configuration.
pub fn run_program(name: &str, config: Option<&Path>, host_threads: usize) -> ProgramRun {
    let config = warpsim_driver::load_config(config).expect("the configuration loads");
    run_program_on(name, config, host_threads)
}

/// Runs `programs/<name>.toml` on the machine `config`.
pub fn run_program_on(
    name: &str,
    config: warpsim_driver::MachineConfig,
    host_threads: usize,
) -> ProgramRun {
    let launch = repo_root().join("programs").join(format!("{name}.toml"));
    let prepared =
        warpsim_driver::prepare(&launch, config).unwrap_or_else(|error| panic!("{name}: {error}"));
    let result = prepared
        .execute(host_threads)
        .unwrap_or_else(|error| panic!("{name}: {error}"));
    let initial = prepared
        .memory()
        .unwrap_or_else(|error| panic!("{name}: {error}"));
    ProgramRun {
        initial: (0..initial.buffer_count())
            .map(|index| {
                (
                    initial.buffer_name(index).to_string(),
                    initial.contents(index),
                )
            })
            .collect(),
        buffers: result.buffers(),
        report: relative_to_root(result.report),
        failure: result.failure,
    }
}

/// The report with its paths relative to the repository's root, as the
/// tests (and a user running from the root) read them; the tests run the
/// driver with absolute paths.
pub fn relative_to_root(mut report: Report) -> Report {
    let root = format!("{}/", repo_root().display());
    report.source = report.source.replace(&root, "");
    // The status line names the fault's file, which for PTX from NVRTC is
    // the absolute path of the CUDA source.
    report.error = report.error.map(|error| error.replace(&root, ""));
    for instruction in &mut report.instructions {
        instruction.file = instruction.file.replace(&root, "");
        for place in &mut instruction.inlined_from {
            place.file = place.file.replace(&root, "");
        }
    }
    for line in &mut report.lines {
        line.file = line.file.replace(&root, "");
        for place in &mut line.inlined_from {
            place.file = place.file.replace(&root, "");
        }
    }
    report
}

pub fn u32s(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

pub fn i32s(bytes: &[u8]) -> Vec<i32> {
    bytes
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

pub fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

pub fn f64s(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Rewrites expected-output files when `WARPSIM_BLESS=1`.
pub fn blessing() -> bool {
    std::env::var("WARPSIM_BLESS").is_ok_and(|value| value == "1")
}

/// Compares `actual` with the file at `expected_path`, or rewrites the file
/// when blessing. Returns a description of the difference, if any.
pub fn check_expected(expected_path: &Path, actual: &str) -> Option<String> {
    if blessing() {
        std::fs::write(expected_path, actual).expect("the expected file can be written");
        return None;
    }
    let expected = std::fs::read_to_string(expected_path).unwrap_or_default();
    if expected == actual {
        return None;
    }
    let first_difference = expected
        .lines()
        .zip(actual.lines())
        .position(|(a, b)| a != b)
        .unwrap_or(expected.lines().count().min(actual.lines().count()));
    Some(format!(
        "{} differs from what warpsim printed (first at line {}); run with WARPSIM_BLESS=1 to accept.\n--- expected\n{}\n--- actual\n{}",
        expected_path.display(),
        first_difference + 1,
        expected.lines().nth(first_difference).unwrap_or("<end of file>"),
        actual.lines().nth(first_difference).unwrap_or("<end of output>"),
    ))
}

/// Every launch file in the subdirectories of `programs/`, sorted.
pub fn launch_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let programs = repo_root().join("programs");
    for entry in std::fs::read_dir(&programs).expect("programs/ exists") {
        let dir = entry.expect("a directory entry").path();
        if !dir.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&dir).expect("a program directory") {
            let path = file.expect("a directory entry").path();
            // Machine configurations (`*.sim.toml`) kept beside programs
            // are not launch files.
            let is_config = path.to_string_lossy().ends_with(".sim.toml");
            if path.extension().is_some_and(|e| e == "toml") && !is_config {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// FNV-1a, 64 bits: a stable digest of a buffer for expected reports.
pub fn digest(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
