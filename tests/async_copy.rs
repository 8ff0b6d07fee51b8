//! The asynchronous copies and mbarriers of `programs/tensor/` (PTX ISA
//! 9.7.9.25 `cp.async`, 9.7.9.25.4.1 `cp.async.bulk`, 9.7.13.15
//! `mbarrier`): each kernel's output against a host reference or the
//! committed H100 output, warpsim's shared-memory wavefronts against the
//! committed Nsight Compute counts of the same kernels on an H100
//! (`programs/tensor/hardware/`), the race `warpsim check` finds in the
//! kernel that reads before it waits (its `.check` file), and the same
//! results at one and at three host threads.

mod support;

use std::path::PathBuf;

use support::{check_expected, check_launch, f32s, i32s, repo_root, run_program, ProgramRun};
use warpsim_driver::check::{FindingKind, Severity};
use warpsim_ir::{MemoryAccessKind, StateSpace};

fn config() -> warpsim_machine::MachineConfig {
    warpsim_driver::load_config(None).expect("the built-in machine")
}

fn launch(name: &str) -> PathBuf {
    repo_root()
        .join("programs/tensor")
        .join(format!("{name}.toml"))
}

fn hardware_file(name: &str) -> String {
    let path = repo_root().join("programs/tensor/hardware/h100").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn run(name: &str) -> ProgramRun {
    let run = run_program(&format!("tensor/{name}"), None, 2);
    assert_eq!(run.failure, None, "{name}");
    run
}

/// `async_gemm` computes C = A x B (64 x 128 times 128 x 64) with each
/// thread's four sums accumulated by `fmaf` in the order of k, tile after
/// tile: the host does the same fused multiply-adds in the same order, so
/// the results are equal bit for bit (no rounding bound is needed; a stale
/// tile, a copy landing in the wrong stage or a missing zero-fill would
/// change whole sums).
#[test]
fn async_gemm_equals_the_host_product() {
    let run = run("async_gemm");
    let (m, n, k) = (64, 64, 128);
    let a = f32s(&run.initial("A"));
    let b = f32s(&run.initial("B"));
    let c = f32s(&run.buffer("C"));
    assert_eq!(c.len(), m * n);
    let mut mismatches = Vec::new();
    for row in 0..m {
        for column in 0..n {
            let expected = (0..k).fold(0.0f32, |sum, index| {
                a[row * k + index].mul_add(b[index * n + column], sum)
            });
            if c[row * n + column].to_bits() != expected.to_bits() {
                mismatches.push((row, column, c[row * n + column], expected));
            }
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} wrong: {:?}",
        mismatches.len(),
        &mismatches[..mismatches.len().min(8)]
    );
}

/// `pipeline_mbarrier`: 2 blocks of 8 chunks of 256 floats through a ring
/// of 3 stages; out[i] = 3 x + (the next element of the same chunk,
/// wrapping). The launch's input is 0, 1, 2, ...: every value is an
/// integer below 2^24, exact in f32 whether the kernel fuses the
/// multiply-add or not.
#[test]
fn pipeline_mbarrier_computes_every_chunk() {
    let run = run("pipeline_mbarrier");
    let input = f32s(&run.initial("in"));
    let output = f32s(&run.buffer("out"));
    assert_eq!(output.len(), 2 * 8 * 256);
    for (index, &value) in output.iter().enumerate() {
        let (chunk, element) = (index / 256, index % 256);
        let expected = 3.0 * input[index] + input[chunk * 256 + (element + 1) % 256];
        assert_eq!(value, expected, "out[{index}]");
    }
}

/// `mbarrier_ops` ran on the H100 with the launch file's input (1000 + 3i)
/// and `out` filled with -7: every one of its 160 words must be the H100's.
#[test]
fn mbarrier_ops_equals_the_h100_output() {
    let run = run("mbarrier_ops");
    let h100: Vec<i32> = hardware_file("mbarrier_ops.txt")
        .lines()
        .map(|line| line.trim().parse().expect("an integer per line"))
        .collect();
    assert_eq!(h100.len(), 160);
    let input: Vec<i32> = (0..32).map(|lane| 1000 + 3 * lane).collect();
    assert_eq!(i32s(&run.initial("in")), input, "the H100 run's input");
    assert_eq!(i32s(&run.buffer("out")), h100);
}

/// `async_stale_read` reads its shared word right after issuing the
/// `cp.async` that overwrites it and again after `cp.async.wait_all`: the
/// H100 saw the old word (-1, stored just before) in all 64 threads first
/// and the copied one after; warpsim completes a copy only at the wait, so
/// it shows the same.
#[test]
fn async_stale_read_sees_old_bytes_before_the_wait_and_new_ones_after() {
    let run = run("async_stale_read");
    let input = i32s(&run.initial("in"));
    let before = i32s(&run.buffer("before"));
    let after = i32s(&run.buffer("after"));
    // The H100's input was 100 + i (async-driver.cu): its "after" column
    // is that input, its "before" column the word stored before the copy.
    let h100: Vec<(i32, i32)> = hardware_file("async_stale_read.txt")
        .lines()
        .map(|line| {
            let mut words = line
                .split_whitespace()
                .map(|word| word.parse::<i32>().unwrap());
            (words.next().unwrap(), words.next().unwrap())
        })
        .collect();
    assert_eq!(h100.len(), 64);
    for (thread, &(h100_before, h100_after)) in h100.iter().enumerate() {
        assert_eq!(h100_after, 100 + thread as i32, "H100 thread {thread}");
        assert_eq!(
            before[thread], h100_before,
            "thread {thread}: before the wait"
        );
        assert_eq!(
            after[thread], input[thread],
            "thread {thread}: after the wait"
        );
    }
}

/// One SASS instruction's Source Counters, as `ncu --page source --csv
/// --print-source sass` writes them.
#[derive(Debug)]
struct SassCounts {
    source: String,
    executed: u64,
    thread_executed: u64,
    predicated_on_threads: u64,
    wavefronts: u64,
    ideal: u64,
}

impl SassCounts {
    /// Executions by warps with every lane predicated off: Nsight Compute
    /// counts them as executed, and each costs an `LDGSTS` one wavefront
    /// (`programs/tensor/hardware/README-async.md`). The kernels predicate
    /// whole warps (their conditions are warp-uniform), so these are the
    /// lanes predicated off over 32.
    fn predicated_off_warps(&self) -> u64 {
        (self.thread_executed - self.predicated_on_threads) / 32
    }
}

/// Splits one CSV line whose fields are all quoted (commas inside quotes
/// are part of the field).
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(std::mem::take(&mut field)),
            _ => field.push(c),
        }
    }
    fields.push(field);
    fields
}

