//! The run report: per instruction, what it executed and what memory it
//! touched; the same counts rolled up per source line and access kind; and
//! totals under the names nvprof and Nsight Compute give them
//! (`shared_ld_bank_conflict` beside
//! `l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum`, and so on).
//! When the timing model ran, the report also carries its figures: the
//! launch's cycles, IPC and occupancy, and per instruction and row where
//! the warps waited (Nsight Compute's warp states) and what bank conflicts
//! cost in cycles. Without it the report is what it was before the model.
//! The JSON form is a contract (issue 2); the table is for people.

use std::collections::HashMap;
use std::fmt::Write;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use warpsim_ir::{instruction_text, Kernel, MemoryAccessKind, Module, StateSpace};
use warpsim_machine::stats::StallReason;
use warpsim_machine::timing::LaunchTiming;
use warpsim_machine::{InstrStats, RunStats};

use crate::locations::InlinedFrom;
use crate::registers::{RegisterSource, Registers};

/// One instruction's line in the report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InstructionReport {
    pub index: usize,
    pub text: String,
    /// The line in the user's own files (the call site of an inlined
    /// device function or header code).
    pub file: String,
    pub line: u32,
    /// Where inside a device function or header the instruction came from,
    /// innermost first (absent when it was not inlined).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inlined_from: Vec<InlinedFrom>,
    /// shared, global, local, param, const, generic; `null` for non-memory instructions.
    pub space: Option<StateSpace>,
    /// ld, st, atom, red, cp.async; `null` for non-memory instructions.
    pub op: Option<MemoryAccessKind>,
    /// What the instruction did over the launch. A generic access counts
    /// a shared or global request where its addresses resolved. The JSON
    /// shows the execution and memory counters; the timing model's
    /// counters are shown by `timing`, only when the model ran.
    #[serde(flatten, serialize_with = "serialize_counters")]
    pub counts: InstrStats,
    /// Where the warps waited at the instruction and what its bank
    /// conflicts cost, when the timing model ran (absent otherwise).
    #[serde(flatten)]
    pub timing: Option<InstructionTiming>,
}

/// The memory instructions of one source line that do one kind of access
/// (`ld`, `st`, `atom`, `red`, `cp.async`) in one state space, their counts summed: a row
/// of the per-line rollup. Parameter loads are left out.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LineReport {
    pub file: String,
    pub line: u32,
    pub space: StateSpace,
    pub op: MemoryAccessKind,
    /// How many instructions of the kernel the row merges.
    pub instructions: u64,
    /// The counts of the row's instructions, summed (in the JSON, as for
    /// [`InstructionReport::counts`]).
    #[serde(flatten, serialize_with = "serialize_counters")]
    pub counts: InstrStats,
    /// The timing model's counters of the row's instructions, summed,
    /// when the model ran (absent otherwise).
    #[serde(flatten)]
    pub timing: Option<InstructionTiming>,
    /// The places inside device functions or headers that the row's
    /// instructions came from: the innermost place of each instruction's
    /// inline chain, each place once, in instruction order (absent when none
    /// was inlined).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inlined_from: Vec<InlinedFrom>,
}

impl LineReport {
    /// `ld.shared`, `st.global`, `atom.shared`, `ld.generic`.
    pub fn access(&self) -> String {
        format!("{}.{}", op_name(self.op), self.space.name())
    }
}

/// The execution and memory counters of [`InstrStats`] as the JSON report
/// has always shown them. `InstrStats` also holds the timing model's
/// counters, which the report shows in its own form
/// ([`InstructionTiming`]) and only when the model ran, so that reports
/// without it stay as they were.
#[derive(Serialize)]
struct Counters {
    executed: u64,
    threads: u64,
    shared_requests: u64,
    global_requests: u64,
    wavefronts: u64,
    ideal_wavefronts: u64,
    bank_conflicts: u64,
    sectors: u64,
}

fn serialize_counters<S: Serializer>(
    counts: &InstrStats,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    Counters {
        executed: counts.executed,
        threads: counts.threads,
        shared_requests: counts.shared_requests,
        global_requests: counts.global_requests,
        wavefronts: counts.wavefronts,
        ideal_wavefronts: counts.ideal_wavefronts,
        bank_conflicts: counts.bank_conflicts,
        sectors: counts.sectors,
    }
    .serialize(serializer)
}

/// The timing model's counters of an instruction or a row, as the report
/// shows them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct InstructionTiming {
    /// Warp-cycles with the instruction next to issue, by reason (indexed
    /// by [`StallReason`]). The JSON is an object from Nsight Compute's name
    /// of each reason to its warp-cycles, listing the reasons that have
    /// any, in [`StallReason::ALL`] order.
    #[serde(serialize_with = "serialize_stalls")]
    pub stalls: [u64; StallReason::COUNT],
    /// Cycles the shared-memory pipe spent on the wavefronts beyond the
    /// ideal ones.
    pub conflict_cycles: u64,
}

impl InstructionTiming {
    /// The timing counters of `counts`.
    pub fn of(counts: &InstrStats) -> InstructionTiming {
        InstructionTiming {
            stalls: counts.stalls,
            conflict_cycles: counts.conflict_cycles,
        }
    }
}

fn serialize_stalls<S: Serializer>(
    stalls: &[u64; StallReason::COUNT],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let nonzero = || {
        StallReason::ALL
            .iter()
            .zip(stalls)
            .filter(|(_, &cycles)| cycles > 0)
    };
    let mut map = serializer.serialize_map(Some(nonzero().count()))?;
    for (reason, cycles) in nonzero() {
        map.serialize_entry(reason.ncu_name(), cycles)?;
    }
    map.end()
}

/// What the timing model measured of the launch, as the report shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TimingReport {
    /// The kernel's duration in cycles, and the busiest SM's active cycles.
    pub cycles: u64,
    pub busiest_sm_cycles: u64,
    /// The duration in microseconds at `clock_mhz`.
    pub time_us: f64,
    pub clock_mhz: u32,
    /// Warp instructions per active SM cycle.
    pub ipc: f64,
    /// Issued warp instructions over the issue slots of the active cycles
    /// (a fraction, 0 to 1).
    pub issue_slot_utilisation: f64,
    /// Blocks over the blocks the GPU holds at once.
    pub waves: f64,
    /// SMs that ran at least one block.
    pub sms_used: u32,
    pub occupancy: OccupancyReport,
    pub memory: MemoryLevels,
    /// Only the first waves ran (`--sample-waves`): `cycles` is
    /// extrapolated from theirs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampled: Option<warpsim_machine::timing::Sampled>,
}

