//! The weakly-ordered global memory of the explore mode (`--memory explore`):
//! which value each global load may return, under the PTX memory model.
//!
//! It follows the PTX ISA's "Memory Consistency Model" chapter (and its
//! formalisation: Lustig, Sahasrabuddhe, Giroux, "A Formal Analysis of the
//! NVIDIA PTX Memory Consistency Model", ASPLOS 2019) operationally, in the
//! style of view-based machines for C11-like models (Kang, Hur, Lahav,
//! Vafeiadis, Dreyer, "A Promising Semantics for Relaxed-Memory
//! Concurrency", POPL 2017, without promises; Miri's `weak_memory.rs` takes
//! the same road after Lidbury and Donaldson, POPL 2017):
//! - Every 4-byte word of global memory a kernel touches keeps a history of
//!   the stores to it, each at a timestamp; timestamp order is the word's
//!   coherence order. The buffer itself always holds the latest store.
//! - Every thread keeps views: for each word, the earliest timestamp it may
//!   still read or write after. `synced` binds every access: the thread's
//!   own stores and what it acquired; `strong` binds only its strong
//!   (`.relaxed`, `.acquire`, `.release`, `.volatile`) accesses: what it
//!   observed through morally strong reads (coherence).
//! - A load reads any store of the history not older than its bound (the
//!   explore mode picks one at random); a store takes any place in the
//!   coherence order after its bound that does not split an atomic from the
//!   store it read. Weak loads change no view.
//! - Release (a release store, or a strong store after a release fence)
//!   attaches the thread's views to the store; an acquire load, or a strong
//!   load followed by an acquire fence, that reads it takes them, when the
//!   two threads are within each other's scope. `fence.sc` also joins, and
//!   takes, one view per scope instance (a block's, the GPU's), which orders
//!   the fences in time. `bar.sync` gives every thread that passes it the
//!   views of all that arrived at it (CTA-scope release and acquire).
//! - Atomics read the latest store and follow it at once.
//! - A weak or relaxed load is performed as late as the thread allows
//!   ([`PendingLoad`]): when an instruction uses its register, or at the
//!   thread's next ordering point or access to the same word. So a store
//!   issued after the load may be what it reads (load buffering, which an
//!   H100 shows), but a load whose value a later store depends on never
//!   reads that store (no values out of thin air).
//!
//! Every outcome this produces is one the PTX model allows (the litmus
//! tests of `programs/litmus` check it against a checker of the model's
//! axioms). Deviations, each one that makes an allowed outcome unreachable,
//! never one that makes a forbidden one reachable:
//! - Only aligned 4-byte accesses go through the histories. Other sizes
//!   read and write the latest value, and a 4-byte word they write gets a
//!   new latest store.
//! - A history keeps its last `HISTORY_LENGTH` stores; older ones can no
//!   longer be read.
//! - `.cluster` is treated as `.gpu` (one block per cluster), and `.sys` as
//!   `.gpu` (one GPU, no host threads).
//!
//! The random choices come from one seeded generator, taken in the order
//! the machine makes them (the explore mode runs SMs one after another), so
//! a seed names one run. A [`ChoiceSource`] can instead replay a recorded
//! prefix and take the first choice after it, which is how the exhaustive
//! mode enumerates every run the model can reach.

use std::sync::Mutex;

use indexmap::IndexMap;
use warpsim_ir::{AtomicOrder, AtomicSemantics, FenceKind, MemoryOrder, Scope};

use crate::memory::GlobalMemory;
use crate::random::SplitMix64;

/// A thread of the launch: its block (linear index) and its index in the
/// block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GlobalThread {
    pub block: u64,
    pub thread: u32,
}

/// A store's place in its word's coherence order.
type Timestamp = u64;

/// The distance between consecutive appended stores, so that stores can be
/// placed between them later.
const TIMESTAMP_GAP: Timestamp = 1 << 24;

/// The start delays a block may get, in cycles: from a few instructions to
/// more than a global store and fence take (hundreds of cycles), so that
/// threads of different blocks run in either order, or overlap.
const START_DELAYS: [u64; 8] = [0, 16, 48, 96, 192, 384, 768, 1536];

