//! The dynamic barrier checker of one block: it watches every barrier
//! episode (the arrivals between two completions of one barrier id) and
//! every warp-synchronous instruction, and records [`Finding`]s against the
//! rules of the PTX ISA ("Parallel Synchronization and Communication
//! Instructions": `bar`/`barrier` are `.aligned`, so every thread of a warp
//! must execute the same barrier instruction; a warp must not arrive twice
//! before a barrier completes; `bar.red` must not be mixed with `bar.sync` or
//! `bar.arrive` on one barrier) and the CUDA Programming Guide
//! (`__syncthreads()` in conditional code only where the condition is the
//! same for the whole block).
//!
//! The checker only observes: it never changes what the block does. Its
//! findings are a pure function of the block's (deterministic) execution.
//! Hangs (deadlocks, livelocks) end the block; the block turns them into
//! findings with [`Finding::from_hang`].
//!
//! Where it departs from the letter of the rules, and why:
//! - A barrier skipped by threads that then exit is reported when the
//!   static uniformity analysis finds the barrier reachable by divergent
//!   control flow (including a barrier that threads skip on their way to
//!   the exit with nothing after it), or when lanes of a warp that took
//!   part in earlier phases of the barrier exit while others of their warp
//!   arrive (a loop around it whose trip count differs per thread, left
//!   for the exit). Threads that return early, before a barrier they never
//!   reached, are not expected there (PTX: exited threads do not count;
//!   compute-sanitizer's synccheck is silent about all of these on an
//!   H100), while threads that skip a barrier inside an `if` and go on are
//!   not synchronised.
//! - Livelock is proved, not guessed: once some thread has waited for
//!   `barriers.livelock_window` warp instructions without progress (a store,
//!   an atomic that changed memory, a barrier arrival, an exit), the block's
//!   state is fingerprinted at the end of every scheduling round, and a
//!   fingerprint seen before with no progress in between means the block
//!   loops for ever. A spin loop that stores (even the value already there)
//!   is progress each time, so it ends at the instruction limit instead,
//!   which is reported as a livelock when some thread was waiting.
//! - "More threads than the count" is judged per barrier instruction over
//!   the whole block: the distinct threads that wait at one `bar.sync a, b`
//!   exceed `b`. A producer/consumer loop reusing a counted barrier with the
//!   same warps is not affected.
//! - Barrier id 16 and up stop the block (the PTX ISA allows 0 to 15); an
//!   H100 runs such a kernel as if the id were valid.

use crate::config::BarrierSemantics;
use crate::error::{ExecError, FaultKind, SpinLoop, Waiting};
use crate::findings::{
    add_lanes, thread_count, thread_ranges, Finding, FindingKind, Severity, Site, WarpLanes,
};
use crate::initcheck::{ReadSpace, UninitializedReads};
use crate::program::Program;

/// One path's arrival at a barrier.
#[derive(Clone, Copy, Debug)]
struct Arrival {
    warp: u32,
    pc: u32,
    lanes: u32,
    reduction: bool,
}

/// The open phase of one barrier: every arrival since it last completed,
/// and per warp what the checks at completion need, kept up to date at each
/// arrival so that completing costs one pass over the warps.
#[derive(Debug, Default)]
struct Episode {
    arrivals: Vec<Arrival>,
    /// Per warp: the lanes that arrived (0: the warp has not arrived).
    lanes: Vec<u32>,
    /// Per warp: its live lanes and the instruction at its first arrival.
    first_live: Vec<u32>,
    first_pc: Vec<u32>,
    /// Per warp: it arrived at more than one instruction; some of its lanes
    /// arrived twice.
    split: Vec<bool>,
    twice: Vec<bool>,
    /// Whether `bar.red` and other barrier instructions arrived.
    reductions: bool,
    plain: bool,
    /// Per warp: the lanes live when this phase began, and the lanes that
    /// arrived in some earlier phase of the barrier (kept across phases).
    start_live: Vec<u32>,
    participated: Vec<u32>,
}

