//! The access-merging pass (`warpsim_ir::merge`) on the machine, with the
//! kernels of `programs/ptxas` launched as `programs/ptxas/hardware/launches.tsv`
//! launched them on an H100:
//!
//! - merging changes no result: every buffer ends the same, merged or not;
//! - with merging, the shared-memory wavefronts of every CUDA line equal the
//!   H100's (Nsight Compute's source counters, `h100-KERNEL.csv`, mapped to
//!   lines through the committed SASS), except on the lines listed in
//!   `KNOWN_DIFFERENCES` with their reasons.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use warpsim_ir::merge::merge_accesses;
use warpsim_ir::{parse_ptx, verify_module, Module, StateSpace};
use warpsim_machine::memory::buffer_base;
use warpsim_machine::{GlobalMemory, Launch, MachineConfig, Program};

/// Bytes of each buffer argument. The kernels touch far less; the launcher on
/// the H100 allocated 4 MiB of the same bytes.
const BUFFER_BYTES: usize = 1 << 16;

/// (kernel, line, why warpsim and the H100 differ there even with merging).
const KNOWN_DIFFERENCES: &[(&str, u32, &str)] = &[(
    "float_add_one",
    103,
    "the H100 runs a float atomic add on shared memory as a loop of LDS and \
     ATOMS.CAST.SPIN, whose wavefronts depend on how often the compare-and-swap \
     fails; warpsim counts one atomic",
)];

fn ptxas_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../programs/ptxas")
}

/// The bytes every buffer starts with: xorshift32 from 2463534242, one
/// little-endian word a step, as `hardware/launch.cu` fills them.
fn fill(bytes: usize) -> Vec<u8> {
    let mut x: u32 = 2_463_534_242;
    let mut out = Vec::with_capacity(bytes);
    while out.len() < bytes {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        out.extend_from_slice(&x.to_le_bytes());
    }
    out
}

/// One line of launches.tsv.
struct LaunchLine {
    file: String,
    kernel: String,
    grid: [u32; 3],
    block: [u32; 3],
    dynamic_shared_bytes: u32,
    arguments: Vec<String>,
}

fn launches() -> Vec<LaunchLine> {
    let text = fs::read_to_string(ptxas_dir().join("hardware/launches.tsv")).expect("committed");
    let triple = |text: &str| -> [u32; 3] {
        let numbers: Vec<u32> = text
            .split(',')
            .map(|n| n.parse().expect("a number"))
            .collect();
        numbers.try_into().expect("three numbers")
    };
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            LaunchLine {
                file: fields[0].to_string(),
                kernel: fields[1].to_string(),
                grid: triple(fields[2]),
                block: triple(fields[3]),
                dynamic_shared_bytes: fields[4].parse().expect("a number"),
                arguments: fields[5].split(',').map(str::to_string).collect(),
            }
        })
        .collect()
}

/// What a run left: every buffer's bytes, and per CUDA line the shared-memory
/// wavefronts.
struct Run {
    buffers: Vec<Vec<u8>>,
    wavefronts_by_line: BTreeMap<u32, u64>,
}

fn run(module: &Module, launch: &LaunchLine) -> Run {
    let kernel = module
        .kernel(&launch.kernel)
        .expect("the kernel is in the PTX");
    let program = Program::lower(module, kernel).expect("the kernel lowers");
    let mut memory = GlobalMemory::new();
    let mut params = vec![0u8; program.param_bytes as usize];
    let mut buffers = Vec::new();
    for (slot, argument) in program.params.iter().zip(&launch.arguments) {
        let offset = slot.offset as usize;
        let bytes = if argument == "buf" {
            let index = memory.add_buffer(&slot.name, &fill(BUFFER_BYTES));
            buffers.push(index);
            buffer_base(index).to_le_bytes().to_vec()
        } else {
            let value: i32 = argument
                .strip_prefix("i32:")
                .and_then(|n| n.parse().ok())
                .expect("i32:N");
            value.to_le_bytes().to_vec()
        };
        params[offset..offset + bytes.len()].copy_from_slice(&bytes);
    }
    // The module's `.global` variables follow the arguments' buffers.
    let global_variable_addresses = program
        .global_variables
        .iter()
        .map(|variable| buffer_base(memory.add_buffer(&variable.name, &variable.initial)))
        .collect();
    let outcome = warpsim_machine::run(
        &program,
        &Launch {
            grid: launch.grid,
            block: launch.block,
            dynamic_shared_bytes: launch.dynamic_shared_bytes,
            params,
            global_variable_addresses,
            registers_per_thread: None,
        },
        &memory,
        &MachineConfig::hopper(),
        1,
    )
    .expect("the launch is valid");
    assert!(
        outcome.error.is_none(),
        "{}: {:?}",
        launch.kernel,
        outcome.error
    );
    let instrs = &module.kernels[kernel.index()].instrs;
    let mut wavefronts_by_line = BTreeMap::new();
    for (instr, stats) in instrs.iter().zip(&outcome.stats.per_instruction) {
        let shared = instr
            .op
            .memory_access()
            .is_some_and(|(space, _)| space == StateSpace::Shared);
        if shared && stats.executed > 0 {
            *wavefronts_by_line.entry(instr.loc.line).or_default() += stats.wavefronts;
        }
    }
    Run {
        buffers: buffers
            .iter()
            .map(|&index| memory.contents(index))
            .collect(),
        wavefronts_by_line,
    }
}

/// Kernel -> (SASS offset -> CUDA line).
type SassLines = BTreeMap<String, BTreeMap<u64, u32>>;

/// A source file's PTX, unmerged and merged, and its SASS lines.
type Compiled = (Module, Module, SassLines);