/// The start delays the exhaustive mode tries: none, one cycle (its time
/// window is one cycle, so that two blocks' instructions interleave either
/// way), a few instructions, and longer than a store and a fence take.
const EXHAUSTIVE_START_DELAYS: [u64; 4] = [0, 1, 96, 1536];

/// Stores a word's history keeps.
const HISTORY_LENGTH: usize = 16;

/// For each word, the earliest timestamp a thread may still read or write
/// after.
type View = crate::clocks::MaxMap<u64, Timestamp>;

/// What a release made visible with a store: the releasing thread's views,
/// the release's scope, and the releasing thread's block.
#[derive(Clone, Debug)]
struct Released {
    view: View,
    scope: Scope,
    block: u64,
}

/// One store in a word's history.
#[derive(Clone, Debug)]
struct Message {
    timestamp: Timestamp,
    value: u32,
    writer: GlobalThread,
    /// The scope of a strong store; `None` for a weak one.
    strong: Option<Scope>,
    released: Option<Released>,
    /// An atomic's store, which must stay right after the store it read.
    atomic: bool,
}

impl Message {
    /// A word's contents before the launch's first access to it: a store
    /// every thread can see, by no thread of the launch.
    fn initial(value: u32) -> Message {
        Message {
            timestamp: 0,
            value,
            writer: GlobalThread {
                block: u64::MAX,
                thread: u32::MAX,
            },
            strong: Some(Scope::Sys),
            released: None,
            atomic: false,
        }
    }
}

/// What one thread knows.
#[derive(Clone, Debug, Default)]
struct ThreadViews {
    synced: View,
    strong: View,
    /// Releases read by strong loads, taken by the next acquire fence.
    pending_acquires: Vec<Released>,
    /// The view and scope of the last release fence, given to later strong
    /// stores.
    fence_release: Option<(View, Scope)>,
    /// A barrier the thread arrived at: its views are taken at the thread's
    /// next access.
    barrier: Option<BarrierKey>,
}

impl ThreadViews {
    fn everything(&self) -> View {
        let mut all = self.synced.clone();
        all.join(&self.strong);
        all
    }
}

/// One opening of one barrier of one block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct BarrierKey {
    block: u64,
    barrier: u32,
    generation: u32,
}

/// Where the explore mode's choices come from.
#[derive(Clone, Debug)]
pub struct ChoiceSource {
    /// Choices to replay first (the exhaustive mode's prefix).
    prefix: Vec<u32>,
    /// A seeded generator for the choices after the prefix; `None` takes
    /// choice 0 (the exhaustive mode).
    random: Option<SplitMix64>,
    /// Every choice made: the one taken and how many there were.
    taken: Vec<(u32, u32)>,
}

impl ChoiceSource {
    /// Random choices from `seed`.
    pub fn seeded(seed: u64) -> Self {
        ChoiceSource {
            prefix: Vec::new(),
            random: Some(SplitMix64(seed)),
            taken: Vec::new(),
        }
    }

    /// Replays `prefix`, then takes the first choice each time.
    pub fn replaying(prefix: Vec<u32>) -> Self {
        ChoiceSource {
            prefix,
            random: None,
            taken: Vec::new(),
        }
    }

    /// One of `count` possibilities (`count` at least 1).
    pub fn choose(&mut self, count: u32) -> u32 {
        let position = self.taken.len();
        let choice = if count <= 1 {
            0
        } else if let Some(&replayed) = self.prefix.get(position) {
            replayed.min(count - 1)
        } else if let Some(random) = &mut self.random {
            (random.next() % u64::from(count)) as u32
        } else {
            0
        };
        if count > 1 {
            self.taken.push((choice, count));
        }
        choice
    }

    /// True with probability 1/2 (explore) or false first (exhaustive).
    pub fn coin(&mut self) -> bool {
        self.choose(2) == 1
    }

    /// One of `count` possibilities where the last is the machine's own
    /// (the latest store, the end of coherence order): at random, that one
    /// half the time and any one otherwise; exhaustively, that one first.
    fn choose_leaning_last(&mut self, count: u32) -> u32 {
        if count <= 1 {
            return 0;
        }
        if self.is_random() {
            if self.coin() {
                count - 1
            } else {
                self.choose(count)
            }
        } else {
            count - 1 - self.choose(count)
        }
    }