impl Episode {
    fn reset(&mut self, warps: usize) {
        self.arrivals.clear();
        for per_warp in [&mut self.lanes, &mut self.first_live, &mut self.first_pc] {
            per_warp.clear();
            per_warp.resize(warps, 0);
        }
        for per_warp in [&mut self.split, &mut self.twice] {
            per_warp.clear();
            per_warp.resize(warps, false);
        }
        self.reductions = false;
        self.plain = false;
    }

    /// The threads that arrived at `pc`, of the warps `include` accepts.
    fn threads_at(&self, pc: u32, include: impl Fn(u32) -> bool) -> Vec<WarpLanes> {
        let mut threads: Vec<WarpLanes> = Vec::new();
        for arrival in &self.arrivals {
            if arrival.pc != pc || !include(arrival.warp) {
                continue;
            }
            add_lanes(
                &mut threads,
                WarpLanes {
                    warp: arrival.warp,
                    lanes: arrival.lanes,
                },
            );
        }
        threads
    }

    /// The distinct instructions arrived at, in order.
    fn pcs(&self) -> Vec<u32> {
        let mut pcs: Vec<u32> = self.arrivals.iter().map(|arrival| arrival.pc).collect();
        pcs.sort_unstable();
        pcs.dedup();
        pcs
    }
}

/// The threads of a block that have waited at one barrier instruction with
/// a thread count, since the block last completed a barrier with all its
/// threads.
#[derive(Debug)]
struct CountedWaiters {
    pc: u32,
    id: u32,
    count: u32,
    lanes: Vec<u32>,
    total: u32,
}

/// What the checker knows of a block.
#[derive(Debug, Default)]
pub(crate) struct BlockChecker {
    block: [u32; 3],
    semantics: BarrierSemantics,
    /// The open phase of each barrier a thread of the block arrived at
    /// so far: those of barriers below `open_episodes` belong to this
    /// block, the others are left from earlier blocks to reuse their
    /// allocations. Most kernels use barrier 0 alone, and every resident
    /// block has a checker, so they are made when first needed.
    episodes: Vec<Episode>,
    open_episodes: usize,
    /// Lanes that hold a thread, and lanes not exited, per warp.
    valid: Vec<u32>,
    live: Vec<u32>,
    findings: Vec<Finding>,
    counted_waiters: Vec<CountedWaiters>,
    /// The uninitialized reads found so far, one per instruction and memory,
    /// each with the index of the finding that holds its place in
    /// `findings` (so that findings stay in the order they were found);
    /// their findings are made when the block ends, with every thread and
    /// byte they read.
    uninitialized: Vec<(usize, UninitializedReads)>,
    /// The block's instruction count at the last observable progress: a
    /// store to shared or global memory, an atomic that changed memory, a
    /// barrier arrival, a warp-sync release, an exit.
    pub last_progress: u64,
}

impl BlockChecker {
    /// The open phase of barrier `id`, which began when the block started
    /// if no thread arrived at the barrier before.
    fn episode(&mut self, id: u32) -> &mut Episode {
        let id = id as usize;
        while self.open_episodes <= id {
            if self.episodes.len() == self.open_episodes {
                self.episodes.push(Episode::default());
            }
            let warps = self.valid.len();
            let episode = &mut self.episodes[self.open_episodes];
            episode.reset(warps);
            episode.start_live.clear();
            episode.start_live.extend_from_slice(&self.valid);
            episode.participated.clear();
            episode.participated.resize(warps, 0);
            self.open_episodes += 1;
        }
        &mut self.episodes[id]
    }

    pub fn reset(&mut self, block: [u32; 3], semantics: BarrierSemantics, valid: &[u32]) {
        self.block = block;
        self.semantics = semantics;
        self.open_episodes = 0;
        self.valid.clear();
        self.valid.extend_from_slice(valid);
        self.live.clear();
        self.live.extend_from_slice(valid);
        self.findings.clear();
        self.counted_waiters.clear();
        self.uninitialized.clear();
        self.last_progress = 0;
    }

