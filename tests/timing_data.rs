//! The H100 ground truth of `programs/timing/hardware/` is well formed: the
//! device limits parse, every occupancy row's blocks per SM follows from
//! those limits by the documented residency rules (the same rules the timing
//! model must implement), the table reaches every kind of limit, and every
//! microbenchmark row names a launch file that exists, with figures that
//! agree with each other; and the timing model against them: its occupancy
//! calculator against every occupancy case, its cycles against every
//! microbenchmark.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use support::repo_root;

fn hardware_dir() -> PathBuf {
    repo_root().join("programs/timing/hardware")
}

/// The lines of a data file that are neither its leading `#` comments nor
/// empty.
fn data_lines(name: &str) -> Vec<String> {
    let path = hardware_dir().join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    assert!(
        text.starts_with("# "),
        "{name} starts with a comment line saying what it is"
    );
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(str::to_string)
        .collect()
}

/// The device's limits (`key = value`) and each occupancy kernel's attributes
/// (`kernel NAME: key = value, ...`), from h100-device.txt.
struct Device {
    limits: BTreeMap<String, String>,
    kernels: BTreeMap<String, BTreeMap<String, u64>>,
}

impl Device {
    fn load() -> Device {
        let mut limits = BTreeMap::new();
        let mut kernels = BTreeMap::new();
        for line in data_lines("h100-device.txt") {
            if let Some(rest) = line.strip_prefix("kernel ") {
                let (name, fields) = rest.split_once(": ").expect("kernel NAME: fields");
                let mut attributes = BTreeMap::new();
                for field in fields.split(", ") {
                    let (key, value) = field.split_once(" = ").expect("key = value");
                    attributes.insert(key.to_string(), value.parse::<u64>().expect("a number"));
                }
                kernels.insert(name.to_string(), attributes);
            } else {
                let (key, value) = line.split_once(" = ").expect("key = value");
                limits.insert(key.to_string(), value.to_string());
            }
        }
        Device { limits, kernels }
    }

    /// A numeric limit by its cudaDeviceProp name.
    fn get(&self, key: &str) -> u64 {
        self.limits
            .get(key)
            .unwrap_or_else(|| panic!("h100-device.txt has no {key}"))
            .parse()
            .unwrap_or_else(|error| panic!("{key}: {error}"))
    }
}

/// One row of h100-occupancy.csv.
#[derive(Debug, Clone, Copy)]
struct Occupancy {
    threads: u64,
    registers: u64,
    static_shared: u64,
    dynamic_shared: u64,
    blocks_per_sm: u64,
}

fn occupancy_rows() -> Vec<Occupancy> {
    let lines = data_lines("h100-occupancy.csv");
    assert_eq!(
        lines[0],
        "threads,registers,static_shared,dynamic_shared,blocks_per_sm"
    );
    lines[1..]
        .iter()
        .map(|line| {
            let fields: Vec<u64> = line
                .split(',')
                .map(|field| field.parse().unwrap_or_else(|_| panic!("{line}")))
                .collect();
            assert_eq!(fields.len(), 5, "{line}");
            Occupancy {
                threads: fields[0],
                registers: fields[1],
                static_shared: fields[2],
                dynamic_shared: fields[3],
                blocks_per_sm: fields[4],
            }
        })
        .collect()
}

/// Which resource bounds a launch's residency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Limit {
    Warps,
    Blocks,
    Registers,
    SharedMemory,
}