/// Theoretical and achieved occupancy (fractions of the SM's warp slots),
/// and what limits the theoretical one.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OccupancyReport {
    pub theoretical: f64,
    pub achieved: f64,
    pub blocks_per_sm: u32,
    pub warps_per_block: u32,
    /// "threads", "blocks", "registers" or "shared memory".
    pub limited_by: &'static str,
}

/// Global and local load sectors served by each level of the memory
/// system, and the bytes moved between L2 and DRAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct MemoryLevels {
    pub l1_hit_sectors: u64,
    pub l2_hit_sectors: u64,
    pub dram_sectors: u64,
    pub dram_bytes: u64,
}

impl TimingReport {
    /// The figures of `timing` as reports show them, ratios computed.
    pub fn new(timing: &LaunchTiming) -> TimingReport {
        TimingReport {
            cycles: timing.cycles,
            busiest_sm_cycles: timing.busiest_sm_cycles,
            time_us: timing.time_us(),
            clock_mhz: timing.clock_mhz,
            ipc: timing.ipc(),
            issue_slot_utilisation: timing.issue_slot_utilisation(),
            waves: timing.waves,
            sms_used: timing.sms_used,
            occupancy: OccupancyReport {
                theoretical: timing.occupancy.theoretical,
                achieved: timing.achieved_occupancy(),
                blocks_per_sm: timing.occupancy.blocks_per_sm,
                warps_per_block: timing.occupancy.warps_per_block,
                limited_by: timing.occupancy.limited_by.name(),
            },
            memory: MemoryLevels {
                l1_hit_sectors: timing.l1_hit_sectors,
                l2_hit_sectors: timing.l2_hit_sectors,
                dram_sectors: timing.dram_sectors,
                dram_bytes: timing.dram_bytes,
            },
            sampled: timing.sampled,
        }
    }
}

/// The warp-cycles of every instruction of one source line, summed: a
/// row of the table's "where the warps wait".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineWaits {
    pub file: String,
    pub line: u32,
    /// Warp-cycles by reason (indexed by [`StallReason`]).
    pub stalls: [u64; StallReason::COUNT],
}

impl LineWaits {
    /// Warp-cycles at the line, issue cycles included.
    pub fn warp_cycles(&self) -> u64 {
        self.stalls.iter().sum()
    }

    /// The `count` reasons with the most warp-cycles, most first (ties in
    /// [`StallReason::ALL`] order), leaving out those with none.
    pub fn top_reasons(&self, count: usize) -> Vec<(StallReason, u64)> {
        let mut reasons: Vec<(StallReason, u64)> = StallReason::ALL
            .iter()
            .copied()
            .zip(self.stalls)
            .filter(|&(_, cycles)| cycles > 0)
            .collect();
        reasons.sort_by_key(|&(_, cycles)| std::cmp::Reverse(cycles));
        reasons.truncate(count);
        reasons
    }
}

/// How many source lines "where the warps wait" lists at most.
pub const WAIT_TABLE_LINES: usize = 10;

