//! Findings of the checker: what a block did at its barriers and
//! warp-synchronous instructions that CUDA's rules forbid or that hangs
//! (PTX ISA, "Parallel Synchronization and Communication Instructions":
//! `bar`, `barrier`, `bar.warp.sync`, `shfl.sync`, `vote.sync`), and the
//! memory it read before writing it (`initcheck.rs`).
//!
//! A finding names places by instruction index (`pc`) and threads by warp
//! and lane mask; the driver turns them into source lines and thread ranges.
//! Findings are collected per block and merged so that the same finding in
//! many blocks (same kind, same instructions) is reported once, at its
//! lowest block, with the number of blocks: the result is the same whatever
//! the number of host threads.

use std::collections::HashMap;

use serde::Serialize;

/// What went wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FindingKind {
    /// Lanes of one warp waited at a barrier while other non-exited lanes of
    /// the same warp were elsewhere or at another barrier instruction.
    DivergentBarrierInWarp,
    /// Warps of a block waited at different instructions of one barrier.
    DivergentBarrierInBlock,
    /// A barrier completed only because threads that skipped it exited.
    BarrierCompletedByExit,
    /// No thread of the block can move again.
    Deadlock,
    /// Threads spin without progress while others wait for them.
    Livelock,
    /// A warp-synchronous instruction (`bar.warp.sync`, `shfl.sync`,
    /// `vote.sync`) with a mask that breaks the rules.
    WarpSync,
    /// A barrier used against its rules (id, thread count, arrivals).
    InvalidBarrier,
    /// Found without running: a block barrier control dependent on a branch
    /// whose condition can differ between the threads of a block.
    NonUniformBarrier,
    /// A load (or an atomic) read shared memory that no thread of the block
    /// had written, or local memory that its thread had not written.
    UninitializedRead,
    /// Two threads of a block accessed the same shared-memory bytes, one
    /// of them writing, with no barrier between (`racecheck.rs`).
    SharedRace,
    /// Two threads accessed the same global-memory bytes, one of them
    /// writing, with nothing in the PTX memory model ordering them
    /// (`global_races.rs`).
    DataRace,
    /// Two strong accesses to the same global bytes, one writing, whose
    /// scopes do not include each other's thread (`.cta` across blocks).
    ScopeRace,
    /// Threads spin on mbarrier waits whose phases nothing can complete
    /// (`async_copy.rs`, PTX ISA 9.7.13.15).
    MbarrierDeadlock,
}

impl FindingKind {
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::DivergentBarrierInWarp => "divergent-barrier-in-warp",
            FindingKind::DivergentBarrierInBlock => "divergent-barrier-in-block",
            FindingKind::BarrierCompletedByExit => "barrier-completed-by-exit",
            FindingKind::Deadlock => "deadlock",
            FindingKind::Livelock => "livelock",
            FindingKind::WarpSync => "warp-sync",
            FindingKind::InvalidBarrier => "invalid-barrier",
            FindingKind::NonUniformBarrier => "non-uniform-barrier",
            FindingKind::UninitializedRead => "uninitialized-read",
            FindingKind::SharedRace => "shared-race",
            FindingKind::DataRace => "data-race",
            FindingKind::ScopeRace => "scope-race",
            FindingKind::MbarrierDeadlock => "mbarrier-deadlock",
        }
    }
}

/// Error: the kernel hangs or its results are corrupt on this configuration.
/// Warning: undefined behaviour that this configuration survives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Warning,
    Error,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// Lanes of one warp of the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarpLanes {
    pub warp: u32,
    pub lanes: u32,
}

/// A place a finding points at: an instruction, the threads there, and what
/// they do there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    pub pc: u32,
    /// With `pc`, the first and last instruction of a loop (livelocks).
    pub last_pc: Option<u32>,
    pub threads: Vec<WarpLanes>,
    pub label: String,
    /// The place the finding is about (the others give context).
    pub primary: bool,
}

impl Site {
    pub fn new(pc: u32, threads: Vec<WarpLanes>, label: impl Into<String>, primary: bool) -> Site {
        Site {
            pc,
            last_pc: None,
            threads,
            label: label.into(),
            primary,
        }
    }
}

/// One finding in one block (or in `blocks` blocks, the first being `block`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub kind: FindingKind,
    pub severity: Severity,
    pub block: [u32; 3],
    /// How many blocks had the same finding at the same instructions.
    pub blocks: u64,
    /// The next blocks (by linear index) that had it, after `block`: at
    /// most [`MAX_NAMED_BLOCKS`] of them.
    pub other_blocks: Vec<[u32; 3]>,
    /// One sentence: what happened and why it matters.
    pub message: String,
    pub sites: Vec<Site>,
    pub notes: Vec<String>,
}