/// Kernel -> (SASS offset -> CUDA line), from nvdisasm's `-g -c` text.
fn sass_lines(text: &str) -> SassLines {
    let mut kernels: BTreeMap<String, BTreeMap<u64, u32>> = BTreeMap::new();
    let mut kernel = String::new();
    let mut line = 0;
    for raw in text.lines() {
        let trimmed = raw.trim();
        if let Some(name) = trimmed.strip_suffix(':') {
            if !name.starts_with('.') && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                kernel = name.to_string();
                continue;
            }
        }
        if let Some(rest) = trimmed.strip_prefix("//## File ") {
            line = rest
                .rsplit("line ")
                .next()
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or(0);
            continue;
        }
        if let Some(offset) = trimmed
            .strip_prefix("/*")
            .and_then(|rest| rest.split_once("*/"))
            .and_then(|(hex, _)| u64::from_str_radix(hex, 16).ok())
        {
            kernels
                .entry(kernel.clone())
                .or_default()
                .insert(offset, line);
        }
    }
    kernels
}

/// The H100's shared-memory wavefronts per CUDA line of one kernel.
fn measured_by_line(kernel: &str, lines: &BTreeMap<u64, u32>) -> BTreeMap<u32, u64> {
    let path = ptxas_dir().join(format!("hardware/h100-{kernel}.csv"));
    let mut by_line = BTreeMap::new();
    let Ok(text) = fs::read_to_string(&path) else {
        // A kernel without shared-memory instructions has no file.
        return by_line;
    };
    let rows: Vec<Vec<String>> = text.lines().map(csv_fields).collect();
    let header = &rows[1];
    let column = |name: &str| header.iter().position(|h| h == name).expect(name);
    let (address, executed, wavefronts) = (
        column("Address"),
        column("Instructions Executed"),
        column("L1 Wavefronts Shared"),
    );
    let base = u64::from_str_radix(rows[2][address].trim_start_matches("0x"), 16).expect("hex");
    for row in &rows[3..] {
        let at = u64::from_str_radix(row[address].trim_start_matches("0x"), 16).expect("hex");
        let line = lines[&(at - base)];
        let count: u64 = row[wavefronts].parse().expect("a count");
        let runs: u64 = row[executed].parse().expect("a count");
        if runs > 0 {
            *by_line.entry(line).or_default() += count;
        }
    }
    by_line
}

/// The fields of one CSV line: separated by commas, optionally in double
/// quotes (with `""` for a quote inside).
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut field)),
            (other, _) => field.push(other),
        }
    }
    fields.push(field);
    fields
}

#[test]
fn merging_changes_no_result_and_matches_the_h100_line_by_line() {
    let mut modules: BTreeMap<String, Compiled> = BTreeMap::new();
    let mut failures = Vec::new();
    let (mut lines_checked, mut lines_agreeing_unmerged) = (0, 0);
    let mut known_seen = 0;
    for launch in launches() {
        let (original, merged, sass) = modules.entry(launch.file.clone()).or_insert_with(|| {
            let path = ptxas_dir().join(format!("{}.ptx", launch.file));
            let text = fs::read_to_string(&path).expect("committed PTX");
            let original = parse_ptx(&format!("{}.ptx", launch.file), &text).expect("parses");
            verify_module(&original).expect("verifies");
            let mut merged = original.clone();
            merge_accesses(&mut merged);
            verify_module(&merged).expect("the merged module verifies");
            let sass = fs::read_to_string(ptxas_dir().join(format!("{}.sass", launch.file)))
                .expect("committed SASS");
            (original, merged, sass_lines(&sass))
        });
        let before = run(original, &launch);
        let after = run(merged, &launch);
        assert!(
            before.buffers == after.buffers,
            "{}: merging changed the results",
            launch.kernel
        );
        let measured = measured_by_line(&launch.kernel, &sass[&launch.kernel]);
        let mut all_lines: Vec<u32> = measured
            .keys()
            .chain(after.wavefronts_by_line.keys())
            .chain(before.wavefronts_by_line.keys())
            .copied()
            .collect();
        all_lines.sort_unstable();
        all_lines.dedup();
        for line in all_lines {
            let hardware = measured.get(&line).copied().unwrap_or(0);
            let model = after.wavefronts_by_line.get(&line).copied().unwrap_or(0);
            let unmerged = before.wavefronts_by_line.get(&line).copied().unwrap_or(0);
            lines_checked += 1;
            lines_agreeing_unmerged += usize::from(unmerged == hardware);
            // SHOW_LINES=1 prints every line's counts, to see what merging changed.
            if std::env::var_os("SHOW_LINES").is_some() {
                eprintln!(
                    "{} line {line}: merged {model} unmerged {unmerged} h100 {hardware}",
                    launch.kernel
                );
            }
            let known = KNOWN_DIFFERENCES
                .iter()
                .any(|(kernel, known_line, _)| *kernel == launch.kernel && *known_line == line);
            if known {
                known_seen += 1;
                assert_ne!(model, hardware, "{} line {line} now agrees", launch.kernel);
            } else if model != hardware {
                failures.push(format!(
                    "{} line {line}: warpsim {model} wavefronts (unmerged {unmerged}), H100 {hardware}",
                    launch.kernel
                ));
            }
        }
    }
    eprintln!(
        "{lines_checked} lines: all but the known differences agree with the H100 once merged; \
         {lines_agreeing_unmerged} agreed without merging"
    );
    assert!(
        failures.is_empty(),
        "{} lines differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(known_seen, KNOWN_DIFFERENCES.len());
    assert!(lines_checked > 100);
    // The comparison means something only if merging changes many lines' counts.
    assert!(lines_checked - lines_agreeing_unmerged >= 20);
}