/// How the table lists the memory instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableView {
    /// One row per source line and access kind (the rollup).
    Lines,
    /// One row per instruction.
    Instructions,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SharedTotals {
    pub requests: u64,
    pub wavefronts: u64,
    pub ideal_wavefronts: u64,
    pub bank_conflicts: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct GlobalTotals {
    pub requests: u64,
    pub sectors: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Totals {
    pub shared_load: SharedTotals,
    pub shared_store: SharedTotals,
    pub shared_atomic: SharedTotals,
    pub global_load: GlobalTotals,
    pub global_store: GlobalTotals,
    pub global_atomic: GlobalTotals,
    pub warp_instructions: u64,
    pub thread_instructions: u64,
}

/// Everything a run reports.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub kernel: String,
    pub source: String,
    pub device: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Dynamic shared memory of a block, as the launch file asks for it.
    pub shared_bytes: u32,
    /// Static shared memory of a block, as the kernel declares it.
    pub static_shared_bytes: u32,
    /// Registers per thread, and where the number comes from: "launch
    /// file", "nvJitLink" or "default" (`registers.rs`).
    pub registers_per_thread: u32,
    pub registers_source: RegisterSource,
    /// Why the default applies (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registers_note: Option<String>,
    /// "ok"; "failed" when the kernel faulted, or "interrupted" when it was
    /// stopped (Ctrl-C): the counters are then partial.
    pub status: &'static str,
    /// The fault, one line, when the kernel failed.
    pub error: Option<String>,
    pub blocks_run: u64,
    pub failed_blocks: u64,
    /// What the timing model measured: cycles, IPC, occupancy, the memory
    /// levels (top-level keys of the JSON; absent without the model).
    #[serde(flatten)]
    pub timing: Option<TimingReport>,
    pub instructions: Vec<InstructionReport>,
    /// The memory instructions rolled up per source line and access kind,
    /// in source order ([`Report::rollup`]).
    pub lines: Vec<LineReport>,
    pub totals: Totals,
    /// The barrier checker's findings (`warpsim check`, `run --check`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub findings: Option<Vec<crate::check::FindingReport>>,
    /// What the kernel's `printf` calls printed (absent when nothing was).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub printf_output: String,
    /// Bytes of `printf` output dropped because the buffer was full.
    #[serde(skip_serializing_if = "is_zero")]
    pub printf_dropped_bytes: u64,
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// What a report is built from.
pub struct ReportInput<'a> {
    /// The kernel's name as the launch gives it (its CUDA name).
    pub kernel_name: &'a str,
    pub module: &'a Module,
    pub locations: &'a crate::Locations,
    pub kernel: &'a Kernel,
    pub stats: &'a RunStats,
    pub source: String,
    pub device: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_bytes: u32,
    pub static_shared_bytes: u32,
    pub registers: Registers,
    pub error: Option<String>,
    pub failed_blocks: u64,
    /// Stopped from outside before every block ran.
    pub interrupted: bool,
    pub printf_output: String,
    pub printf_dropped_bytes: u64,
    /// What the timing model measured, when it ran.
    pub timing: Option<&'a LaunchTiming>,
}

impl Report {
    pub fn build(input: ReportInput) -> Report {
        let kernel = input.kernel;
        let mut totals = Totals::default();
        let mut instructions = Vec::with_capacity(kernel.instrs.len());
        for (index, (instr, stats)) in kernel
            .instrs
            .iter()
            .zip(&input.stats.per_instruction)
            .enumerate()
        {
            let access = instr.op.memory_access();
            if let Some((_, op)) = access {
                accumulate(&mut totals, op, stats);
            }
            let place = input.locations.place(input.module, instr.loc);
            instructions.push(InstructionReport {
                index,
                text: instruction_text(kernel, instr),
                file: place.file,
                line: place.line,
                inlined_from: place.inlined_from,
                space: access.map(|(space, _)| space),
                op: access.map(|(_, op)| op),
                counts: *stats,
                timing: input.timing.map(|_| InstructionTiming::of(stats)),
            });
        }
        totals.warp_instructions = input.stats.warp_instructions();
        totals.thread_instructions = input.stats.thread_instructions();
        Report {
            kernel: input.kernel_name.to_string(),
            source: input.source,
            device: input.device,
            grid: input.grid,
            block: input.block,
            shared_bytes: input.shared_bytes,
            static_shared_bytes: input.static_shared_bytes,
            registers_per_thread: input.registers.count,
            registers_source: input.registers.source,
            registers_note: input.registers.note,
            status: if input.interrupted {
                "interrupted"
            } else if input.error.is_some() {
                "failed"
            } else {
                "ok"
            },
            error: match input.error {
                None if input.interrupted => Some(format!(
                    "interrupted (Ctrl-C) after {} blocks: the counts are those of the blocks run",
                    input.stats.blocks_run
                )),
                error => error,
            },
            blocks_run: input.stats.blocks_run,
            failed_blocks: input.failed_blocks,
            timing: input.timing.map(TimingReport::new),
            lines: Report::rollup(&instructions),
            instructions,
            totals,
            findings: None,
            printf_output: input.printf_output,
            printf_dropped_bytes: input.printf_dropped_bytes,
        }
    }

    /// The memory instructions of `instructions` (parameter loads left out)
    /// grouped by file, line, state space and kind of access, their counts
    /// summed. Rows come in source order: by file name, then line; the
    /// accesses of one line in the order of their first instruction. Rows
    /// carry the timing model's counters when the instructions do.
    pub fn rollup(instructions: &[InstructionReport]) -> Vec<LineReport> {
        let mut rows: Vec<LineReport> = Vec::new();
        // Where each (file, line, space, op) has its row, and in what
        // order its line's accesses first appeared.
        let mut row_of: HashMap<(&str, u32, StateSpace, MemoryAccessKind), usize> = HashMap::new();
        let mut first_seen: Vec<usize> = Vec::new();
        for (position, instruction) in instructions.iter().enumerate() {
            let (Some(space), Some(op)) = (instruction.space, instruction.op) else {
                continue;
            };
            // Parameter loads are bookkeeping, not data traffic.
            if space == StateSpace::Param {
                continue;
            }
            let key = (instruction.file.as_str(), instruction.line, space, op);
            let index = *row_of.entry(key).or_insert_with(|| {
                rows.push(LineReport {
                    file: instruction.file.clone(),
                    line: instruction.line,
                    space,
                    op,
                    instructions: 0,
                    counts: InstrStats::default(),
                    timing: None,
                    inlined_from: Vec::new(),
                });
                first_seen.push(position);
                rows.len() - 1
            });
            let row = &mut rows[index];
            row.instructions += 1;
            row.counts.add(&instruction.counts);
            if instruction.timing.is_some() {
                row.timing = Some(InstructionTiming::of(&row.counts));
            }
            if let Some(place) = instruction.inlined_from.first() {
                if !row.inlined_from.contains(place) {
                    row.inlined_from.push(place.clone());
                }
            }
        }
        let mut order: Vec<usize> = (0..rows.len()).collect();
        order.sort_by(|&a, &b| {
            (rows[a].file.as_str(), rows[a].line, first_seen[a]).cmp(&(
                rows[b].file.as_str(),
                rows[b].line,
                first_seen[b],
            ))
        });
        let mut rows: Vec<Option<LineReport>> = rows.into_iter().map(Some).collect();
        order
            .into_iter()
            .filter_map(|index| rows[index].take())
            .collect()
    }

    /// The table's view when none is asked for: per instruction for `.kir`
    /// sources, whose lines are instructions already, and per source line
    /// for PTX and CUDA, where one line of CUDA is often many instructions.
    pub fn default_view(&self) -> TableView {
        if self.source.ends_with(".kir") {
            TableView::Instructions
        } else {
            TableView::Lines
        }
    }

    pub fn to_json(&self) -> String {
        json_text(self)
    }

    /// The table in its default view ([`Report::default_view`]).
    pub fn to_table(&self) -> String {
        self.to_table_by(self.default_view())
    }

    /// The table: the header, one row per memory instruction or per source
    /// line's memory access (`view`), then the totals.
    /// With the timing model's figures, the header has a second line
    /// ([`Report::timing_line`]), the rows a `conflict cycles` column, and
    /// "where the warps wait" follows them ([`Report::write_wait_rows`]).
    pub fn to_table_by(&self, view: TableView) -> String {
        let mut out = self.header_line();
        if let Some(timing) = self.timing_line() {
            out.push_str(&timing);
        }
        let _ = writeln!(out);
        match view {
            TableView::Lines => self.write_line_rows(&mut out),
            TableView::Instructions => self.write_instruction_rows(&mut out),
        }
        let waits = self.waits_by_line();
        if !waits.is_empty() {
            let _ = writeln!(out);
            self.write_wait_rows(&waits, &mut out);
        }
        let _ = writeln!(out);
        self.write_totals(&mut out);
        if let Some(error) = &self.error {
            let _ = writeln!(
                out,
                "\nstatus: {} ({} of {} blocks run failed): {error}",
                self.status, self.failed_blocks, self.blocks_run
            );
        }
        out
    }

    /// The first line of the table: kernel, launch shape, the block's shared
    /// memory (static as declared plus dynamic as launched), device, and
    /// registers per thread with where they come from.
    pub fn header_line(&self) -> String {
        format!(
            "{}  grid ({},{},{})  block ({},{},{})  shared {} B ({} static + {} dynamic)  on {}  regs {} ({})\n",
            self.kernel,
            self.grid[0],
            self.grid[1],
            self.grid[2],
            self.block[0],
            self.block[1],
            self.block[2],
            u64::from(self.static_shared_bytes) + u64::from(self.shared_bytes),
            self.static_shared_bytes,
            self.shared_bytes,
            self.device,
            self.registers_per_thread,
            self.registers_source
        )
    }

    /// The header's second line when the timing model ran: the kernel's
    /// cycles and time, IPC, issue-slot use, occupancy and waves, e.g.
    /// `cycles 12,345 (7.03 us at 1755 MHz)  IPC 1.84  issue slots 46%
    /// occupancy 50% achieved of 75% theoretical (limited by registers, 3
    /// blocks/SM)  waves 0.02`.
    pub fn timing_line(&self) -> Option<String> {
        let timing = self.timing.as_ref()?;
        let occupancy = &timing.occupancy;
        Some(format!(
            "cycles {} ({:.2} us at {} MHz)  IPC {:.2}  issue slots {}  occupancy {} achieved of {} theoretical (limited by {}, {} block{}/SM)  waves {:.2}\n",
            grouped(timing.cycles),
            timing.time_us,
            timing.clock_mhz,
            timing.ipc,
            percent(timing.issue_slot_utilisation),
            percent(occupancy.achieved),
            percent(occupancy.theoretical),
            occupancy.limited_by,
            occupancy.blocks_per_sm,
            if occupancy.blocks_per_sm == 1 { "" } else { "s" },
            timing.waves
        ) + &match &timing.sampled {
            Some(sampled) => format!(
                "sampled: {} of {} blocks simulated ({} wave{}, {} cycles), cycles extrapolated\n",
                grouped(sampled.blocks_simulated),
                grouped(sampled.blocks),
                sampled.waves,
                if sampled.waves == 1 { "" } else { "s" },
                grouped(sampled.simulated_cycles)
            ),
            None => String::new(),
        })
    }

    /// The warp-cycles of each source line, every instruction of the line
    /// summed (not only its memory accesses: arithmetic waits too), most
    /// first, ties in source order; lines without any are left out. Empty
    /// without the timing model.
    pub fn waits_by_line(&self) -> Vec<LineWaits> {
        let mut rows: Vec<LineWaits> = Vec::new();
        let mut row_of: HashMap<(&str, u32), usize> = HashMap::new();
        for instruction in &self.instructions {
            let Some(timing) = &instruction.timing else {
                continue;
            };
            let key = (instruction.file.as_str(), instruction.line);
            let index = *row_of.entry(key).or_insert_with(|| {
                rows.push(LineWaits {
                    file: instruction.file.clone(),
                    line: instruction.line,
                    stalls: [0; StallReason::COUNT],
                });
                rows.len() - 1
            });
            for (sum, cycles) in rows[index].stalls.iter_mut().zip(&timing.stalls) {
                *sum += cycles;
            }
        }
        rows.retain(|row| row.warp_cycles() > 0);
        rows.sort_by(|a, b| {
            b.warp_cycles()
                .cmp(&a.warp_cycles())
                .then_with(|| (a.file.as_str(), a.line).cmp(&(b.file.as_str(), b.line)))
        });
        rows
    }

    /// "Where the warps wait": the source lines of `waits` with the most
    /// warp-cycles (at most [`WAIT_TABLE_LINES`]), each with its three
    /// main reasons and their shares of the line's warp-cycles.
    fn write_wait_rows(&self, waits: &[LineWaits], out: &mut String) {
        let shown = &waits[..waits.len().min(WAIT_TABLE_LINES)];
        if shown.len() < waits.len() {
            let _ = writeln!(
                out,
                "where the warps wait: the {} of {} source lines with the most warp-cycles",
                shown.len(),
                waits.len()
            );
        } else {
            let _ = writeln!(out, "where the warps wait");
        }
        let locations: Vec<String> = shown
            .iter()
            .map(|row| format!("{}:{}", row.file, row.line))
            .collect();
        let location_width = locations.iter().map(String::len).max().unwrap_or(0).max(6);
        let _ = writeln!(
            out,
            "{:<location_width$}  {:>11}  reasons",
            "source", "warp-cycles"
        );
        for (row, location) in shown.iter().zip(&locations) {
            let total = row.warp_cycles();
            let reasons: Vec<String> = row
                .top_reasons(3)
                .into_iter()
                .map(|(reason, cycles)| {
                    let name = reason.ncu_name();
                    let name = name.strip_prefix("stall_").unwrap_or(name);
                    format!("{name} {}", percent(cycles as f64 / total as f64))
                })
                .collect();
            let _ = writeln!(
                out,
                "{location:<location_width$}  {total:>11}  {}",
                reasons.join(", ")
            );
        }
    }

    /// One row per instruction that touched shared, global, local,
    /// constant or generic memory.
    fn write_instruction_rows(&self, out: &mut String) {
        let rows: Vec<&InstructionReport> = self
            .instructions
            .iter()
            // Parameter loads are bookkeeping, not data traffic.
            .filter(|row| row.space.is_some_and(|space| space != StateSpace::Param))
            .collect();
        let locations: Vec<String> = rows
            .iter()
            .map(|row| format!("{}:{}", row.file, row.line))
            .collect();
        let location_width = locations.iter().map(String::len).max().unwrap_or(0).max(6);
        let text_width = rows
            .iter()
            .map(|row| row.text.len())
            .max()
            .unwrap_or(0)
            .clamp(11, 48);
        // Code inlined from a device function or a header: the innermost
        // place it came from, in a last column shown only when there is one.
        let inlined = rows.iter().any(|row| !row.inlined_from.is_empty());
        let from = |row: &InstructionReport| match row.inlined_from.first() {
            Some(place) if inlined => format!("  {}:{}", place.file, place.line),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "{:<location_width$}  {:<text_width$}  {:>9}  {:>10}  {:>9}  {:>9}  {:>5}{}  {:>8}{}",
            "source",
            "instruction",
            "executed",
            "wavefronts",
            "ideal",
            "conflicts",
            "ways",
            self.conflict_cycles_header(),
            "sectors",
            if inlined { "  inlined from" } else { "" }
        );
        for (row, location) in rows.iter().zip(&locations) {
            let mut text = row.text.clone();
            if text.len() > text_width {
                text.truncate(text_width - 1);
                text.push('~');
            }
            let counts = MemoryCounts::new(row.space, &row.counts);
            let _ = writeln!(
                out,
                "{location:<location_width$}  {text:<text_width$}  {:>9}  {}{}",
                row.counts.executed,
                counts.columns(self.conflict_cycles_cell(&row.counts)),
                from(row)
            );
        }
    }

    /// One row per source line and access kind ([`Report::rollup`]).
    fn write_line_rows(&self, out: &mut String) {
        let locations: Vec<String> = self
            .lines
            .iter()
            .map(|row| format!("{}:{}", row.file, row.line))
            .collect();
        let location_width = locations.iter().map(String::len).max().unwrap_or(0).max(6);
        let accesses: Vec<String> = self.lines.iter().map(LineReport::access).collect();
        let access_width = accesses.iter().map(String::len).max().unwrap_or(0).max(6);
        // Code inlined from device functions or headers: every place the
        // row's instructions came from, in a last column shown only when
        // some row has one.
        let inlined = self.lines.iter().any(|row| !row.inlined_from.is_empty());
        let _ = writeln!(
            out,
            "{:<location_width$}  {:<access_width$}  {:>6}  {:>9}  {:>10}  {:>9}  {:>9}  {:>5}{}  {:>8}{}",
            "source",
            "access",
            "instrs",
            "executed",
            "wavefronts",
            "ideal",
            "conflicts",
            "ways",
            self.conflict_cycles_header(),
            "sectors",
            if inlined { "  inlined from" } else { "" }
        );
        for ((row, location), access) in self.lines.iter().zip(&locations).zip(&accesses) {
            let from = if inlined && !row.inlined_from.is_empty() {
                let places: Vec<String> = row
                    .inlined_from
                    .iter()
                    .map(|place| format!("{}:{}", place.file, place.line))
                    .collect();
                format!("  {}", places.join(", "))
            } else {
                String::new()
            };
            let counts = MemoryCounts::new(Some(row.space), &row.counts);
            let _ = writeln!(
                out,
                "{location:<location_width$}  {access:<access_width$}  {:>6}  {:>9}  {}{from}",
                row.instructions,
                row.counts.executed,
                counts.columns(self.conflict_cycles_cell(&row.counts)),
            );
        }
    }

    /// The `conflict cycles` column's header, after `ways`, when the
    /// timing model ran (empty otherwise: no column).
    fn conflict_cycles_header(&self) -> &'static str {
        if self.timing.is_some() {
            "  conflict cycles"
        } else {
            ""
        }
    }

    /// A row's conflict cycles for the `conflict cycles` column, when the
    /// timing model ran.
    fn conflict_cycles_cell(&self, counts: &InstrStats) -> Option<u64> {
        self.timing.as_ref().map(|_| counts.conflict_cycles)
    }

    /// The totals: each nvprof name with its value, and beside it the
    /// Nsight Compute metric that counts the same thing ([`Report::totals_rows`]).
    fn write_totals(&self, out: &mut String) {
        let _ = writeln!(out, "{:<38}{:>12}  Nsight Compute", "nvprof", "value");
        for (nvprof, value, nsight) in self.totals_rows() {
            let line = format!("{nvprof:<38}{value:>12}  {nsight}");
            let _ = writeln!(out, "{}", line.trim_end());
        }
    }

    /// The totals as (nvprof name, value, Nsight Compute name) rows; a name
    /// is empty where that tool has none for the quantity.
    pub fn totals_rows(&self) -> Vec<(&'static str, String, &'static str)> {
        let totals = &self.totals;
        let per_request = |kind: &SharedTotals| {
            if kind.requests == 0 {
                "0".to_string()
            } else {
                format!("{:.2}", kind.wavefronts as f64 / kind.requests as f64)
            }
        };
        let shared = [
            &totals.shared_load,
            &totals.shared_store,
            &totals.shared_atomic,
        ];
        let sum =
            |field: fn(&SharedTotals) -> u64| shared.iter().map(|kind| field(kind)).sum::<u64>();
        let load = &totals.shared_load;
        let store = &totals.shared_store;
        let atomic = &totals.shared_atomic;
        vec![
            (
                "shared_ld_requests",
                load.requests.to_string(),
                NSIGHT_SHARED_LD_REQUESTS,
            ),
            (
                "shared_ld_transactions",
                load.wavefronts.to_string(),
                NSIGHT_SHARED_LD_WAVEFRONTS,
            ),
            (
                "shared_ld_bank_conflict",
                load.bank_conflicts.to_string(),
                NSIGHT_SHARED_LD_BANK_CONFLICTS,
            ),
            (
                "shared_load_transactions_per_request",
                per_request(load),
                "",
            ),
            (
                "shared_st_requests",
                store.requests.to_string(),
                NSIGHT_SHARED_ST_REQUESTS,
            ),
            (
                "shared_st_transactions",
                store.wavefronts.to_string(),
                NSIGHT_SHARED_ST_WAVEFRONTS,
            ),
            (
                "shared_st_bank_conflict",
                store.bank_conflicts.to_string(),
                NSIGHT_SHARED_ST_BANK_CONFLICTS,
            ),
            (
                "shared_store_transactions_per_request",
                per_request(store),
                "",
            ),
            ("shared_atom_requests", atomic.requests.to_string(), ""),
            (
                "shared_atom_bank_conflict",
                atomic.bank_conflicts.to_string(),
                "",
            ),
            (
                "",
                sum(|kind| kind.wavefronts).to_string(),
                NSIGHT_SOURCE_WAVEFRONTS_SHARED,
            ),
            (
                "",
                sum(|kind| kind.ideal_wavefronts).to_string(),
                NSIGHT_SOURCE_WAVEFRONTS_SHARED_IDEAL,
            ),
            (
                "",
                sum(|kind| kind.bank_conflicts).to_string(),
                NSIGHT_SOURCE_WAVEFRONTS_SHARED_EXCESSIVE,
            ),
            (
                "gld_requests",
                totals.global_load.requests.to_string(),
                NSIGHT_GLOBAL_LD_REQUESTS,
            ),
            (
                "gld_sectors",
                totals.global_load.sectors.to_string(),
                NSIGHT_GLOBAL_LD_SECTORS,
            ),
            (
                "gst_requests",
                totals.global_store.requests.to_string(),
                NSIGHT_GLOBAL_ST_REQUESTS,
            ),
            (
                "gst_sectors",
                totals.global_store.sectors.to_string(),
                NSIGHT_GLOBAL_ST_SECTORS,
            ),
            (
                "warp_instructions",
                totals.warp_instructions.to_string(),
                NSIGHT_WARP_INSTRUCTIONS,
            ),
            (
                "thread_instructions",
                totals.thread_instructions.to_string(),
                "",
            ),
        ]
    }
}

