//! A brute-force checker of the PTX memory consistency model: which outcomes of a small
//! straight-line litmus test the model allows.
//!
//! # Sources
//!
//! The definitions and axioms are those of the PTX ISA, chapter "Memory Consistency Model"
//! (sm_70 and later), read together with the Alloy formalisation of Lustig, Sahasrabuddhe and
//! Giroux, *A Formal Analysis of the NVIDIA PTX Memory Consistency Model* (ASPLOS 2019;
//! `ptx.als` in NVlabs/ptxmemorymodel), which makes the prose precise.
//!
//! # Candidate executions
//!
//! Every instruction becomes one event, in program order within its thread; an `atom`/`red` is a
//! single event that both reads and writes. `bar.sync` becomes two events, an *arrive* followed
//! by a *wait*, as in the Alloy model, so that the barrier can order everything before it in
//! every thread of the block before everything after it without making causality order cyclic.
//! Every location also gets an *initial write* event that precedes all other writes in coherence
//! order and is morally strong with everything; it has no incoming edges in any relation, so it
//! can never sit on a cycle.
//!
//! A candidate execution chooses
//!
//! - for every read, the write it reads from (`rf`);
//! - for every location, a total coherence order (`co`) of its writes, initial write first;
//! - a total order of the `fence.sc` events, whose restriction to morally strong pairs is the
//!   Fence-SC order.
//!
//! Values follow from these choices: a read returns the value of its `rf` source, and a store of
//! a register or an atomic computes its value from the reads it depends on. The outcome is the
//! final value of every register a thread writes and the value of the last write of every
//! location in coherence order.
//!
//! # Definitions implemented
//!
//! - *Strong operations*: fences, barriers, atomics and accesses qualified `.relaxed`,
//!   `.acquire`, `.release` or `.volatile` (which the ISA defines as `.relaxed.sys`). Plain and
//!   `.weak` accesses are weak.
//! - *Scope inclusion*: `.cta` includes exactly the threads of the same block; `.cluster`,
//!   `.gpu` and `.sys` include every thread of a test (warpsim launches one cluster per block,
//!   and treating `.cluster` like `.gpu` is what the project asks of this checker).
//! - *Morally strong*: two events of one thread, or two strong events each of whose scope
//!   includes the other's thread (and, for memory operations, the same location: the tests'
//!   accesses are all aligned 32-bit words, so they overlap completely or not at all).
//! - *Release pattern* (head, write): a release operation followed in program order by itself or
//!   a strong write to the same location; or a release fence (`fence.acq_rel`, `fence.sc`, or
//!   the wait half of `bar.sync`) followed by any strong write.
//! - *Acquire pattern* (read, tail): a strong read of a location followed by an acquire operation
//!   on it (the acquire read itself included); or any strong read followed by an acquire fence.
//! - *Observation order*: W is observed by R when R reads from W and they are morally strong, or
//!   through a chain of atomics each observing the previous one.
//! - *Synchronizes-with*: a release pattern synchronizes with an acquire pattern when the
//!   pattern's write is observed by the pattern's read and the head and tail are morally strong;
//!   a `fence.sc` synchronizes with every morally strong `fence.sc` after it in Fence-SC order;
//!   the arrive of the k-th `bar.sync` of every thread of a block synchronizes with the wait of
//!   the k-th `bar.sync` of every thread of that block (a CTA-scope release and acquire).
//! - *Base causality order*: the transitive closure of program order and synchronizes-with.
//! - *Causality order*: base causality order, plus X before Y whenever X is observed by some Z
//!   and Z precedes Y in base causality order.
//!
//! # Axioms checked
//!
//! - *No-Thin-Air*: reads-from together with register data dependencies is acyclic (found while
//!   computing values: a cycle means a value that depends on itself).
//! - *Sequential-Consistency-Per-Location*: program order between events of one location,
//!   together with the morally strong pairs of reads-from, coherence order and from-reads, is
//!   acyclic.
//! - *Atomicity*: an atomic A and a morally strong write W of its location: A does not read
//!   from a write coherence-before W while W is coherence-before A.
//! - *Coherence*: a write that precedes another write of its location in causality order
//!   precedes it in coherence order.
//! - *Fence-SC*: two morally strong `fence.sc` related by causality order are related the same
//!   way in Fence-SC order.
//! - *Causality*: a read does not read from a write that it precedes in causality order; a
//!   read that a write W precedes in causality order does not read from a write
//!   coherence-before W; and causality order is irreflexive, as the Alloy model's
//!   `irreflexive[optional[fr + rf].cause]` demands.
//!
//! # Simplifications
//!
//! - The ISA calls coherence order *partial*: two racing writes that are neither morally strong
//!   nor ordered by causality are left unordered, and the Alloy model only demands totality
//!   among morally strong writes. The checker orders all writes of a location totally, as herd
//!   does, which gives every location a well-defined final value. Every
//!   execution it accepts is one the Alloy model accepts, but it can miss outcomes that need a
//!   racing pair to be unordered: two threads in different CTAs that each store to `x` with a
//!   weak store, execute `fence.sc.gpu` and load `x` may each read the *other's* value under the
//!   Alloy model, and not here (`racing_weak_writes_are_ordered_totally` in `tests/model.rs`
//!   pins this). No shape of the reference table depends on it.
//! - A failed `atom.cas` is a write of the old value, as the PTX ISA describes the instruction.
//! - Proxies, mixed sizes, `.shared` memory and control dependencies do not occur in these tests.
//! - Choices that program order alone already rules out are never enumerated: a read never
//!   reads from a later write of its own thread, nor from anything older than the last earlier
//!   write of its own thread to that location (Causality with program order inside causality
//!   order, plus Coherence); coherence and Fence-SC orders always follow program order within a
//!   thread. The candidate count that [`allowed_outcomes`] compares with its bound counts this
//!   reduced space.

use std::collections::{BTreeSet, HashSet};

use crate::error::ModelError;
use crate::litmus_test::{
    AccessOrder, Event, FenceKind, LitmusTest, Observable, Outcome, Register, RmwOp, Scope, Value,
};

/// A bound that every test of the project's litmus directory stays far below.
pub const DEFAULT_BOUND: u64 = 10_000_000;

/// The checker keeps relations as rows of 64-bit sets.
const MAX_EVENTS: usize = 64;

type EventSet = u64;

fn bit(index: usize) -> EventSet {
    1 << index
}