    /// The block's findings, in the order they were found; called when the
    /// block has ended, so findings about the whole block are made here.
    /// `program` names the shared variables of uninitialized reads, and
    /// `fresh_fill` is the byte fresh memory holds.
    pub fn take_findings(&mut self, program: &Program, fresh_fill: u8) -> Vec<Finding> {
        for (index, reads) in self.uninitialized.drain(..) {
            let mut finding = reads.finding(program, fresh_fill);
            finding.block = self.block;
            self.findings[index] = finding;
        }
        self.report_overfull_counts();
        std::mem::take(&mut self.findings)
    }

    /// `lanes` of `warp` read `space` bytes `first..end` (shared offsets, or
    /// offsets in each thread's local memory) at `pc` before they were
    /// written. Repeats at the same instruction join its first finding.
    #[cold]
    #[allow(clippy::too_many_arguments)]
    pub fn uninitialized_read(
        &mut self,
        pc: u32,
        space: ReadSpace,
        atomic: bool,
        warp: u32,
        lanes: u32,
        first: u64,
        end: u64,
    ) {
        let known = self
            .uninitialized
            .iter()
            .position(|(_, reads)| reads.pc == pc && reads.space == space);
        let position = known.unwrap_or_else(|| {
            // A stand-in until the block ends; nothing else reads it.
            let mut placeholder = Finding::new(FindingKind::UninitializedRead, Severity::Error, "");
            placeholder.block = self.block;
            self.findings.push(placeholder);
            self.uninitialized.push((
                self.findings.len() - 1,
                UninitializedReads::new(pc, space, atomic),
            ));
            self.uninitialized.len() - 1
        });
        self.uninitialized[position].1.add(warp, lanes, first, end);
    }

    /// Records a finding. One of the same kind, saying the same, at the same
    /// instructions (other warps, later rounds of a loop) adds its threads
    /// to the first.
    #[cold]
    pub fn report(&mut self, mut finding: Finding) {
        finding.block = self.block;
        let same = |other: &Finding| {
            other.kind == finding.kind
                && other.message == finding.message
                && other.sites.len() == finding.sites.len()
                && other
                    .sites
                    .iter()
                    .zip(&finding.sites)
                    .all(|(a, b)| a.pc == b.pc)
        };
        match self.findings.iter_mut().find(|other| same(other)) {
            Some(first) => {
                for (site, more) in first.sites.iter_mut().zip(finding.sites) {
                    for entry in more.threads {
                        add_lanes(&mut site.threads, entry);
                    }
                }
            }
            None => self.findings.push(finding),
        }
    }

    pub fn exited(&mut self, warp: u32, lanes: u32) {
        if let Some(live) = self.live.get_mut(warp as usize) {
            *live &= !lanes;
        }
    }

    /// `lanes` of `warp` arrive at barrier `id` (already checked to be in
    /// range) at `arrival_pc`; `waits` is false for `bar.arrive`.
    #[cold]
    #[allow(clippy::too_many_arguments)]
    pub fn arrive(
        &mut self,
        id: u32,
        arrival_pc: u32,
        warp: u32,
        lanes: u32,
        waits: bool,
        reduction: bool,
        count: Option<u32>,
    ) {
        let w = warp as usize;
        if w >= self.valid.len() {
            return;
        }
        if let (Some(count), true) = (count, waits) {
            self.count_waiters(id, arrival_pc, warp, lanes, count);
        }
        let episode = &*self.episode(id);
        let again = episode.lanes[w] & lanes != 0;
        let mixed = if reduction {
            episode.plain
        } else {
            episode.reductions
        };
        let earlier_twice = again
            .then(|| {
                episode
                    .arrivals
                    .iter()
                    .find(|earlier| earlier.warp == warp && earlier.lanes & lanes != 0)
                    .copied()
            })
            .flatten();
        let earlier_mixed = mixed
            .then(|| {
                episode
                    .arrivals
                    .iter()
                    .find(|earlier| earlier.reduction != reduction)
                    .copied()
            })
            .flatten();
        if again {
            self.report_twice(id, arrival_pc, warp, lanes, earlier_twice);
        }
        if mixed {
            self.report_mixed(id, arrival_pc, warp, lanes, reduction, earlier_mixed);
        }
        let live = self.live[w];
        let episode = self.episode(id);
        if episode.lanes[w] == 0 {
            episode.first_pc[w] = arrival_pc;
            episode.first_live[w] = live;
        } else if episode.first_pc[w] != arrival_pc {
            episode.split[w] = true;
        }
        episode.twice[w] |= again;
        episode.lanes[w] |= lanes;
        episode.reductions |= reduction;
        episode.plain |= !reduction;
        episode.arrivals.push(Arrival {
            warp,
            pc: arrival_pc,
            lanes,
            reduction,
        });
    }