// The names of the totals. The nvprof names are the ones this table has
// always printed, in nvprof's vocabulary (`shared_ld_transactions`,
// `shared_ld_bank_conflict`, `shared_load_transactions_per_request`, ...).
// The Nsight Compute names below were each confirmed, not guessed: the six
// shared-memory metrics are the ones NVIDIA's own Nsight Compute rule
// `SharedMemoryConflicts.py` (2023) requests, the four global ones those of
// its rule `MemoryCacheAccessPattern.py`; the three `memory_l1_wavefronts_
// shared*` names are the Source Counters section's per-instruction metrics
// ("L1 Wavefronts Shared", "... Ideal", "... Excessive") as ncu exports them,
// summed here over every shared-memory instruction; `smsp__inst_executed.sum`
// is the one `../shared/reference/timing.md` compares warp instructions
// with. NVIDIA's documentation pages with the full metric list were not at
// hand to check against. No `..._op_atom` name of the shared-memory
// wavefront or bank-conflict counters could be confirmed, so shared atomics
// have no Nsight Compute name here.

/// Shared-memory load instructions executed (warp level): requests.
pub const NSIGHT_SHARED_LD_REQUESTS: &str = "smsp__sass_inst_executed_op_shared_ld.sum";
pub const NSIGHT_SHARED_ST_REQUESTS: &str = "smsp__sass_inst_executed_op_shared_st.sum";
/// Shared-memory wavefronts of loads and of stores.
pub const NSIGHT_SHARED_LD_WAVEFRONTS: &str =
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum";
pub const NSIGHT_SHARED_ST_WAVEFRONTS: &str =
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum";
/// Bank conflicts of shared-memory loads and of stores.
pub const NSIGHT_SHARED_LD_BANK_CONFLICTS: &str =
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum";
pub const NSIGHT_SHARED_ST_BANK_CONFLICTS: &str =
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum";
/// The Source Counters section's shared-memory wavefronts, ideal and
/// excessive, per instruction (summed for the totals).
pub const NSIGHT_SOURCE_WAVEFRONTS_SHARED: &str = "memory_l1_wavefronts_shared";
pub const NSIGHT_SOURCE_WAVEFRONTS_SHARED_IDEAL: &str = "memory_l1_wavefronts_shared_ideal";
pub const NSIGHT_SOURCE_WAVEFRONTS_SHARED_EXCESSIVE: &str =
    "derived__memory_l1_wavefronts_shared_excessive";