/// The indices of the members of a set, in increasing order.
fn members(mut set: EventSet) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if set == 0 {
            None
        } else {
            let index = set.trailing_zeros() as usize;
            set &= set - 1;
            Some(index)
        }
    })
}

/// Closes a relation, given as one row of successors per event, under transitivity.
fn transitive_closure(rows: &mut [EventSet]) {
    for middle in 0..rows.len() {
        let through = rows[middle];
        for row in rows.iter_mut() {
            if *row & bit(middle) != 0 {
                *row |= through;
            }
        }
    }
}

fn is_acyclic(mut rows: Vec<EventSet>) -> bool {
    transitive_closure(&mut rows);
    rows.iter()
        .enumerate()
        .all(|(index, row)| row & bit(index) == 0)
}

/// Returns the set of outcomes that the PTX memory model allows for `test`, or
/// [`ModelError::TooLarge`] when the test has more than `bound` candidate executions.
pub fn allowed_outcomes(test: &LitmusTest, bound: u64) -> Result<BTreeSet<Outcome>, ModelError> {
    check(test, bound, Pruning::ByProgramOrder)
}

/// Whether the candidate space leaves out the choices that program order alone rules out.
/// Only the tests turn pruning off, to show that it never changes the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pruning {
    ByProgramOrder,
    #[cfg_attr(not(test), allow(dead_code))]
    None,
}

