//! The global-memory race checker: conflicting accesses to the same bytes
//! of global memory, by threads of one block or of different blocks, that
//! the PTX memory model's causality order does not order (`data-race`),
//! strong accesses whose scope does not include the other thread
//! (`scope-race`), and the missing fence of a message-passing handoff.
//!
//! It follows the PTX ISA's "Memory Consistency Model" (Lustig et al.,
//! ASPLOS 2019) with vector clocks, as FastTrack does for Java (Flanagan and
//! Freund, PLDI 2009), over threads and blocks:
//! - every thread has a clock, advanced at each release it performs; an
//!   access is stamped with its thread's clock and its block's barrier
//!   epoch;
//! - a release pattern (a release store or atomic, or a strong store or
//!   atomic after a fence) attaches the thread's vector clock to the word
//!   it writes; a strong load or atomic that reads the word takes it, at
//!   once for an acquire, else at the thread's next fence or barrier (an
//!   acquire pattern); atomics on a word join what they attach, as release
//!   sequences do; a release at `.cta` scope synchronizes only within its
//!   block;
//! - a block barrier orders everything before it in the block before
//!   everything after it (a new epoch), and joins the vector clocks of the
//!   threads that arrived into the block's;
//! - access `a` of thread `t` is ordered before an access of thread `u`
//!   when they are one thread, or `u`'s block passed a barrier since `a`
//!   (same block), or `u`'s clocks include `a`'s clock for `t`, or `u`'s
//!   clocks include a barrier epoch of `a`'s block after `a`.
//!
//! Two strong accesses whose scopes include each other's thread are morally
//! strong and never race; when the scopes miss, that is a `scope-race`.
//!
//! It runs when checking, with the SMs taking turns, so that its findings
//! are the same on every host; the machine's values are those of a plain
//! run (stores wait in the same buffers). Its shadow is one entry per 4-byte
//! word a kernel touches (the last write and the last reads of two threads),
//! and vector clocks only for threads that synchronized across blocks.
//!
//! Deviations, each one that can miss a race but never report one that is
//! not there: a word remembers its last writer and the last readers of two
//! threads; any fence or barrier completes a pending acquire, whatever its
//! scope; sub-word accesses are checked per word. Two races the model
//! calls races are left alone as benign: plain writes of the same value
//! (every thread of a block setting a flag to 1), and a plain read racing
//! with an atomic (the compare-and-swap loops of the CUDA Programming
//! Guide read the word plainly and let the CAS check what they read).

use indexmap::IndexMap;
use warpsim_ir::Scope;

use crate::clocks::MaxMap;
use crate::hashing::FastIndexMap;

use crate::findings::{add_lanes, Finding, FindingKind, Severity, Site, WarpLanes};
use crate::memory::{GlobalMemory, GlobalPlace};
use crate::racecheck::Hazard;
use crate::warp::WARP_SIZE;
use crate::weak_memory::{AccessOrdering, GlobalThread};

/// A component of a vector clock: a thread's releases, or a block's
/// barrier openings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Clock {
    Thread(GlobalThread),
    Block(u64),
}

/// A vector clock: what a thread has synchronized with.
type VectorClock = MaxMap<Clock, u32>;

/// What a release attached to a word: the clocks and the release's scope.
#[derive(Clone, Debug)]
struct Release {
    clocks: VectorClock,
    scope: Scope,
    block: u64,
}

/// An access as the checker remembers it.
#[derive(Clone, Copy, Debug)]
struct Stamp {
    thread: GlobalThread,
    block_index: [u32; 3],
    /// The block's barrier epoch at the access.
    epoch: u32,
    /// The thread's clock at the access.
    clock: u32,
    /// The block's dynamic warp instruction (lanes of one instruction do
    /// not race) and the warp's synchronizations.
    instruction: u64,
    warp_syncs: u32,
    pc: u32,
    /// The scope of a strong access or atomic.
    strong: Option<Scope>,
    /// Whether it was an atomic.
    atomic: bool,
    /// The bits a plain single store wrote.
    value: Option<u64>,
}

/// What every thread of a block knows since its last barrier, and what
/// the threads arriving at the next one bring.
#[derive(Clone, Debug, Default)]
struct BlockClocks {
    passed: VectorClock,
    passed_epoch: u32,
    arriving: VectorClock,
}