impl Finding {
    pub fn new(kind: FindingKind, severity: Severity, message: impl Into<String>) -> Finding {
        Finding {
            kind,
            severity,
            block: [0; 3],
            blocks: 1,
            other_blocks: Vec::new(),
            message: message.into(),
            sites: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Findings with the same key are the same finding in different blocks.
    fn key(&self) -> (FindingKind, Vec<u32>) {
        (self.kind, self.sites.iter().map(|site| site.pc).collect())
    }

    /// The threads of the primary sites, for one-line summaries.
    pub fn primary_threads(&self) -> Vec<WarpLanes> {
        self.sites
            .iter()
            .filter(|site| site.primary)
            .flat_map(|site| site.threads.iter().copied())
            .collect()
    }
}

/// How many blocks besides the first a finding names.
pub const MAX_NAMED_BLOCKS: usize = 8;

/// The findings of some blocks, merged by key; each keeps the lowest block
/// (by linear index) that had it, and names the next few.
#[derive(Clone, Debug, Default)]
pub struct FindingLog {
    entries: Vec<LogEntry>,
    index: HashMap<(FindingKind, Vec<u32>), usize>,
}

#[derive(Clone, Debug)]
struct LogEntry {
    /// The linear index of the block whose finding this is, and its order
    /// among that block's findings.
    linear: u64,
    order: u32,
    finding: Finding,
    /// The lowest blocks that had it, by linear index, the first included:
    /// at most one more than are named.
    lowest_blocks: Vec<(u64, [u32; 3])>,
}

impl FindingLog {
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Adds the findings of block `linear`, in the order they were found.
    /// A block may find the same thing again (a later phase of a barrier in
    /// a loop, with other counts in its message): that is not another block,
    /// and the first one found stands for it.
    pub fn add_block(&mut self, linear: u64, findings: impl IntoIterator<Item = Finding>) {
        let mut seen = std::collections::HashSet::new();
        for (order, finding) in findings.into_iter().enumerate() {
            if seen.insert(finding.key()) {
                self.add(linear, order as u32, finding);
            }
        }
    }

    fn add(&mut self, linear: u64, order: u32, finding: Finding) {
        let block = finding.block;
        self.add_entry(LogEntry {
            linear,
            order,
            finding,
            lowest_blocks: vec![(linear, block)],
        });
    }

    fn add_entry(&mut self, new: LogEntry) {
        let Some(&position) = self.index.get(&new.finding.key()) else {
            self.index.insert(new.finding.key(), self.entries.len());
            self.entries.push(new);
            return;
        };
        let entry = &mut self.entries[position];
        let blocks = entry.finding.blocks + new.finding.blocks;
        let mut lowest = std::mem::take(&mut entry.lowest_blocks);
        lowest.extend_from_slice(&new.lowest_blocks);
        lowest.sort_unstable_by_key(|&(linear, _)| linear);
        lowest.truncate(MAX_NAMED_BLOCKS + 1);
        if (new.linear, new.order) < (entry.linear, entry.order) {
            *entry = new;
        }
        entry.finding.blocks = blocks;
        entry.lowest_blocks = lowest;
    }

    pub fn merge(&mut self, other: FindingLog) {
        for entry in other.entries {
            self.add_entry(entry);
        }
    }

    /// The findings by first block, then in the order that block found them.
    pub fn into_sorted(self) -> Vec<Finding> {
        let mut entries = self.entries;
        entries.sort_by_key(|entry| (entry.linear, entry.order));
        entries
            .into_iter()
            .map(|entry| {
                let mut finding = entry.finding;
                finding.other_blocks = entry
                    .lowest_blocks
                    .iter()
                    .skip(1)
                    .map(|&(_, block)| block)
                    .collect();
                finding
            })
            .collect()
    }
}

/// Linear thread indices of `threads` (warp * 32 + lane), ascending.
fn thread_indices(threads: &[WarpLanes]) -> Vec<u32> {
    let mut indices: Vec<u32> = threads
        .iter()
        .flat_map(|warp| {
            (0..32)
                .filter(move |lane| warp.lanes >> lane & 1 != 0)
                .map(move |lane| warp.warp * 32 + lane)
        })
        .collect();
    indices.sort_unstable();
    indices.dedup();
    indices
}

/// Threads as ranges of linear thread indices, with a step where lanes
/// alternate: `0-31, 64`, `1-127 step 2`.
pub fn thread_ranges(threads: &[WarpLanes]) -> String {
    let indices = thread_indices(threads);
    let mut parts = Vec::new();
    let mut start = 0;
    while start < indices.len() {
        let first = indices[start];
        let Some(&second) = indices.get(start + 1) else {
            parts.push(first.to_string());
            break;
        };
        let step = second - first;
        let mut end = start + 1;
        while end + 1 < indices.len() && indices[end + 1] - indices[end] == step {
            end += 1;
        }
        let last = indices[end];
        if step == 1 {
            parts.push(format!("{first}-{last}"));
        } else if end - start >= 2 {
            parts.push(format!("{first}-{last} step {step}"));
        } else {
            // Two isolated threads: the first stands alone, the second may
            // start the next run.
            parts.push(first.to_string());
            start += 1;
            continue;
        }
        start = end + 1;
    }
    if parts.is_empty() {
        "none".to_string()
    } else {
        parts.join(", ")
    }
}

/// How many threads `threads` holds (a warp may appear more than once).
pub fn thread_count(threads: &[WarpLanes]) -> u32 {
    let mut merged = Vec::with_capacity(threads.len());
    for &entry in threads {
        add_lanes(&mut merged, entry);
    }
    merged.iter().map(|entry| entry.lanes.count_ones()).sum()
}

/// Adds `entry` to `threads`, joining the lanes of a warp already there.
pub fn add_lanes(threads: &mut Vec<WarpLanes>, entry: WarpLanes) {
    match threads.iter_mut().find(|kept| kept.warp == entry.warp) {
        Some(kept) => kept.lanes |= entry.lanes,
        None => threads.push(entry),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lanes(warp: u32, lanes: u32) -> WarpLanes {
        WarpLanes { warp, lanes }
    }

    #[test]
    fn ranges_merge_runs_and_steps() {
        assert_eq!(thread_ranges(&[lanes(0, u32::MAX)]), "0-31");
        assert_eq!(
            thread_ranges(&[lanes(0, u32::MAX), lanes(2, 1)]),
            "0-31, 64"
        );
        assert_eq!(
            thread_ranges(&[lanes(0, 0xaaaa_aaaa), lanes(1, 0xaaaa_aaaa)]),
            "1-63 step 2"
        );
        assert_eq!(thread_ranges(&[lanes(0, 0b1001)]), "0, 3");
        assert_eq!(thread_ranges(&[lanes(0, 0b1011)]), "0-1, 3");
        assert_eq!(thread_ranges(&[]), "none");
        assert_eq!(thread_count(&[lanes(0, 0xf), lanes(0, 0x3)]), 4);
    }

    #[test]
    fn a_finding_repeated_within_a_block_counts_that_block_once() {
        let finding = |arrived: u32| {
            let mut finding = Finding::new(
                FindingKind::BarrierCompletedByExit,
                Severity::Warning,
                format!("completed with {arrived} threads"),
            );
            finding
                .sites
                .push(Site::new(7, vec![lanes(0, 1)], "here", true));
            finding
        };
        let mut log = FindingLog::default();
        // Three phases of one barrier in a loop, in the one block launched.
        log.add_block(0, [finding(48), finding(32), finding(16)]);
        let findings = log.into_sorted();
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].blocks, 1);
        assert_eq!(findings[0].message, "completed with 48 threads");
    }

    #[test]
    fn log_keeps_the_lowest_block_and_counts_blocks() {
        let finding = |block: u32| {
            let mut finding = Finding::new(FindingKind::Deadlock, Severity::Error, "stuck");
            finding.block = [block, 0, 0];
            finding
                .sites
                .push(Site::new(3, vec![lanes(0, 1)], "here", true));
            finding
        };
        let mut left = FindingLog::default();
        left.add_block(5, [finding(5)]);
        let mut right = FindingLog::default();
        right.add_block(2, [finding(2)]);
        right.add_block(9, [finding(9)]);
        left.merge(right);
        let findings = left.into_sorted();
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].block, [2, 0, 0]);
        assert_eq!(findings[0].blocks, 3);
        assert_eq!(findings[0].other_blocks, [[5, 0, 0], [9, 0, 0]]);
    }

    #[test]
    fn a_log_names_the_lowest_blocks_after_the_first() {
        let finding = |block: u32| {
            let mut finding = Finding::new(FindingKind::Livelock, Severity::Error, "spins");
            finding.block = [block, 0, 0];
            finding
                .sites
                .push(Site::new(3, vec![lanes(0, 1)], "here", true));
            finding
        };
        // Blocks 0 to 19 in an order no host would pick, over two logs.
        let mut left = FindingLog::default();
        let mut right = FindingLog::default();
        for block in (0..20).rev() {
            let log = if block % 3 == 0 {
                &mut left
            } else {
                &mut right
            };
            log.add_block(u64::from(block), [finding(block)]);
        }
        left.merge(right);
        let findings = left.into_sorted();
        assert_eq!(findings[0].block, [0, 0, 0]);
        assert_eq!(findings[0].blocks, 20);
        let named: Vec<u32> = findings[0]
            .other_blocks
            .iter()
            .map(|block| block[0])
            .collect();
        assert_eq!(named, (1..=MAX_NAMED_BLOCKS as u32).collect::<Vec<_>>());
    }
}