/// The residency rules of the CUDA occupancy calculator, with the limits
/// that h100-device.txt gives: blocks per SM and the limits that reach that
/// number. Warps are allocated whole; registers per warp in units of 256,
/// from each of the 4 sub-partitions' quarter of the register file, a
/// block's warps rounded up to a multiple of 4 for the per-block check;
/// shared memory in units of 128 bytes plus the runtime's reserved bytes per
/// block.
fn blocks_per_sm(device: &Device, row: &Occupancy) -> (u64, Vec<Limit>) {
    const SUB_PARTITIONS: u64 = 4;
    const REGISTER_UNIT: u64 = 256;
    const SHARED_UNIT: u64 = 128;
    let warp_size = device.get("warpSize");
    let warps = row.threads.div_ceil(warp_size);
    let mut limits = Vec::new();
    limits.push((
        device.get("maxThreadsPerMultiProcessor") / warp_size / warps,
        Limit::Warps,
    ));
    limits.push((device.get("maxBlocksPerMultiProcessor"), Limit::Blocks));
    let per_warp = (row.registers * warp_size).div_ceil(REGISTER_UNIT) * REGISTER_UNIT;
    let per_block = device.get("regsPerBlock");
    let registers = if per_warp * warps > per_block
        || per_warp * warps.div_ceil(SUB_PARTITIONS) * SUB_PARTITIONS > per_block
    {
        0
    } else {
        let per_sub_partition = device.get("regsPerMultiprocessor") / SUB_PARTITIONS;
        per_sub_partition / per_warp * SUB_PARTITIONS / warps
    };
    limits.push((registers, Limit::Registers));
    let shared = row.static_shared + row.dynamic_shared;
    let shared_blocks = if shared > device.get("sharedMemPerBlockOptin") {
        0
    } else {
        let allocated =
            shared.div_ceil(SHARED_UNIT) * SHARED_UNIT + device.get("reservedSharedMemPerBlock");
        device.get("sharedMemPerMultiprocessor") / allocated
    };
    limits.push((shared_blocks, Limit::SharedMemory));
    let blocks = limits.iter().map(|(blocks, _)| *blocks).min().unwrap();
    let binding = limits
        .iter()
        .filter(|(count, _)| *count == blocks)
        .map(|(_, limit)| *limit)
        .collect();
    (blocks, binding)
}

#[test]
fn the_device_file_has_the_limits_the_model_needs() {
    let device = Device::load();
    assert!(
        device.limits["name"].contains("H100"),
        "{:?}",
        device.limits
    );
    assert_eq!(device.limits["compute_capability"], "9.0");
    for key in [
        "multiProcessorCount",
        "sharedMemPerMultiprocessor",
        "sharedMemPerBlockOptin",
        "reservedSharedMemPerBlock",
        "regsPerMultiprocessor",
        "regsPerBlock",
        "maxThreadsPerMultiProcessor",
        "maxBlocksPerMultiProcessor",
        "warpSize",
        "l2CacheSize",
        "clockRate",
        "memoryClockRate",
        "memoryBusWidth",
    ] {
        assert!(device.get(key) > 0, "{key}");
    }
    // The per-block opt-in limit leaves room for the reserved bytes.
    assert_eq!(
        device.get("sharedMemPerBlockOptin") + device.get("reservedSharedMemPerBlock"),
        device.get("sharedMemPerMultiprocessor")
    );
    assert_eq!(
        device.get("regsPerMultiprocessor") % 4,
        0,
        "the register file splits into 4 sub-partitions"
    );
}

#[test]
fn every_kernel_attribute_follows_from_the_register_rules() {
    // A kernel's most threads per block is the most warps its registers
    // allow on each sub-partition, times 4, at most the device's limit.
    let device = Device::load();
    assert!(device.kernels.len() >= 10, "{:?}", device.kernels.keys());
    for (name, attributes) in &device.kernels {
        let registers = attributes["numRegs"];
        assert!((1..=255).contains(&registers), "{name}: {registers}");
        let per_warp = (registers * 32).div_ceil(256) * 256;
        let warps = device.get("regsPerMultiprocessor") / 4 / per_warp * 4;
        let expected = (warps * 32).min(device.get("maxThreadsPerBlock"));
        assert_eq!(attributes["maxThreadsPerBlock"], expected, "{name}");
        assert_eq!(
            attributes["sharedSizeBytes"] + attributes["maxDynamicSharedSizeBytes"],
            device.get("sharedMemPerBlockOptin"),
            "{name}: dynamic shared memory raised to the most a block may have"
        );
    }
}