    #[cold]
    fn report_twice(
        &mut self,
        id: u32,
        arrival_pc: u32,
        warp: u32,
        lanes: u32,
        earlier: Option<Arrival>,
    ) {
        let mut finding = Finding::new(
            FindingKind::InvalidBarrier,
            Severity::Error,
            format!(
                "a warp arrives at barrier {id} again before the barrier has completed; a warp must not arrive twice in one barrier phase"
            ),
        );
        let again = earlier.map_or(lanes, |earlier| earlier.lanes & lanes);
        let threads = vec![WarpLanes { warp, lanes: again }];
        finding.sites.push(Site::new(
            arrival_pc,
            threads.clone(),
            "arrives again here",
            true,
        ));
        if let Some(earlier) = earlier {
            finding
                .sites
                .push(Site::new(earlier.pc, threads, "first arrived here", false));
        }
        self.report(finding);
    }

    #[cold]
    fn report_mixed(
        &mut self,
        id: u32,
        arrival_pc: u32,
        warp: u32,
        lanes: u32,
        reduction: bool,
        earlier: Option<Arrival>,
    ) {
        let label = |reduction: bool| {
            if reduction {
                "`bar.red` here"
            } else {
                "`bar.sync`/`bar.arrive` here"
            }
        };
        let mut finding = Finding::new(
            FindingKind::InvalidBarrier,
            Severity::Error,
            format!(
                "barrier {id} is used by `bar.red` and by `bar.sync`/`bar.arrive` in the same phase; the PTX ISA leaves the result of mixing them unpredictable"
            ),
        );
        finding.sites.push(Site::new(
            arrival_pc,
            vec![WarpLanes { warp, lanes }],
            label(reduction),
            true,
        ));
        if let Some(earlier) = earlier {
            finding.sites.push(Site::new(
                earlier.pc,
                vec![WarpLanes {
                    warp: earlier.warp,
                    lanes: earlier.lanes,
                }],
                label(!reduction),
                false,
            ));
        }
        self.report(finding);
    }

    /// Counts the threads that wait at a barrier instruction with a thread
    /// count (by instruction and barrier id, which may come from a register).
    fn count_waiters(&mut self, id: u32, pc: u32, warp: u32, lanes: u32, count: u32) {
        let warps = self.valid.len();
        let position = match self
            .counted_waiters
            .iter()
            .position(|entry| entry.pc == pc && entry.id == id)
        {
            Some(position) => position,
            None => {
                self.counted_waiters.push(CountedWaiters {
                    pc,
                    id,
                    count,
                    lanes: vec![0; warps],
                    total: 0,
                });
                self.counted_waiters.len() - 1
            }
        };
        let entry = &mut self.counted_waiters[position];
        let new = lanes & !entry.lanes[warp as usize];
        entry.lanes[warp as usize] |= new;
        entry.total += new.count_ones();
        entry.count = entry.count.min(count);
    }

