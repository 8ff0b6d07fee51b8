//! The run report: per instruction, what it executed and what memory it
//! touched, with totals in the vocabulary of nvprof and Nsight Compute
//! (`shared_ld_bank_conflict`, `shared_load_transactions_per_request`, L1
//! wavefronts shared, ideal and excessive). The JSON form is a contract (issue
//! 2); the table is for people.

use std::fmt::Write;

use serde::Serialize;
use warpsim_ir::{instruction_text, Kernel, MemoryAccessKind, Module, StateSpace};
use warpsim_machine::{InstrStats, RunStats};

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
    pub inlined_from: Vec<crate::locations::InlinedFrom>,
    /// shared, global, local, param, const, generic; `null` for non-memory instructions.
    pub space: Option<StateSpace>,
    /// ld, st, atom, red; `null` for non-memory instructions.
    pub op: Option<MemoryAccessKind>,
    pub executed: u64,
    pub threads: u64,
    /// Executions that reached shared memory / global memory (a generic
    /// access counts where its addresses resolved).
    pub shared_requests: u64,
    pub global_requests: u64,
    pub wavefronts: u64,
    pub ideal_wavefronts: u64,
    pub bank_conflicts: u64,
    pub sectors: u64,
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
    pub shared_bytes: u32,
    /// "ok", or "failed" when the kernel faulted (the counters are then partial).
    pub status: &'static str,
    /// The fault, one line, when the kernel failed.
    pub error: Option<String>,
    pub blocks_run: u64,
    pub failed_blocks: u64,
    pub instructions: Vec<InstructionReport>,
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
    pub error: Option<String>,
    pub failed_blocks: u64,
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
                executed: stats.executed,
                threads: stats.threads,
                shared_requests: stats.shared_requests,
                global_requests: stats.global_requests,
                wavefronts: stats.wavefronts,
                ideal_wavefronts: stats.ideal_wavefronts,
                bank_conflicts: stats.bank_conflicts,
                sectors: stats.sectors,
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
            status: if input.error.is_some() {
                "failed"
            } else {
                "ok"
            },
            error: input.error,
            blocks_run: input.stats.blocks_run,
            failed_blocks: input.failed_blocks,
            instructions,
            totals,
            findings: None,
            printf_output: input.printf_output,
            printf_dropped_bytes: input.printf_dropped_bytes,
        }
    }

    pub fn to_json(&self) -> String {
        json_text(self)
    }

    /// The table: one row per instruction that touched shared, global, local,
    /// constant or generic memory, then the totals.
    pub fn to_table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{}  grid ({},{},{})  block ({},{},{})  shared {} B  on {}",
            self.kernel,
            self.grid[0],
            self.grid[1],
            self.grid[2],
            self.block[0],
            self.block[1],
            self.block[2],
            self.shared_bytes,
            self.device
        );
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
            "\n{:<location_width$}  {:<text_width$}  {:>9}  {:>10}  {:>9}  {:>9}  {:>5}  {:>8}{}",
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
            let shared = row.space == Some(StateSpace::Shared) || row.shared_requests > 0;
            let (wavefronts, ideal, conflicts, ways) = if shared {
                (
                    row.wavefronts.to_string(),
                    row.ideal_wavefronts.to_string(),
                    row.bank_conflicts.to_string(),
                    ways(row.wavefronts, row.ideal_wavefronts),
                )
            } else {
                ("-".into(), "-".into(), "-".into(), "-".into())
            };
            let sectors = if row.space == Some(StateSpace::Global) || row.global_requests > 0 {
                row.sectors.to_string()
            } else {
                "-".to_string()
            };
            let _ = writeln!(
                out,
                "{location:<location_width$}  {text:<text_width$}  {:>9}  {wavefronts:>10}  {ideal:>9}  {conflicts:>9}  {ways:>5}  {sectors:>8}{}",
                row.executed,
                from(row)
            );
        }
        let totals = &self.totals;
        let per_request = |wavefronts: u64, requests: u64| {
            if requests == 0 {
                "0".to_string()
            } else {
                format!("{:.2}", wavefronts as f64 / requests as f64)
            }
        };
        let _ = writeln!(out);
        // nvprof's four counters of a shared-memory access kind.
        let shared = |short: &str, long: &str, kind: &SharedTotals| {
            [
                (
                    format!("shared_{short}_requests"),
                    kind.requests.to_string(),
                ),
                (
                    format!("shared_{short}_transactions"),
                    kind.wavefronts.to_string(),
                ),
                (
                    format!("shared_{short}_bank_conflict"),
                    kind.bank_conflicts.to_string(),
                ),
                (
                    format!("shared_{long}_transactions_per_request"),
                    per_request(kind.wavefronts, kind.requests),
                ),
            ]
        };
        let [atom_requests, _, atom_conflicts, _] = shared("atom", "atomic", &totals.shared_atomic);
        let lines = shared("ld", "load", &totals.shared_load)
            .into_iter()
            .chain(shared("st", "store", &totals.shared_store))
            .chain([atom_requests, atom_conflicts])
            .chain(
                [
                    ("gld_requests", totals.global_load.requests.to_string()),
                    ("gld_sectors", totals.global_load.sectors.to_string()),
                    ("gst_requests", totals.global_store.requests.to_string()),
                    ("gst_sectors", totals.global_store.sectors.to_string()),
                    ("warp_instructions", totals.warp_instructions.to_string()),
                    (
                        "thread_instructions",
                        totals.thread_instructions.to_string(),
                    ),
                ]
                .map(|(name, value)| (name.to_string(), value)),
            );
        for (name, value) in lines {
            let _ = writeln!(out, "{name:<38}{value:>12}");
        }
        if let Some(error) = &self.error {
            let _ = writeln!(
                out,
                "\nstatus: failed ({} of {} blocks): {error}",
                self.failed_blocks, self.blocks_run
            );
        }
        out
    }
}

/// `value` as pretty JSON ending with a newline, the form of every JSON the
/// command writes (the report, `check`'s findings).
pub fn json_text<T: Serialize + ?Sized>(value: &T) -> String {
    // Serialising plain data with string keys cannot fail.
    serde_json::to_string_pretty(value).unwrap_or_default() + "\n"
}

/// The average conflict degree: wavefronts per ideal wavefront, e.g. "32.0".
fn ways(wavefronts: u64, ideal: u64) -> String {
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