#[test]
fn every_occupancy_row_follows_from_the_device_limits() {
    let device = Device::load();
    let rows = occupancy_rows();
    assert!(rows.len() >= 24, "only {} occupancy cases", rows.len());
    let registers_seen: BTreeSet<u64> = device
        .kernels
        .values()
        .map(|attributes| attributes["numRegs"])
        .collect();
    let mut reached = BTreeSet::new();
    let mut failures = Vec::new();
    for row in &rows {
        assert!(
            (1..=device.get("maxThreadsPerBlock")).contains(&row.threads),
            "{row:?}"
        );
        assert!(
            registers_seen.contains(&row.registers),
            "{row:?}: no kernel of h100-device.txt has {} registers",
            row.registers
        );
        assert!(
            row.static_shared <= device.get("sharedMemPerBlock"),
            "{row:?}"
        );
        let (expected, binding) = blocks_per_sm(&device, row);
        if expected != row.blocks_per_sm {
            failures.push(format!("{row:?}: the rules give {expected} ({binding:?})"));
        }
        if row.blocks_per_sm > 0 && binding.len() == 1 {
            reached.insert(binding[0]);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Each limit binds alone in at least one case, and the table has cases
    // that cannot run at all, blocks of sizes that are not powers of two,
    // and a register count that is not a multiple of 8.
    assert_eq!(
        reached,
        BTreeSet::from([
            Limit::Warps,
            Limit::Blocks,
            Limit::Registers,
            Limit::SharedMemory
        ])
    );
    assert!(rows.iter().any(|row| row.blocks_per_sm == 0));
    assert!(rows.iter().any(|row| row.threads == 96));
    assert!(rows.iter().any(|row| row.threads == 160));
    assert!(rows.iter().any(|row| row.threads == 992));
    assert!(rows.iter().any(|row| row.registers % 8 != 0));
    assert!(rows
        .iter()
        .any(|row| row.dynamic_shared == device.get("sharedMemPerBlockOptin")));
}

/// One row of h100-micro.csv, by column name.
type MicroRow = BTreeMap<String, String>;

const MICRO_COLUMNS: &str = "name,launch,overrides,kernel,grid,block,clock_cycles,units,unit,\
cycles_per_unit,clock_cycles_min,clock_cycles_max,start_spread,end_spread,time_us,sm_mhz,\
sass_loop_instructions,units_per_sass_loop,sass_loop_opcodes,ncu_clock_cycles,\
ncu_sm_cycles_active_max,ncu_sm_cycles_elapsed_max,ncu_gpc_cycles_elapsed_max,ncu_inst_executed,\
ncu_sm_hz,ncu_dram_bytes_read,ncu_dram_bytes_write,ncu_duration_ns";

fn micro_rows() -> Vec<MicroRow> {
    let lines = data_lines("h100-micro.csv");
    assert_eq!(lines[0], MICRO_COLUMNS);
    let columns: Vec<&str> = lines[0].split(',').collect();
    lines[1..]
        .iter()
        .map(|line| {
            let fields: Vec<&str> = line.split(',').collect();
            assert_eq!(fields.len(), columns.len(), "{line}");
            columns
                .iter()
                .zip(fields)
                .map(|(column, field)| (column.to_string(), field.to_string()))
                .collect()
        })
        .collect()
}

fn number(row: &MicroRow, column: &str) -> f64 {
    row[column]
        .parse()
        .unwrap_or_else(|_| panic!("{}: {column} = {:?}", row["name"], row[column]))
}

/// The value of `key = ...` in a launch file, as written.
fn launch_value(text: &str, key: &str) -> String {
    text.lines()
        .find_map(|line| line.strip_prefix(&format!("{key} = ")))
        .unwrap_or_else(|| panic!("no {key} in {text}"))
        .trim()
        .to_string()
}

#[test]
fn every_microbenchmark_row_is_consistent_with_its_launch_file() {
    let rows = micro_rows();
    let timing = repo_root().join("programs/timing");
    let launches: BTreeSet<String> = std::fs::read_dir(&timing)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .map(|path| path.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    let mut names = BTreeSet::new();
    let mut measured = BTreeSet::new();
    for row in &rows {
        let name = &row["name"];
        assert!(names.insert(name.clone()), "{name} twice");
        let launch = &row["launch"];
        assert!(launches.contains(launch), "{name}: no {launch}.toml");
        // A row is its launch file as written, or a variant of it named
        // LAUNCH@VARIANT whose overrides say what differs.
        if name == launch {
            assert_eq!(row["overrides"], "", "{name}");
            measured.insert(launch.clone());
        } else {
            assert!(name.starts_with(&format!("{launch}@")), "{name}");
            assert!(!row["overrides"].is_empty(), "{name}");
        }
        let text = std::fs::read_to_string(timing.join(format!("{launch}.toml"))).unwrap();
        assert!(text.starts_with("# "), "{launch}.toml: a comment first");
        assert_eq!(
            launch_value(&text, "kernel"),
            format!("\"{}\"", row["kernel"]),
            "{name}"
        );
        assert_eq!(launch_value(&text, "grid"), format!("[{}]", row["grid"]));
        assert_eq!(launch_value(&text, "block"), format!("[{}]", row["block"]));

        let cycles = number(row, "clock_cycles");
        let units = number(row, "units");
        let per_unit = number(row, "cycles_per_unit");
        assert!(cycles > 0.0 && units > 0.0, "{name}");
        assert!(
            (per_unit - cycles / units).abs() <= 1e-5 * (cycles / units),
            "{name}: {per_unit} cycles per unit, but {cycles} / {units}"
        );
        let mhz = number(row, "sm_mhz");
        assert!((1000.0..=2100.0).contains(&mhz), "{name}: {mhz} MHz");
        let ncu_hz = number(row, "ncu_sm_hz");
        assert!((1.0e9..=2.1e9).contains(&ncu_hz), "{name}: {ncu_hz} Hz");
        assert!(number(row, "time_us") > 0.0, "{name}");
        assert!(number(row, "ncu_inst_executed") > 0.0, "{name}");
        assert!(number(row, "ncu_duration_ns") > 0.0, "{name}");
        assert!(
            number(row, "ncu_gpc_cycles_elapsed_max") >= number(row, "ncu_sm_cycles_active_max"),
            "{name}: the kernel's elapsed cycles hold its busiest SM's active cycles"
        );
        let sass = number(row, "sass_loop_instructions");
        let per_loop = number(row, "units_per_sass_loop");
        assert!(sass > 0.0 && per_loop > 0.0, "{name}");
        if row["kernel"] == "copyFloat4" {
            // The copy's cycles are its duration by CUDA events at the
            // measured clock; its clocks are per block, on different SMs.
            let from_time = number(row, "time_us") * mhz;
            assert!(
                (cycles - from_time).abs() <= 1e-3 * from_time + 1.0,
                "{name}: {cycles} cycles, {from_time} from its time"
            );
            continue;
        }
        // One block on one SM: the block's own timed run (one of the
        // kernel's two, or the global chase's one) fits inside the SM's
        // active cycles under ncu, and the median lies within the repeats'
        // range.
        assert!(
            number(row, "clock_cycles_min") <= cycles && cycles <= number(row, "clock_cycles_max"),
            "{name}"
        );
        let runs = if row["kernel"] == "globalChase" {
            1.0
        } else {
            2.0
        };
        assert!(
            runs * number(row, "ncu_clock_cycles") <= number(row, "ncu_sm_cycles_active_max"),
            "{name}: the timed runs within the SM's active cycles"
        );
        assert!(
            sass >= per_loop,
            "{name}: a unit is at least an instruction"
        );
    }
    // The store, fence and strided-load launches are measured on an H200
    // instead (`tests/stores.rs`).
    for line in data_lines("h200-stores.txt") {
        let name = line.split_whitespace().next().unwrap().to_string();
        assert!(launches.contains(&name), "h200-stores.txt: no {name}.toml");
        measured.insert(name);
    }
    // So are a block's start and end (`tests/tails.rs`).
    for line in data_lines("h200-tails.txt") {
        let name = line.split_whitespace().next().unwrap().to_string();
        if name.starts_with("tails_") {
            assert!(launches.contains(&name), "h200-tails.txt: no {name}.toml");
            measured.insert(name);
        }
    }
    // And the sub-partition's pipes (`tests/pipes.rs`): a launch file for
    // each row whose PTX is its SASS one for one.
    for line in data_lines("h200-pipes.txt") {
        let name = format!("pipes_{}", line.split_whitespace().next().unwrap());
        if launches.contains(&name) {
            measured.insert(name);
        }
    }
    let unmeasured: Vec<&String> = launches.difference(&measured).collect();
    assert!(
        unmeasured.is_empty(),
        "launch files without a hardware row: {unmeasured:?}"
    );
    assert!(rows.len() >= 40, "only {} rows", rows.len());
}

/// The occupancy calculator of the timing model gives the blocks per SM
/// that `cudaOccupancyMaxActiveBlocksPerMultiprocessor` gave on the H100,
/// for every case of the table (none where no block fits).
#[test]
fn the_timing_model_occupancy_is_the_hardware_occupancy() {
    use warpsim_machine::timing::{occupancy, BlockResources};
    let sm = warpsim_machine::MachineConfig::hopper().sm;
    for row in occupancy_rows() {
        let block = BlockResources {
            threads: row.threads as u32,
            registers_per_thread: row.registers as u32,
            shared_bytes: (row.static_shared + row.dynamic_shared) as u32,
        };
        let blocks = occupancy(&sm, block).map_or(0, |fits| u64::from(fits.blocks_per_sm));
        assert_eq!(blocks, row.blocks_per_sm, "{row:?}");
    }
}

/// How far the timing model may be from a microbenchmark's hardware figure,
/// in percent. The target is 10%; the rows below miss it for
/// reasons the model does not yet cover, and their bound keeps them from
/// getting worse unnoticed (docs/timing.md lists them).
fn micro_tolerance(launch: &str) -> f64 {
    match launch {
        // ptxas interleaves the independent chains that the PTX writes one
        // dependent pair after another; warpsim issues the PTX in order.
        "fma_independent4" => 25.0,
        "fma_independent8" | "fma_independent8_4warps" => 45.0,
        "fp64_independent" => 70.0,
        // Greedy-then-oldest lets the first warps run their whole loop
        // before the last ones read their start clock, so max(end) -
        // max(start) covers less than the block's work (the IPC, 3.9
        // against the hardware's 3.6 per cycle, is close).
        "fma_independent8_32warps" => 40.0,
        // The PTX issues 1.25 times the SASS's instructions (addresses
        // are additions in PTX, immediate offsets in SASS).
        "shared-throughput_32warps_1way" => 25.0,
        // The hardware's IMAD.IADD after a LOP3 costs more than 4 cycles.
        "int_mix" => 15.0,
        // The PTX chain carries one more dependent integer instruction.
        "global-chase_l1" => 15.0,
        _ => 10.0,
    }
}

/// Every microbenchmark of programs/timing lands within its tolerance of
/// the H100's figure, measured the way the hardware figure was: a block's
/// cycles are max(end) - max(start) over its warps' clock pairs (one pair
/// for the global chase), and the copy's figure is the launch's duration.
/// Memory figures are the ones taken under Nsight Compute's clock lock, the
/// clock the machine file describes.
#[test]
fn every_microbenchmark_lands_near_its_hardware_figure() {
    let scratch = std::env::temp_dir().join(format!("warpsim-micro-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let mut report = Vec::new();
    let mut misses = Vec::new();
    for row in micro_rows() {
        if !row["overrides"].is_empty() {
            // Hardware-only variants (other sizes than the launch file's).
            continue;
        }
        let launch = repo_root().join(format!("programs/timing/{}.toml", row["launch"]));
        let clocks = scratch.join(format!("{}.bin", row["launch"]));
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_warpsim"))
            .current_dir(repo_root())
            .args(["run", launch.to_str().unwrap(), "--json", "-", "--dump"])
            .arg(format!("clocks={}", clocks.display()))
            .output()
            .unwrap();
        assert!(output.status.success(), "{}: {:?}", row["launch"], output);
        let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let simulated = if row["launch"].starts_with("copy") {
            json["cycles"].as_u64().unwrap() as f64
        } else {
            let bytes = std::fs::read(&clocks).unwrap();
            let words: Vec<u64> = bytes
                .chunks_exact(8)
                .map(|word| u64::from_le_bytes(word.try_into().unwrap()))
                .collect();
            let start = words.iter().step_by(2).max().unwrap();
            let end = words.iter().skip(1).step_by(2).max().unwrap();
            (end - start) as f64
        };
        let hardware = if row["ncu_clock_cycles"].is_empty() {
            number(&row, "clock_cycles")
        } else {
            number(&row, "ncu_clock_cycles")
        };
        let error = (simulated - hardware) / hardware * 100.0;
        let line = format!(
            "{:40} {:>12.0} {:>12.0} {:>+7.1}%",
            row["launch"], hardware, simulated, error
        );
        if error.abs() > micro_tolerance(&row["launch"]) {
            misses.push(line.clone());
        }
        report.push(line);
    }
    std::fs::remove_dir_all(&scratch).ok();
    assert!(
        report.len() >= 40,
        "only {} microbenchmarks ran",
        report.len()
    );
    assert!(
        misses.is_empty(),
        "outside their tolerance:\n{}\n\nall:\n{}",
        misses.join("\n"),
        report.join("\n")
    );
}

/// The H200 preset is sim.toml's H100 with more and faster memory (and the
/// clock the H200 ran at under Nsight Compute): the same SM, the same
/// latencies, and a memory-bound copy that takes fewer cycles.
#[test]
fn the_h200_preset_is_the_h100_with_faster_memory() {
    let h100 = warpsim_driver::load_config(Some(&repo_root().join("sim.toml"))).unwrap();
    let h200 = warpsim_driver::load_config(Some(&repo_root().join("programs/h200.toml"))).unwrap();
    assert_eq!(h200.sm, h100.sm);
    assert_eq!(h200.shared_memory, h100.shared_memory);
    let mut timing = h200.timing.clone();
    assert_eq!(
        (
            timing.l2_bytes,
            timing.dram_bytes_per_cycle,
            timing.clock_mhz
        ),
        (60 << 20, 3200, 1500)
    );
    timing.l2_bytes = h100.timing.l2_bytes;
    timing.dram_bytes_per_cycle = h100.timing.dram_bytes_per_cycle;
    timing.clock_mhz = h100.timing.clock_mhz;
    assert_eq!(timing, h100.timing);
    let cycles = |config: &str| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_warpsim"))
            .current_dir(repo_root())
            .args(["run", "programs/timing/copy_64mib.toml", "--config", config])
            .args(["--json", "-"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        json["cycles"].as_u64().unwrap()
    };
    assert!(cycles("programs/h200.toml") < cycles("sim.toml"));
}

/// The L2 bandwidth the machine file gives is what l2-bandwidth.cu measured:
/// each row's bytes per cycle follows from its runs' median cycles, and
/// `[timing]`'s figures are those, rounded to a hundred.
#[test]
fn the_l2_bandwidth_is_the_measured_one() {
    let lines = data_lines("h100-l2-bandwidth.txt");
    assert_eq!(
        lines[0],
        "kind,free_running_ms,free_running_GB_per_s,ncu_gpc_cycles_elapsed_max_runs,ncu_bytes_per_cycle"
    );
    let timing = warpsim_machine::MachineConfig::hopper().timing;
    for line in &lines[1..] {
        let fields: Vec<&str> = line.split(',').collect();
        let mut runs: Vec<u64> = fields[3]
            .split(' ')
            .map(|run| run.parse().unwrap())
            .collect();
        runs.sort_unstable();
        let median = runs[runs.len() / 2] as f64;
        let bytes = (16u64 << 20) as f64 * 50.0;
        let per_cycle: u32 = fields[4].parse().unwrap();
        assert_eq!((bytes / median).round() as u32, per_cycle, "{line}");
        let configured = match fields[0] {
            "read" => timing.l2_read_bytes_per_cycle,
            "write" => timing.l2_write_bytes_per_cycle,
            other => panic!("unknown kind {other}"),
        };
        assert_eq!(configured, (per_cycle + 50) / 100 * 100, "{line}");
    }
}