    /// More threads of the block waited at one barrier instruction, between
    /// two completions of a barrier by the whole block, than its thread
    /// count: they were split into phases in the order they happened to
    /// arrive, so which threads synchronised with which depends on timing.
    fn report_overfull_counts(&mut self) {
        let overfull: Vec<CountedWaiters> = self
            .counted_waiters
            .drain(..)
            .filter(|entry| entry.total > entry.count)
            .collect();
        for entry in overfull {
            let threads: Vec<WarpLanes> = entry
                .lanes
                .iter()
                .enumerate()
                .filter(|(_, lanes)| **lanes != 0)
                .map(|(warp, &lanes)| WarpLanes {
                    warp: warp as u32,
                    lanes,
                })
                .collect();
            let mut finding = Finding::new(
                FindingKind::InvalidBarrier,
                Severity::Error,
                format!(
                    "{} threads of the block wait at this barrier {} whose thread count is {}: they are split into phases in whatever order they arrive, so which threads synchronise with which depends on timing",
                    entry.total, entry.id, entry.count
                ),
            );
            finding.sites.push(Site::new(
                entry.pc,
                threads,
                format!(
                    "{} threads wait here; the count is {}",
                    entry.total, entry.count
                ),
                true,
            ));
            self.report(finding);
        }
    }