/// Global-memory requests and sectors of loads and of stores.
pub const NSIGHT_GLOBAL_LD_REQUESTS: &str = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum";
pub const NSIGHT_GLOBAL_ST_REQUESTS: &str = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum";
pub const NSIGHT_GLOBAL_LD_SECTORS: &str = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
pub const NSIGHT_GLOBAL_ST_SECTORS: &str = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum";
/// Warp instructions executed. The hardware counts SASS instructions and
/// warpsim PTX ones, so the two agree only as far as the PTX is the SASS
/// (`../shared/reference/timing.md` uses this metric for that comparison).
pub const NSIGHT_WARP_INSTRUCTIONS: &str = "smsp__inst_executed.sum";

/// `value` as pretty JSON ending with a newline, the form of every JSON the
/// command writes (the report, `check`'s findings).
pub fn json_text<T: Serialize + ?Sized>(value: &T) -> String {
    // Serialising plain data with string keys cannot fail.
    serde_json::to_string_pretty(value).unwrap_or_default() + "\n"
}

/// The memory columns of a table row: wavefronts, ideal, conflicts and ways
/// where the row reached shared memory, sectors where it reached global
/// memory, `-` where it did not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct MemoryCounts {
    shared: Option<(u64, u64, u64)>,
    sectors: Option<u64>,
}

