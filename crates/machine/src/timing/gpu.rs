//! The whole GPU in time: a block scheduler handing blocks to SMs in block
//! order as room frees up, the SMs advancing together in time windows, and
//! the L2 and DRAM they share.
//!
//! SMs advance in windows of `timing.block_launch_latency` cycles. Within a
//! window each SM depends only on the state at the window's start: the L2
//! is read as it was then (plus the SM's own accesses), and DRAM bandwidth
//! is split evenly over the SMs with resident blocks. At the window's end,
//! in SM order, the SMs' L2 accesses are applied, the blocks that left are
//! collected, livelocks are looked for, and the freed slots get the next
//! blocks, in the order they were freed (ties by SM index) — a block freed
//! at cycle `t` starts at `t + block_launch_latency`, never before the
//! window's end, so nothing starts in the past. Windows can therefore run
//! the SMs on the rayon pool, with cycles, counters and findings the same
//! for any number of host threads. Global stores and atomics wait in their
//! block's `StoreBuffer` until the window ends and are applied in SM order
//! then (SM order, then the buffers' order, then issue order), so blocks
//! that race on plain stores see each other's at the same simulated
//! moments on every host, atomics land in one order on every host, and an
//! atomic's old value, which reaches its register then, is the same on
//! every host: kernels whose blocks communicate through atomics and flags
//! run their SMs side by side too. Only the explore model (its weak memory
//! sees every access in one order) and the global race checker run the
//! SMs one after another.
//!
//! Blocks that can wait for each other run side by side as on a GPU: a
//! block spinning on a flag that a resident block sets finishes. When every
//! resident block spins with no memory changing, it is a livelock across
//! blocks, or a deadlock when the block they wait for cannot become
//! resident until one of them exits.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::block::LaunchEnv;
use crate::error::{ExecError, FaultKind};
use crate::findings::FindingLog;
use crate::semantics::HostInstructions;
use crate::stats::RunStats;
use crate::timing::cache::SectorCache;
use crate::timing::operands::instruction_timings;
use crate::timing::shards::ShardOrder;
use crate::timing::sm::{Costs, Shared, Sm, NEVER};
use crate::timing::{LaunchTiming, Occupancy, Timeline};
use crate::{lowest_fault, PrintLog, RunControl};

/// The time window of the explore model, in cycles: short, so that SMs
/// taking turns in random order interleave finely.
const EXPLORE_WINDOW: u64 = 4;

/// The counters of one host thread, which the SMs it runs count into (a
/// runner takes them while it issues). Aligned to 128 bytes (a pair of
/// cache lines, which the host's prefetcher moves together) so that two
/// threads' counters never share a line: each issue writes them.
#[repr(align(128))]
struct ThreadStats(Mutex<RunStats>);

/// Host time of the window loop, for the debug log.
#[derive(Default)]
struct HostTime {
    /// Wall time before the first window (the SMs, the first wave of
    /// blocks), and after the last (the counters gathered, the timeline).
    set_up: Duration,
    finish: Duration,
    windows: u64,
    /// Wall time of the windows' SM phases.
    running: Duration,
    /// Time the SMs ran, summed over host threads: `running` times the
    /// host threads, less this, is time threads waited for each other.
    sm_busy: Duration,
    /// Wall time of the window ends (stores, L2, departures, launches).
    window_ends: Duration,
    /// Of which applying the stores, and filling the L2.
    stores: Duration,
    l2_fills: Duration,
}

/// What a launch left.
pub(crate) struct GpuOutcome {
    pub stats: RunStats,
    pub first_fault: Option<(u64, ExecError)>,
    pub failed_blocks: u64,
    pub findings: FindingLog,
    pub printed: PrintLog,
    pub timing: LaunchTiming,
    pub timeline: Option<Timeline>,
}