fn check(test: &LitmusTest, bound: u64, pruning: Pruning) -> Result<BTreeSet<Outcome>, ModelError> {
    let graph = EventGraph::build(test)?;
    let space = CandidateSpace::new(&graph, pruning);
    let candidates = space.count();
    if candidates > bound {
        return Err(ModelError::TooLarge { candidates, bound });
    }
    Ok(Explorer::new(&graph, space).run())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NodeKind {
    InitialWrite,
    Load,
    Store,
    Rmw,
    Fence { sequentially_consistent: bool },
    BarrierArrive,
    BarrierWait,
}

impl NodeKind {
    fn reads(self) -> bool {
        matches!(self, NodeKind::Load | NodeKind::Rmw)
    }

    fn writes(self) -> bool {
        matches!(
            self,
            NodeKind::InitialWrite | NodeKind::Store | NodeKind::Rmw
        )
    }
}

/// Where a value operand comes from once the registers are resolved.
#[derive(Debug, Clone, Copy)]
enum Operand {
    Immediate(u32),
    /// The value that this event (a load or an atomic of the same thread) read.
    ReadBy(usize),
}

/// What a write stores.
#[derive(Debug, Clone)]
enum StoredValue {
    Nothing,
    Initial(u32),
    Operand(Operand),
    Rmw { op: RmwOp, operands: Vec<Operand> },
}

#[derive(Debug, Clone)]
struct Node {
    /// `None` for initial writes.
    thread: Option<usize>,
    block: u32,
    kind: NodeKind,
    location: Option<usize>,
    /// The scope of a strong event, `None` for a weak access or an initial write.
    strength: Option<Scope>,
    releases: bool,
    acquires: bool,
    stored: StoredValue,
}

/// The events of a test and every relation that does not depend on a candidate's choices.
struct EventGraph {
    nodes: Vec<Node>,
    location_count: usize,
    program_order: Vec<EventSet>,
    program_order_same_location: Vec<EventSet>,
    morally_strong: Vec<EventSet>,
    /// Per location, its initial write, writes and reads.
    location_events: Vec<EventSet>,
    write_set: EventSet,
    sc_fence_set: EventSet,
    barrier_synchronization: Vec<EventSet>,
    /// Release-pattern heads and the writes their patterns may end in.
    release_patterns: Vec<(usize, EventSet)>,
    /// Acquire-pattern tails and the reads their patterns may start with.
    acquire_patterns: Vec<(usize, EventSet)>,
    /// For each register observable, in [`LitmusTest::observables`] order, the event whose read
    /// value the register holds at the end.
    register_observable_events: Vec<usize>,
}

fn scope_includes(scope: Scope, own_block: u32, other_block: u32) -> bool {
    match scope {
        Scope::Cta => own_block == other_block,
        Scope::Cluster | Scope::Gpu | Scope::System => true,
    }
}

impl EventGraph {
    fn build(test: &LitmusTest) -> Result<EventGraph, ModelError> {
        let malformed = |reason: String| ModelError::MalformedTest { reason };
        let events = Self::event_count(test);
        if events > MAX_EVENTS {
            return Err(ModelError::TooManyEvents {
                events,
                limit: MAX_EVENTS,
            });
        }
        let location_count = test.locations.len();
        let mut nodes: Vec<Node> = test
            .locations
            .iter()
            .enumerate()
            .map(|(index, location)| Node {
                thread: None,
                block: 0,
                kind: NodeKind::InitialWrite,
                location: Some(index),
                strength: None,
                releases: false,
                acquires: false,
                stored: StoredValue::Initial(location.init),
            })
            .collect();
        let mut last_writer_of_register: Vec<[Option<usize>; Register::COUNT as usize]> =
            Vec::new();
        for (thread_index, thread) in test.threads.iter().enumerate() {
            let mut register_source = [None; Register::COUNT as usize];
            let block = thread.placement.block;
            for instruction in &thread.instructions {
                let check_location = |location: crate::LocationId| {
                    if location.index() < location_count {
                        Ok(location.index())
                    } else {
                        Err(malformed(format!(
                            "`{}` uses a location the test does not have",
                            instruction.text
                        )))
                    }
                };
                let resolve =
                    |value: &Value, sources: &[Option<usize>; Register::COUNT as usize]| match value
                    {
                        Value::Immediate(number) => Ok(Operand::Immediate(*number)),
                        Value::Register(register) => sources
                            .get(register.0 as usize)
                            .copied()
                            .flatten()
                            .map(Operand::ReadBy)
                            .ok_or_else(|| {
                                malformed(format!(
                                    "`{}` reads {register} before thread {thread_index} writes it",
                                    instruction.text
                                ))
                            }),
                    };
                // The fields every event of this thread shares; each arm overrides the rest.
                let template = Node {
                    thread: Some(thread_index),
                    block,
                    kind: NodeKind::Load,
                    location: None,
                    strength: None,
                    releases: false,
                    acquires: false,
                    stored: StoredValue::Nothing,
                };
                let index = nodes.len();
                match &instruction.event {
                    Event::Load {
                        order,
                        dst,
                        location,
                    } => {
                        nodes.push(Node {
                            location: Some(check_location(*location)?),
                            strength: order.strength(),
                            acquires: matches!(order, AccessOrder::Acquire(_)),
                            ..template
                        });
                        Self::record_destination(
                            &mut register_source,
                            *dst,
                            index,
                            &instruction.text,
                        )?;
                    }
                    Event::Store {
                        order,
                        location,
                        value,
                    } => {
                        nodes.push(Node {
                            kind: NodeKind::Store,
                            location: Some(check_location(*location)?),
                            strength: order.strength(),
                            releases: matches!(order, AccessOrder::Release(_)),
                            stored: StoredValue::Operand(resolve(value, &register_source)?),
                            ..template
                        });
                    }
                    Event::Rmw {
                        order,
                        op,
                        dst,
                        location,
                        operands,
                    } => {
                        if operands.len() != op.operand_count() {
                            return Err(malformed(format!(
                                "`{}` has {} operands; {op:?} takes {}",
                                instruction.text,
                                operands.len(),
                                op.operand_count()
                            )));
                        }
                        let operands = operands
                            .iter()
                            .map(|value| resolve(value, &register_source))
                            .collect::<Result<Vec<_>, _>>()?;
                        nodes.push(Node {
                            kind: NodeKind::Rmw,
                            location: Some(check_location(*location)?),
                            strength: Some(order.scope),
                            releases: order.semantics.releases(),
                            acquires: order.semantics.acquires(),
                            stored: StoredValue::Rmw { op: *op, operands },
                            ..template
                        });
                        if let Some(dst) = dst {
                            Self::record_destination(
                                &mut register_source,
                                *dst,
                                index,
                                &instruction.text,
                            )?;
                        }
                    }
                    Event::Fence { kind, scope } => nodes.push(Node {
                        kind: NodeKind::Fence {
                            sequentially_consistent: *kind == FenceKind::Sc,
                        },
                        strength: Some(*scope),
                        releases: true,
                        acquires: true,
                        ..template
                    }),
                    Event::Barrier => {
                        nodes.push(Node {
                            kind: NodeKind::BarrierArrive,
                            strength: Some(Scope::Cta),
                            ..template.clone()
                        });
                        nodes.push(Node {
                            kind: NodeKind::BarrierWait,
                            strength: Some(Scope::Cta),
                            releases: true,
                            acquires: true,
                            ..template
                        });
                    }
                }
            }
            last_writer_of_register.push(register_source);
        }

        let count = nodes.len();
        let mut program_order = vec![0; count];
        for (earlier, earlier_node) in nodes.iter().enumerate() {
            for (later, later_node) in nodes.iter().enumerate().skip(earlier + 1) {
                if earlier_node.thread.is_some() && earlier_node.thread == later_node.thread {
                    program_order[earlier] |= bit(later);
                }
            }
        }
        let mut location_events = vec![0; location_count];
        let mut write_set = 0;
        let mut sc_fence_set = 0;
        for (index, node) in nodes.iter().enumerate() {
            if let Some(location) = node.location {
                location_events[location] |= bit(index);
            }
            if node.kind.writes() {
                write_set |= bit(index);
            }
            if node.kind
                == (NodeKind::Fence {
                    sequentially_consistent: true,
                })
            {
                sc_fence_set |= bit(index);
            }
        }
        let program_order_same_location = nodes
            .iter()
            .enumerate()
            .map(|(index, node)| {
                node.location.map_or(0, |location| {
                    program_order[index] & location_events[location]
                })
            })
            .collect();
        // Initial writes count as morally strong with everything. No relation leads into them,
        // so this only lets a strong read of an initial value count as observing it, which
        // orders nothing that program order does not already order.
        let morally_strong = nodes
            .iter()
            .map(|node| {
                nodes
                    .iter()
                    .enumerate()
                    .fold(0, |set, (other_index, other)| {
                        let strong_pair = match (node.thread, other.thread) {
                            (None, _) | (_, None) => true,
                            (Some(thread), Some(other_thread)) if thread == other_thread => true,
                            _ => match (node.strength, other.strength) {
                                (Some(scope), Some(other_scope)) => {
                                    scope_includes(scope, node.block, other.block)
                                        && scope_includes(other_scope, other.block, node.block)
                                }
                                _ => false,
                            },
                        };
                        if strong_pair {
                            set | bit(other_index)
                        } else {
                            set
                        }
                    })
            })
            .collect();

        let barrier_synchronization = Self::barrier_synchronization(&nodes, test)?;

        let strong_writes = nodes
            .iter()
            .enumerate()
            .filter(|(_, node)| node.kind.writes() && node.strength.is_some())
            .fold(0, |set, (index, _)| set | bit(index));
        let strong_reads = nodes
            .iter()
            .enumerate()
            .filter(|(_, node)| node.kind.reads() && node.strength.is_some())
            .fold(0, |set, (index, _)| set | bit(index));
        let mut release_patterns = Vec::new();
        let mut acquire_patterns = Vec::new();
        for (index, node) in nodes.iter().enumerate() {
            let is_fence_like = matches!(node.kind, NodeKind::Fence { .. } | NodeKind::BarrierWait);
            let earlier = (0..count)
                .filter(|&other| program_order[other] & bit(index) != 0)
                .fold(0, |set, other| set | bit(other));
            if node.releases {
                let writes = if is_fence_like {
                    program_order[index] & strong_writes
                } else {
                    let location = node
                        .location
                        .map_or(0, |location| location_events[location]);
                    bit(index) | (program_order[index] & location & strong_writes)
                };
                release_patterns.push((index, writes));
            }
            if node.acquires {
                let reads = if is_fence_like {
                    earlier & strong_reads
                } else {
                    let location = node
                        .location
                        .map_or(0, |location| location_events[location]);
                    bit(index) | (earlier & location & strong_reads)
                };
                acquire_patterns.push((index, reads));
            }
        }

        // The final value of a register is the value read by the last event that writes it.
        let register_observable_events = test
            .observables()
            .into_iter()
            .filter_map(|observable| match observable {
                Observable::Register { thread, register } => last_writer_of_register
                    .get(thread.index())
                    .and_then(|sources| sources[register.0 as usize]),
                Observable::Location(_) => None,
            })
            .collect();

        Ok(EventGraph {
            nodes,
            location_count,
            program_order,
            program_order_same_location,
            morally_strong,
            location_events,
            write_set,
            sc_fence_set,
            barrier_synchronization,
            release_patterns,
            acquire_patterns,
            register_observable_events,
        })
    }

    fn record_destination(
        sources: &mut [Option<usize>; Register::COUNT as usize],
        register: Register,
        index: usize,
        text: &str,
    ) -> Result<(), ModelError> {
        let slot =
            sources
                .get_mut(register.0 as usize)
                .ok_or_else(|| ModelError::MalformedTest {
                    reason: format!("`{text}` writes {register}, beyond r15"),
                })?;
        *slot = Some(index);
        Ok(())
    }

    fn event_count(test: &LitmusTest) -> usize {
        test.locations.len()
            + test
                .threads
                .iter()
                .flat_map(|thread| &thread.instructions)
                .map(|instruction| {
                    if instruction.event == Event::Barrier {
                        2
                    } else {
                        1
                    }
                })
                .sum::<usize>()
    }

    /// The arrive of every thread's k-th barrier synchronizes with the wait of the k-th barrier
    /// of every thread of the same block.
    fn barrier_synchronization(
        nodes: &[Node],
        test: &LitmusTest,
    ) -> Result<Vec<EventSet>, ModelError> {
        let mut relation = vec![0; nodes.len()];
        // (block, thread, arrive events, wait events), in program order.
        let mut barriers: Vec<(u32, usize, Vec<usize>, Vec<usize>)> = Vec::new();
        for (thread_index, thread) in test.threads.iter().enumerate() {
            let arrives = (0..nodes.len())
                .filter(|&index| {
                    nodes[index].thread == Some(thread_index)
                        && nodes[index].kind == NodeKind::BarrierArrive
                })
                .collect();
            let waits = (0..nodes.len())
                .filter(|&index| {
                    nodes[index].thread == Some(thread_index)
                        && nodes[index].kind == NodeKind::BarrierWait
                })
                .collect();
            barriers.push((thread.placement.block, thread_index, arrives, waits));
        }
        for (block, thread, arrives, _) in &barriers {
            for (other_block, other_thread, other_arrives, other_waits) in &barriers {
                if block != other_block {
                    continue;
                }
                if arrives.len() != other_arrives.len() {
                    return Err(ModelError::MalformedTest {
                        reason: format!(
                            "threads {thread} and {other_thread} share block {block} but execute {} and {} bar.sync",
                            arrives.len(),
                            other_arrives.len()
                        ),
                    });
                }
                for (arrive, wait) in arrives.iter().zip(other_waits) {
                    relation[*arrive] |= bit(*wait);
                }
            }
        }
        Ok(relation)
    }

    fn writes_of(&self, location: usize) -> EventSet {
        self.location_events[location] & self.write_set
    }

    fn initial_write(location: usize) -> usize {
        location
    }
}

/// The choices a candidate execution makes, enumerated as far as program order allows.
struct CandidateSpace {
    /// Events that read, and for each the writes it may read from.
    reads: Vec<usize>,
    read_sources: Vec<Vec<usize>>,
    /// Per location, its non-initial writes grouped into per-thread chains in program order.
    write_chains: Vec<Vec<Vec<usize>>>,
    /// The `fence.sc` events grouped into per-thread chains in program order.
    sc_fence_chains: Vec<Vec<usize>>,
}

/// Groups events into per-thread chains, each in program order.
fn chains_by_thread(graph: &EventGraph, events: EventSet) -> Vec<Vec<usize>> {
    let mut chains: Vec<(usize, Vec<usize>)> = Vec::new();
    for index in members(events) {
        let thread = graph.nodes[index].thread.unwrap_or(usize::MAX);
        match chains
            .iter_mut()
            .find(|(chain_thread, _)| *chain_thread == thread)
        {
            Some((_, chain)) => chain.push(index),
            None => chains.push((thread, vec![index])),
        }
    }
    chains.into_iter().map(|(_, chain)| chain).collect()
}

/// The number of interleavings of chains of the given lengths, saturating.
fn interleavings(chains: &[Vec<usize>]) -> u64 {
    let mut result: u128 = 1;
    let mut total: u128 = 0;
    for chain in chains {
        for taken in 1..=chain.len() as u128 {
            total += 1;
            // result * C(total, taken) built one factor at a time stays an integer at each step.
            result = match result.checked_mul(total) {
                Some(product) => product / taken,
                None => return u64::MAX,
            };
        }
    }
    u64::try_from(result).unwrap_or(u64::MAX)
}

/// Every interleaving of the chains (every total order that keeps each chain's order).
fn all_interleavings(chains: &[Vec<usize>]) -> Vec<Vec<usize>> {
    fn extend(
        chains: &[Vec<usize>],
        taken: &mut Vec<usize>,
        prefix: &mut Vec<usize>,
        out: &mut Vec<Vec<usize>>,
    ) {
        let mut finished = true;
        for (chain_index, chain) in chains.iter().enumerate() {
            if let Some(&next) = chain.get(taken[chain_index]) {
                finished = false;
                taken[chain_index] += 1;
                prefix.push(next);
                extend(chains, taken, prefix, out);
                prefix.pop();
                taken[chain_index] -= 1;
            }
        }
        if finished {
            out.push(prefix.clone());
        }
    }
    let mut out = Vec::new();
    extend(
        chains,
        &mut vec![0; chains.len()],
        &mut Vec::new(),
        &mut out,
    );
    out
}

impl CandidateSpace {
    fn new(graph: &EventGraph, pruning: Pruning) -> CandidateSpace {
        let mut reads = Vec::new();
        let mut read_sources = Vec::new();
        for (index, node) in graph.nodes.iter().enumerate() {
            let (true, Some(location)) = (node.kind.reads(), node.location) else {
                continue;
            };
            let writes = graph.writes_of(location);
            let sources = match pruning {
                Pruning::None => members(writes & !bit(index)).collect(),
                Pruning::ByProgramOrder => {
                    let own_earlier_writes = members(writes)
                        .filter(|&write| graph.program_order[write] & bit(index) != 0)
                        .collect::<Vec<_>>();
                    let other_threads = members(writes).filter(|&write| {
                        let writer = graph.nodes[write].thread;
                        writer.is_some() && writer != node.thread
                    });
                    // A read sees its own thread's latest earlier write or something newer;
                    // with no such write it may also see the initial value.
                    let mut sources: Vec<usize> = match own_earlier_writes.last() {
                        Some(&latest) => vec![latest],
                        None => vec![EventGraph::initial_write(location)],
                    };
                    sources.extend(other_threads);
                    sources
                }
            };
            reads.push(index);
            read_sources.push(sources);
        }
        let chains = |events: EventSet| match pruning {
            Pruning::ByProgramOrder => chains_by_thread(graph, events),
            Pruning::None => members(events).map(|event| vec![event]).collect(),
        };
        let write_chains = (0..graph.location_count)
            .map(|location| {
                chains(graph.writes_of(location) & !bit(EventGraph::initial_write(location)))
            })
            .collect();
        let sc_fence_chains = chains(graph.sc_fence_set);
        CandidateSpace {
            reads,
            read_sources,
            write_chains,
            sc_fence_chains,
        }
    }

    fn count(&self) -> u64 {
        let factors = self
            .read_sources
            .iter()
            .map(|sources| sources.len() as u64)
            .chain(self.write_chains.iter().map(|chains| interleavings(chains)))
            .chain(std::iter::once(interleavings(&self.sc_fence_chains)));
        factors.fold(1u64, |product, factor| product.saturating_mul(factor))
    }
}

/// Walks the candidate space and collects the outcomes of consistent executions.
struct Explorer<'a> {
    graph: &'a EventGraph,
    space: CandidateSpace,
    /// Per location, every coherence order of its non-initial writes.
    coherence_orders: Vec<Vec<Vec<usize>>>,
    outcomes: BTreeSet<Outcome>,
}