    /// Whether choices after the prefix are random (explore) rather than
    /// enumerated (exhaustive). Enumerating leaves scheduling alone but for
    /// a few start times, or the runs would be too many to make.
    pub fn is_random(&self) -> bool {
        self.random.is_some()
    }

    /// The prefix of the next run in depth-first order after this one, or
    /// `None` when every run has been made.
    pub fn next_prefix(&self) -> Option<Vec<u32>> {
        let last = self
            .taken
            .iter()
            .rposition(|&(choice, count)| choice + 1 < count)?;
        let mut prefix: Vec<u32> = self.taken[..last].iter().map(|&(c, _)| c).collect();
        prefix.push(self.taken[last].0 + 1);
        Some(prefix)
    }
}

/// The weak global memory of one launch in explore mode.
pub struct WeakMemory {
    state: Mutex<Explorer>,
}

struct Explorer {
    choices: ChoiceSource,
    histories: IndexMap<u64, Vec<Message>>,
    threads: IndexMap<GlobalThread, ThreadViews>,
    /// The views `fence.sc` joins and takes: one per block for `.cta`,
    /// and one for the GPU (key `u64::MAX`).
    sc_views: IndexMap<u64, View>,
    barriers: IndexMap<BarrierKey, View>,
    /// Each block's L1: the store of a word its weak and `.cta` loads
    /// last read, and how many times in a row.
    l1: IndexMap<u64, IndexMap<u64, CachedWord>>,
}

/// A word in a block's L1.
#[derive(Clone, Copy, Debug)]
struct CachedWord {
    timestamp: Timestamp,
    hits: u32,
}

/// Loads in a row that find the same store in the L1 before it sticks:
/// more than any litmus test makes of one word, fewer than a spin loop.
const L1_SPIN_HITS: u32 = 4;

/// The key of the GPU's `fence.sc` view.
const GPU_SCOPE: u64 = u64::MAX;

/// Whether a strong operation of `scope` by a thread of block `own`
/// includes a thread of block `other`.
fn includes(scope: Scope, own: u64, other: u64) -> bool {
    match scope {
        Scope::Cta => own == other,
        Scope::Cluster | Scope::Gpu | Scope::Sys => true,
    }
}

/// How a 4-byte access orders: weak, or strong at a scope, with release or
/// acquire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccessOrdering {
    pub strong: Option<Scope>,
    pub acquire: bool,
    pub release: bool,
}

impl AccessOrdering {
    /// The ordering of a load or store.
    pub fn of_access(order: MemoryOrder) -> Self {
        let (strong, acquire, release) = match order {
            MemoryOrder::Weak => (None, false, false),
            // `.volatile` is `.relaxed.sys` (PTX ISA, "Volatile Operations").
            MemoryOrder::Volatile => (Some(Scope::Sys), false, false),
            MemoryOrder::Relaxed(scope) => (Some(scope), false, false),
            MemoryOrder::Acquire(scope) => (Some(scope), true, false),
            MemoryOrder::Release(scope) => (Some(scope), false, true),
        };
        AccessOrdering {
            strong,
            acquire,
            release,
        }
    }

    /// The ordering of an atomic.
    pub fn of_atomic(order: AtomicOrder) -> Self {
        let (acquire, release) = match order.semantics {
            AtomicSemantics::Relaxed => (false, false),
            AtomicSemantics::Acquire => (true, false),
            AtomicSemantics::Release => (false, true),
            AtomicSemantics::AcquireRelease => (true, true),
        };
        AccessOrdering {
            strong: Some(order.scope),
            acquire,
            release,
        }
    }
}

impl WeakMemory {
    pub fn new(choices: ChoiceSource) -> Self {
        WeakMemory {
            state: Mutex::new(Explorer {
                choices,
                histories: IndexMap::new(),
                threads: IndexMap::new(),
                sc_views: IndexMap::new(),
                barriers: IndexMap::new(),
                l1: IndexMap::new(),
            }),
        }
    }