impl GpuOutcome {
    /// Takes what the blocks that left `sm` left: findings, output, and
    /// faults (the lowest block's kept). Returns whether one faulted.
    fn collect(&mut self, sm: &mut Sm, control: &RunControl) -> bool {
        let mut faulted = false;
        for departure in sm.departures.drain(..) {
            self.findings
                .add_block(departure.linear, departure.findings);
            self.printed.add_block(departure.linear, departure.printed);
            control.blocks_done.fetch_add(1, Ordering::Relaxed);
            if let Some(error) = departure.error {
                faulted = true;
                self.failed_blocks += 1;
                self.first_fault =
                    lowest_fault(self.first_fault.take(), Some((departure.linear, *error)));
            }
        }
        faulted
    }
}

/// Runs `block_count` blocks on the GPU the configuration describes.
pub(crate) fn run_gpu<'a>(
    env: &'a LaunchEnv<'a>,
    control: &RunControl,
    pool: &rayon::ThreadPool,
    occupancy: Occupancy,
    block_count: u64,
    block_at: impl Fn(u64) -> [u32; 3] + Sync,
    options: crate::RunOptions,
) -> GpuOutcome {
    let began = Instant::now();
    let record_timeline = options.timeline;
    let sample_waves = options.sample_waves;
    let config = env.config;
    let program = env.program;
    let timing_config = &config.timing;
    let costs = Costs::new(timing_config);
    let timings = instruction_timings(program);
    let host = HostInstructions::detect();
    let issue_records = costs.issue_records(program, &timings, host);
    let sm_count = config.device.sm_count;
    let mut sms: Vec<Sm<'a>> = (0..sm_count)
        .map(|index| Sm::new(index, occupancy.blocks_per_sm, timing_config))
        .collect();
    let mut l2 = SectorCache::new(timing_config.l2_bytes, timing_config.l2_ways);
    let host_threads = pool.current_num_threads().max(1);
    let stats_pool: Vec<ThreadStats> = (0..host_threads)
        .map(|_| ThreadStats(Mutex::new(RunStats::new(program.code.len()))))
        .collect();
    let parallel = host_threads > 1 && !env.runs_sms_in_turn();
    let launch_latency = u64::from(timing_config.block_launch_latency);
    // Sampling: only the blocks of the first waves run.
    let capacity = u64::from(occupancy.blocks_per_sm) * u64::from(sm_count);
    let all_blocks = block_count;
    let block_count = if sample_waves > 0 {
        block_count.min(capacity * u64::from(sample_waves))
    } else {
        block_count
    };
    // The explore model interleaves SMs more finely, so that threads of
    // different blocks can run in either order.
    let window = match env.weak_memory {
        Some(weak) if weak.scheduling_noise() => EXPLORE_WINDOW,
        // The exhaustive mode varies start times by single cycles.
        Some(_) => 1,
        None => launch_latency.max(1),
    };
    let start_jitter = || env.weak_memory.map_or(0, |weak| weak.start_jitter());
    let mut outcome = GpuOutcome {
        stats: RunStats::new(program.code.len()),
        first_fault: None,
        failed_blocks: 0,
        findings: FindingLog::default(),
        printed: PrintLog::default(),
        timing: LaunchTiming {
            cycles: 0,
            busiest_sm_cycles: 0,
            clock_mhz: timing_config.clock_mhz,
            sm_count,
            sms_used: 0,
            sub_partitions: config.sm.sub_partitions,
            warp_instructions: 0,
            sm_active_cycles: 0,
            resident_warp_cycles: 0,
            max_warps_per_sm: config.sm.max_warps,
            occupancy,
            blocks: all_blocks,
            waves: all_blocks as f64 / (capacity as f64).max(1.0),
            l1_hit_sectors: 0,
            l2_hit_sectors: 0,
            dram_sectors: 0,
            dram_bytes: 0,
            sampled: None,
        },
        timeline: None,
    };
    // What the SMs read during a window; `active` SMs share the L2's and
    // DRAM's bandwidth (outside a window no SM moves, and 1 will do). A
    // macro, as the L2 is borrowed anew each window.
    macro_rules! view {
        ($l2:expr, $active:expr) => {
            Shared {
                env,
                issue: &issue_records,
                costs: &costs,
                l2: $l2,
                dram_share: f64::from(timing_config.dram_bytes_per_cycle)
                    / ($active as usize).max(1) as f64,
                active_sms: ($active as usize).max(1) as f64,
                record_timeline,
                host,
            }
        };
    }
    let mut next_block = 0u64;
    // The first wave: blocks go round the SMs, one slot at a time, as the
    // hardware's scheduler spreads a launch breadth first.
    'wave: for slot in 0..occupancy.blocks_per_sm as usize {
        for sm in sms.iter_mut() {
            if next_block >= block_count {
                break 'wave;
            }
            let start = launch_latency + start_jitter();
            sm.launch(env, slot, next_block, block_at(next_block), start);
            next_block += 1;
        }
    }
    // How finely the window's end splits the L2's sets among host
    // threads (`shards.rs`).
    let l2_shards = l2.shards(host_threads);
    let mut window_start = 0u64;
    let mut atomic_units = AtomicUnits::default();
    let mut memory_epoch = 0u64;
    let mut progress_fingerprint = 0u64;
    let mut stopping = false;
    // Host time spent running SMs and at window ends, and the SMs' own
    // time summed over host threads: logged at the end, for a reader
    // asking why a launch does not scale with host threads.
    let mut host_time = HostTime::default();
    let log_host_time = tracing::enabled!(tracing::Level::DEBUG);
    // With several host threads the whole loop runs on the pool, so that
    // each window's parallel parts are split among threads already awake
    // rather than handed over from outside the pool (a thread switch and
    // a wake-up of every worker, twice a window).
    let mut window_loop = || {
        loop {
            if control.stop.load(Ordering::Relaxed) {
                break;
            }
            let active_count = sms.iter().filter(|sm| sm.is_active()).count();
            if active_count == 0 {
                break;
            }
            let window_end = window_start + window;
            let shared = view!(&l2, active_count);
            let window_began = Instant::now();
            let busy_nanos = AtomicU64::new(0);
            let run = |sm: &mut Sm<'a>| {
                let began = log_host_time.then(Instant::now);
                let thread = rayon::current_thread_index().unwrap_or(0) % stats_pool.len();
                let mut stats = stats_pool[thread]
                    .0
                    .lock()
                    .unwrap_or_else(|error| error.into_inner());
                sm.run_until(&shared, &mut stats, window_end);
                if parallel {
                    sm.sort_l2_accesses(shared.l2, l2_shards);
                }
                if let Some(began) = began {
                    busy_nanos.fetch_add(began.elapsed().as_nanos() as u64, Ordering::Relaxed);
                }
            };
            if parallel {
                // On the pool already (the whole loop runs there).
                run_on_own_threads(&mut sms, run);
            } else if let Some(weak) = env.weak_memory.filter(|weak| weak.scheduling_noise()) {
                // The SMs take their turns in a random order.
                let mut order: Vec<usize> =
                    (0..sms.len()).filter(|&i| sms[i].is_active()).collect();
                for end in (1..order.len()).rev() {
                    let other = weak.choose(end as u32 + 1) as usize;
                    order.swap(end, other);
                }
                for index in order {
                    run(&mut sms[index]);
                }
            } else {
                sms.iter_mut().filter(|sm| sm.is_active()).for_each(run);
            }
            let window_ran = Instant::now();
            host_time.windows += 1;
            host_time.running += window_ran - window_began;
            host_time.sm_busy += Duration::from_nanos(busy_nanos.into_inner());
            // The window's end, in SM order.
            apply_stores(&mut sms, env);
            let stores_applied = Instant::now();
            host_time.stores += stores_applied - window_ran;
            {
                let total: usize = sms.iter().map(|sm| sm.l2_accesses.len()).sum();
                let sharded = parallel && total >= PARALLEL_FILLS;
                if sharded {
                    // Each SM sorted its accesses at the end of its part of
                    // the window; an SM that did not run has none to sort.
                    for sm in sms.iter_mut() {
                        sm.sort_l2_accesses(&l2, l2_shards);
                    }
                }
                let batches: Vec<&[u64]> = sms.iter().map(|sm| sm.l2_accesses.as_slice()).collect();
                if sharded {
                    let orders: Vec<&ShardOrder> = sms.iter().map(|sm| sm.l2_order()).collect();
                    l2.fill_in_order(&batches, Some((&orders, l2_shards)));
                } else {
                    l2.fill_in_order(&batches, None);
                }
            }
            host_time.l2_fills += stores_applied.elapsed();
            atomic_units.serve(
                &mut sms,
                &issue_records,
                timing_config.atomic_sector_interval,
                window_end,
            );
            let mut freed: Vec<(u64, u32, usize)> = Vec::new();
            for sm in sms.iter_mut() {
                sm.end_window();
                stopping |= outcome.collect(sm, control) && !control.keep_going;
                for (slot, cycle) in sm.freed.drain(..) {
                    freed.push((cycle, sm.index, slot));
                }
            }
            control.cycles.store(window_end, Ordering::Relaxed);
            control
                .warp_instructions
                .store(sms.iter().map(|sm| sm.issued).sum(), Ordering::Relaxed);
            // Livelocks: a block whose state repeats with no memory changing.
            let fingerprint = sms
                .iter_mut()
                .flat_map(|sm| {
                    sm.resident_runners()
                        .map(|(linear, runner)| runner.progress_mark().wrapping_mul(linear + 1))
                        .collect::<Vec<_>>()
                })
                .fold(freed.len() as u64, u64::wrapping_add);
            if fingerprint != progress_fingerprint {
                memory_epoch += 1;
                progress_fingerprint = fingerprint;
            }
            let livelock_window = config.barriers.livelock_window;
            let mut spinning: Vec<(u32, u64)> = Vec::new();
            let mut resident_blocks = 0usize;
            for sm in sms.iter_mut() {
                let sm_index = sm.index;
                for (linear, runner) in sm.resident_runners() {
                    resident_blocks += 1;
                    if runner.spinning(memory_epoch) {
                        spinning.push((sm_index, linear));
                    }
                }
            }
            let across_blocks = program.communicates_across_blocks;
            let stuck: Vec<(u32, u64)> = if !across_blocks {
                // Blocks that cannot see each other: a spinning block is stuck
                // on its own.
                spinning
            } else if !spinning.is_empty() && spinning.len() == resident_blocks {
                // No resident block can end its loop: each is stuck, waiting
                // for a block that is not resident, or for one that is stuck too.
                spinning
            } else {
                Vec::new()
            };
            if !stuck.is_empty() {
                let not_resident =
                    (across_blocks && next_block < block_count).then(|| block_at(next_block));
                let shared = view!(&l2, 1);
                for (sm_index, linear) in stuck {
                    let sm = &mut sms[sm_index as usize];
                    let Some(mut error) = sm
                        .resident_runners()
                        .find(|(resident, _)| *resident == linear)
                        .map(|(_, runner)| runner.livelock_error(livelock_window))
                    else {
                        continue;
                    };
                    if let FaultKind::Livelock {
                        not_resident: waiting,
                        ..
                    } = &mut error.kind
                    {
                        *waiting = not_resident;
                    }
                    sm.evict(&shared, linear, Box::new(error));
                    outcome.collect(sm, control);
                    sm.freed.clear();
                }
                // A stuck launch ends: nothing can make those blocks move.
                stopping |= across_blocks || !control.keep_going;
            }
            if stopping {
                break;
            }
            // The freed slots take the next blocks, earliest freed first.
            freed.sort_unstable();
            for (cycle, sm_index, slot) in freed {
                if next_block >= block_count {
                    break;
                }
                let start = (cycle + launch_latency).max(window_end) + start_jitter();
                sms[sm_index as usize].launch(env, slot, next_block, block_at(next_block), start);
                next_block += 1;
            }
            // Skip windows in which no SM has anything to do.
            let next_cycle = sms
                .iter()
                .filter(|sm| sm.is_active())
                .map(|sm| sm.cycle)
                .min()
                .unwrap_or(NEVER);
            window_start = if next_cycle == NEVER {
                window_end
            } else {
                window_end.max(next_cycle)
            };
            host_time.window_ends += window_ran.elapsed();
        }
    };
    host_time.set_up = began.elapsed();
    if parallel {
        pool.install(window_loop);
    } else {
        window_loop();
    }
    let window_loop_ended = Instant::now();
    // A launch that stopped early leaves no store behind.
    apply_stores(&mut sms, env);
    for stats in stats_pool {
        outcome.stats.merge(
            &stats
                .0
                .into_inner()
                .unwrap_or_else(|error| error.into_inner()),
        );
    }
    let timing = &mut outcome.timing;
    let mut timeline = record_timeline.then(Timeline::default);
    for sm in &mut sms {
        if sm.first_active == NEVER {
            continue;
        }
        timing.sms_used += 1;
        timing.cycles = timing.cycles.max(sm.last_active);
        timing.busiest_sm_cycles = timing.busiest_sm_cycles.max(sm.active_cycles);
        timing.sm_active_cycles += sm.active_cycles;
        timing.resident_warp_cycles += sm.resident_warp_cycles;
        timing.warp_instructions += sm.issued;
        timing.l1_hit_sectors += sm.l1_hit_sectors;
        timing.l2_hit_sectors += sm.l2_hit_sectors;
        timing.dram_sectors += sm.dram_sectors;
        timing.dram_bytes += sm.dram_bytes;
        if let Some(timeline) = &mut timeline {
            timeline.blocks.append(&mut sm.blocks_spans);
            timeline.warps.append(&mut sm.warp_spans);
        }
    }
    if block_count < all_blocks {
        // The blocks not simulated take as long as those that were, wave
        // for wave.
        let simulated_cycles = timing.cycles;
        timing.cycles =
            (simulated_cycles as f64 * all_blocks as f64 / block_count as f64).round() as u64;
        timing.sampled = Some(crate::timing::Sampled {
            waves: sample_waves,
            blocks_simulated: block_count,
            blocks: all_blocks,
            simulated_cycles,
        });
    }
    if let Some(timeline) = &mut timeline {
        timeline
            .blocks
            .sort_unstable_by_key(|span| (span.start, span.linear));
        timeline
            .warps
            .sort_unstable_by_key(|span| (span.end, span.sm, span.linear, span.warp));
    }
    outcome.timeline = timeline;
    if let Some(mut races) = env.global_races() {
        for (linear, finding) in races.take_findings(env.global) {
            outcome.findings.add_block(linear, [finding]);
        }
    }
    host_time.finish = window_loop_ended.elapsed();
    tracing::debug!(
        set_up_ms = host_time.set_up.as_millis() as u64,
        windows = host_time.windows,
        running_ms = host_time.running.as_millis() as u64,
        sm_busy_ms = host_time.sm_busy.as_millis() as u64,
        window_ends_ms = host_time.window_ends.as_millis() as u64,
        stores_ms = host_time.stores.as_millis() as u64,
        l2_fills_ms = host_time.l2_fills.as_millis() as u64,
        finish_ms = host_time.finish.as_millis() as u64,
        host_threads,
        parallel,
        "host time of the launch"
    );
    outcome
}