    /// Barrier `id` completed: checks its phase. `counted` says whether it
    /// had an explicit thread count; `non_uniform(pc)` whether the static
    /// analysis found the barrier at `pc` reachable by divergent control flow.
    #[cold]
    pub fn complete(&mut self, id: u32, counted: bool, non_uniform: impl Fn(u32) -> bool) {
        let pre_volta = self.semantics == BarrierSemantics::PreVolta;
        let warps = self.valid.len();
        let mut episode = std::mem::take(self.episode(id));
        let pcs = episode.pcs();
        // The lanes of a warp that were live when it first arrived but did
        // not arrive: still live now, or exited later after skipping a
        // barrier reached by divergent control flow. Lanes that return early,
        // before a barrier that the whole block reaches, are not expected
        // (with per-warp arrival they are still live when it completes).
        // Lanes of a warp that took part in earlier phases of this barrier
        // and exited in this one while others of their warp arrived: a loop
        // around the barrier whose trip count differs between the lanes of
        // a warp, left for the exit. Lanes that never arrived are early
        // returns, not expected.
        let live = &self.live;
        let left_the_loop_of = |w: usize| {
            if episode.lanes[w] == 0 || pre_volta {
                return 0;
            }
            episode.start_live[w] & episode.participated[w] & !episode.lanes[w] & !live[w]
        };
        let absent_of = |w: usize| {
            if episode.lanes[w] == 0 {
                return 0;
            }
            let absent = episode.first_live[w] & !episode.lanes[w];
            if non_uniform(episode.first_pc[w]) {
                absent | left_the_loop_of(w)
            } else if pre_volta {
                0
            } else {
                (absent & live[w]) | left_the_loop_of(w)
            }
        };
        // A warp is divergent at the barrier when its threads arrived at
        // different instructions, or some did not arrive; the same lanes
        // arriving twice is reported as that instead.
        let divergent_at = |w: usize| !episode.twice[w] && (episode.split[w] || absent_of(w) != 0);
        // Lists per warp only for a finding: most barriers complete with
        // every warp whole, and are checked without allocating.
        let any_divergent = (0..warps).any(divergent_at);
        let (left_the_loop, absent, divergent): (Vec<u32>, Vec<u32>, Vec<bool>) = if any_divergent {
            (
                (0..warps).map(left_the_loop_of).collect(),
                (0..warps).map(absent_of).collect(),
                (0..warps).map(divergent_at).collect(),
            )
        } else {
            Default::default()
        };
        if any_divergent {
            let message = if pre_volta {
                format!(
                    "barrier {id} counted a warp as arrived when only some of its threads had reached it: with per-warp arrival (pre-Volta) the threads still on the other side of the branch are not synchronized"
                )
            } else {
                format!(
                    "threads of one warp reached barrier {id} at different barrier instructions or not at all; it completed, as Volta and later GPUs allow, but a barrier is `.aligned`: every thread of a warp must execute the same barrier instruction"
                )
            };
            let mut finding = Finding::new(
                FindingKind::DivergentBarrierInWarp,
                if pre_volta {
                    Severity::Error
                } else {
                    Severity::Warning
                },
                message,
            );
            for (index, &pc) in pcs.iter().enumerate() {
                let threads = episode.threads_at(pc, |warp| divergent[warp as usize]);
                if threads.is_empty() {
                    continue;
                }
                let label = format!("{} threads arrived here", thread_count(&threads));
                finding
                    .sites
                    .push(Site::new(pc, threads, label, index == 0));
            }
            let absent: Vec<WarpLanes> = (0..warps)
                .filter(|&w| divergent[w] && absent[w] != 0)
                .map(|w| WarpLanes {
                    warp: w as u32,
                    lanes: absent[w],
                })
                .collect();
            if !absent.is_empty() {
                finding.notes.push(format!(
                    "threads {} of these warps had not reached the barrier when it completed",
                    thread_ranges(&absent)
                ));
            }
            let left: Vec<WarpLanes> = (0..warps)
                .filter(|&w| divergent[w] && left_the_loop[w] != 0)
                .map(|w| WarpLanes {
                    warp: w as u32,
                    lanes: left_the_loop[w],
                })
                .collect();
            if !left.is_empty() {
                finding.notes.push(format!(
                    "threads {} had arrived at barrier {id} before, then exited without arriving this time: a loop around the barrier whose trip count differs between the threads of a warp",
                    thread_ranges(&left)
                ));
            }
            self.report(finding);
        } else if pcs.len() > 1 && !counted {
            let mut finding = Finding::new(
                FindingKind::DivergentBarrierInBlock,
                Severity::Warning,
                format!(
                    "warps of the block waited at different instructions of barrier {id}; the barrier completed, but `__syncthreads()` must be reached by every thread of the block at the same place"
                ),
            );
            for (index, &pc) in pcs.iter().enumerate() {
                let threads = episode.threads_at(pc, |_| true);
                let label = format!("{} threads arrived here", thread_count(&threads));
                finding
                    .sites
                    .push(Site::new(pc, threads, label, index == 0));
            }
            self.report(finding);
        }
        // Threads that skipped a barrier reached by divergent control flow
        // and exited: the barrier completed only because they left. With
        // per-warp arrival a warp that arrived counted whole, so only warps
        // without any arrival skipped it.
        if !counted && pcs.iter().any(|&pc| non_uniform(pc)) {
            let skipped: Vec<WarpLanes> = (0..warps)
                .map(|w| WarpLanes {
                    warp: w as u32,
                    lanes: if pre_volta && episode.lanes[w] != 0 {
                        0
                    } else {
                        self.valid[w] & !episode.lanes[w]
                    },
                })
                .filter(|entry| entry.lanes != 0)
                .collect();
            if !skipped.is_empty() {
                let total: u32 = self.valid.iter().map(|lanes| lanes.count_ones()).sum();
                let skipped_count = thread_count(&skipped);
                let mut finding = Finding::new(
                    FindingKind::BarrierCompletedByExit,
                    Severity::Warning,
                    format!(
                        "barrier {id} completed with {} of the block's {total} threads, only because the other {skipped_count} had exited: CUDA requires every thread of the block to reach `__syncthreads()`; Volta and later GPUs do not count exited threads, but threads that skip a barrier and go on are not synchronized",
                        total - skipped_count
                    ),
                );
                for (index, &pc) in pcs.iter().enumerate() {
                    let threads = episode.threads_at(pc, |_| true);
                    let label = format!("{} threads arrived here", thread_count(&threads));
                    finding
                        .sites
                        .push(Site::new(pc, threads, label, index == 0));
                }
                finding.notes.push(format!(
                    "threads {} had exited without arriving in this phase of barrier {id}",
                    thread_ranges(&skipped)
                ));
                self.report(finding);
            }
        }
        // Phases of counted barriers cannot mix across a barrier that the
        // whole block completed.
        if !counted {
            let overfull_before = self
                .counted_waiters
                .iter()
                .any(|entry| entry.total > entry.count);
            if overfull_before {
                self.report_overfull_counts();
            }
            self.counted_waiters.clear();
        }
        for (participated, lanes) in episode.participated.iter_mut().zip(&episode.lanes) {
            *participated |= lanes;
        }
        episode.reset(warps);
        episode.start_live.clear();
        episode.start_live.extend_from_slice(&self.live);
        *self.episode(id) = episode;
    }
}