/// What one thread knows.
#[derive(Clone, Debug, Default)]
struct ThreadClocks {
    clock: u32,
    clocks: VectorClock,
    /// Releases read by strong loads, taken at the next fence or barrier.
    pending: Vec<Release>,
    /// What the thread's last fence released, for its later strong stores.
    fence_release: Option<Release>,
    /// The latest strong store of each other thread this thread read: its
    /// writer's clock and line, for the missing-fence diagnosis.
    observed: IndexMap<GlobalThread, (u32, u32, u64)>,
}

#[derive(Clone, Debug, Default)]
struct WordShadow {
    write: Option<Stamp>,
    read: Option<Stamp>,
    other_read: Option<Stamp>,
    /// What the releases among the word's latest writes attached.
    release: Option<Release>,
    /// The word's latest strong write.
    strong_write: Option<Stamp>,
}

/// The races between two instructions, gathered over threads and blocks.
#[derive(Debug)]
struct Race {
    kind: FindingKind,
    hazard: Hazard,
    earlier: Stamp,
    later: Stamp,
    earlier_threads: Vec<WarpLanes>,
    later_threads: Vec<WarpLanes>,
    across_blocks: bool,
    word: u64,
    /// A strong store after the earlier write, by its thread, that the
    /// later thread read: (its line, the word it wrote).
    unfenced_flag: Option<(u32, u64)>,
}

/// The checker of one launch.
#[derive(Debug, Default)]
pub(crate) struct GlobalRaces {
    words: FastIndexMap<u64, WordShadow>,
    threads: FastIndexMap<GlobalThread, ThreadClocks>,
    /// Each block's clocks, joined at its barriers.
    blocks: FastIndexMap<u64, BlockClocks>,
    races: IndexMap<(FindingKind, Hazard, u32, u32), Race>,
}

/// What one lane's global access did.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GlobalAccess {
    pub address: u64,
    pub len: u32,
    pub reads: bool,
    pub writes: bool,
    pub ordering: AccessOrdering,
    pub atomic: bool,
    /// The bits a plain single store wrote.
    pub value: Option<u64>,
}

/// Where the current access comes from.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GlobalAccessor {
    pub thread: GlobalThread,
    pub block_index: [u32; 3],
    pub epoch: u32,
    pub instruction: u64,
    pub warp_syncs: u32,
    pub pc: u32,
}

/// Whether a strong operation of `scope` by a thread of block `own`
/// includes the threads of block `other`.
fn includes(scope: Scope, own: u64, other: u64) -> bool {
    scope != Scope::Cta || own == other
}

impl GlobalRaces {
    fn thread(&mut self, thread: GlobalThread) -> &mut ThreadClocks {
        self.threads.entry(thread).or_default()
    }

    /// What `thread` knows of `clock`: its own clocks' entry or its
    /// block's, whichever is later (the entry of [`GlobalRaces::knows`]).
    fn knows_of(&self, thread: GlobalThread, clock: Clock) -> u32 {
        let own = self
            .threads
            .get(&thread)
            .map_or(0, |state| state.clocks.get(clock));
        let block = self
            .blocks
            .get(&thread.block)
            .map_or(0, |block| block.passed.get(clock));
        own.max(block)
    }

    /// What `thread` knows: its own clocks and its block's.
    fn knows(&self, thread: GlobalThread) -> VectorClock {
        let mut clocks = self
            .threads
            .get(&thread)
            .map(|state| state.clocks.clone())
            .unwrap_or_default();
        if let Some(block) = self.blocks.get(&thread.block) {
            clocks.join(&block.passed);
        }
        clocks
    }

    /// A thread of `block` acts in barrier epoch `epoch`: the barriers
    /// opened since give what their arrivals brought.
    fn catch_up(&mut self, block: u64, epoch: u32) {
        if epoch == 0 {
            return;
        }
        let clocks = self.blocks.entry(block).or_default();
        if epoch > clocks.passed_epoch {
            let arrived = std::mem::take(&mut clocks.arriving);
            clocks.passed.join(&arrived);
            clocks.passed_epoch = epoch;
        }
    }