/// Runs `run` on every active SM, on the pool the caller runs on: each
/// host thread takes the SMs of its own share first (the same SMs window
/// after window while the active ones stay the same, so their warps'
/// registers and timings are still in that core's caches), then helps with
/// the shares of the threads that are still busy. An SM runs on one thread
/// in a window, and what it does does not depend on which.
fn run_on_own_threads<'a>(sms: &mut [Sm<'a>], run: impl Fn(&mut Sm<'a>) + Sync) {
    let active: Vec<Mutex<&mut Sm<'a>>> = sms
        .iter_mut()
        .filter(|sm| sm.is_active())
        .map(Mutex::new)
        .collect();
    let threads = rayon::current_num_threads().max(1);
    let share_start = |share: usize| share * active.len() / threads;
    // The next SM of each share that no thread has taken.
    let next: Vec<AtomicUsize> = (0..threads)
        .map(|share| AtomicUsize::new(share_start(share)))
        .collect();
    rayon::broadcast(|context| {
        for offset in 0..threads {
            let share = (context.index() + offset) % threads;
            let end = share_start(share + 1);
            loop {
                let taken = next[share].fetch_add(1, Ordering::Relaxed);
                if taken >= end {
                    break;
                }
                let mut sm = active[taken]
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                run(&mut sm);
            }
        }
    });
}

