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
//! - A barrier skipped by threads that then exit is reported only when the
//!   static uniformity analysis finds the barrier reachable by divergent
//!   control flow: threads that return early, before a barrier, are not
//!   expected there (PTX: exited threads do not count), while threads that
//!   skip a barrier inside an `if` and go on are not synchronised.
//! - Livelock is "no observable progress for `barriers.livelock_window`
//!   warp instructions while some thread waits". Every store or atomic to
//!   shared or global memory counts as progress, even one that writes the
//!   value already there, so a spin loop that stores ends at the instruction
//!   limit instead.
//! - "More threads than the count" is judged per barrier instruction over
//!   the whole block: the distinct threads that wait at one `bar.sync a, b`
//!   exceed `b`. A producer/consumer loop reusing a counted barrier with the
//!   same warps is not affected.
//! - Barrier id 16 and up stop the block (the PTX ISA allows 0 to 15); an
//!   H100 runs such a kernel as if the id were valid.

use crate::config::BarrierSemantics;
use crate::error::{ExecError, FaultKind, Waiting};
use crate::findings::{
    thread_count, thread_ranges, Finding, FindingKind, Severity, Site, WarpLanes,
};

/// One path's arrival at a barrier.
#[derive(Clone, Copy, Debug)]
struct Arrival {
    warp: u32,
    pc: u32,
    lanes: u32,
    /// The warp's lanes that had not exited when these arrived.
    live: u32,
    reduction: bool,
}

/// What the checker knows of a block.
#[derive(Debug, Default)]
pub(crate) struct BlockChecker {
    block: [u32; 3],
    semantics: BarrierSemantics,
    /// The arrivals of the open episode of each barrier.
    episodes: [Vec<Arrival>; 16],
    /// Whether the open episode of each barrier has already been reported as
    /// having more arrivals than its thread count.
    overfull_reported: [bool; 16],
    /// Lanes that hold a thread, and lanes not exited, per warp.
    valid: Vec<u32>,
    live: Vec<u32>,
    findings: Vec<Finding>,
    /// For each waiting barrier instruction with a thread count: the lanes
    /// of each warp that have executed it in this block.
    counted_waiters: Vec<(u32, Vec<u32>)>,
    /// The block's instruction count at the last observable progress: a
    /// store or atomic to shared or global memory, a barrier arrival or
    /// completion, a warp-sync release, an exit.
    pub last_progress: u64,
}

impl BlockChecker {
    pub fn reset(&mut self, block: [u32; 3], semantics: BarrierSemantics, valid: &[u32]) {
        self.block = block;
        self.semantics = semantics;
        for episode in &mut self.episodes {
            episode.clear();
        }
        self.overfull_reported = [false; 16];
        self.valid.clear();
        self.valid.extend_from_slice(valid);
        self.live.clear();
        self.live.extend_from_slice(valid);
        self.findings.clear();
        self.counted_waiters.clear();
        self.last_progress = 0;
    }

    /// The block's findings so far, in the order they were found.
    pub fn take_findings(&mut self) -> Vec<Finding> {
        std::mem::take(&mut self.findings)
    }

    /// Records a finding unless the block already has one of the same kind
    /// at the same instructions (a loop repeats it).
    #[cold]
    pub fn report(&mut self, mut finding: Finding) {
        finding.block = self.block;
        let same = |other: &Finding| {
            other.kind == finding.kind
                && other.sites.len() == finding.sites.len()
                && other
                    .sites
                    .iter()
                    .zip(&finding.sites)
                    .all(|(a, b)| a.pc == b.pc)
        };
        if !self.findings.iter().any(same) {
            self.findings.push(finding);
        }
    }

    pub fn exited(&mut self, warp: u32, lanes: u32) {
        if let Some(live) = self.live.get_mut(warp as usize) {
            *live &= !lanes;
        }
    }