    /// Whether `earlier` is ordered before the access `later`: the cheap
    /// rules of one thread, one block and one warp first, the clocks last.
    fn ordered(&self, earlier: &Stamp, later: &Stamp) -> bool {
        if earlier.thread == later.thread {
            return true;
        }
        let same_block = earlier.thread.block == later.thread.block;
        let same_warp = same_block
            && earlier.thread.thread / WARP_SIZE as u32 == later.thread.thread / WARP_SIZE as u32;
        if (same_block && earlier.epoch != later.epoch)
            || (same_warp
                && (earlier.instruction == later.instruction
                    || earlier.warp_syncs != later.warp_syncs))
        {
            return true;
        }
        let knows = |clock: Clock| self.knows_of(later.thread, clock);
        knows(Clock::Thread(earlier.thread)) >= earlier.clock.max(1)
            || (!same_block && knows(Clock::Block(earlier.thread.block)) > earlier.epoch)
    }

    /// A release by `thread` at `scope`: its clocks, then its clock moves on.
    fn release(&mut self, thread: GlobalThread, scope: Scope) -> Release {
        let mut clocks = self.knows(thread);
        let state = self.thread(thread);
        state.clock += 1;
        clocks.raise(Clock::Thread(thread), state.clock);
        state.clock += 1;
        Release {
            clocks,
            scope,
            block: thread.block,
        }
    }

    /// `accessor` made `access`.
    pub fn observe(&mut self, accessor: GlobalAccessor, access: GlobalAccess) {
        let thread = accessor.thread;
        self.catch_up(thread.block, accessor.epoch);
        let ordering = access.ordering;
        // A release pattern: a release, or a strong write after a fence.
        let release = if access.writes && ordering.strong.is_some() {
            if ordering.release {
                Some(self.release(thread, ordering.strong.unwrap_or(Scope::Gpu)))
            } else {
                self.thread(thread).fence_release.clone()
            }
        } else {
            None
        };
        let clock = self
            .threads
            .get(&thread)
            .map_or(1, |state| state.clock.max(1));
        let stamp = Stamp {
            thread,
            block_index: accessor.block_index,
            epoch: accessor.epoch,
            clock,
            instruction: accessor.instruction,
            warp_syncs: accessor.warp_syncs,
            pc: accessor.pc,
            strong: ordering.strong,
            atomic: access.atomic,
            value: access.value,
        };
        // An address at the top of memory (which faults right after) must
        // not wrap around.
        let end = access.address.saturating_add(u64::from(access.len));
        let mut word = access.address & !3;
        while word < end {
            self.observe_word(word, stamp, &access, release.clone());
            word = word.saturating_add(4);
        }
    }

    fn observe_word(
        &mut self,
        word: u64,
        stamp: Stamp,
        access: &GlobalAccess,
        release: Option<Release>,
    ) {
        let (reads, writes, ordering, atomic) =
            (access.reads, access.writes, access.ordering, access.atomic);
        let thread = stamp.thread;
        let shadow = self.words.entry(word).or_default();
        let (earlier_write, earlier_read, earlier_other_read) =
            (shadow.write, shadow.read, shadow.other_read);
        // A strong read takes what a release attached (an acquire).
        if reads && ordering.strong.is_some() {
            let attached = shadow.release.clone();
            let strong_write = shadow.strong_write;
            if let Some(attached) = attached {
                let scope_ok = includes(attached.scope, attached.block, thread.block)
                    && ordering
                        .strong
                        .is_some_and(|scope| includes(scope, thread.block, attached.block));
                if scope_ok {
                    if ordering.acquire {
                        self.thread(thread).clocks.join(&attached.clocks);
                    } else {
                        self.thread(thread).pending.push(attached);
                    }
                }
            }
            if let Some(writer) = strong_write {
                if writer.thread != thread {
                    self.thread(thread)
                        .observed
                        .insert(writer.thread, (writer.clock, writer.pc, word));
                }
            }
        }
        let mut found: Vec<(Hazard, Stamp)> = Vec::new();
        if let Some(write) = earlier_write {
            if !self.ordered(&write, &stamp) {
                found.push((
                    if writes {
                        Hazard::WriteAfterWrite
                    } else {
                        Hazard::ReadAfterWrite
                    },
                    write,
                ));
            }
        }
        if writes {
            for read in [earlier_read, earlier_other_read].into_iter().flatten() {
                if !self.ordered(&read, &stamp) {
                    found.push((Hazard::WriteAfterRead, read));
                }
            }
        }
        for (hazard, earlier) in found {
            if benign(hazard, &earlier, &stamp) {
                continue;
            }
            let kind = match (earlier.strong, stamp.strong) {
                (Some(earlier_scope), Some(later_scope)) => {
                    let morally_strong =
                        includes(earlier_scope, earlier.thread.block, thread.block)
                            && includes(later_scope, thread.block, earlier.thread.block);
                    if morally_strong {
                        continue;
                    }
                    FindingKind::ScopeRace
                }
                _ => FindingKind::DataRace,
            };
            let unfenced_flag = (hazard == Hazard::ReadAfterWrite)
                .then(|| self.threads.get(&thread))
                .flatten()
                .and_then(|state| state.observed.get(&earlier.thread))
                .filter(|(clock, _, _)| *clock >= earlier.clock)
                .map(|&(_, pc, flag)| (pc, flag));
            self.record(kind, hazard, earlier, stamp, word, unfenced_flag);
        }
        let shadow = self.words.entry(word).or_default();
        if writes {
            shadow.write = Some(stamp);
            if ordering.strong.is_some() {
                shadow.strong_write = Some(stamp);
            }
            shadow.release = match (atomic, release, shadow.release.take()) {
                // A release sequence: atomics join what the word carried.
                (true, Some(mut new), Some(old)) => {
                    new.clocks.join(&old.clocks);
                    Some(new)
                }
                (true, None, old) => old,
                (_, new, _) => new,
            };
        } else if reads {
            match shadow.read {
                Some(read) if read.thread != thread => {
                    shadow.other_read = Some(read);
                    shadow.read = Some(stamp);
                }
                _ => shadow.read = Some(stamp),
            }
        }
    }