/// The L2's atomic units: each sector's global atomics are performed one
/// after another, a request every `atomic_sector_interval` cycles (a
/// warp's lanes on one sector are one request), so atomics that pile onto
/// one counter wait for each other, as on an H100 (programs/timing/
/// hardware/h100-atomic-contention.txt: 67,584 requests on one counter
/// take 80,000 cycles, whether one lane of each warp adds or all 32; with
/// a counter per warp they take 9,000). The SMs cannot see each other's
/// atomics within a window, so the queues are served at its end: the
/// window's requests in the order they issued (ties by SM, then by issue
/// on the SM), each starting when its sector's unit is free, and those
/// that waited get their results (and their writes, for fences) that much
/// later. A request's result is never read before the window ends (an
/// atomic takes longer than a window), so the delay always arrives in
/// time.
#[derive(Default)]
struct AtomicUnits {
    /// When each sector's unit is free, for sectors still busy.
    free: crate::hashing::FastHashMap<u64, f64>,
    /// The window's requests, as (cycle, SM, index in its list).
    order: Vec<(u64, u32, u32)>,
}

impl AtomicUnits {
    fn serve(
        &mut self,
        sms: &mut [Sm<'_>],
        issue: &crate::timing::sm::IssueRecords,
        interval: f64,
        window_end: u64,
    ) {
        self.order.clear();
        for (sm_index, sm) in sms.iter().enumerate() {
            for (index, arrival) in sm.atomic_arrivals.iter().enumerate() {
                self.order
                    .push((arrival.cycle, sm_index as u32, index as u32));
            }
        }
        if self.order.is_empty() {
            return;
        }
        self.order.sort_unstable();
        for &(cycle, sm_index, index) in &self.order {
            let sm = &mut sms[sm_index as usize];
            let arrival = sm.atomic_arrivals[index as usize];
            let free = self.free.entry(arrival.sector).or_insert(0.0);
            let start = free.max(cycle as f64);
            *free = start + interval;
            let delay = (start - cycle as f64).ceil() as u64;
            if delay > 0 {
                sm.delay_atomic(issue, &arrival, delay);
            }
        }
        // A unit free by the window's end delays nothing after it.
        self.free.retain(|_, free| *free > window_end as f64);
    }
}

/// Below this many fills, one host thread fills the L2 faster than the
/// pool's threads.
const PARALLEL_FILLS: usize = 1024;

/// Applies the SMs' global stores and atomics of the window to memory, in
/// SM order (`Sm::apply_stores`), so a word two blocks stored ends up the
/// same, and every atomic finds the same old value, on any host. One host
/// thread does it: a window's stores are a few
/// thousand words (DRAM's bandwidth bounds them), and split among threads
/// by page they took twice as long on the 16-core GPU host, each thread
/// pulling every SM's buffers from the cores that wrote them. Split by
/// shards of 4 KiB pages, each SM sorting its buffers in its part of the
/// window as for the L2 fills, they still took 145 ms against 82 ms on one
/// thread (`transposeSmemF_4096`, 16 threads).
fn apply_stores(sms: &mut [Sm<'_>], env: &LaunchEnv<'_>) {
    for sm in sms.iter_mut() {
        sm.apply_stores(env.global);
    }
}