impl MemoryCounts {
    /// The columns of a row that accessed `space` (`None` for a
    /// non-memory instruction).
    pub(crate) fn new(space: Option<StateSpace>, counts: &InstrStats) -> MemoryCounts {
        // A generic access shows the columns of the spaces it reached.
        let is_shared = space == Some(StateSpace::Shared) || counts.shared_requests > 0;
        let is_global = space == Some(StateSpace::Global) || counts.global_requests > 0;
        MemoryCounts {
            shared: is_shared.then_some((
                counts.wavefronts,
                counts.ideal_wavefronts,
                counts.bank_conflicts,
            )),
            sectors: is_global.then_some(counts.sectors),
        }
    }

    /// `wavefronts  ideal  conflicts  ways  sectors`, aligned under the
    /// tables' headers; with `conflict_cycles` (the timing model ran), a
    /// `conflict cycles` cell after `ways`, `-` where the row had no
    /// shared access.
    fn columns(&self, conflict_cycles: Option<u64>) -> String {
        let [wavefronts, ideal, conflicts, ways, sectors] = self.cells("-");
        let cost = match conflict_cycles {
            None => String::new(),
            Some(_) if self.shared.is_none() => format!("  {:>15}", "-"),
            Some(cycles) => format!("  {cycles:>15}"),
        };
        format!("{wavefronts:>10}  {ideal:>9}  {conflicts:>9}  {ways:>5}{cost}  {sectors:>8}")
    }

    /// Adds another row's counts: a column is present when either has it.
    pub(crate) fn add(&mut self, other: MemoryCounts) {
        if let Some((wavefronts, ideal, conflicts)) = other.shared {
            let sum = self.shared.get_or_insert((0, 0, 0));
            sum.0 += wavefronts;
            sum.1 += ideal;
            sum.2 += conflicts;
        }
        if let Some(sectors) = other.sectors {
            *self.sectors.get_or_insert(0) += sectors;
        }
    }

    pub(crate) fn has_bank_conflicts(&self) -> bool {
        self.shared.is_some_and(|(_, _, conflicts)| conflicts > 0)
    }

    /// The cells wavefronts, ideal, conflicts, ways and sectors, `absent`
    /// where the row had no such access.
    pub(crate) fn cells(&self, absent: &str) -> [String; 5] {
        let [wavefronts, ideal, conflicts, ways] = match self.shared {
            Some((wavefronts, ideal, conflicts)) => [
                wavefronts.to_string(),
                ideal.to_string(),
                conflicts.to_string(),
                ways(wavefronts, ideal),
            ],
            None => std::array::from_fn(|_| absent.to_string()),
        };
        let sectors = self
            .sectors
            .map_or_else(|| absent.to_string(), |sectors| sectors.to_string());
        [wavefronts, ideal, conflicts, ways, sectors]
    }
}