/// The SASS rows of a kernel's committed Nsight Compute CSV, in address
/// order.
fn sass_counts(kernel: &str) -> Vec<SassCounts> {
    let text = hardware_file(&format!("{kernel}.sass.csv"));
    let mut lines = text.lines().skip(1);
    let header = csv_fields(lines.next().expect("a header"));
    let column = |name: &str| {
        header
            .iter()
            .position(|field| field == name)
            .unwrap_or_else(|| panic!("{kernel}: no column `{name}`"))
    };
    let columns = [
        column("Source"),
        column("Instructions Executed"),
        column("Thread Instructions Executed"),
        column("Predicated-On Thread Instructions Executed"),
        column("L1 Wavefronts Shared"),
        column("L1 Wavefronts Shared Ideal"),
    ];
    lines
        .map(csv_fields)
        .filter(|fields| fields.len() == header.len())
        .map(|fields| {
            let number = |index: usize| fields[columns[index]].parse::<u64>().unwrap_or(0);
            SassCounts {
                source: fields[columns[0]].trim().to_string(),
                executed: number(1),
                thread_executed: number(2),
                predicated_on_threads: number(3),
                wavefronts: number(4),
                ideal: number(5),
            }
        })
        .collect()
}

/// Whether the SASS row is the opcode `name` (after its predicate guard).
fn is_opcode(row: &SassCounts, name: &str) -> bool {
    let mut words = row.source.split_whitespace();
    let mut opcode = words.next();
    if opcode.is_some_and(|word| word.starts_with('@')) {
        opcode = words.next();
    }
    opcode.is_some_and(|opcode| opcode == name || opcode.starts_with(&format!("{name}.")))
}

/// Executions, wavefronts and ideal wavefronts.
type Counts = (u64, u64, u64);

/// warpsim's per-line counts of one kind of shared access, in line order.
fn warpsim_lines(run: &ProgramRun, op: MemoryAccessKind) -> Vec<(u32, Counts)> {
    run.report
        .lines
        .iter()
        .filter(|row| row.space == StateSpace::Shared && row.op == op)
        .map(|row| {
            (
                row.line,
                (
                    row.counts.executed,
                    row.counts.wavefronts,
                    row.counts.ideal_wavefronts,
                ),
            )
        })
        .collect()
}

/// The sum of the hardware's wavefronts and ideal wavefronts over an opcode.
fn hardware_total(rows: &[SassCounts], opcode: &str) -> (u64, u64) {
    rows.iter()
        .filter(|row| is_opcode(row, opcode))
        .fold((0, 0), |(wavefronts, ideal), row| {
            (wavefronts + row.wavefronts, ideal + row.ideal)
        })
}