    /// A fence by `thread`: it completes an acquire pattern of its earlier
    /// strong reads, and makes its later strong writes releases.
    pub fn fence(&mut self, thread: GlobalThread, epoch: u32, scope: Scope) {
        self.catch_up(thread.block, epoch);
        self.acquire_pending(thread);
        let release = self.release(thread, scope);
        self.thread(thread).fence_release = Some(release);
    }

    /// Completes `thread`'s acquire patterns: what its strong reads read.
    fn acquire_pending(&mut self, thread: GlobalThread) {
        if let Some(state) = self.threads.get_mut(&thread) {
            for release in std::mem::take(&mut state.pending) {
                state.clocks.join(&release.clocks);
            }
        }
    }

    /// `thread` arrives at a barrier of its block in barrier epoch `epoch`:
    /// what it acquired, and what it knows, is the block's after the
    /// barrier opens.
    pub fn arrive_at_barrier(&mut self, thread: GlobalThread, epoch: u32) {
        self.catch_up(thread.block, epoch);
        self.acquire_pending(thread);
        // Most threads never synchronized across blocks: what they know is
        // their block's, which stays known after the barrier.
        let own = self.threads.get(&thread).map(|state| state.clocks.clone());
        let block = self.blocks.entry(thread.block).or_default();
        // Past the barrier, everything the block did before it is ordered
        // before what its threads do next.
        block.arriving.raise(Clock::Block(thread.block), epoch + 1);
        if let Some(own) = own {
            block.arriving.join(&own);
        }
    }

    #[cold]
    fn record(
        &mut self,
        kind: FindingKind,
        hazard: Hazard,
        earlier: Stamp,
        later: Stamp,
        word: u64,
        unfenced_flag: Option<(u32, u64)>,
    ) {
        let race = self
            .races
            .entry((kind, hazard, earlier.pc, later.pc))
            .or_insert_with(|| Race {
                kind,
                hazard,
                earlier,
                later,
                earlier_threads: Vec::new(),
                later_threads: Vec::new(),
                across_blocks: false,
                word,
                unfenced_flag,
            });
        let lanes = |stamp: &Stamp| WarpLanes {
            warp: stamp.thread.thread / WARP_SIZE as u32,
            lanes: 1 << (stamp.thread.thread % WARP_SIZE as u32),
        };
        if earlier.thread.block == race.earlier.thread.block {
            add_lanes(&mut race.earlier_threads, lanes(&earlier));
        }
        if later.thread.block == race.later.thread.block {
            add_lanes(&mut race.later_threads, lanes(&later));
        }
        race.across_blocks |= earlier.thread.block != later.thread.block;
        if race.unfenced_flag.is_none() {
            race.unfenced_flag = unfenced_flag;
        }
    }