impl Finding {
    /// The finding for a block that ended in a deadlock, a livelock, an
    /// invalid barrier, or at the instruction limit while some of its
    /// threads waited: every stuck path with what it waits for (paths of
    /// several warps at one place and in one state share a site), and for
    /// every barrier with arrivals, who is missing.
    pub fn from_hang(error: &ExecError) -> Option<Finding> {
        let some_wait = error.warps.iter().any(|warp| {
            warp.paths
                .iter()
                .any(|path| matches!(path.waiting, Waiting::Barrier(_) | Waiting::WarpSync(_)))
        });
        let (kind, message) = match &error.kind {
            FaultKind::Deadlock => (
                FindingKind::Deadlock,
                "deadlock: no thread of the block can move again".to_string(),
            ),
            FaultKind::Livelock {
                not_resident: Some(block),
                ..
            } => (
                FindingKind::Deadlock,
                format!(
                    "deadlock across blocks: every resident block spins polling global memory that only another block can change, and the blocks it waits for cannot become resident until one of the spinning blocks exits: block ({},{},{}) is the next in line; a GPU hangs here too",
                    block[0], block[1], block[2]
                ),
            ),
            FaultKind::Livelock {
                across_blocks: true,
                ..
            } => (
                FindingKind::Livelock,
                "livelock across blocks: threads spin polling global memory that no thread of the launch changes any more (a flag never set, a counter that never reaches its target, a grid-wide barrier waiting for blocks that already left)".to_string(),
            ),
            FaultKind::Livelock { .. } if some_wait => (
                FindingKind::Livelock,
                "livelock: threads spin in a loop that came back to the same state with nothing stored in between, so it never ends, while other threads wait for them at a barrier or a warp-synchronous instruction".to_string(),
            ),
            FaultKind::Livelock { .. } => (
                FindingKind::Livelock,
                "livelock: threads spin in a loop that came back to the same state with nothing stored in between, so it never ends".to_string(),
            ),
            FaultKind::InstructionLimit { limit } if some_wait => (
                FindingKind::Livelock,
                format!(
                    "livelock: the block ran {limit} warp instructions (limits.max_warp_instructions_per_block) while some of its threads waited at a barrier for the others"
                ),
            ),
            FaultKind::InvalidBarrier { message } => {
                (FindingKind::InvalidBarrier, message.clone())
            }
            FaultKind::MbarrierDeadlock { .. } => (
                FindingKind::MbarrierDeadlock,
                "mbarrier deadlock: threads wait on mbarrier phases that can never complete: no thread that has not arrived will arrive, and no copy in flight completes their transactions".to_string(),
            ),
            _ => return None,
        };
        let mut finding = Finding::new(kind, Severity::Error, message);
        finding.block = error.block;
        if let Some(site) = &error.site {
            finding.sites.push(Site::new(
                site.pc,
                vec![WarpLanes {
                    warp: site.warp,
                    lanes: 1 << site.lane,
                }],
                "here",
                true,
            ));
            return Some(finding);
        }
        let mut exited = Vec::new();
        for warp in &error.warps {
            for path in &warp.paths {
                let threads = WarpLanes {
                    warp: warp.warp,
                    lanes: path.lanes,
                };
                let spin = error
                    .spinning
                    .iter()
                    .find(|spin| spin.warp == warp.warp && spin.pc == path.pc);
                let (pc, last_pc, label, primary) = match (path.waiting, spin) {
                    (Waiting::Barrier(id), _) => {
                        (path.pc, None, format!("stuck here: waiting at barrier {id}"), true)
                    }
                    (Waiting::WarpSync(mask), _) => (
                        path.pc,
                        None,
                        format!(
                            "stuck here: waiting at a warp-synchronous instruction with mask {mask:#010x}"
                        ),
                        true,
                    ),
                    (Waiting::Reconvergence, _) => (
                        path.pc,
                        None,
                        "waiting here for the other paths of its warp to reconverge".to_string(),
                        false,
                    ),
                    (
                        Waiting::Running,
                        Some(SpinLoop {
                            mbarrier: Some(wait),
                            ..
                        }),
                    ) => (
                        wait.pc,
                        None,
                        format!("stuck here: waiting for {}", wait.describe()),
                        true,
                    ),
                    (Waiting::Running, Some(spin)) => {
                        let polled = match &spin.polled {
                            Some(address) => format!(", polling {address}"),
                            None => String::new(),
                        };
                        (
                            spin.loop_start,
                            Some(spin.loop_end),
                            format!("spinning in this loop{polled}"),
                            true,
                        )
                    }
                    (Waiting::Running, None) => (
                        path.pc,
                        None,
                        "stuck here: running, never reaches the barrier".to_string(),
                        true,
                    ),
                };
                let same = finding
                    .sites
                    .iter_mut()
                    .find(|site| site.pc == pc && site.label == label);
                match same {
                    Some(site) => add_lanes(&mut site.threads, threads),
                    None => {
                        let mut site = Site::new(pc, vec![threads], label, primary);
                        site.last_pc = last_pc;
                        finding.sites.push(site);
                    }
                }
            }
            if warp.exited != 0 {
                exited.push(WarpLanes {
                    warp: warp.warp,
                    lanes: warp.exited,
                });
            }
        }
        if !exited.is_empty() {
            finding
                .notes
                .push(format!("threads {} have exited", thread_ranges(&exited)));
        }
        for barrier in &error.barriers {
            let waiting: Vec<WarpLanes> = error
                .warps
                .iter()
                .flat_map(|warp| {
                    warp.paths
                        .iter()
                        .filter(|path| path.waiting == Waiting::Barrier(barrier.id))
                        .map(move |path| WarpLanes {
                            warp: warp.warp,
                            lanes: path.lanes,
                        })
                })
                .collect();
            // Live threads not waiting here: every lane of an unfinished
            // warp's paths (a reconvergence entry holds the lanes of the
            // paths above it too) less those waiting at this barrier.
            let missing: Vec<WarpLanes> = error
                .warps
                .iter()
                .map(|warp| {
                    let all = warp.paths.iter().fold(0, |lanes, path| lanes | path.lanes);
                    let here = waiting
                        .iter()
                        .filter(|entry| entry.warp == warp.warp)
                        .fold(0, |lanes, entry| lanes | entry.lanes);
                    WarpLanes {
                        warp: warp.warp,
                        lanes: all & !here,
                    }
                })
                .filter(|entry| entry.lanes != 0)
                .collect();
            let missing_text = if missing.is_empty() {
                "; every thread that has not exited is here, so the count can never be reached"
                    .to_string()
            } else {
                format!(
                    "; missing: threads {} (where they stand is marked above)",
                    thread_ranges(&missing)
                )
            };
            finding.notes.push(format!(
                "barrier {}: {} of {} expected threads arrived (threads {}){missing_text}",
                barrier.id,
                barrier.arrived,
                barrier.expected,
                thread_ranges(&waiting),
            ));
        }
        Some(finding)
    }
}