/// `12,345,678`: a count with its thousands grouped, for the header.
fn grouped(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (position, digit) in digits.chars().enumerate() {
        if position > 0 && (digits.len() - position).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// A fraction as a whole percentage: `0.456` is `46%`.
fn percent(fraction: f64) -> String {
    format!("{:.0}%", fraction * 100.0)
}

/// `ld`, `st`, `atom`, `red`, `cp.async`: the kind of access as PTX spells it.
pub fn op_name(op: MemoryAccessKind) -> &'static str {
    match op {
        MemoryAccessKind::Load => "ld",
        MemoryAccessKind::Store => "st",
        MemoryAccessKind::Atomic => "atom",
        MemoryAccessKind::Reduction => "red",
        MemoryAccessKind::AsyncCopy => "cp.async",
    }
}

/// The average conflict degree: wavefronts per ideal wavefront, e.g. "32.0".
pub fn ways(wavefronts: u64, ideal: u64) -> String {
    if ideal == 0 {
        "-".to_string()
    } else {
        format!("{:.1}", wavefronts as f64 / ideal as f64)
    }
}

/// Adds one instruction's requests to the totals, by what its lanes really
/// touched: a generic access counts where its addresses resolved.
fn accumulate(totals: &mut Totals, op: MemoryAccessKind, stats: &InstrStats) {
    let (shared, global) = match op {
        MemoryAccessKind::Load => (&mut totals.shared_load, &mut totals.global_load),
        MemoryAccessKind::Store => (&mut totals.shared_store, &mut totals.global_store),
        MemoryAccessKind::Atomic | MemoryAccessKind::Reduction => {
            (&mut totals.shared_atomic, &mut totals.global_atomic)
        }
        // A `cp.async` stores into shared memory what it loads from global
        // memory: its wavefronts are a shared store's, its sectors a global
        // load's.
        MemoryAccessKind::AsyncCopy => (&mut totals.shared_store, &mut totals.global_load),
    };
    shared.requests += stats.shared_requests;
    shared.wavefronts += stats.wavefronts;
    shared.ideal_wavefronts += stats.ideal_wavefronts;
    shared.bank_conflicts += stats.bank_conflicts;
    global.requests += stats.global_requests;
    global.sectors += stats.sectors;
}

#[cfg(test)]
mod tests {
    use warpsim_machine::timing::{Occupancy, OccupancyLimit};

    use super::*;

    /// A launch the timing model could have measured: 12,345 cycles at
    /// 1,755 MHz, 1.84 warp instructions per active cycle over 4
    /// sub-partitions, half the warp slots resident of the three quarters
    /// that registers allow.
    fn launch_timing() -> LaunchTiming {
        LaunchTiming {
            cycles: 12_345,
            busiest_sm_cycles: 12_000,
            clock_mhz: 1755,
            sm_count: 132,
            sms_used: 8,
            sub_partitions: 4,
            warp_instructions: 18_400,
            sm_active_cycles: 10_000,
            resident_warp_cycles: 320_000,
            max_warps_per_sm: 64,
            occupancy: Occupancy {
                blocks_per_sm: 3,
                limited_by: OccupancyLimit::Registers,
                warps_per_block: 16,
                theoretical: 0.75,
            },
            blocks: 8,
            waves: 8.0 / 396.0,
            l1_hit_sectors: 100,
            l2_hit_sectors: 60,
            dram_sectors: 40,
            dram_bytes: 1280,
            sampled: None,
        }
    }

    fn stalls(cycles: &[(StallReason, u64)]) -> [u64; StallReason::COUNT] {
        let mut stalls = [0; StallReason::COUNT];
        for &(reason, count) in cycles {
            stalls[reason as usize] = count;
        }
        stalls
    }

    fn instruction(
        index: usize,
        text: &str,
        line: u32,
        access: Option<(StateSpace, MemoryAccessKind)>,
        counts: InstrStats,
        timed: bool,
    ) -> InstructionReport {
        InstructionReport {
            index,
            text: text.to_string(),
            file: "k.cu".to_string(),
            line,
            inlined_from: Vec::new(),
            space: access.map(|(space, _)| space),
            op: access.map(|(_, op)| op),
            counts,
            timing: timed.then(|| InstructionTiming::of(&counts)),
        }
    }

    /// A shared load with a two-way conflict at line 10, a global load and
    /// an addition at line 12, a store at line 14, and the parameter load
    /// at line 8: with the timing model's counters when `timed`.
    fn sample_report(timed: bool) -> Report {
        use MemoryAccessKind::{Load, Store};
        use StallReason::*;
        let instructions = vec![
            instruction(
                0,
                "ld.param.u64 %rd1, [p]",
                8,
                Some((StateSpace::Param, Load)),
                InstrStats {
                    executed: 4,
                    threads: 128,
                    stalls: stalls(&[(Selected, 4)]),
                    ..Default::default()
                },
                timed,
            ),
            instruction(
                1,
                "ld.shared.f32 %f1, [%r2]",
                10,
                Some((StateSpace::Shared, Load)),
                InstrStats {
                    executed: 4,
                    threads: 128,
                    shared_requests: 4,
                    wavefronts: 8,
                    ideal_wavefronts: 4,
                    bank_conflicts: 4,
                    stalls: stalls(&[(Selected, 4), (NotSelected, 6), (ShortScoreboard, 30)]),
                    conflict_cycles: 8,
                    ..Default::default()
                },
                timed,
            ),
            instruction(
                2,
                "ld.global.f32 %f2, [%rd2]",
                12,
                Some((StateSpace::Global, Load)),
                InstrStats {
                    executed: 4,
                    threads: 128,
                    global_requests: 4,
                    sectors: 16,
                    stalls: stalls(&[
                        (Selected, 12),
                        (NotSelected, 20),
                        (Wait, 7),
                        (LongScoreboard, 61),
                    ]),
                    ..Default::default()
                },
                timed,
            ),
            instruction(
                3,
                "add.f32 %f3, %f1, %f2",
                12,
                None,
                InstrStats {
                    executed: 4,
                    threads: 128,
                    stalls: stalls(&[(Wait, 10)]),
                    ..Default::default()
                },
                timed,
            ),
            instruction(
                4,
                "st.global.f32 [%rd2], %f3",
                14,
                Some((StateSpace::Global, Store)),
                InstrStats {
                    executed: 4,
                    threads: 128,
                    global_requests: 4,
                    sectors: 16,
                    ..Default::default()
                },
                timed,
            ),
        ];
        Report {
            kernel: "k".to_string(),
            source: "k.cu.ptx".to_string(),
            device: "Hopper (sm_90)".to_string(),
            grid: [8, 1, 1],
            block: [512, 1, 1],
            shared_bytes: 0,
            static_shared_bytes: 128,
            registers_per_thread: 40,
            registers_source: crate::RegisterSource::LaunchFile,
            registers_note: None,
            status: "ok",
            error: None,
            blocks_run: 8,
            failed_blocks: 0,
            timing: timed.then(|| TimingReport::new(&launch_timing())),
            lines: Report::rollup(&instructions),
            instructions,
            totals: Totals::default(),
            findings: None,
            printf_output: String::new(),
            printf_dropped_bytes: 0,
        }
    }

    const HEADER: &str = "k  grid (8,1,1)  block (512,1,1)  shared 128 B (128 static + 0 dynamic)  on Hopper (sm_90)  regs 40 (launch file)\n";

    #[test]
    fn the_timing_line_follows_the_header() {
        let report = sample_report(true);
        assert_eq!(
            report.timing_line().unwrap(),
            "cycles 12,345 (7.03 us at 1755 MHz)  IPC 1.84  issue slots 46%  occupancy 50% achieved of 75% theoretical (limited by registers, 3 blocks/SM)  waves 0.02\n"
        );
        assert!(report
            .to_table()
            .starts_with(&format!("{HEADER}{}\n", report.timing_line().unwrap())));
        assert_eq!(sample_report(false).timing_line(), None);
    }

    #[test]
    fn the_line_table_gains_conflict_cycles_and_where_the_warps_wait() {
        let table = sample_report(true).to_table_by(TableView::Lines);
        let rows = "\
source   access     instrs   executed  wavefronts      ideal  conflicts   ways  conflict cycles   sectors
k.cu:10  ld.shared       1          4           8          4          4    2.0                8         -
k.cu:12  ld.global       1          4           -          -          -      -                -        16
k.cu:14  st.global       1          4           -          -          -      -                -        16

where the warps wait
source   warp-cycles  reasons
k.cu:12          110  long_scoreboard 55%, not_selected 18%, wait 15%
k.cu:10           40  short_scoreboard 75%, not_selected 15%, selected 10%
k.cu:8             4  selected 100%

nvprof";
        let body = table.split_once("waves 0.02\n\n").unwrap().1;
        assert!(body.starts_with(rows), "{table}");
    }

    #[test]
    fn the_instruction_table_gains_conflict_cycles() {
        let table = sample_report(true).to_table_by(TableView::Instructions);
        let rows = "\
source   instruction                 executed  wavefronts      ideal  conflicts   ways  conflict cycles   sectors
k.cu:10  ld.shared.f32 %f1, [%r2]           4           8          4          4    2.0                8         -
k.cu:12  ld.global.f32 %f2, [%rd2]          4           -          -          -      -                -        16
k.cu:14  st.global.f32 [%rd2], %f3          4           -          -          -      -                -        16

where the warps wait";
        let body = table.split_once("waves 0.02\n\n").unwrap().1;
        assert!(body.starts_with(rows), "{table}");
    }

    #[test]
    fn without_timing_the_table_has_no_timing_parts() {
        let table = sample_report(false).to_table_by(TableView::Lines);
        let rows = "\
source   access     instrs   executed  wavefronts      ideal  conflicts   ways   sectors
k.cu:10  ld.shared       1          4           8          4          4    2.0         -
k.cu:12  ld.global       1          4           -          -          -      -        16
k.cu:14  st.global       1          4           -          -          -      -        16

nvprof";
        assert!(table.starts_with(&format!("{HEADER}\n{rows}")), "{table}");
        assert!(!table.contains("where the warps wait"));
    }

    #[test]
    fn where_the_warps_wait_lists_the_ten_busiest_lines() {
        let mut report = sample_report(true);
        report.instructions = (0..12u32)
            .map(|line| {
                let counts = InstrStats {
                    stalls: stalls(&[(StallReason::Barrier, u64::from(line) + 1)]),
                    ..Default::default()
                };
                instruction(line as usize, "bar.sync 0", line + 1, None, counts, true)
            })
            .collect();
        let waits = report.waits_by_line();
        assert_eq!(waits.len(), 12);
        assert_eq!(waits[0].line, 12);
        let table = report.to_table();
        let section = table.split_once("where the warps wait").unwrap().1;
        let section = section.split_once("\n\n").unwrap().0;
        assert!(section.starts_with(
            ": the 10 of 12 source lines with the most warp-cycles\nsource   warp-cycles  reasons\nk.cu:12           12  barrier 100%\n"
        ), "{section}");
        assert!(
            section.ends_with("\nk.cu:3             3  barrier 100%"),
            "{section}"
        );
        assert_eq!(section.lines().count(), 12);
    }

    #[test]
    fn the_json_carries_the_timing() {
        let report = sample_report(true);
        let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
        assert_eq!(json["cycles"], 12_345);
        assert_eq!(json["busiest_sm_cycles"], 12_000);
        assert_eq!(json["time_us"], 12_345.0 / 1755.0);
        assert_eq!(json["clock_mhz"], 1755);
        assert_eq!(json["ipc"], 1.84);
        assert_eq!(json["issue_slot_utilisation"], 0.46);
        assert_eq!(json["waves"], 8.0 / 396.0);
        assert_eq!(json["sms_used"], 8);
        assert_eq!(
            json["occupancy"],
            serde_json::json!({
                "theoretical": 0.75,
                "achieved": 0.5,
                "blocks_per_sm": 3,
                "warps_per_block": 16,
                "limited_by": "registers",
            })
        );
        assert_eq!(
            json["memory"],
            serde_json::json!({
                "l1_hit_sectors": 100,
                "l2_hit_sectors": 60,
                "dram_sectors": 40,
                "dram_bytes": 1280,
            })
        );
        let shared_load = &json["instructions"][1];
        assert_eq!(
            shared_load["stalls"],
            serde_json::json!({"selected": 4, "stall_not_selected": 6, "stall_short_scoreboard": 30})
        );
        assert_eq!(shared_load["conflict_cycles"], 8);
        assert_eq!(shared_load["bank_conflicts"], 4);
        // An instruction with no warp-cycles has an empty object.
        assert_eq!(json["instructions"][4]["stalls"], serde_json::json!({}));
        assert_eq!(json["instructions"][4]["conflict_cycles"], 0);
        // The rollup's rows carry their instructions' sums.
        assert_eq!(json["lines"][0]["conflict_cycles"], 8);
        assert_eq!(
            json["lines"][1]["stalls"],
            serde_json::json!({"selected": 12, "stall_not_selected": 20, "stall_wait": 7, "stall_long_scoreboard": 61})
        );
        // Reasons are listed in `StallReason::ALL` order.
        let text = report.to_json();
        assert!(text.contains(
            "\"stalls\": {\n        \"selected\": 12,\n        \"stall_not_selected\": 20,\n        \"stall_wait\": 7,\n        \"stall_long_scoreboard\": 61\n      },\n      \"conflict_cycles\": 0"
        ), "{text}");
    }

    #[test]
    fn without_timing_the_json_has_its_old_keys_only() {
        let json: serde_json::Value =
            serde_json::from_str(&sample_report(false).to_json()).unwrap();
        let keys = |value: &serde_json::Value| -> Vec<String> {
            let mut keys: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
            keys.sort_unstable();
            keys
        };
        let mut expected = vec![
            "kernel",
            "source",
            "device",
            "grid",
            "block",
            "shared_bytes",
            "static_shared_bytes",
            "registers_per_thread",
            "registers_source",
            "status",
            "error",
            "blocks_run",
            "failed_blocks",
            "instructions",
            "lines",
            "totals",
        ];
        expected.sort_unstable();
        assert_eq!(keys(&json), expected);
        let mut instruction = vec![
            "index",
            "text",
            "file",
            "line",
            "space",
            "op",
            "executed",
            "threads",
            "shared_requests",
            "global_requests",
            "wavefronts",
            "ideal_wavefronts",
            "bank_conflicts",
            "sectors",
        ];
        instruction.sort_unstable();
        assert_eq!(keys(&json["instructions"][1]), instruction);
        let mut line = vec![
            "file",
            "line",
            "space",
            "op",
            "instructions",
            "executed",
            "threads",
            "shared_requests",
            "global_requests",
            "wavefronts",
            "ideal_wavefronts",
            "bank_conflicts",
            "sectors",
        ];
        line.sort_unstable();
        assert_eq!(keys(&json["lines"][0]), line);
    }
}
