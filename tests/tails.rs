//! A block's start and end against the H200
//! (`programs/timing/hardware/h200-tails.txt`): for every launch of
//! `programs/timing/tails_*.toml`, warpsim's busiest SM's cycles with
//! `programs/h200.toml` land within the launch's tolerance of the H200's
//! `sm__cycles_active.max`, and where the model is known to miss, the miss
//! keeps its documented direction (docs/timing.md, "Kernel start and end").

mod support;

use std::collections::BTreeMap;

use support::{assert_hardware_comparison, repo_root, run_timing_launch_on_h200};

/// One run's row of h200-tails.txt for a launch: its launches'
/// `sm__cycles_active.max`, and the kernel's clock64() cycles under ncu
/// (none where it records none).
struct Row {
    launch: String,
    active: Vec<u64>,
    clock: Vec<u64>,
}

/// The rows of h200-tails.txt for the launches of `programs/timing` (the
/// validation kernels' rows beside them are for reading).
fn rows() -> Vec<Row> {
    let path = repo_root().join("programs/timing/hardware/h200-tails.txt");
    let numbers = |field: &str, key: &str| -> Vec<u64> {
        let values = field
            .strip_prefix(key)
            .unwrap_or_else(|| panic!("{field}: not {key}"));
        if values == "-" {
            return Vec::new();
        }
        values
            .split('/')
            .map(|value| value.parse().expect("a cycle count"))
            .collect()
    };
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|line| line.starts_with("tails_"))
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(fields.len(), 5, "{line}");
            Row {
                launch: fields[0].to_string(),
                active: numbers(fields[2], "active="),
                clock: numbers(fields[4], "clock="),
            }
        })
        .collect()
}

/// The H200's figure for each launch: the median of the runs' smallest
/// `sm__cycles_active.max` (a small kernel's cycles come in two modes a few
/// hundred cycles apart, and a run's baseline moves by up to 180 cycles).
fn measurements() -> BTreeMap<String, f64> {
    let mut minimums: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for row in rows() {
        let smallest = *row.active.iter().min().expect("a launch");
        minimums.entry(row.launch).or_default().push(smallest);
    }
    minimums
        .into_iter()
        .map(|(name, mut values)| {
            values.sort_unstable();
            (name, values[values.len() / 2] as f64)
        })
        .collect()
}

/// What the model must do for a launch.
enum Expectation {
    /// Land within this many percent of the hardware.
    Within(f64),
    /// Take at least 25% fewer cycles, for a reason docs/timing.md names.
    Faster(Shortfall),
}

/// Why the model is known to be short.
enum Shortfall {
    /// A store after a barrier or fence that followed other memory
    /// instructions: 150-300 cycles the H200 spends that no part of these
    /// kernels explains, once the parameters are read where ptxas reads
    /// them (which explained the rest: docs/timing.md, "Parameters where
    /// ptxas reads them").
    StoreAfterOrderedMemory,
}

impl Shortfall {
    fn describe(&self) -> &'static str {
        match self {
            Shortfall::StoreAfterOrderedMemory => "short: a store after ordered memory",
        }
    }
}

fn expectation(launch: &str) -> Expectation {
    match launch {
        "tails_shared_barrier_b32"
        | "tails_store_block_fence_b32"
        | "tails_store_spin0_barrier_b1024" => {
            Expectation::Faster(Shortfall::StoreAfterOrderedMemory)
        }
        // A thousand threads' launch and exit, where the H200 spends 40-110
        // cycles more than the model; a load from DRAM; two stores in a
        // row; the stores after a barrier or with a barrier after a spin,
        // short by what a store after ordered memory costs less what the
        // parameters' misses now explain (the spin count's miss, which
        // ptxas waits for before the first clock read, overlaps the
        // store's here); 256 rounds of funnel shifts, which spend 10-20%
        // more than their SHFs take at the ALU's rate; and a barrier then a
        // store, long by the miss of the block's shape, which ptxas reads
        // there with an `LDC` of the line the kernel's first instruction
        // already fetched.
        "tails_looped256_b32"
        | "tails_empty_b1024"
        | "tails_store_b1024"
        | "tails_store_barrier_b1024"
        | "tails_load_b1024"
        | "tails_store_twice_b32"
        | "tails_shared_barrier_b1024"
        | "tails_store_spin0_barrier_b32"
        | "tails_store_spin100_barrier_b32"
        | "tails_store_spin200_barrier_b32"
        | "tails_store_spin200_barrier_b1024"
        | "tails_store_spin400_barrier_b32"
        | "tails_store_spin400_barrier_b1024"
        | "tails_barrier_store_b32" => Expectation::Within(25.0),
        _ => Expectation::Within(16.0),
    }
}

#[test]
fn block_starts_and_ends_land_near_the_h200() {
    let rows = measurements();
    assert!(rows.len() >= 50, "only {} measurements", rows.len());
    let mut report = Vec::new();
    let mut misses = Vec::new();
    for (name, hardware) in rows {
        let output = run_timing_launch_on_h200(&name, &["--json".to_string(), "-".to_string()]);
        let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let simulated = json["busiest_sm_cycles"]
            .as_f64()
            .expect("busiest_sm_cycles");
        let error = (simulated - hardware) / hardware * 100.0;
        let expected = expectation(&name);
        let (met, why) = match &expected {
            Expectation::Within(tolerance) => (error.abs() <= *tolerance, ""),
            Expectation::Faster(shortfall) => (error < -25.0, shortfall.describe()),
        };
        let line = format!("{name:40} {hardware:>8.0} {simulated:>8.0} {error:>+7.1}% {why}");
        if !met {
            misses.push(line.clone());
        }
        report.push(line);
    }
    assert_hardware_comparison(&misses, &report);
}

/// The clock64() windows of the kernels that time one thing, each within
/// 16% of the first run that recorded it: a CTA fence right after a store
/// (`[0]`, 14 cycles on the H200), the constant chases' cold halves
/// (`[0]`, 16 loads 64 and 256 bytes apart), and, from the clock before a
/// store to after the barrier or fence that follows it (`[1]`), the store's
/// pointer read after that first clock read, a first-level miss of the
/// indexed constant cache, as ptxas reads it (113-117 and 147-151 cycles).
#[test]
fn fence_and_constant_windows_land_near_the_h200() {
    let scratch = std::env::temp_dir().join(format!("warpsim-tails-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let rows = rows();
    let mut misses = Vec::new();
    for (name, index) in [
        ("tails_store_block_fence_b32", 0),
        ("tails_constant_chase64_b32", 0),
        ("tails_constant_chase256_b32", 0),
        ("tails_store_block_fence_b32", 1),
        ("tails_store_spin0_barrier_b32", 1),
    ] {
        let hardware = rows
            .iter()
            .find(|row| row.launch == name && !row.clock.is_empty())
            .unwrap_or_else(|| panic!("{name}: no clock row"))
            .clock[index] as f64;
        let cycles = scratch.join(format!("{name}.bin"));
        run_timing_launch_on_h200(
            name,
            &["--dump".to_string(), format!("cycles={}", cycles.display())],
        );
        let bytes = std::fs::read(&cycles).unwrap();
        let start = index * 8;
        let simulated = u64::from_le_bytes(bytes[start..start + 8].try_into().unwrap()) as f64;
        let error = (simulated - hardware) / hardware * 100.0;
        if error.abs() > 16.0 {
            misses.push(format!(
                "{name}[{index}]: {hardware} against {simulated} ({error:+.1}%)"
            ));
        }
    }
    std::fs::remove_dir_all(&scratch).ok();
    assert!(misses.is_empty(), "{misses:#?}");
}