    fn explorer(&self) -> std::sync::MutexGuard<'_, Explorer> {
        self.state.lock().unwrap_or_else(|error| error.into_inner())
    }

    /// The choices made so far (the exhaustive mode reads them after a run).
    pub fn into_choices(self) -> ChoiceSource {
        self.state
            .into_inner()
            .unwrap_or_else(|error| error.into_inner())
            .choices
    }

    /// One of `count` possibilities, for the machine's own choices
    /// (scheduling jitter).
    pub fn choose(&self, count: u32) -> u32 {
        self.explorer().choices.choose(count)
    }

    /// Whether the scheduler should add noise of its own (random runs);
    /// the exhaustive mode varies only the blocks' start times.
    pub fn scheduling_noise(&self) -> bool {
        self.explorer().choices.is_random()
    }

    /// A random start delay for a block, in cycles.
    pub fn start_jitter(&self) -> u64 {
        let mut explorer = self.explorer();
        let delays: &[u64] = if explorer.choices.is_random() {
            &START_DELAYS
        } else {
            &EXHAUSTIVE_START_DELAYS
        };
        delays[explorer.choices.choose(delays.len() as u32) as usize]
    }

    /// The value a 4-byte load of `address` by `thread` returns.
    pub fn load(
        &self,
        global: &GlobalMemory,
        thread: GlobalThread,
        address: u64,
        ordering: AccessOrdering,
    ) -> Option<u32> {
        let mut explorer = self.explorer();
        explorer.load(global, thread, address, ordering)
    }

    /// A 4-byte store of `value` to `address` by `thread`. Returns `None`
    /// when the address is outside every buffer.
    pub fn store(
        &self,
        global: &GlobalMemory,
        thread: GlobalThread,
        address: u64,
        value: u32,
        ordering: AccessOrdering,
    ) -> Option<()> {
        let mut explorer = self.explorer();
        explorer.store(global, thread, address, value, ordering)
    }

    /// An atomic that read the latest store of the 4-byte word at
    /// `address` and left `new` there (it already did, in `global`).
    pub fn atomic(
        &self,
        thread: GlobalThread,
        address: u64,
        old: u32,
        new: u32,
        ordering: AccessOrdering,
    ) {
        self.explorer().atomic(thread, address, old, new, ordering);
    }

    /// A write of another size that touched the word at `address`: its
    /// new contents become the latest store.
    pub fn overwrite(&self, global: &GlobalMemory, thread: GlobalThread, address: u64) {
        let mut explorer = self.explorer();
        let word = address & !3;
        let Ok(value) = global.read(word, 4) else {
            return;
        };
        explorer.history(global, word);
        explorer.append(thread, word, value as u32, None, None, false);
    }

    /// A fence of `kind` and `scope` by `thread`.
    pub fn fence(&self, thread: GlobalThread, kind: FenceKind, scope: Scope) {
        self.explorer().fence(thread, kind, scope);
    }

    /// `thread` arrives at barrier `barrier` of its block, whose opening
    /// `generation` it waits for.
    pub fn arrive_at_barrier(&self, thread: GlobalThread, barrier: u32, generation: u32) {
        let mut explorer = self.explorer();
        let key = BarrierKey {
            block: thread.block,
            barrier,
            generation,
        };
        explorer.catch_up(thread);
        let everything = explorer.views(thread).everything();
        explorer.barriers.entry(key).or_default().join(&everything);
        explorer.views(thread).barrier = Some(key);
    }
}

impl Explorer {
    fn views(&mut self, thread: GlobalThread) -> &mut ThreadViews {
        self.threads.entry(thread).or_default()
    }

    /// Takes what a barrier the thread passed made visible.
    fn catch_up(&mut self, thread: GlobalThread) {
        let Some(key) = self.views(thread).barrier.take() else {
            return;
        };
        if let Some(view) = self.barriers.get(&key).cloned() {
            self.views(thread).synced.join(&view);
        }
    }

    /// The history of `word`, begun with its current contents.
    fn history(&mut self, global: &GlobalMemory, word: u64) -> Option<&mut Vec<Message>> {
        if !self.histories.contains_key(&word) {
            let value = global.read(word, 4).ok()? as u32;
            self.histories.insert(word, vec![Message::initial(value)]);
        }
        self.histories.get_mut(&word)
    }