/// A Fence-SC order under construction: the `fence.sc` events placed so far, in order, as rows
/// of successors restricted to morally strong pairs.
struct PartialScOrder {
    rows: Vec<EventSet>,
    placed: EventSet,
    /// How many fences of each per-thread chain are placed.
    chain_positions: Vec<usize>,
}

/// What one reads-from choice determines.
struct ReadsFromFacts {
    source: Vec<usize>,
    reads_from: Vec<EventSet>,
    observation: Vec<EventSet>,
    /// Program order, barrier and release/acquire synchronization: base causality before the
    /// Fence-SC order is added and the whole is closed.
    base_without_sc: Vec<EventSet>,
    register_values: Vec<u32>,
    written_values: Vec<u32>,
}

impl<'a> Explorer<'a> {
    fn new(graph: &'a EventGraph, space: CandidateSpace) -> Explorer<'a> {
        let coherence_orders = space
            .write_chains
            .iter()
            .map(|chains| all_interleavings(chains))
            .collect();
        Explorer {
            graph,
            space,
            coherence_orders,
            outcomes: BTreeSet::new(),
        }
    }

    fn run(mut self) -> BTreeSet<Outcome> {
        let mut choice = vec![0; self.space.reads.len()];
        loop {
            let mut source: Vec<usize> = (0..self.graph.nodes.len()).collect();
            for (read_position, &read) in self.space.reads.iter().enumerate() {
                source[read] = self.space.read_sources[read_position][choice[read_position]];
            }
            if let Some(facts) = self.reads_from_facts(source) {
                if self.reads_from_respects_causality(&facts) {
                    self.explore_coherence(&facts);
                }
            }
            // Advance the odometer of reads-from choices.
            let mut position = 0;
            loop {
                if position == choice.len() {
                    return self.outcomes;
                }
                choice[position] += 1;
                if choice[position] < self.space.read_sources[position].len() {
                    break;
                }
                choice[position] = 0;
                position += 1;
            }
        }
    }

    /// Values, observation and synchronization for one reads-from choice, or `None` when the
    /// choice breaks No-Thin-Air.
    fn reads_from_facts(&self, source: Vec<usize>) -> Option<ReadsFromFacts> {
        let graph = self.graph;
        let count = graph.nodes.len();
        let mut evaluator = ValueEvaluator {
            graph,
            source: &source,
            read_values: vec![None; count],
            written_values: vec![None; count],
            in_progress_reads: 0,
            in_progress_writes: 0,
        };
        for &read in &self.space.reads {
            evaluator.read_value(read)?;
        }
        let mut written_values = vec![0; count];
        for write in members(graph.write_set) {
            written_values[write] = evaluator.written_value(write)?;
        }
        let register_values = graph
            .register_observable_events
            .iter()
            .map(|&event| evaluator.read_values[event].unwrap_or(0))
            .collect();

        let mut reads_from = vec![0; count];
        for &read in &self.space.reads {
            reads_from[source[read]] |= bit(read);
        }
        // Observation: morally strong reads-from, extended through chains of atomics.
        let strong_reads_from: Vec<EventSet> = (0..count)
            .map(|write| reads_from[write] & graph.morally_strong[write])
            .collect();
        let mut observation = strong_reads_from.clone();
        loop {
            let mut changed = false;
            for observed in observation.iter_mut() {
                let extended = members(*observed)
                    .filter(|&atomic| graph.nodes[atomic].kind == NodeKind::Rmw)
                    .fold(*observed, |set, atomic| set | strong_reads_from[atomic]);
                if extended != *observed {
                    *observed = extended;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let mut base_without_sc: Vec<EventSet> = (0..count)
            .map(|index| graph.program_order[index] | graph.barrier_synchronization[index])
            .collect();
        for &(head, pattern_writes) in &graph.release_patterns {
            let observed_reads =
                members(pattern_writes).fold(0, |set, write| set | observation[write]);
            if observed_reads == 0 {
                continue;
            }
            for &(tail, pattern_reads) in &graph.acquire_patterns {
                if graph.morally_strong[head] & bit(tail) != 0
                    && observed_reads & pattern_reads != 0
                {
                    base_without_sc[head] |= bit(tail);
                }
            }
        }
        Some(ReadsFromFacts {
            source,
            reads_from,
            observation,
            base_without_sc,
            register_values,
            written_values,
        })
    }

    fn explore_coherence(&mut self, facts: &ReadsFromFacts) {
        let graph = self.graph;
        let mut choice = vec![0; graph.location_count];
        loop {
            let mut coherence_after = vec![0; graph.nodes.len()];
            let mut final_values = Vec::with_capacity(graph.location_count);
            for (location, orders) in self.coherence_orders.iter().enumerate() {
                let order = &orders[choice[location]];
                let initial = EventGraph::initial_write(location);
                coherence_after[initial] = order.iter().fold(0, |set, &write| set | bit(write));
                for (position, &write) in order.iter().enumerate() {
                    coherence_after[write] = order[position + 1..]
                        .iter()
                        .fold(0, |set, &later| set | bit(later));
                }
                let last = order.last().copied().unwrap_or(initial);
                final_values.push(facts.written_values[last]);
            }
            if self.per_location_axioms_hold(facts, &coherence_after) {
                let outcome = Outcome(
                    facts
                        .register_values
                        .iter()
                        .copied()
                        .chain(final_values)
                        .collect(),
                );
                if !self.outcomes.contains(&outcome)
                    && self.some_sc_order_is_consistent(facts, &coherence_after)
                {
                    self.outcomes.insert(outcome);
                }
            }
            let mut position = 0;
            loop {
                if position == choice.len() {
                    return;
                }
                choice[position] += 1;
                if choice[position] < self.coherence_orders[position].len() {
                    break;
                }
                choice[position] = 0;
                position += 1;
            }
        }
    }

    /// The part of Causality that needs no coherence order, checked with causality order
    /// before any Fence-SC edge is added: causality order is irreflexive, and no read reads from
    /// a write that it precedes. Fence-SC edges only add to causality order, so a reads-from
    /// choice that fails here fails with every coherence and Fence-SC order.
    fn reads_from_respects_causality(&self, facts: &ReadsFromFacts) -> bool {
        let graph = self.graph;
        let mut base = facts.base_without_sc.clone();
        transitive_closure(&mut base);
        (0..graph.nodes.len()).all(|index| {
            let cause = members(facts.observation[index])
                .fold(base[index], |set, observer| set | base[observer]);
            let reads_from_later =
                graph.nodes[index].kind.reads() && cause & bit(facts.source[index]) != 0;
            cause & bit(index) == 0 && !reads_from_later
        })
    }

    /// Sequential-Consistency-Per-Location and Atomicity, which need reads-from and coherence
    /// order only.
    fn per_location_axioms_hold(
        &self,
        facts: &ReadsFromFacts,
        coherence_after: &[EventSet],
    ) -> bool {
        let graph = self.graph;
        let count = graph.nodes.len();
        let mut from_reads = vec![0; count];
        for &read in &self.space.reads {
            from_reads[read] = coherence_after[facts.source[read]] & !bit(read);
        }
        let communication: Vec<EventSet> = (0..count)
            .map(|index| {
                graph.program_order_same_location[index]
                    | ((facts.reads_from[index] | coherence_after[index] | from_reads[index])
                        & graph.morally_strong[index])
            })
            .collect();
        if !is_acyclic(communication) {
            return false;
        }
        self.space.reads.iter().all(|&atomic| {
            graph.nodes[atomic].kind != NodeKind::Rmw || {
                let Some(location) = graph.nodes[atomic].location else {
                    return true;
                };
                let between = coherence_after[facts.source[atomic]]
                    & graph.morally_strong[atomic]
                    & graph.writes_of(location);
                members(between).all(|write| coherence_after[write] & bit(atomic) == 0)
            }
        })
    }

    /// Whether some Fence-SC order satisfies Coherence, Fence-SC and Causality.
    ///
    /// The search places the `fence.sc` events one at a time, each after all those placed
    /// before, and checks the axioms after every step. Adding Fence-SC edges only adds to
    /// causality order, and every axiom forbids something that causality order contains, so a
    /// violation among the placed fences stays a violation however the order is completed and
    /// the branch can be abandoned. Placements that reach the same morally strong edges by
    /// different routes are visited once.
    fn some_sc_order_is_consistent(
        &self,
        facts: &ReadsFromFacts,
        coherence_after: &[EventSet],
    ) -> bool {
        let mut order = PartialScOrder {
            rows: vec![0; self.graph.nodes.len()],
            placed: 0,
            chain_positions: vec![0; self.space.sc_fence_chains.len()],
        };
        let mut visited = HashSet::new();
        self.search_sc_orders(facts, coherence_after, &mut order, &mut visited)
    }

    fn search_sc_orders(
        &self,
        facts: &ReadsFromFacts,
        coherence_after: &[EventSet],
        order: &mut PartialScOrder,
        visited: &mut HashSet<(EventSet, Vec<EventSet>)>,
    ) -> bool {
        if !self.causality_axioms_hold(facts, coherence_after, &order.rows, order.placed) {
            return false;
        }
        if order.placed == self.graph.sc_fence_set {
            return true;
        }
        if !visited.insert((order.placed, order.rows.clone())) {
            return false;
        }
        for (chain_index, chain) in self.space.sc_fence_chains.iter().enumerate() {
            let Some(&fence) = chain.get(order.chain_positions[chain_index]) else {
                continue;
            };
            let predecessors = order.placed & self.graph.morally_strong[fence];
            for earlier in members(predecessors) {
                order.rows[earlier] |= bit(fence);
            }
            order.placed |= bit(fence);
            order.chain_positions[chain_index] += 1;
            let found = self.search_sc_orders(facts, coherence_after, order, visited);
            order.chain_positions[chain_index] -= 1;
            order.placed &= !bit(fence);
            for earlier in members(predecessors) {
                order.rows[earlier] &= !bit(fence);
            }
            if found {
                return true;
            }
        }
        false
    }

    /// Coherence, Fence-SC and Causality for a Fence-SC order of which the fences in `placed`
    /// are placed. Fence-SC is checked among placed fences only: a fence placed later will
    /// follow every placed one, which is what causality order may demand of it.
    fn causality_axioms_hold(
        &self,
        facts: &ReadsFromFacts,
        coherence_after: &[EventSet],
        sc_order: &[EventSet],
        placed: EventSet,
    ) -> bool {
        let graph = self.graph;
        let count = graph.nodes.len();
        let mut base: Vec<EventSet> = (0..count)
            .map(|index| facts.base_without_sc[index] | sc_order[index])
            .collect();
        transitive_closure(&mut base);
        let cause: Vec<EventSet> = (0..count)
            .map(|index| {
                members(facts.observation[index])
                    .fold(base[index], |set, observer| set | base[observer])
            })
            .collect();
        if cause
            .iter()
            .enumerate()
            .any(|(index, row)| row & bit(index) != 0)
        {
            return false;
        }
        for write in members(graph.write_set) {
            let Some(location) = graph.nodes[write].location else {
                continue;
            };
            if cause[write] & graph.writes_of(location) & !coherence_after[write] != 0 {
                return false;
            }
        }
        for fence in members(placed) {
            let related = cause[fence] & placed & graph.morally_strong[fence];
            if related & !sc_order[fence] != 0 {
                return false;
            }
        }
        for &read in &self.space.reads {
            let source = facts.source[read];
            if cause[read] & bit(source) != 0 {
                return false;
            }
            let Some(location) = graph.nodes[read].location else {
                continue;
            };
            let hidden = members(graph.writes_of(location) & coherence_after[source])
                .any(|write| cause[write] & bit(read) != 0);
            if hidden {
                return false;
            }
        }
        true
    }
}

/// Computes values from a reads-from choice; a value that depends on itself is a thin-air
/// cycle of reads-from and data dependencies.
struct ValueEvaluator<'a> {
    graph: &'a EventGraph,
    source: &'a [usize],
    read_values: Vec<Option<u32>>,
    written_values: Vec<Option<u32>>,
    in_progress_reads: EventSet,
    in_progress_writes: EventSet,
}

impl ValueEvaluator<'_> {
    fn read_value(&mut self, read: usize) -> Option<u32> {
        if let Some(value) = self.read_values[read] {
            return Some(value);
        }
        if self.in_progress_reads & bit(read) != 0 {
            return None;
        }
        self.in_progress_reads |= bit(read);
        let value = self.written_value(self.source[read])?;
        self.in_progress_reads &= !bit(read);
        self.read_values[read] = Some(value);
        Some(value)
    }

    fn written_value(&mut self, write: usize) -> Option<u32> {
        if let Some(value) = self.written_values[write] {
            return Some(value);
        }
        if self.in_progress_writes & bit(write) != 0 {
            return None;
        }
        self.in_progress_writes |= bit(write);
        let value = match &self.graph.nodes[write].stored {
            StoredValue::Nothing => 0,
            StoredValue::Initial(value) => *value,
            StoredValue::Operand(operand) => self.operand_value(*operand)?,
            StoredValue::Rmw { op, operands } => {
                let old = self.read_value(write)?;
                let mut values = Vec::with_capacity(operands.len());
                for operand in operands.clone() {
                    values.push(self.operand_value(operand)?);
                }
                op.apply(old, &values)
            }
        };
        self.in_progress_writes &= !bit(write);
        self.written_values[write] = Some(value);
        Some(value)
    }

    fn operand_value(&mut self, operand: Operand) -> Option<u32> {
        match operand {
            Operand::Immediate(value) => Some(value),
            Operand::ReadBy(event) => self.read_value(event),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use proptest::prelude::*;

    use super::*;
    use crate::litmus_test::{
        Instruction, Location, LocationId, Placement, RmwOrder, RmwSemantics, Thread,
    };

    /// Pruned and unpruned enumeration give the same outcomes.
    fn assert_pruning_is_exact(test: &LitmusTest) {
        let pruned = check(test, u64::MAX, Pruning::ByProgramOrder).unwrap();
        let unpruned = check(test, u64::MAX, Pruning::None).unwrap();
        assert_eq!(pruned, unpruned, "{}", test.name);
    }

    #[test]
    fn pruning_never_changes_the_answer_on_the_project_programs() {
        let directory = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../programs/litmus");
        let Ok(entries) = std::fs::read_dir(&directory) else {
            return;
        };
        for path in entries.filter_map(|entry| entry.ok().map(|entry| entry.path())) {
            if path
                .extension()
                .is_none_or(|extension| extension != "litmus")
            {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let Ok(file) = crate::parse_file(&path, &text) else {
                continue;
            };
            for test in file.expand().unwrap() {
                assert_pruning_is_exact(&test);
            }
        }
    }

    fn scope_strategy() -> impl Strategy<Value = Scope> {
        prop::sample::select(vec![Scope::Cta, Scope::Gpu, Scope::System])
    }

    fn access_order_strategy(store: bool) -> impl Strategy<Value = AccessOrder> {
        let synchronizing = if store {
            scope_strategy().prop_map(AccessOrder::Release).boxed()
        } else {
            scope_strategy().prop_map(AccessOrder::Acquire).boxed()
        };
        prop_oneof![
            Just(AccessOrder::Weak),
            Just(AccessOrder::Volatile),
            scope_strategy().prop_map(AccessOrder::Relaxed),
            synchronizing,
        ]
    }

    /// One instruction of a random test, before registers are assigned.
    #[derive(Debug, Clone)]
    enum Shape {
        Load(AccessOrder, u32),
        Store(AccessOrder, u32, u32, bool),
        Rmw(RmwSemantics, Scope, RmwOp, u32, u32),
        Fence(FenceKind, Scope),
    }

    fn shape_strategy() -> impl Strategy<Value = Shape> {
        let location = 0u32..2;
        prop_oneof![
            (access_order_strategy(false), location.clone())
                .prop_map(|(order, location)| Shape::Load(order, location)),
            (
                access_order_strategy(true),
                location.clone(),
                1u32..3,
                any::<bool>()
            )
                .prop_map(|(order, location, value, from_register)| {
                    Shape::Store(order, location, value, from_register)
                }),
            (
                prop::sample::select(vec![
                    RmwSemantics::Relaxed,
                    RmwSemantics::Acquire,
                    RmwSemantics::Release,
                    RmwSemantics::AcquireRelease
                ]),
                scope_strategy(),
                prop::sample::select(vec![RmwOp::Add, RmwOp::Exchange, RmwOp::CompareAndSwap]),
                location,
                1u32..3,
            )
                .prop_map(|(semantics, scope, op, location, value)| {
                    Shape::Rmw(semantics, scope, op, location, value)
                }),
            (
                prop::sample::select(vec![FenceKind::Sc, FenceKind::AcquireRelease]),
                scope_strategy()
            )
                .prop_map(|(kind, scope)| Shape::Fence(kind, scope)),
        ]
    }

    /// A random test of up to three threads with up to three instructions each.
    fn build_test(threads: Vec<(u32, Vec<Shape>)>) -> LitmusTest {
        let threads = threads
            .into_iter()
            .enumerate()
            .map(|(thread_index, (block, shapes))| {
                let mut last_register = None;
                let instructions = shapes
                    .into_iter()
                    .enumerate()
                    .map(|(position, shape)| {
                        let register = Register(position as u8);
                        let event = match shape {
                            Shape::Load(order, location) => Event::Load {
                                order,
                                dst: register,
                                location: LocationId(location),
                            },
                            Shape::Store(order, location, value, from_register) => Event::Store {
                                order,
                                location: LocationId(location),
                                value: match (from_register, last_register) {
                                    (true, Some(source)) => Value::Register(source),
                                    _ => Value::Immediate(value),
                                },
                            },
                            Shape::Rmw(semantics, scope, op, location, value) => Event::Rmw {
                                order: RmwOrder { semantics, scope },
                                op,
                                dst: Some(register),
                                location: LocationId(location),
                                operands: (0..op.operand_count())
                                    .map(|offset| Value::Immediate(value + offset as u32))
                                    .collect(),
                            },
                            Shape::Fence(kind, scope) => Event::Fence { kind, scope },
                        };
                        if event.destination().is_some() {
                            last_register = Some(register);
                        }
                        Instruction {
                            text: format!("{event:?}"),
                            line: 1,
                            event,
                        }
                    })
                    .collect();
                Thread {
                    placement: Placement {
                        block,
                        warp: thread_index as u32,
                        lane: 0,
                    },
                    instructions,
                }
            })
            .collect();
        LitmusTest {
            name: "random".to_string(),
            path: PathBuf::from("random"),
            locations: vec![
                Location {
                    name: "x".to_string(),
                    init: 0,
                },
                Location {
                    name: "y".to_string(),
                    init: 0,
                },
            ],
            threads,
            exists: Vec::new(),
            expect: None,
        }
    }

    /// The outcomes of every interleaving of the threads, each instruction atomic: sequential
    /// consistency, computed independently of the axioms. Barriers are not supported here.
    fn sequentially_consistent_outcomes(test: &LitmusTest) -> BTreeSet<Outcome> {
        struct State {
            program_counters: Vec<usize>,
            registers: Vec<[u32; Register::COUNT as usize]>,
            memory: Vec<u32>,
        }
        fn value_of(value: &Value, registers: &[u32; Register::COUNT as usize]) -> u32 {
            match value {
                Value::Immediate(number) => *number,
                Value::Register(register) => registers[register.0 as usize],
            }
        }
        fn explore(test: &LitmusTest, state: &mut State, outcomes: &mut BTreeSet<Outcome>) {
            let mut finished = true;
            for thread in 0..test.threads.len() {
                let Some(instruction) = test.threads[thread]
                    .instructions
                    .get(state.program_counters[thread])
                else {
                    continue;
                };
                finished = false;
                let saved_registers = state.registers[thread];
                let saved_memory = state.memory.clone();
                match &instruction.event {
                    Event::Load { dst, location, .. } => {
                        state.registers[thread][dst.0 as usize] = state.memory[location.index()];
                    }
                    Event::Store {
                        location, value, ..
                    } => {
                        state.memory[location.index()] = value_of(value, &state.registers[thread]);
                    }
                    Event::Rmw {
                        op,
                        dst,
                        location,
                        operands,
                        ..
                    } => {
                        let old = state.memory[location.index()];
                        let values: Vec<u32> = operands
                            .iter()
                            .map(|value| value_of(value, &state.registers[thread]))
                            .collect();
                        state.memory[location.index()] = op.apply(old, &values);
                        if let Some(dst) = dst {
                            state.registers[thread][dst.0 as usize] = old;
                        }
                    }
                    Event::Fence { .. } => {}
                    Event::Barrier => panic!("the interleaving oracle does not run barriers"),
                }
                state.program_counters[thread] += 1;
                explore(test, state, outcomes);
                state.program_counters[thread] -= 1;
                state.registers[thread] = saved_registers;
                state.memory = saved_memory;
            }
            if finished {
                let values = test
                    .observables()
                    .into_iter()
                    .map(|observable| match observable {
                        Observable::Register { thread, register } => {
                            state.registers[thread.index()][register.0 as usize]
                        }
                        Observable::Location(location) => state.memory[location.index()],
                    })
                    .collect();
                outcomes.insert(Outcome(values));
            }
        }
        let mut state = State {
            program_counters: vec![0; test.threads.len()],
            registers: vec![[0; Register::COUNT as usize]; test.threads.len()],
            memory: test
                .locations
                .iter()
                .map(|location| location.init)
                .collect(),
        };
        let mut outcomes = BTreeSet::new();
        explore(test, &mut state, &mut outcomes);
        outcomes
    }

    /// The same test with every access `.relaxed.sys` (atomics `.sys`) and a `fence.sc.sys`
    /// before every instruction: the C++ mapping of sequentially consistent atomics.
    fn fenced_everywhere(test: &LitmusTest) -> LitmusTest {
        let mut fenced = test.clone();
        for thread in &mut fenced.threads {
            let fence = Instruction {
                text: "fence.sc.sys;".to_string(),
                line: 1,
                event: Event::Fence {
                    kind: FenceKind::Sc,
                    scope: Scope::System,
                },
            };
            thread.instructions = std::mem::take(&mut thread.instructions)
                .into_iter()
                .filter(|instruction| !matches!(instruction.event, Event::Fence { .. }))
                .flat_map(|mut instruction| {
                    match &mut instruction.event {
                        Event::Load { order, .. } | Event::Store { order, .. } => {
                            *order = AccessOrder::Relaxed(Scope::System);
                        }
                        Event::Rmw { order, .. } => order.scope = Scope::System,
                        Event::Fence { .. } | Event::Barrier => {}
                    }
                    [fence.clone(), instruction]
                })
                .collect();
        }
        fenced
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, .. ProptestConfig::default() })]

        #[test]
        fn sequentially_consistent_outcomes_are_always_allowed(
            threads in prop::collection::vec((0u32..2, prop::collection::vec(shape_strategy(), 1..4)), 2..4)
        ) {
            let test = build_test(threads);
            if let Ok(allowed) = allowed_outcomes(&test, 200_000) {
                let interleaved = sequentially_consistent_outcomes(&test);
                prop_assert!(interleaved.is_subset(&allowed), "{:?} not within {:?}", interleaved, allowed);
            }
        }

    }

    proptest! {
        // Fencing every access triples the events, so fewer and smaller cases keep this quick.
        #![proptest_config(ProptestConfig { cases: 100, .. ProptestConfig::default() })]

        #[test]
        fn fence_sc_around_every_access_restores_sequential_consistency(
            threads in prop::collection::vec((0u32..2, prop::collection::vec(shape_strategy(), 1..4)), 2..4)
        ) {
            let test = fenced_everywhere(&build_test(threads));
            if let Ok(allowed) = allowed_outcomes(&test, 50_000) {
                prop_assert_eq!(allowed, sequentially_consistent_outcomes(&test));
            }
        }

        #[test]
        fn pruning_never_changes_the_answer_on_random_tests(
            threads in prop::collection::vec((0u32..2, prop::collection::vec(shape_strategy(), 1..4)), 2..4)
        ) {
            let test = build_test(threads);
            let pruned = check(&test, 200_000, Pruning::ByProgramOrder);
            let unpruned = check(&test, 200_000, Pruning::None);
            if let (Ok(pruned), Ok(unpruned)) = (pruned, unpruned) {
                prop_assert!(!pruned.is_empty());
                prop_assert_eq!(pruned, unpruned);
            }
        }
    }
}
