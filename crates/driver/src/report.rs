//! The run report: per instruction, what it executed and what memory it
//! touched; the same counts rolled up per source line and access kind; and
//! totals under the names nvprof and Nsight Compute give them
//! (`shared_ld_bank_conflict` beside
//! `l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum`, and so on).
//! The JSON form is a contract (issue 2); the table is for people.

use std::collections::HashMap;
use std::fmt::Write;

use serde::Serialize;
use warpsim_ir::{instruction_text, Kernel, MemoryAccessKind, Module, StateSpace};
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
    /// ld, st, atom, red; `null` for non-memory instructions.
    pub op: Option<MemoryAccessKind>,
    /// What the instruction did over the launch. A generic access counts
    /// a shared or global request where its addresses resolved.
    #[serde(flatten)]
    pub counts: InstrStats,
}

/// The memory instructions of one source line that do one kind of access
/// (`ld`, `st`, `atom`, `red`) in one state space, their counts summed: a row
/// of the per-line rollup. Parameter loads are left out.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LineReport {
    pub file: String,
    pub line: u32,
    pub space: StateSpace,
    pub op: MemoryAccessKind,
    /// How many instructions of the kernel the row merges.
    pub instructions: u64,
    /// The counts of the row's instructions, summed.
    #[serde(flatten)]
    pub counts: InstrStats,
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
    /// accesses of one line in the order of their first instruction.
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
                    inlined_from: Vec::new(),
                });
                first_seen.push(position);
                rows.len() - 1
            });
            let row = &mut rows[index];
            row.instructions += 1;
            row.counts.add(&instruction.counts);
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
    pub fn to_table_by(&self, view: TableView) -> String {
        let mut out = self.header_line();
        let _ = writeln!(out);
        match view {
            TableView::Lines => self.write_line_rows(&mut out),
            TableView::Instructions => self.write_instruction_rows(&mut out),
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
            "{:<location_width$}  {:<text_width$}  {:>9}  {:>10}  {:>9}  {:>9}  {:>5}  {:>8}{}",
            "source",
            "instruction",
            "executed",
            "wavefronts",
            "ideal",
            "conflicts",
            "ways",
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
                counts.columns(),
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
            "{:<location_width$}  {:<access_width$}  {:>6}  {:>9}  {:>10}  {:>9}  {:>9}  {:>5}  {:>8}{}",
            "source",
            "access",
            "instrs",
            "executed",
            "wavefronts",
            "ideal",
            "conflicts",
            "ways",
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
                counts.columns(),
            );
        }
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
    /// tables' headers.
    fn columns(&self) -> String {
        let [wavefronts, ideal, conflicts, ways, sectors] = self.cells("-");
        format!("{wavefronts:>10}  {ideal:>9}  {conflicts:>9}  {ways:>5}  {sectors:>8}")
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

/// `ld`, `st`, `atom`, `red`: the kind of access as PTX spells it.
pub fn op_name(op: MemoryAccessKind) -> &'static str {
    match op {
        MemoryAccessKind::Load => "ld",
        MemoryAccessKind::Store => "st",
        MemoryAccessKind::Atomic => "atom",
        MemoryAccessKind::Reduction => "red",
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
    };
    shared.requests += stats.shared_requests;
    shared.wavefronts += stats.wavefronts;
    shared.ideal_wavefronts += stats.ideal_wavefronts;
    shared.bank_conflicts += stats.bank_conflicts;
    global.requests += stats.global_requests;
    global.sectors += stats.sectors;
}