    /// The earliest timestamp `thread` may read or write `word` after.
    fn bound(&mut self, thread: GlobalThread, word: u64, strong: bool) -> Timestamp {
        let views = self.views(thread);
        let synced = views.synced.get(word);
        if strong {
            synced.max(views.strong.get(word))
        } else {
            synced
        }
    }

    fn load(
        &mut self,
        global: &GlobalMemory,
        thread: GlobalThread,
        word: u64,
        ordering: AccessOrdering,
    ) -> Option<u32> {
        self.catch_up(thread);
        let bound = self.bound(thread, word, ordering.strong.is_some());
        let line = self.l1_line(thread.block, word, ordering);
        let history = self.history(global, word)?;
        let first = history
            .iter()
            .rposition(|message| message.timestamp <= bound)
            .unwrap_or(0);
        let candidates = (history.len() - first) as u32;
        let cached = line.and_then(|line| {
            history[first..]
                .iter()
                .position(|message| message.timestamp == line.timestamp)
                .map(|index| (index as u32, line.hits))
        });
        let pick = match cached {
            Some((index, hits)) if hits >= L1_SPIN_HITS || self.choices.coin() => index,
            _ => self.choices.choose_leaning_last(candidates),
        };
        let message = self.histories[&word][first + pick as usize].clone();
        if ordering.strong.is_none_or(|scope| scope == Scope::Cta) {
            let entry = self.l1.entry(thread.block).or_default();
            let hits = match entry.get(&word) {
                Some(line) if line.timestamp == message.timestamp => line.hits + 1,
                _ => 0,
            };
            entry.insert(
                word,
                CachedWord {
                    timestamp: message.timestamp,
                    hits,
                },
            );
        }
        if ordering.acquire && ordering.strong.is_some_and(|scope| scope != Scope::Cta) {
            self.l1.swap_remove(&thread.block);
        }
        if let Some(scope) = ordering.strong {
            self.observe(thread, word, &message, scope, ordering.acquire);
        }
        Some(message.value)
    }

    /// The store a block's L1 holds for `word`, if the load may be served
    /// from there: weak and `.cta` loads are (as on hardware, where they
    /// are cached in the SM's L1, which is not coherent with other SMs).
    /// Half of them are hits; a load that keeps finding the same store
    /// there (a spin loop, `L1_SPIN_HITS` times) gets it for good, until a
    /// fence or acquire at GPU scope empties the block's L1: a thread
    /// spinning on a flag with a `.cta` acquire, or a plain load, never
    /// sees another block's store, as on an H100
    /// (`programs/racecheck/hardware/fence-bugs.cu`).
    fn l1_line(&self, block: u64, word: u64, ordering: AccessOrdering) -> Option<CachedWord> {
        if ordering.strong.is_some_and(|scope| scope != Scope::Cta) {
            return None;
        }
        self.l1.get(&block)?.get(&word).copied()
    }

    /// A strong load by `thread` at `scope` read `message`.
    fn observe(
        &mut self,
        thread: GlobalThread,
        word: u64,
        message: &Message,
        scope: Scope,
        acquire: bool,
    ) {
        let morally_strong = message.writer == thread
            || message.strong.is_some_and(|writer_scope| {
                includes(writer_scope, message.writer.block, thread.block)
                    && includes(scope, thread.block, message.writer.block)
            });
        if !morally_strong {
            return;
        }
        let views = self.views(thread);
        views.strong.raise(word, message.timestamp);
        if let Some(released) = &message.released {
            if !includes(released.scope, released.block, thread.block) {
                return;
            }
            if acquire {
                views.synced.join(&released.view);
            } else {
                views.pending_acquires.push(released.clone());
            }
        }
    }

    /// What a strong store by `thread` releases, if anything.
    fn release(&mut self, thread: GlobalThread, ordering: AccessOrdering) -> Option<Released> {
        let scope = ordering.strong?;
        let views = self.views(thread);
        if ordering.release {
            return Some(Released {
                view: views.everything(),
                scope,
                block: thread.block,
            });
        }
        views
            .fence_release
            .as_ref()
            .map(|(view, fence_scope)| Released {
                view: view.clone(),
                scope: *fence_scope,
                block: thread.block,
            })
    }