/// Per-line shared-memory wavefronts against the H100's Nsight Compute
/// Source Counters.
///
/// The CSVs count per SASS instruction and carry no source line, so the
/// comparison is: each `cp.async` line (one `cp.async` each, in source
/// order) against the `LDGSTS` instructions in address order, which nvcc
/// emits in the same order; and the kernel's `ld.shared`/`st.shared`
/// wavefronts against the sums over its `LDS`/`STS` instructions (nvcc -O3
/// vectorises and schedules them differently from the PTX warpsim runs, so
/// they do not pair one to one, but their wavefronts add up the same).
///
/// nvcc predicates `async_gemm`'s loop copies where the PTX branches around
/// them: on the last tile a warp executes the `LDGSTS` with every lane off,
/// which the H100 counts as an execution and one wavefront; warpsim never
/// reaches the copy. Those executions are taken off the hardware's counts.
///
/// One count is timing-dependent, not address-dependent: `async_gemm`'s
/// second loop copy (line 50) showed 788 wavefronts against an ideal of 446
/// on the H100, while the first (line 49), with the same address pattern
/// (each warp copies 512 contiguous bytes, 16 a lane, into 512 contiguous
/// bytes of shared memory), showed its ideal 416. The excess depends on how
/// the copies' global sectors arrive, which warpsim does not model: that
/// line is bounded instead (warpsim's count is the first copy's, and the
/// hardware's is at least warpsim's and less than twice it).
#[test]
fn shared_wavefronts_per_line_equal_the_h100() {
    for kernel in [
        "async_gemm",
        "async_stale_read",
        "mbarrier_ops",
        "pipeline_mbarrier",
    ] {
        let run = run(kernel);
        let hardware = sass_counts(kernel);
        let copies: Vec<&SassCounts> = hardware
            .iter()
            .filter(|row| is_opcode(row, "LDGSTS"))
            .collect();
        let lines = warpsim_lines(&run, MemoryAccessKind::AsyncCopy);
        assert_eq!(lines.len(), copies.len(), "{kernel}: cp.async lines");
        for ((line, warpsim), copy) in lines.iter().zip(&copies) {
            let off = copy.predicated_off_warps();
            let h100 = (copy.executed - off, copy.wavefronts - off, copy.ideal - off);
            if kernel == "async_gemm" && *line == 50 {
                assert_eq!(
                    *warpsim, lines[2].1,
                    "{kernel}:{line}: the same pattern as line 49"
                );
                assert_eq!(warpsim.0, h100.0, "{kernel}:{line}: executions");
                assert!(
                    h100.1 >= warpsim.1 && h100.1 < 2 * warpsim.1,
                    "{kernel}:{line}: H100 {h100:?}, warpsim {warpsim:?}"
                );
                continue;
            }
            assert_eq!(*warpsim, h100, "{kernel}:{line}: {}", copy.source);
        }
        for (op, opcode) in [
            (MemoryAccessKind::Load, "LDS"),
            (MemoryAccessKind::Store, "STS"),
        ] {
            let (wavefronts, ideal) = warpsim_lines(&run, op)
                .iter()
                .fold((0, 0), |(wavefronts, ideal), (_, counts)| {
                    (wavefronts + counts.1, ideal + counts.2)
                });
            assert_eq!(
                (wavefronts, ideal),
                hardware_total(&hardware, opcode),
                "{kernel}: {opcode}"
            );
        }
        // The bulk copy engine and the mbarrier instructions touch shared
        // memory outside the LSU: no wavefronts on either side.
        for opcode in ["UBLKCP", "SYNCS", "ARRIVES"] {
            assert_eq!(
                hardware_total(&hardware, opcode),
                (0, 0),
                "{kernel}: {opcode}"
            );
        }
        let others: u64 = run
            .report
            .instructions
            .iter()
            .filter(|instruction| instruction.op.is_none())
            .map(|instruction| instruction.counts.wavefronts)
            .sum();
        assert_eq!(
            others, 0,
            "{kernel}: wavefronts outside memory instructions"
        );
    }
}