    /// `lanes` of `warp` arrive at barrier `id` (already checked to be in
    /// range) at `pc`; `arrived_after` is the barrier's count with them.
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
        arrived_after: u32,
    ) {
        if let (Some(count), true) = (count, waits) {
            self.count_waiters(id, arrival_pc, warp, lanes, count);
        }
        let episode = &self.episodes[id as usize];
        let again = episode
            .iter()
            .find(|earlier| earlier.warp == warp && earlier.lanes & lanes != 0)
            .copied();
        let mixed = episode
            .iter()
            .find(|earlier| earlier.reduction != reduction)
            .copied();
        if let Some(earlier) = again {
            let threads = vec![WarpLanes {
                warp,
                lanes: earlier.lanes & lanes,
            }];
            let mut finding = Finding::new(
                FindingKind::InvalidBarrier,
                Severity::Error,
                format!(
                    "warp {warp} arrives at barrier {id} again before the barrier has completed; a warp must not arrive twice in one barrier phase"
                ),
            );
            finding.sites.push(Site::new(
                arrival_pc,
                threads.clone(),
                "arrives again here",
                true,
            ));
            finding
                .sites
                .push(Site::new(earlier.pc, threads, "first arrived here", false));
            self.report(finding);
        }
        if let Some(earlier) = mixed {
            let (red_pc, sync_pc) = if reduction {
                (arrival_pc, earlier.pc)
            } else {
                (earlier.pc, arrival_pc)
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
                if reduction {
                    "`bar.red` here"
                } else {
                    "`bar.sync`/`bar.arrive` here"
                },
                true,
            ));
            finding.sites.push(Site::new(
                if reduction { sync_pc } else { red_pc },
                vec![WarpLanes {
                    warp: earlier.warp,
                    lanes: earlier.lanes,
                }],
                if reduction {
                    "`bar.sync`/`bar.arrive` here"
                } else {
                    "`bar.red` here"
                },
                false,
            ));
            self.report(finding);
        }
        if let Some(count) = count {
            if arrived_after > count && !self.overfull_reported[id as usize] {
                self.overfull_reported[id as usize] = true;
                let mut finding = Finding::new(
                    FindingKind::InvalidBarrier,
                    Severity::Error,
                    format!(
                        "{arrived_after} threads arrive at barrier {id} whose thread count is {count}: the count must be at least the number of threads that arrive"
                    ),
                );
                finding.sites.push(Site::new(
                    arrival_pc,
                    vec![WarpLanes { warp, lanes }],
                    format!("these threads make {arrived_after} arrivals"),
                    true,
                ));
                self.report(finding);
            }
        }
        let live = self.live.get(warp as usize).copied().unwrap_or(0);
        self.episodes[id as usize].push(Arrival {
            warp,
            pc: arrival_pc,
            lanes,
            live,
            reduction,
        });
    }

    /// More threads of the block wait at one barrier instruction than its
    /// thread count: they are split into phases in the order they happen to
    /// arrive, so which threads synchronise with which depends on timing.
    fn count_waiters(&mut self, id: u32, pc: u32, warp: u32, lanes: u32, count: u32) {
        let warps = self.valid.len();
        let entry = match self.counted_waiters.iter().position(|(at, _)| *at == pc) {
            Some(position) => &mut self.counted_waiters[position].1,
            None => {
                self.counted_waiters.push((pc, vec![0; warps]));
                &mut self.counted_waiters.last_mut().expect("just pushed").1
            }
        };
        if warp as usize >= entry.len() {
            return;
        }
        let before: u32 = entry.iter().map(|lanes| lanes.count_ones()).sum();
        entry[warp as usize] |= lanes;
        let threads: Vec<WarpLanes> = entry
            .iter()
            .enumerate()
            .filter(|(_, lanes)| **lanes != 0)
            .map(|(warp, &lanes)| WarpLanes {
                warp: warp as u32,
                lanes,
            })
            .collect();
        let total = thread_count(&threads);
        if before <= count && total > count {
            let mut finding = Finding::new(
                FindingKind::InvalidBarrier,
                Severity::Error,
                format!(
                    "{total} threads of the block wait at this barrier {id} whose thread count is {count}: they are split into phases in whatever order they arrive, so which threads synchronise with which depends on timing"
                ),
            );
            finding.sites.push(Site::new(
                pc,
                threads,
                format!("{total} threads wait here; the count is {count}"),
                true,
            ));
            self.report(finding);
        }
    }

    /// Barrier `id` completed: checks its episode. `counted` says whether it
    /// had an explicit thread count; `non_uniform(pc)` whether the static
    /// analysis found the barrier at `pc` reachable by divergent control flow.
    #[cold]
    pub fn complete(&mut self, id: u32, counted: bool, non_uniform: impl Fn(u32) -> bool) {
        let arrivals = std::mem::take(&mut self.episodes[id as usize]);
        self.overfull_reported[id as usize] = false;
        let mut pcs: Vec<u32> = arrivals.iter().map(|arrival| arrival.pc).collect();
        pcs.sort_unstable();
        pcs.dedup();
        let mut warps: Vec<u32> = arrivals.iter().map(|arrival| arrival.warp).collect();
        warps.sort_unstable();
        warps.dedup();
        let lanes_at = |pc: u32, warp_filter: &dyn Fn(u32) -> bool| -> Vec<WarpLanes> {
            let mut threads: Vec<WarpLanes> = Vec::new();
            for arrival in arrivals.iter().filter(|arrival| arrival.pc == pc) {
                if !warp_filter(arrival.warp) {
                    continue;
                }
                match threads.iter_mut().find(|entry| entry.warp == arrival.warp) {
                    Some(entry) => entry.lanes |= arrival.lanes,
                    None => threads.push(WarpLanes {
                        warp: arrival.warp,
                        lanes: arrival.lanes,
                    }),
                }
            }
            threads
        };
        let arrived_lanes = |warp: u32| -> u32 {
            arrivals
                .iter()
                .filter(|arrival| arrival.warp == warp)
                .fold(0, |lanes, arrival| lanes | arrival.lanes)
        };
        // The lanes of a warp that were live when it first arrived but did
        // not arrive: still live now, or exited later after skipping a
        // barrier reached by divergent control flow (lanes that return early,
        // before the barrier, are not expected and are not counted).
        let absent_lanes = |warp: u32| -> u32 {
            let Some(first) = arrivals.iter().find(|arrival| arrival.warp == warp) else {
                return 0;
            };
            let absent = first.live & !arrived_lanes(warp);
            let live_now = self.live.get(warp as usize).copied().unwrap_or(0);
            if non_uniform(first.pc) {
                absent
            } else {
                absent & live_now
            }
        };
        // A warp is divergent at the barrier when its threads arrived at
        // different instructions, or some of its threads did not arrive.
        let divergent_warps: Vec<u32> = warps
            .iter()
            .copied()
            .filter(|&warp| {
                let mut warp_pcs = arrivals
                    .iter()
                    .filter(|arrival| arrival.warp == warp)
                    .map(|arrival| arrival.pc);
                let first = warp_pcs.next();
                let several = warp_pcs.any(|pc| Some(pc) != first);
                // The same lanes arriving twice is reported as such, not
                // as a warp split between instructions.
                let mut seen = 0u32;
                let twice = arrivals
                    .iter()
                    .filter(|arrival| arrival.warp == warp)
                    .any(|arrival| {
                        let overlap = seen & arrival.lanes != 0;
                        seen |= arrival.lanes;
                        overlap
                    });
                !twice && (several || absent_lanes(warp) != 0)
            })
            .collect();
        if !divergent_warps.is_empty() {
            let pre_volta = self.semantics == BarrierSemantics::PreVolta;
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
            let in_divergent = |warp: u32| divergent_warps.contains(&warp);
            for (index, &pc) in pcs.iter().enumerate() {
                let threads = lanes_at(pc, &in_divergent);
                if threads.is_empty() {
                    continue;
                }
                let label = format!("{} threads arrived here", thread_count(&threads));
                finding
                    .sites
                    .push(Site::new(pc, threads, label, index == 0));
            }
            let absent: Vec<WarpLanes> = divergent_warps
                .iter()
                .map(|&warp| WarpLanes {
                    warp,
                    lanes: absent_lanes(warp),
                })
                .filter(|entry| entry.lanes != 0)
                .collect();
            if !absent.is_empty() {
                finding.notes.push(format!(
                    "threads {} of these warps had not reached the barrier when it completed",
                    thread_ranges(&absent)
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
                let threads = lanes_at(pc, &|_| true);
                let label = format!("{} threads arrived here", thread_count(&threads));
                finding
                    .sites
                    .push(Site::new(pc, threads, label, index == 0));
            }
            self.report(finding);
        }
        // Threads that skipped a barrier reached by divergent control flow
        // and exited: the barrier completed only because they left.
        if !counted && pcs.iter().any(|&pc| non_uniform(pc)) {
            // With per-warp arrival a warp that arrived counted whole, so
            // only warps without any arrival skipped the barrier.
            let per_warp = self.semantics == BarrierSemantics::PreVolta;
            let skipped: Vec<WarpLanes> = self
                .valid
                .iter()
                .enumerate()
                .map(|(warp, &valid)| {
                    let arrived = arrived_lanes(warp as u32);
                    WarpLanes {
                        warp: warp as u32,
                        lanes: if per_warp && arrived != 0 {
                            0
                        } else {
                            valid & !arrived
                        },
                    }
                })
                .filter(|entry| entry.lanes != 0)
                .collect();
            if !skipped.is_empty() {
                let total: u32 = self.valid.iter().map(|lanes| lanes.count_ones()).sum();
                let waited = total - thread_count(&skipped);
                let mut finding = Finding::new(
                    FindingKind::BarrierCompletedByExit,
                    Severity::Warning,
                    format!(
                        "barrier {id} completed only because the {} threads that skipped it exited: CUDA requires every thread of the block to reach `__syncthreads()`; Volta and later GPUs do not count exited threads, but the skipped threads were not synchronized",
                        thread_count(&skipped)
                    ),
                );
                for (index, &pc) in pcs.iter().enumerate() {
                    let threads = lanes_at(pc, &|_| true);
                    let label = format!("{waited} of {total} threads arrived here");
                    finding
                        .sites
                        .push(Site::new(pc, threads, label, index == 0));
                }
                finding.notes.push(format!(
                    "threads {} never arrived at barrier {id}; they exited",
                    thread_ranges(&skipped)
                ));
                self.report(finding);
            }
        }
    }
}

impl Finding {
    /// The finding for a block that ended in a deadlock, a livelock or an
    /// invalid barrier: every stuck path with what it waits for, and for
    /// every barrier with arrivals, who is missing.
    pub fn from_hang(error: &ExecError) -> Option<Finding> {
        let (kind, message) = match &error.kind {
            FaultKind::Deadlock => (
                FindingKind::Deadlock,
                "deadlock: no thread of the block can move again".to_string(),
            ),
            FaultKind::Livelock { window } => (
                FindingKind::Livelock,
                format!(
                    "livelock: threads spin without progress (no store, no barrier, no exit in {window} warp instructions) while other threads wait at a barrier for them"
                ),
            ),
            FaultKind::InvalidBarrier { message } => {
                (FindingKind::InvalidBarrier, message.clone())
            }
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
        for warp in &error.warps {
            for path in &warp.paths {
                let threads = vec![WarpLanes {
                    warp: warp.warp,
                    lanes: path.lanes,
                }];
                let (label, primary) = match path.waiting {
                    Waiting::Barrier(id) => (format!("stuck here: waiting at barrier {id}"), true),
                    Waiting::WarpSync(mask) => (
                        format!("stuck here: waiting at a warp-synchronous instruction with mask {mask:#010x}"),
                        true,
                    ),
                    Waiting::Reconvergence => (
                        "waiting here for the other paths of its warp to reconverge".to_string(),
                        false,
                    ),
                    Waiting::Running => {
                        let spin = error
                            .spinning
                            .iter()
                            .find(|spin| spin.warp == warp.warp && spin.pc == path.pc);
                        if let Some(spin) = spin {
                            let polled = match &spin.polled {
                                Some(address) => format!(", polling {address}"),
                                None => String::new(),
                            };
                            let mut site = Site::new(
                                spin.loop_start,
                                threads.clone(),
                                format!("spinning in this loop{polled}; no thread changes what it reads"),
                                true,
                            );
                            site.last_pc = Some(spin.loop_end);
                            finding.sites.push(site);
                            continue;
                        }
                        ("stuck here: running, never reaches the barrier".to_string(), true)
                    }
                };
                finding
                    .sites
                    .push(Site::new(path.pc, threads, label, primary));
            }
            if warp.exited != 0 {
                finding.notes.push(format!(
                    "threads {} have exited",
                    thread_ranges(&[WarpLanes {
                        warp: warp.warp,
                        lanes: warp.exited,
                    }])
                ));
            }
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