    fn store(
        &mut self,
        global: &GlobalMemory,
        thread: GlobalThread,
        word: u64,
        value: u32,
        ordering: AccessOrdering,
    ) -> Option<()> {
        self.catch_up(thread);
        let bound = self.bound(thread, word, ordering.strong.is_some());
        let released = self.release(thread, ordering);
        let history = self.history(global, word)?;
        let first = history
            .iter()
            .rposition(|message| message.timestamp <= bound)
            .unwrap_or(0);
        // The places after the bound: right after store `first + k`, when
        // the next one is no atomic that read it and there is room between.
        let places: Vec<usize> = (first..history.len())
            .filter(|&index| match history.get(index + 1) {
                None => true,
                Some(next) => !next.atomic && next.timestamp - history[index].timestamp >= 2,
            })
            .collect();
        let place = self.choices.choose_leaning_last(places.len() as u32) as usize;
        let after = places[place];
        let history = self.histories.get_mut(&word)?;
        if after + 1 == history.len() {
            global.write(word, 4, u64::from(value)).ok()?;
            self.append(thread, word, value, ordering.strong, released, false);
        } else {
            let timestamp = history[after].timestamp
                + (history[after + 1].timestamp - history[after].timestamp) / 2;
            history.insert(
                after + 1,
                Message {
                    timestamp,
                    value,
                    writer: thread,
                    strong: ordering.strong,
                    released,
                    atomic: false,
                },
            );
            self.views(thread).synced.raise(word, timestamp);
        }
        Some(())
    }

    /// A new latest store of `word` (its history exists).
    fn append(
        &mut self,
        thread: GlobalThread,
        word: u64,
        value: u32,
        strong: Option<Scope>,
        released: Option<Released>,
        atomic: bool,
    ) {
        let Some(history) = self.histories.get_mut(&word) else {
            return;
        };
        let timestamp = history
            .last()
            .map_or(0, |last| last.timestamp)
            .saturating_add(TIMESTAMP_GAP);
        history.push(Message {
            timestamp,
            value,
            writer: thread,
            strong,
            released,
            atomic,
        });
        if history.len() > HISTORY_LENGTH {
            history.remove(0);
        }
        self.views(thread).synced.raise(word, timestamp);
    }

    fn atomic(
        &mut self,
        thread: GlobalThread,
        word: u64,
        old: u32,
        new: u32,
        ordering: AccessOrdering,
    ) {
        self.catch_up(thread);
        if !self.histories.contains_key(&word) {
            // The word's first access: what the atomic read was its contents.
            self.histories.insert(word, vec![Message::initial(old)]);
        }
        let scope = ordering.strong.unwrap_or(Scope::Gpu);
        if let Some(read) = self.histories[&word].last().cloned() {
            self.observe(thread, word, &read, scope, ordering.acquire);
        }
        let released = self.release(thread, ordering);
        self.append(thread, word, new, Some(scope), released, true);
    }

    fn fence(&mut self, thread: GlobalThread, kind: FenceKind, scope: Scope) {
        self.catch_up(thread);
        let views = self.views(thread);
        // The acquire half: releases read by earlier strong loads, from
        // threads within the fence's scope.
        for released in std::mem::take(&mut views.pending_acquires) {
            if includes(scope, thread.block, released.block) {
                views.synced.join(&released.view);
            }
        }
        if matches!(kind, FenceKind::SequentiallyConsistent | FenceKind::Membar) {
            let key = match scope {
                Scope::Cta => thread.block,
                Scope::Cluster | Scope::Gpu | Scope::Sys => GPU_SCOPE,
            };
            let everything = self.views(thread).everything();
            let shared = self.sc_views.entry(key).or_default();
            shared.join(&everything);
            let shared = shared.clone();
            self.views(thread).synced.join(&shared);
        }
        // A fence at GPU scope empties the block's L1.
        if scope != Scope::Cta {
            self.l1.swap_remove(&thread.block);
        }
        // The release half: later strong stores carry what is known now.
        let views = self.views(thread);
        views.fence_release = Some((views.everything(), scope));
    }
}