/// `warpsim check` of `async_stale_read` prints the committed
/// `async_stale_read.check`: one shared race between the copy (line 14)
/// and the read before the wait (line 16), and nothing about the read
/// after it (line 18). The other async kernels check clean.
#[test]
fn check_finds_the_read_before_the_wait() {
    let path = launch("async_stale_read");
    let (text, outcome, _) = check_launch(&path, config(), 2);
    if let Some(difference) = check_expected(&path.with_extension("check"), &text) {
        panic!("{difference}");
    }
    let found: Vec<(FindingKind, Severity, u32)> = outcome
        .findings
        .iter()
        .map(|finding| (finding.kind, finding.severity, finding.line))
        .collect();
    assert_eq!(found, [(FindingKind::SharedRace, Severity::Error, 16)]);
    let issue_lines: Vec<u32> = outcome.findings[0]
        .sites
        .iter()
        .map(|site| site.line)
        .collect();
    assert_eq!(issue_lines, [14, 16]);
    for kernel in ["async_gemm", "mbarrier_ops", "pipeline_mbarrier"] {
        let (text, outcome, _) = check_launch(&launch(kernel), config(), 2);
        assert!(outcome.findings.is_empty(), "{kernel}:\n{text}");
    }
}

/// `mbarrier_deadlock` announces 1024 transaction bytes and copies 512:
/// `warpsim check` prints the committed `mbarrier_deadlock.check`, one
/// mbarrier-deadlock finding with all 64 threads stuck at the wait (line
/// 36, the `try_wait` loop inlined from line 17) on the mbarrier with 512
/// bytes pending, and `run` fails with the same deadlock.
#[test]
fn an_mbarrier_wait_nothing_can_complete_is_a_deadlock() {
    let path = launch("mbarrier_deadlock");
    let (text, outcome, result) = check_launch(&path, config(), 2);
    if let Some(difference) = check_expected(&path.with_extension("check"), &text) {
        panic!("{difference}");
    }
    assert_eq!(outcome.findings.len(), 1, "{text}");
    let finding = &outcome.findings[0];
    assert_eq!(
        (finding.kind, finding.severity),
        (FindingKind::MbarrierDeadlock, Severity::Error)
    );
    assert_eq!(finding.sites.len(), 1, "{text}");
    let site = &finding.sites[0];
    assert_eq!(site.line, 36);
    assert!(site.label.starts_with("stuck here"), "{text}");
    assert!(
        site.label.contains("shared offset 0x400")
            && site.label.contains("parity 0")
            && site.label.contains("512 transaction bytes pending"),
        "{text}"
    );
    assert_eq!(site.threads, "0-63", "{text}");
    assert!(result
        .failure
        .is_some_and(|failure| failure.contains("mbarrier deadlock")));
    let run = run_program("tensor/mbarrier_deadlock", None, 2);
    assert!(run
        .failure
        .is_some_and(|failure| failure.contains("mbarrier deadlock")));
}

/// The same outputs, reports and findings at one and at three host threads.
#[test]
fn results_do_not_depend_on_host_threads() {
    for kernel in [
        "async_gemm",
        "async_stale_read",
        "mbarrier_ops",
        "pipeline_mbarrier",
        "mbarrier_deadlock",
    ] {
        let one = run_program(&format!("tensor/{kernel}"), None, 1);
        let three = run_program(&format!("tensor/{kernel}"), None, 3);
        assert_eq!(one.buffers, three.buffers, "{kernel}");
        assert_eq!(one.report.to_json(), three.report.to_json(), "{kernel}");
        let (one, _, _) = check_launch(&launch(kernel), config(), 1);
        let (three, _, _) = check_launch(&launch(kernel), config(), 3);
        assert_eq!(one, three, "{kernel}");
    }
}

/// The timing model waits for copies and overlaps groups
/// (`programs/tensor/async-overlap.kir`, one warp): a `cp.async.wait_all`
/// right after a copy waits at least an L2 round trip (the copy's global
/// latency through the cache model), and of two double-buffered groups the
/// wait for the older one (`wait_group 1`) ends while the newer one is in
/// flight, so it takes less than the two copies waited for one by one, and
/// the newer one is then (nearly) there.
#[test]
fn waits_stall_until_their_copies_arrive_and_groups_overlap() {
    let run = run("async_overlap");
    let times: Vec<u64> = run
        .buffer("times")
        .chunks(8)
        .map(|bytes| u64::from_le_bytes(bytes.try_into().unwrap()))
        .collect();
    let [start, first, second, overlap_start, older, newer] = times[..] else {
        panic!("six clocks: {times:?}");
    };
    let round_trip = u64::from(config().timing.l2_hit_latency);
    let one_by_one = second - start;
    assert!(first - start >= round_trip, "{times:?}");
    assert!(second - first >= round_trip, "{times:?}");
    assert!(older - overlap_start >= round_trip, "{times:?}");
    assert!(older - overlap_start < one_by_one, "{times:?}");
    assert!(newer - overlap_start < one_by_one, "{times:?}");
    assert!(newer - older < round_trip, "{times:?}");
}
