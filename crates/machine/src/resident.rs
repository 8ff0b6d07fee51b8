//! Blocks that run side by side: for kernels whose blocks can communicate
//! (global atomics, strong or volatile global accesses), as many blocks as
//! the GPU holds at once (occupancy per SM times the SMs) are resident
//! together and take turns a scheduling round at a time, so that a block
//! can wait for another (a flag, a "last block" reduction, a grid-wide
//! barrier built from atomics), as on a GPU. A block that exits makes room
//! for the next in block order.
//!
//! A block that waits for nothing but another block's memory, while every
//! other resident block does the same and none changes memory any more, is
//! stuck for ever: a livelock across blocks when every block is resident,
//! and a deadlock across blocks when the block they wait for cannot become
//! resident until one of them exits (a real hang on a GPU too).
//!
//! The turns are a fixed order on one host thread, so outputs, counters and
//! findings do not depend on the number of host threads.

use std::sync::atomic::Ordering;

use crate::block::{BlockRunner, LaunchEnv, Round};
use crate::error::{ExecError, FaultKind};
use crate::findings::FindingLog;
use crate::stats::RunStats;
use crate::{lowest_fault, PrintLog, RunControl};

/// What a launch of resident blocks left: counters, the lowest block's
/// fault, the number of blocks that faulted, findings and `printf` output.
pub(crate) struct ResidentOutcome {
    pub stats: RunStats,
    pub first_fault: Option<(u64, ExecError)>,
    pub failed_blocks: u64,
    pub findings: FindingLog,
    pub printed: PrintLog,
}

/// A resident block: its linear index and its runner.
struct Slot<'a> {
    linear: u64,
    runner: BlockRunner<'a>,
}

/// Runs `block_count` blocks, at most `capacity` of them resident at once.
pub(crate) fn run_resident<'a>(
    env: &'a LaunchEnv<'a>,
    control: &RunControl,
    block_count: u64,
    capacity: u64,
    block_at: impl Fn(u64) -> [u32; 3],
) -> ResidentOutcome {
    let mut outcome = ResidentOutcome {
        stats: RunStats::new(env.program.code.len()),
        first_fault: None,
        failed_blocks: 0,
        findings: FindingLog::default(),
        printed: PrintLog::default(),
    };
    let mut slots: Vec<Option<Slot>> = Vec::new();
    let mut spare: Vec<BlockRunner> = Vec::new();
    let mut next = 0u64;
    // Counts the rounds in which some block changed memory.
    let mut memory_epoch = 0u64;
    let start = |next: &mut u64, spare: &mut Vec<BlockRunner<'a>>, stats: &mut RunStats| {
        let mut runner = spare.pop().unwrap_or_else(|| BlockRunner::new(env));
        runner.swap_stats(stats);
        runner.start_block(block_at(*next));
        runner.swap_stats(stats);
        let slot = Slot {
            linear: *next,
            runner,
        };
        *next += 1;
        slot
    };
    while (slots.len() as u64) < capacity.min(block_count) {
        let slot = start(&mut next, &mut spare, &mut outcome.stats);
        slots.push(Some(slot));
    }
    let window = env.config.barriers.livelock_window;
    loop {
        if control.stop.load(Ordering::Relaxed) {
            break;
        }
        let mut active = false;
        let mut all_spinning = true;
        let mut faulted = false;
        for entry in slots.iter_mut() {
            let Some(slot) = entry else {
                continue;
            };
            active = true;
            let before = slot.runner.progress_mark();
            slot.runner.swap_stats(&mut outcome.stats);
            let result = slot.runner.round(memory_epoch);
            slot.runner.swap_stats(&mut outcome.stats);
            if slot.runner.progress_mark() != before {
                memory_epoch += 1;
            }
            match result {
                Ok(Round::Running) => all_spinning = false,
                Ok(Round::Spinning) => {}
                Ok(Round::Finished) | Err(_) => {
                    all_spinning = false;
                    let Some(mut slot) = entry.take() else {
                        continue;
                    };
                    if let Err(error) = result {
                        if error.kind != FaultKind::Interrupted {
                            slot.runner.report_hang(&error);
                            outcome.failed_blocks += 1;
                            outcome.first_fault = lowest_fault(
                                outcome.first_fault.take(),
                                Some((slot.linear, *error)),
                            );
                            faulted = true;
                        }
                    }
                    finish(&mut outcome, control, &mut slot);
                    spare.push(slot.runner);
                    let may_start =
                        (!faulted || control.keep_going) && !control.stop.load(Ordering::Relaxed);
                    if next < block_count && may_start {
                        *entry = Some(start(&mut next, &mut spare, &mut outcome.stats));
                    }
                }
            }
        }
        if !active || (faulted && !control.keep_going) {
            break;
        }
        if all_spinning {
            // No resident block can end its loop: each is stuck, waiting for
            // a block that is not resident, or for one that is stuck too.
            let not_resident = (next < block_count).then(|| block_at(next));
            for slot in slots.iter_mut().filter_map(Option::as_mut) {
                let mut error = slot.runner.livelock_error(window);
                if let FaultKind::Livelock {
                    not_resident: waiting,
                    ..
                } = &mut error.kind
                {
                    *waiting = not_resident;
                }
                slot.runner.report_hang(&error);
                outcome.failed_blocks += 1;
                outcome.first_fault =
                    lowest_fault(outcome.first_fault.take(), Some((slot.linear, error)));
                finish(&mut outcome, control, slot);
            }
            break;
        }
    }
    outcome
}

/// Collects what a block that is done left: its findings and output.
fn finish(outcome: &mut ResidentOutcome, control: &RunControl, slot: &mut Slot) {
    outcome
        .findings
        .add_block(slot.linear, slot.runner.take_findings());
    outcome
        .printed
        .add_block(slot.linear, slot.runner.take_printed());
    control.blocks_done.fetch_add(1, Ordering::Relaxed);
}