/// A 4-byte global load of the explore model issued but not yet performed:
/// weak and relaxed loads read memory as late as the thread allows (when
/// an instruction uses their register, or at the thread's next fence,
/// barrier, release, acquire, atomic, or access to the same word), so
/// that stores issued after them, by this thread or others, may be what
/// they read, as load buffering on a GPU does (the H100 shows LB's weak
/// outcome, `programs/litmus/hardware/h100.txt`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PendingLoad {
    pub warp: u32,
    pub lane: u8,
    /// The destination value register.
    pub register: u32,
    pub value: crate::program::MemoryValue,
    pub thread: GlobalThread,
    pub word: u64,
    pub ordering: AccessOrdering,
}

/// A 4-byte global load in the explore model: `Some(Some(bits))` when it
/// is performed now, `Some(None)` when it waits in the block's pending
/// loads, `None` when its address is outside every buffer.
pub(crate) fn load_or_defer(
    weak: &WeakMemory,
    env: &crate::block::LaunchEnv,
    warp: &mut crate::warp::Warp,
    state: &mut crate::block::BlockState,
    load: PendingLoad,
) -> Option<Option<u64>> {
    env.global.check(load.word, 4).ok()?;
    // The thread's earlier loads of this word come first (coherence); an
    // acquire orders all of the thread's earlier loads before it.
    perform_pending(weak, env, warp, state, |pending| {
        pending.thread == load.thread && (load.ordering.acquire || pending.word == load.word)
    });
    if load.ordering.acquire {
        return Some(Some(u64::from(weak.load(
            env.global,
            load.thread,
            load.word,
            load.ordering,
        )?)));
    }
    state.pending_loads.push(load);
    Some(None)
}

/// Performs, in program order, the pending loads of `warp` that `which`
/// picks, writing their registers.
pub(crate) fn perform_pending(
    weak: &WeakMemory,
    env: &crate::block::LaunchEnv,
    warp: &mut crate::warp::Warp,
    state: &mut crate::block::BlockState,
    mut which: impl FnMut(&PendingLoad) -> bool,
) {
    if state.pending_loads.is_empty() {
        return;
    }
    let mut index = 0;
    while index < state.pending_loads.len() {
        let load = state.pending_loads[index];
        if load.warp != warp.index || !which(&load) {
            index += 1;
            continue;
        }
        state.pending_loads.remove(index);
        // The address was checked when the load issued.
        let raw = weak
            .load(env.global, load.thread, load.word, load.ordering)
            .unwrap_or(0);
        warp.values.set(
            load.register,
            usize::from(load.lane),
            crate::access::extend_loaded(u64::from(raw), load.value),
        );
    }
}

/// Before `instruction` issues on `warp`: performs the warp's pending loads
/// it must see: every one at an ordering point (a fence, a barrier or warp
/// synchronization, an atomic, a release store, an exit), else those whose
/// registers it reads or writes.
pub(crate) fn perform_before(
    weak: &WeakMemory,
    env: &crate::block::LaunchEnv,
    warp: &mut crate::warp::Warp,
    state: &mut crate::block::BlockState,
    instruction: &crate::program::Instruction,
) {
    use crate::program::Kind;
    if !state
        .pending_loads
        .iter()
        .any(|load| load.warp == warp.index)
    {
        return;
    }
    let ordering_point = match instruction.kind {
        Kind::Store { order, .. } => matches!(order, MemoryOrder::Release(_)),
        Kind::Fence { .. }
        | Kind::Barrier { .. }
        | Kind::WarpSync { .. }
        | Kind::Atom { .. }
        | Kind::Printf { .. }
        | Kind::Exit
        | Kind::Trap => true,
        _ => false,
    };
    if ordering_point {
        perform_pending(weak, env, warp, state, |_| true);
        return;
    }
    let operands = crate::timing::operands::operands(instruction, env.program.value_regs);
    perform_pending(weak, env, warp, state, |load| {
        operands.reads().contains(&load.register) || operands.writes().contains(&load.register)
    });
}