    /// The launch's races, one finding per pair of instructions and
    /// hazard, each with the later access's block (and linear index).
    pub fn take_findings(&mut self, global: &GlobalMemory) -> Vec<(u64, Finding)> {
        self.races
            .drain(..)
            .map(|(_, race)| {
                let hazard = race.hazard;
                let (earlier_verb, later_verb) = hazard.verbs();
                let place = place_text(global, race.word);
                let who = if race.earlier.thread.block != race.later.thread.block {
                    format!(
                        "a thread of block ({},{},{}) {earlier_verb} {place} and a thread of another block {later_verb} it",
                        race.earlier.block_index[0],
                        race.earlier.block_index[1],
                        race.earlier.block_index[2],
                    )
                } else {
                    format!("one thread {earlier_verb} {place} and another of its block {later_verb} it")
                };
                let message = match race.kind {
                    FindingKind::ScopeRace => format!(
                        "scope too narrow ({}): {who} with strong accesses whose scope does not include the other thread, so they are not morally strong and race",
                        hazard.name()
                    ),
                    _ => format!(
                        "global memory data race ({}): {who} with nothing ordering them (no barrier, no release and acquire, no fence with a strong access), so what the second sees or leaves depends on timing",
                        hazard.name()
                    ),
                };
                let mut finding = Finding::new(race.kind, Severity::Error, message);
                let block_of = |stamp: &Stamp| {
                    format!(
                        "block ({},{},{})",
                        stamp.block_index[0], stamp.block_index[1], stamp.block_index[2]
                    )
                };
                finding.sites.push(Site::new(
                    race.earlier.pc,
                    race.earlier_threads.clone(),
                    format!("{earlier_verb} here first, in {}", block_of(&race.earlier)),
                    false,
                ));
                finding.sites.push(Site::new(
                    race.later.pc,
                    race.later_threads.clone(),
                    format!("then another thread {later_verb} here, unordered"),
                    true,
                ));
                if race.across_blocks && race.earlier.thread.block == race.later.thread.block {
                    finding
                        .notes
                        .push("threads of different blocks race on it too".to_string());
                }
                match (race.kind, race.unfenced_flag) {
                    (FindingKind::ScopeRace, _) => finding.notes.push(
                        "a `.cta` scope orders only threads of one block; use `.gpu` (cuda::thread_scope_device, or a volatile access) for threads of different blocks".to_string(),
                    ),
                    (_, Some((flag_pc, flag_word))) => {
                        finding.sites.push(Site::new(
                            flag_pc,
                            race.earlier_threads.clone(),
                            format!(
                                "this strong store to {} is what the reader waited for, but nothing orders it after the write above",
                                place_text(global, flag_word)
                            ),
                            false,
                        ));
                        finding.notes.push(format!(
                            "the store to {} is not ordered after the store to {} for a reader in another block; add __threadfence() between them (and after the reader's load of the flag)",
                            place_text(global, flag_word),
                            place
                        ));
                    }
                    _ if race.across_blocks => finding.notes.push(
                        "blocks are ordered only through memory: a fence (__threadfence()) then a strong store or atomic on one side, and a strong load or atomic then a fence on the other; or use atomics for the shared data".to_string(),
                    ),
                    _ => finding.notes.push(
                        "a __syncthreads() (bar.sync) between the two accesses orders them".to_string(),
                    ),
                }
                (race.later.thread.block, with_block(finding, race.later.block_index))
            })
            .collect()
    }
}

/// Races the checker leaves alone: two plain writes of the same value
/// (every thread of a block setting a flag), and a plain read racing with
/// an atomic (a compare-and-swap loop reads the word plainly and lets the
/// CAS check what it read).
fn benign(hazard: Hazard, earlier: &Stamp, later: &Stamp) -> bool {
    match hazard {
        Hazard::WriteAfterWrite => earlier.value.is_some() && earlier.value == later.value,
        Hazard::ReadAfterWrite => earlier.atomic && later.strong.is_none(),
        Hazard::WriteAfterRead => later.atomic && earlier.strong.is_none(),
    }
}

fn with_block(mut finding: Finding, block: [u32; 3]) -> Finding {
    finding.block = block;
    finding
}

/// `buffer `name`, offset N` for a global word.
fn place_text(global: &GlobalMemory, word: u64) -> String {
    match global.place(word) {
        GlobalPlace::Offset { buffer, offset, .. } => format!("`{buffer}` (byte {offset})"),
        _ => format!("global address {word:#x}"),
    }
}
