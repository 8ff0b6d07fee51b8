//! Static uniformity analysis: which registers and branches may differ between
//! the threads of one thread block, and which block barriers (`bar.sync 0`,
//! `barrier.sync`, `bar.red` without a thread count) some threads of a block
//! may reach while others do not.
//!
//! # What it implements
//!
//! The analysis is the divergence analysis of Coutinho, Sampaio, Pereira and
//! Meira, "Divergence Analysis and Optimizations" (PACT 2011), and of Sampaio,
//! Souza, Collange and Pereira, "Divergence Analysis" (TOPLAS 2013): a value
//! is divergent when it depends on a divergent source through data flow, or
//! through control flow ("sync dependence") on a divergent branch. Control
//! dependence is that of Ferrante, Ottenstein and Warren, "The Program
//! Dependence Graph and Its Use in Optimization" (TOPLAS 1987): block `B` is
//! control dependent on the branch ending block `X` when `B` post-dominates a
//! successor of `X` but does not strictly post-dominate `X`. It is computed by
//! their walk up the post-dominator tree from each successor `S` of `X` to the
//! immediate post-dominator of `X` (as in Cytron, Ferrante, Rosen, Wegman and
//! Zadeck, "Efficiently Computing Static Single Assignment Form and the
//! Control Dependence Graph", TOPLAS 1991), on the post-dominators of
//! [`Cfg::post_dominators_over`], which is Cooper, Harvey and Kennedy's
//! algorithm.
//!
//! Two departures from the textbook, both because of what a barrier waits for:
//!
//! - The graph is the *pruned* graph of [`Cfg::pruned_successors`]: edges into
//!   blocks that exit at once are left out. Threads that `return` early are
//!   not expected at a later `__syncthreads()`, so `if (tid >= 64) return;
//!   __syncthreads();` is correct code and gives no finding. The same holds
//!   for an early return that does some work first (`if (i >= n) { out[i] =
//!   0; return; }`, a `return` inside a loop): an edge into a barrier-free
//!   tail that leads only to the exit is left out too, unless the tail also
//!   post-dominates the other side of the branch (then it is a join that the
//!   threads waiting at the barrier run as well, as in `if (tid < 64)
//!   __syncthreads(); out[tid] = v;`, which is a finding). A divergent
//!   barrier whose paths meet only at an `exit` (`if (tid < 64)
//!   __syncthreads();` as the last statement) looks like an early return
//!   in the pruned graph; it is told apart afterwards
//!   ([`DivergentBarrier::skipped_by_exit`]): a divergent branch sends some
//!   threads straight to the exit, the others reach the barrier, and after
//!   the barrier nothing happens (no store, atomic, barrier or
//!   warp-synchronous instruction) until the exit or the branch again. An
//!   early return's barrier guards what follows it; this one guards
//!   nothing, and is GPUVerify's barrier divergence all the same.
//! - Blocks that cannot reach the exit (an endless loop) get a virtual edge to
//!   the exit from the last block of each such region, as post-dominator
//!   trees in compilers do, so that every block has a post-dominator.
//!
//! The IR is not in SSA form, so registers are tracked per program point: a
//! forward data-flow analysis keeps, before each block, the set of registers
//! whose value may be divergent there (the union over the incoming paths, so
//! a use is divergent when any definition reaching it is). A definition that
//! runs under divergent control (its block is control dependent, directly or
//! through nested regions, on a divergent branch, or its guard predicate is
//! divergent) makes its destinations divergent, because after the paths meet
//! again the threads hold values from different definitions. This is simpler
//! and more conservative than placing the gamma functions of the TOPLAS paper,
//! and it also covers a loop whose trip count depends on the thread: its exit
//! branch is divergent and every block of the loop depends on it. Branches,
//! the divergent regions and the data flow feed each other and are iterated
//! together on one worklist to a fixed point; everything only ever grows, so
//! it terminates.
//!
//! Loads: a weak load at a uniform address from global, shared, constant or
//! parameter memory is uniform (a data race would be a bug of its own); a
//! volatile, relaxed or acquire load is divergent, because another thread may
//! write the location while the threads read it; a load from local (or
//! generic) memory is divergent once any store to local or generic memory may
//! write a divergent value, since local memory is per thread. Atomics,
//! shuffles, votes and `activemask` give divergent results; `bar.red` gives
//! every thread the same one.
//!
//! The carry flag of the extended-precision instructions (PTX ISA 9.7.2,
//! `add.cc`, `addc`, `mad.lo.cc`, `madc`...) is per-thread state that lives
//! from one instruction to the next, across branches, so it is followed like
//! a register: one pseudo-register past the kernel's own, `CC.CF`, written by
//! the `.cc` forms and read by the `c` forms. A carry chain over uniform
//! operands then stays uniform, and one that starts from a thread index, or
//! sets the flag under divergent control, makes every later reader divergent.
//!
//! Each block is analysed again whenever its entry state grows, so a loop
//! needs as many rounds as the longest chain of loop-carried dependences that
//! divergence travels along, which is short in real kernels (a few
//! milliseconds for 10,000 instructions) but grows with an artificial chain
//! of thousands of copies written against the loop's order.
//!
//! Uniformity here is block-level: a value is uniform when every thread of
//! one block that computes it gets the same value, which is what decides
//! whether all of them reach a block barrier.

use std::collections::{HashMap, VecDeque};

use crate::cfg::{Cfg, Successor};
use crate::instr::{Address, AddressBase, Instr, MemoryOrder, Op, Operand, PredOperand};
use crate::kernel::{InstrId, Kernel, RegId};
use crate::types::{SpecialReg, StateSpace};

/// A block barrier that threads of one block may reach under different control flow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DivergentBarrier {
    pub barrier: InstrId,
    /// The divergent branch (or the guarded barrier itself when its own guard is divergent) it depends on; the innermost one.
    pub branch: InstrId,
    /// The first divergent source that makes the branch divergent, for the explanation: e.g. "%tid.x" or a register name; free text.
    pub reason: String,
    /// The threads that do not reach the barrier go straight to the exit,
    /// and nothing after the barrier needs it (`if (tid % 2 == 0)
    /// __syncthreads();` as the last statement, or a barrier in a loop whose
    /// trip count differs per thread and whose exit ends the kernel).
    pub skipped_by_exit: bool,
}

/// The block barriers without a thread count that some threads of a block may
/// reach while others do not, sorted by instruction.
pub fn divergent_barriers(kernel: &Kernel) -> Vec<DivergentBarrier> {
    analyze(kernel).divergent_barriers
}

/// The result of the analysis for one kernel.
#[derive(Clone, Debug)]
pub struct Uniformity {
    /// For each register, why some definition of it may be divergent (an index
    /// into `reasons`), or `None` when every definition is uniform.
    register_reasons: Vec<Option<usize>>,
    /// For each instruction, whether it is a guarded `bra` or `exit` whose
    /// guard may be divergent where it is read.
    divergent_branches: Vec<bool>,
    /// For each instruction, whether it runs under divergent control: its
    /// block depends on a divergent branch, directly or through nested regions.
    under_divergent_control: Vec<bool>,
    reasons: Vec<String>,
    divergent_barriers: Vec<DivergentBarrier>,
}

impl Uniformity {
    /// Whether some definition of `reg` may give different threads of one
    /// block different values. This is a summary over the whole kernel; the
    /// analysis itself is per program point.
    pub fn is_divergent_reg(&self, reg: RegId) -> bool {
        self.register_reasons
            .get(reg.index())
            .is_some_and(Option::is_some)
    }

    /// Whether `instr` is a guarded `bra` (or guarded `exit`) whose predicate
    /// may differ between the threads of one block.
    pub fn is_divergent_branch(&self, instr: InstrId) -> bool {
        self.divergent_branches
            .get(instr.index())
            .copied()
            .unwrap_or(false)
    }

    /// Whether `instr` may be run by some threads of a block and skipped by
    /// others because of a divergent branch before it.
    pub fn is_under_divergent_control(&self, instr: InstrId) -> bool {
        self.under_divergent_control
            .get(instr.index())
            .copied()
            .unwrap_or(false)
    }

    /// Why `reg` may be divergent, for explanations; `None` when it is uniform.
    pub fn divergence_reason(&self, reg: RegId) -> Option<&str> {
        let reason = (*self.register_reasons.get(reg.index())?)?;
        Some(&self.reasons[reason])
    }

    /// The findings of [`divergent_barriers`].
    pub fn divergent_barriers(&self) -> &[DivergentBarrier] {
        &self.divergent_barriers
    }
}

/// Runs the analysis on one kernel.
pub fn analyze(kernel: &Kernel) -> Uniformity {
    let cfg = Cfg::build(kernel);
    let dependence = ControlDependence::build(&cfg, kernel);
    let mut analysis = Analysis::new(kernel, &cfg, &dependence);
    analysis.run_to_fixed_point();
    analysis.finish()
}

/// Set of registers, one bit each.
#[derive(Clone, Debug, PartialEq, Eq)]
struct RegisterSet {
    words: Vec<u64>,
}

impl RegisterSet {
    fn empty(register_count: usize) -> RegisterSet {
        RegisterSet {
            words: vec![0; register_count.div_ceil(64)],
        }
    }

    fn contains(&self, reg: RegId) -> bool {
        let index = reg.index();
        self.words
            .get(index / 64)
            .is_some_and(|word| word & (1 << (index % 64)) != 0)
    }

    fn insert(&mut self, reg: RegId) {
        let index = reg.index();
        if let Some(word) = self.words.get_mut(index / 64) {
            *word |= 1 << (index % 64);
        }
    }

    fn remove(&mut self, reg: RegId) {
        let index = reg.index();
        if let Some(word) = self.words.get_mut(index / 64) {
            *word &= !(1 << (index % 64));
        }
    }

    /// Adds every member of `other`; says whether anything was new.
    fn union_with(&mut self, other: &RegisterSet) -> bool {
        let mut changed = false;
        for (word, &incoming) in self.words.iter_mut().zip(&other.words) {
            let merged = *word | incoming;
            changed |= merged != *word;
            *word = merged;
        }
        changed
    }
}

/// The control dependence graph on blocks, computed on the pruned graph.
struct ControlDependence {
    /// The successors of each block in the graph it is computed on: without
    /// the edges into exits and private exit tails.
    pruned: Vec<Vec<Successor>>,
    /// For each block whose terminator is a real conditional branch (two or
    /// more successors in the pruned graph), the blocks that depend on it.
    dependents: Vec<Vec<usize>>,
    /// For each block, the blocks whose branches it depends on directly.
    controllers: Vec<Vec<usize>>,
}

impl ControlDependence {
    fn build(cfg: &Cfg, kernel: &Kernel) -> ControlDependence {
        let block_count = cfg.blocks.len();
        let pruned = without_private_exit_tails(cfg, kernel, cfg.pruned_successors(kernel));
        let augmented = with_virtual_exits(&pruned);
        let post_dominators = cfg.post_dominators_over(|block| augmented[block].clone());
        let mut dependents = vec![Vec::new(); block_count];
        let mut controllers = vec![Vec::new(); block_count];
        for (branch_block, successors) in pruned.iter().enumerate() {
            // Only a real choice makes anything control dependent; a virtual
            // exit edge is never taken and an unconditional branch is no choice.
            if successors.len() < 2 {
                continue;
            }
            let stop = post_dominators[branch_block];
            for &successor in successors {
                let mut runner = successor;
                // Walking up the post-dominator tree from the successor to the
                // branch's own immediate post-dominator visits exactly the
                // blocks that depend on this edge. The tree has no cycles and
                // ends at the exit, so the walk ends.
                while Some(runner) != stop {
                    let Successor::Block(block) = runner else {
                        break;
                    };
                    if !dependents[branch_block].contains(&block) {
                        dependents[branch_block].push(block);
                        controllers[block].push(branch_block);
                    }
                    match post_dominators[block] {
                        Some(next) => runner = next,
                        None => break,
                    }
                }
            }
        }
        ControlDependence {
            pruned,
            dependents,
            controllers,
        }
    }
}

/// The blocks from which every path leads to the exit without a block
/// barrier: threads that enter one leave the kernel without arriving at a
/// barrier again. The least fixed point, so a loop is never part of a tail
/// (it might not end).
fn barrier_free_exit_tails(cfg: &Cfg, kernel: &Kernel) -> Vec<bool> {
    let block_count = cfg.blocks.len();
    let mut predecessors: Vec<Vec<usize>> = vec![Vec::new(); block_count];
    let mut open_successors = vec![0usize; block_count];
    for (block, data) in cfg.blocks.iter().enumerate() {
        let mut targets: Vec<usize> = data
            .successors
            .iter()
            .filter_map(|successor| match successor {
                Successor::Block(next) => Some(*next),
                Successor::Exit => None,
            })
            .collect();
        targets.sort_unstable();
        targets.dedup();
        open_successors[block] = targets.len();
        for target in targets {
            predecessors[target].push(block);
        }
    }
    let has_barrier: Vec<bool> = cfg
        .blocks
        .iter()
        .map(|block| {
            kernel.instrs[block.start.index()..block.end.index()]
                .iter()
                .any(|instr| matches!(instr.op, Op::Barrier { .. }))
        })
        .collect();
    let mut tail = vec![false; block_count];
    let mut ready: Vec<usize> = (0..block_count)
        .filter(|&block| open_successors[block] == 0 && !has_barrier[block])
        .collect();
    while let Some(block) = ready.pop() {
        tail[block] = true;
        for &predecessor in &predecessors[block] {
            open_successors[predecessor] -= 1;
            if open_successors[predecessor] == 0 && !has_barrier[predecessor] {
                ready.push(predecessor);
            }
        }
    }
    tail
}

/// Removes from the pruned graph the edges of a branch into a barrier-free
/// exit tail that is private to that side of the branch: one that does not
/// post-dominate the branch's other side. This is an early `return` that does
/// some work first (`if (i >= n) { out[i] = 0; return; }`, or a `return`
/// inside a loop), which [`Cfg::pruned_successors`] keeps because the block
/// does not exit at once. A tail that the other side flows into as well is
/// a join and stays: in `if (tid < 64) __syncthreads(); out[tid] = v;` the
/// skipping threads run the same code after the barrier as the waiting ones.
fn without_private_exit_tails(
    cfg: &Cfg,
    kernel: &Kernel,
    mut pruned: Vec<Vec<Successor>>,
) -> Vec<Vec<Successor>> {
    let tails = barrier_free_exit_tails(cfg, kernel);
    let textbook = cfg.immediate_post_dominators();
    let post_dominates = |dominator: usize, mut block: Successor| loop {
        match block {
            Successor::Block(index) if index == dominator => return true,
            Successor::Block(index) => match textbook[index] {
                Some(next) => block = next,
                None => return false,
            },
            Successor::Exit => return false,
        }
    };
    for successors in &mut pruned {
        if successors.len() < 2 {
            continue;
        }
        let private_tail = |candidate: &Successor| match *candidate {
            Successor::Block(index) if tails[index] => successors
                .iter()
                .filter(|other| *other != candidate)
                .all(|&other| !post_dominates(index, other)),
            _ => false,
        };
        let staying: Vec<Successor> = successors
            .iter()
            .filter(|successor| !private_tail(successor))
            .copied()
            .collect();
        if !staying.is_empty() {
            *successors = staying;
        }
    }
    pruned
}

/// The pruned successors plus one virtual edge to the exit from the last
/// block (in instruction order) of each region that cannot reach the exit, so
/// that every block has a post-dominator. The last block of an endless loop
/// is usually its latch, which then post-dominates the loop's body the way the
/// end of a loop that can exit would.
fn with_virtual_exits(pruned: &[Vec<Successor>]) -> Vec<Vec<Successor>> {
    let block_count = pruned.len();
    let mut predecessors: Vec<Vec<usize>> = vec![Vec::new(); block_count];
    let mut reaches_exit = vec![false; block_count];
    let mut stack = Vec::new();
    for (block, successors) in pruned.iter().enumerate() {
        for successor in successors {
            match successor {
                Successor::Block(next) => predecessors[*next].push(block),
                Successor::Exit => {
                    if !reaches_exit[block] {
                        reaches_exit[block] = true;
                        stack.push(block);
                    }
                }
            }
        }
    }
    let mut augmented = pruned.to_vec();
    let mark_backwards = |stack: &mut Vec<usize>, reaches_exit: &mut Vec<bool>| {
        while let Some(block) = stack.pop() {
            for &predecessor in &predecessors[block] {
                if !reaches_exit[predecessor] {
                    reaches_exit[predecessor] = true;
                    stack.push(predecessor);
                }
            }
        }
    };
    mark_backwards(&mut stack, &mut reaches_exit);
    for block in (0..block_count).rev() {
        if !reaches_exit[block] {
            augmented[block].push(Successor::Exit);
            reaches_exit[block] = true;
            stack.push(block);
            mark_backwards(&mut stack, &mut reaches_exit);
        }
    }
    augmented
}

/// Why a definition is divergent, before it is turned into text.
#[derive(Clone, Copy)]
enum Cause {
    /// A divergent register among the sources.
    Register(RegId),
    Special(SpecialReg),
    /// A source divergent by its nature (a shuffle, a vote, an atomic...).
    Intrinsic(&'static str),
    /// The instruction's guard predicate is divergent.
    Guard(RegId),
    /// The instruction's block runs under the divergent branch in this block.
    Control(usize),
}

struct Analysis<'a> {
    kernel: &'a Kernel,
    cfg: &'a Cfg,
    dependence: &'a ControlDependence,
    /// The registers each instruction writes, computed once: the worklist
    /// visits an instruction many times. The carry flag is among them for
    /// the instructions that set it.
    destinations: Vec<Vec<RegId>>,
    /// The pseudo-register that stands for the carry flag (CC.CF): the one
    /// after the kernel's last register.
    carry_flag: RegId,
    /// The registers that may be divergent on entry to each block.
    entry_states: Vec<RegisterSet>,
    /// For each block, the divergent branch that first put it under divergent
    /// control, directly or through nested regions.
    region_cause: Vec<Option<usize>>,
    /// For each block, whether its terminating branch is known divergent.
    divergent_terminator: Vec<bool>,
    /// For each block, whether it can run at all. Unreachable code neither
    /// passes divergent values on nor makes branches divergent.
    reachable: Vec<bool>,
    /// Whether per-thread (`.local`) memory may hold values that differ
    /// between threads, so that loads from it are divergent whatever the
    /// address. Generic stores and loads may reach local memory too.
    local_memory_divergent: bool,
    register_reasons: Vec<Option<usize>>,
    reasons: Vec<String>,
    interned: HashMap<String, usize>,
    worklist: VecDeque<usize>,
    queued: Vec<bool>,
}

impl<'a> Analysis<'a> {
    fn new(kernel: &'a Kernel, cfg: &'a Cfg, dependence: &'a ControlDependence) -> Analysis<'a> {
        let block_count = cfg.blocks.len();
        let carry_flag = RegId(kernel.regs.len() as u32);
        // Every register plus the carry flag.
        let tracked = kernel.regs.len() + 1;
        Analysis {
            kernel,
            cfg,
            dependence,
            destinations: kernel
                .instrs
                .iter()
                .map(|instr| {
                    let mut written = instr.op.destinations();
                    if let Op::CarryArith {
                        carry_out: true, ..
                    } = instr.op
                    {
                        written.push(carry_flag);
                    }
                    written
                })
                .collect(),
            carry_flag,
            entry_states: vec![RegisterSet::empty(tracked); block_count],
            region_cause: vec![None; block_count],
            divergent_terminator: vec![false; block_count],
            reachable: reachable_blocks(cfg),
            local_memory_divergent: false,
            register_reasons: vec![None; tracked],
            reasons: Vec::new(),
            interned: HashMap::new(),
            // Every block starts on the worklist so that each is analysed at
            // least once; the unreachable ones are dropped when taken off.
            worklist: (0..block_count).collect(),
            queued: vec![true; block_count],
        }
    }

    fn push(&mut self, block: usize) {
        if !self.queued[block] {
            self.queued[block] = true;
            self.worklist.push_back(block);
        }
    }

    fn run_to_fixed_point(&mut self) {
        while let Some(block) = self.worklist.pop_front() {
            self.queued[block] = false;
            if !self.reachable[block] {
                continue;
            }
            let mut state = self.entry_states[block].clone();
            let range = self.cfg.blocks[block].start.index()..self.cfg.blocks[block].end.index();
            let mut terminator_divergent = false;
            for index in range {
                let instr = &self.kernel.instrs[index];
                if is_conditional_transfer(instr) {
                    terminator_divergent =
                        instr.guard.is_some_and(|guard| state.contains(guard.reg));
                }
                self.transfer(block, index, &mut state);
            }
            if terminator_divergent && !self.divergent_terminator[block] {
                self.divergent_terminator[block] = true;
                self.spread_divergent_control(block);
            }
            for position in 0..self.cfg.blocks[block].successors.len() {
                if let Successor::Block(next) = self.cfg.blocks[block].successors[position] {
                    if self.entry_states[next].union_with(&state) {
                        self.push(next);
                    }
                }
            }
        }
    }

    /// Puts every block that depends on the divergent branch ending `branch_block`
    /// under divergent control, and, through the branches of those blocks
    /// (whose sides only some threads of the block reach), the blocks nested
    /// inside them.
    fn spread_divergent_control(&mut self, branch_block: usize) {
        let mut pending = vec![branch_block];
        while let Some(controller) = pending.pop() {
            for index in 0..self.dependence.dependents[controller].len() {
                let dependent = self.dependence.dependents[controller][index];
                if self.region_cause[dependent].is_none() {
                    self.region_cause[dependent] =
                        Some(self.region_cause[controller].unwrap_or(branch_block));
                    self.push(dependent);
                    pending.push(dependent);
                }
            }
        }
    }

    /// Applies one instruction to the set of divergent registers.
    fn transfer(&mut self, block: usize, index: usize, state: &mut RegisterSet) {
        let instr = &self.kernel.instrs[index];
        let guard_divergent = instr.guard.is_some_and(|guard| state.contains(guard.reg));
        if !self.local_memory_divergent && self.writes_divergent_local(instr, block, state) {
            self.local_memory_divergent = true;
            for other in 0..self.cfg.blocks.len() {
                self.push(other);
            }
        }
        if self.destinations[index].is_empty() {
            return;
        }
        // The data cause comes first because it names the root ("%tid.x").
        let cause = self
            .data_divergence(&instr.op, state)
            .or_else(|| {
                instr
                    .guard
                    .filter(|_| guard_divergent)
                    .map(|guard| Cause::Guard(guard.reg))
            })
            .or_else(|| self.region_cause[block].map(Cause::Control));
        match cause {
            Some(cause) => {
                for position in 0..self.destinations[index].len() {
                    let destination = self.destinations[index][position];
                    state.insert(destination);
                    if self.register_reasons[destination.index()].is_none() {
                        let reason = self.describe(cause, destination, index);
                        self.register_reasons[destination.index()] = Some(reason);
                    }
                }
            }
            // A uniform guard keeps the old value in every thread or in none,
            // so the old value's divergence stays; without a guard the new,
            // uniform value replaces it.
            None if instr.guard.is_none() => {
                for &destination in &self.destinations[index] {
                    state.remove(destination);
                }
            }
            None => {}
        }
    }

    /// Whether the instruction may leave values in per-thread memory that
    /// differ between threads.
    fn writes_divergent_local(&self, instr: &Instr, block: usize, state: &RegisterSet) -> bool {
        let divergent = |operand: &Operand| operand_divergence(operand, state).is_some();
        let (space, addr, values_divergent) = match &instr.op {
            Op::Store {
                space, addr, src, ..
            } => (*space, addr, src.iter().any(divergent)),
            Op::Atom {
                space, addr, a, b, ..
            } => (
                *space,
                addr,
                divergent(a) || b.as_ref().is_some_and(divergent),
            ),
            _ => return false,
        };
        matches!(space, StateSpace::Local | StateSpace::Generic)
            && (values_divergent
                || self.region_cause[block].is_some()
                || instr.guard.is_some_and(|guard| state.contains(guard.reg))
                || address_divergence(addr, state).is_some())
    }

    /// The first divergent source of an instruction run under uniform control.
    fn data_divergence(&self, op: &Op, state: &RegisterSet) -> Option<Cause> {
        let first = |operands: &[Operand]| {
            operands
                .iter()
                .find_map(|operand| operand_divergence(operand, state))
        };
        let predicate = |pred: &PredOperand| operand_divergence(&pred.value, state);
        match op {
            Op::Binary { a, b, .. } => first(&[*a, *b]),
            Op::Unary { a, .. } => first(&[*a]),
            Op::MulAdd { a, b, c, .. } => first(&[*a, *b, *c]),
            Op::Setp { a, b, combine, .. } => {
                first(&[*a, *b]).or_else(|| combine.as_ref().and_then(|(_, p)| predicate(p)))
            }
            Op::Selp { a, b, cond, .. } => first(&[*a, *b]).or_else(|| predicate(cond)),
            Op::Cvt { src, .. } | Op::Cvta { src, .. } => first(&[*src]),
            Op::BitFieldExtract {
                a,
                position,
                length,
                ..
            } => first(&[*a, *position, *length]),
            Op::BitFieldInsert {
                field,
                base,
                position,
                length,
                ..
            } => first(&[*field, *base, *position, *length]),
            Op::Permute { a, b, selector, .. } => first(&[*a, *b, *selector]),
            Op::Set { a, b, combine, .. } => {
                first(&[*a, *b]).or_else(|| combine.as_ref().and_then(|(_, p)| predicate(p)))
            }
            Op::FunnelShift { a, b, c, .. } | Op::Lop3 { a, b, c, .. } => first(&[*a, *b, *c]),
            Op::Mul24 { a, b, .. } | Op::CopySign { a, b, .. } | Op::CvtPair { a, b, .. } => {
                first(&[*a, *b])
            }
            Op::Sad { a, b, c, .. } => first(&[*a, *b, *c]),
            Op::Testp { a, .. } => first(&[*a]),
            Op::Pack { src, .. } => first(src),
            Op::Unpack { src, .. } => first(&[*src]),
            Op::Load {
                space, order, addr, ..
            } => {
                if *order != MemoryOrder::Weak {
                    // Another thread may write the location while this one
                    // reads it, so threads may see different values: a
                    // polling loop `while (*flag == 0)` ends at different
                    // iterations in different threads.
                    return Some(Cause::Intrinsic(
                        "a volatile or strong load (other threads may write it concurrently)",
                    ));
                }
                if let Some(cause) = address_divergence(addr, state) {
                    return Some(cause);
                }
                if self.local_memory_divergent
                    && matches!(space, StateSpace::Local | StateSpace::Generic)
                {
                    return Some(Cause::Intrinsic(
                        "a load from per-thread local memory that holds divergent values",
                    ));
                }
                None
            }
            Op::Atom { .. } => Some(Cause::Intrinsic("the result of an atomic")),
            // `__syncthreads_count/and/or` give every thread the same result.
            Op::Barrier { .. } => None,
            Op::Shuffle { .. } => Some(Cause::Intrinsic("the result of shfl.sync")),
            Op::Vote { .. } => Some(Cause::Intrinsic(
                "the result of vote.sync (it differs between warps)",
            )),
            Op::Redux { .. } => Some(Cause::Intrinsic(
                "the result of redux.sync (it differs between warps)",
            )),
            Op::Match { .. } => Some(Cause::Intrinsic("the result of match.sync")),
            // Each lane receives elements other lanes addressed or held.
            Op::MatrixLoad { .. } => Some(Cause::Intrinsic("the result of ldmatrix")),
            Op::WmmaLoad { .. } | Op::WmmaMma { .. } => Some(Cause::Intrinsic("a WMMA fragment")),
            Op::MatrixMultiplyAccumulate { .. } => Some(Cause::Intrinsic("the result of mma.sync")),
            Op::ActiveMask { .. } => Some(Cause::Intrinsic("activemask")),
            // Integer dot products, carry chains, mad24, redux.sync.f32 and narrow-float conversions.
            Op::DotProduct { a, b, c, .. } | Op::MulAdd24 { a, b, c, .. } => first(&[*a, *b, *c]),
            // A `c` form reads the carry flag as a third source; the flag is
            // divergent where some earlier `.cc` form that reaches here set
            // it from divergent sources or under divergent control.
            Op::CarryArith {
                a, b, c, carry_in, ..
            } => first(&[*a, *b])
                .or_else(|| c.and_then(|c| first(&[c])))
                .or_else(|| {
                    (*carry_in && state.contains(self.carry_flag))
                        .then_some(Cause::Register(self.carry_flag))
                }),
            Op::ReduxFloat { .. } => Some(Cause::Intrinsic(
                "the result of redux.sync (it differs between warps)",
            )),
            Op::CvtTf32 { src, .. } | Op::CvtFromFp8 { src, .. } | Op::CvtBf16Relu { src, .. } => {
                first(&[*src])
            }
            Op::CvtToFp8 { a, b, .. } | Op::NarrowFloat { a, b, .. } => {
                first(&[*a]).or_else(|| b.and_then(|b| first(&[b])))
            }
            // An operation this analysis does not know yet: its results are
            // taken to be divergent, which can only add findings.
            _ => Some(Cause::Intrinsic("the result of an unmodelled instruction")),
        }
    }

    /// Turns a cause into the index of its text.
    fn describe(&mut self, cause: Cause, destination: RegId, index: usize) -> usize {
        let text = match cause {
            Cause::Register(source) => {
                if let Some(reason) = self.register_reasons[source.index()] {
                    // The root cause travels along the data flow unchanged,
                    // which is what explains a finding best ("%tid.x").
                    return reason;
                }
                self.register_name(source)
            }
            Cause::Special(special) => special.to_string(),
            Cause::Intrinsic(text) => text.to_string(),
            Cause::Guard(guard) => format!(
                "{} (assigned at line {} under the divergent guard {})",
                self.register_name(destination),
                self.kernel.instrs[index].loc.line,
                self.kernel.reg(guard).name
            ),
            Cause::Control(branch_block) => {
                let branch = &self.kernel.instrs[self.terminator(branch_block).index()];
                format!(
                    "{} (assigned at line {} under the divergent branch at line {})",
                    self.register_name(destination),
                    self.kernel.instrs[index].loc.line,
                    branch.loc.line
                )
            }
        };
        self.intern(text)
    }

    fn intern(&mut self, text: String) -> usize {
        if let Some(&index) = self.interned.get(&text) {
            return index;
        }
        self.reasons.push(text.clone());
        self.interned.insert(text, self.reasons.len() - 1);
        self.reasons.len() - 1
    }

    fn reason_of(&self, reg: RegId) -> String {
        match self.register_reasons[reg.index()] {
            Some(reason) => self.reasons[reason].clone(),
            None => self.register_name(reg),
        }
    }

    /// The name of a register for explanations; the carry flag has none in
    /// the kernel, so it gets the ISA's.
    fn register_name(&self, reg: RegId) -> String {
        if reg == self.carry_flag {
            "the carry flag CC.CF".to_string()
        } else {
            self.kernel.reg(reg).name.clone()
        }
    }

    /// Replays every block once more from its fixed-point entry state to
    /// read off divergent branches and guards, then reports the barriers.
    fn finish(self) -> Uniformity {
        let instr_count = self.kernel.instrs.len();
        let mut divergent_branches = vec![false; instr_count];
        let mut under_divergent_control = vec![false; instr_count];
        let mut divergent_barriers = Vec::new();
        for (block_index, block) in self.cfg.blocks.iter().enumerate() {
            if !self.reachable[block_index] {
                continue;
            }
            let mut state = self.entry_states[block_index].clone();
            // `transfer` needs `&mut self` only to record reasons, which are
            // complete at the fixed point, so a read-only replay suffices.
            for index in block.start.index()..block.end.index() {
                let instr = &self.kernel.instrs[index];
                under_divergent_control[index] = self.region_cause[block_index].is_some();
                let guard_divergent = instr.guard.is_some_and(|guard| state.contains(guard.reg));
                if is_conditional_transfer(instr) && guard_divergent {
                    divergent_branches[index] = true;
                }
                if let Op::Barrier { count: None, .. } = &instr.op {
                    let finding = match instr.guard {
                        Some(guard) if guard_divergent => Some(DivergentBarrier {
                            barrier: InstrId(index as u32),
                            branch: InstrId(index as u32),
                            reason: self.reason_of(guard.reg),
                            skipped_by_exit: false,
                        }),
                        _ => self.innermost_divergent_branch(block_index, index).map(
                            |branch_block| {
                                let branch = self.terminator(branch_block);
                                let reason = self.kernel.instrs[branch.index()]
                                    .guard
                                    .map_or_else(String::new, |guard| self.reason_of(guard.reg));
                                DivergentBarrier {
                                    barrier: InstrId(index as u32),
                                    branch,
                                    reason,
                                    skipped_by_exit: false,
                                }
                            },
                        ),
                    };
                    divergent_barriers.extend(finding);
                }
                self.replay(block_index, index, &mut state);
            }
        }
        let skipped = self.barriers_skipped_by_exit(&divergent_barriers);
        divergent_barriers.extend(skipped);
        divergent_barriers.sort_by_key(|finding| finding.barrier);
        Uniformity {
            register_reasons: self.register_reasons,
            divergent_branches,
            under_divergent_control,
            reasons: self.reasons,
            divergent_barriers,
        }
    }

    /// The effect of one instruction on the divergent registers at the fixed
    /// point, without recording anything.
    fn replay(&self, block: usize, index: usize, state: &mut RegisterSet) {
        let instr = &self.kernel.instrs[index];
        let guard_divergent = instr.guard.is_some_and(|guard| state.contains(guard.reg));
        let divergent = self.region_cause[block].is_some()
            || guard_divergent
            || self.data_divergence(&instr.op, state).is_some();
        for &destination in &self.destinations[index] {
            if divergent {
                state.insert(destination);
            } else if instr.guard.is_none() {
                state.remove(destination);
            }
        }
    }

    /// The block barriers that the pruned graph hides: a divergent branch
    /// sends some threads straight to the exit (an edge the pruning left
    /// out) and the others to the barrier, after which nothing happens but
    /// the way back to that branch or to the exit. Such a barrier cannot be
    /// an early return's (`if (i >= n) return; ...; __syncthreads(); use`):
    /// there, the barrier guards what follows it. CUDA requires every
    /// thread of the block to reach it; Volta and later GPUs complete it by
    /// the exits.
    fn barriers_skipped_by_exit(&self, known: &[DivergentBarrier]) -> Vec<DivergentBarrier> {
        // The divergent branches some of whose threads leave the kernel at
        // once (no work first, which would make it an early return that
        // does its work and goes): the same for every barrier, so found
        // once, not once per barrier (a kernel of a thousand barriers and
        // as many branches took time quadratic in its size).
        let exiting: Vec<usize> = (0..self.cfg.blocks.len())
            .filter(|&branch| {
                self.divergent_terminator[branch]
                    && self.reachable[branch]
                    && self.cfg.blocks[branch]
                        .successors
                        .iter()
                        .any(|&successor| self.cfg.exits_at_once(self.kernel, successor))
            })
            .collect();
        let mut found = Vec::new();
        if exiting.is_empty() {
            return found;
        }
        for (index, instr) in self.kernel.instrs.iter().enumerate() {
            let is_block_barrier = matches!(instr.op, Op::Barrier { count: None, .. });
            let block = self.cfg.block_of[index];
            if !is_block_barrier
                || !self.reachable[block]
                || known.iter().any(|finding| finding.barrier.index() == index)
            {
                continue;
            }
            // The nearest such branch before the barrier, else after it.
            let distance = |branch: &usize| {
                let position = self.terminator(*branch).index();
                (position > index, position.abs_diff(index))
            };
            let branch = exiting.iter().copied().filter(|&branch| {
                let kept = &self.dependence.pruned[branch];
                kept.iter().any(|&successor| self.reaches(successor, block))
                    && self.nothing_after(index, branch)
            });
            let branch = branch.min_by_key(distance);
            if let Some(branch) = branch {
                let branch = self.terminator(branch);
                let reason = self.kernel.instrs[branch.index()]
                    .guard
                    .map_or_else(String::new, |guard| self.reason_of(guard.reg));
                found.push(DivergentBarrier {
                    barrier: InstrId(index as u32),
                    branch,
                    reason,
                    skipped_by_exit: true,
                });
            }
        }
        found
    }

    /// Whether control can go from `from` to block `target`.
    fn reaches(&self, from: Successor, target: usize) -> bool {
        let mut visited = vec![false; self.cfg.blocks.len()];
        let mut stack = vec![from];
        while let Some(Successor::Block(block)) = stack.pop() {
            if block == target {
                return true;
            }
            if !std::mem::replace(&mut visited[block], true) {
                stack.extend(self.cfg.blocks[block].successors.iter().copied());
            }
        }
        false
    }

    /// Whether every instruction after `instruction` up to the exit, or up to
    /// the branch ending block `branch` again, leaves no trace another thread
    /// could see: no store, atomic, barrier or warp-synchronous instruction,
    /// no `printf`.
    fn nothing_after(&self, instruction: usize, branch: usize) -> bool {
        let barrier = &self.kernel.instrs[instruction];
        let quiet = |instr: &Instr| {
            std::ptr::eq(instr, barrier)
                || !matches!(
                    instr.op,
                    Op::Store { .. }
                        | Op::Atom { .. }
                        | Op::Barrier { .. }
                        | Op::WarpSync { .. }
                        | Op::Shuffle { .. }
                        | Op::Vote { .. }
                        | Op::Redux { .. }
                        | Op::Match { .. }
                        | Op::MatrixLoad { .. }
                        | Op::MatrixStore { .. }
                        | Op::MatrixMultiplyAccumulate { .. }
                        | Op::WmmaLoad { .. }
                        | Op::WmmaStore { .. }
                        | Op::WmmaMma { .. }
                        | Op::Fence { .. }
                        | Op::Printf { .. }
                        | Op::AssertFail { .. }
                        | Op::Trap
                )
        };
        let block = self.cfg.block_of[instruction];
        let rest = instruction + 1..self.cfg.blocks[block].end.index();
        if !self.kernel.instrs[rest].iter().all(quiet) {
            return false;
        }
        let mut visited = vec![false; self.cfg.blocks.len()];
        let mut stack: Vec<Successor> = self.cfg.blocks[block].successors.clone();
        while let Some(successor) = stack.pop() {
            let Successor::Block(next) = successor else {
                continue;
            };
            if std::mem::replace(&mut visited[next], true) {
                continue;
            }
            // Back at the branch, what runs before it runs again too.
            let data = &self.cfg.blocks[next];
            let end = if next == branch {
                data.end.index() - 1
            } else {
                data.end.index()
            };
            if !self.kernel.instrs[data.start.index()..end]
                .iter()
                .all(quiet)
            {
                return false;
            }
            if next != branch {
                stack.extend(data.successors.iter().copied());
            }
        }
        true
    }

    fn terminator(&self, block: usize) -> InstrId {
        InstrId(self.cfg.blocks[block].end.0 - 1)
    }

    /// The divergent branch that `block` depends on most closely: a
    /// breadth-first search up the control dependence graph, so that a branch
    /// it depends on directly wins over one that encloses it. Among branches
    /// at the same depth (a block in a loop may depend both on an `if` and on
    /// the loop's exit), the nearest before the barrier wins, then the nearest
    /// after it.
    fn innermost_divergent_branch(&self, block: usize, barrier: usize) -> Option<usize> {
        self.region_cause[block]?;
        let mut visited = vec![false; self.cfg.blocks.len()];
        let mut level = vec![block];
        visited[block] = true;
        while !level.is_empty() {
            let mut next_level = Vec::new();
            let mut best: Option<(bool, usize, usize)> = None;
            for &current in &level {
                for &controller in &self.dependence.controllers[current] {
                    if self.divergent_terminator[controller] {
                        let position = self.terminator(controller).index();
                        // Sort key: branches after the barrier come second,
                        // then by distance to the barrier.
                        let key = (position > barrier, position.abs_diff(barrier), controller);
                        if !matches!(best, Some(found) if found <= key) {
                            best = Some(key);
                        }
                    }
                    if !visited[controller] {
                        visited[controller] = true;
                        next_level.push(controller);
                    }
                }
            }
            if let Some((_, _, controller)) = best {
                return Some(controller);
            }
            level = next_level;
        }
        // The region was entered through `region_cause`; fall back to it.
        self.region_cause[block]
    }
}

/// The blocks that control can reach from the kernel's first instruction.
fn reachable_blocks(cfg: &Cfg) -> Vec<bool> {
    let mut reachable = vec![false; cfg.blocks.len()];
    let mut stack = Vec::new();
    if !cfg.blocks.is_empty() {
        reachable[0] = true;
        stack.push(0);
    }
    while let Some(block) = stack.pop() {
        for successor in &cfg.blocks[block].successors {
            if let Successor::Block(next) = *successor {
                if !reachable[next] {
                    reachable[next] = true;
                    stack.push(next);
                }
            }
        }
    }
    reachable
}

/// Whether the instruction ends its block with a choice between two ways on.
fn is_conditional_transfer(instr: &Instr) -> bool {
    instr.guard.is_some() && matches!(instr.op, Op::Branch { .. } | Op::Exit)
}

/// Whether an operand may differ between the threads of one block.
fn operand_divergence(operand: &Operand, state: &RegisterSet) -> Option<Cause> {
    match operand {
        Operand::Reg(reg) if state.contains(*reg) => Some(Cause::Register(*reg)),
        Operand::Special(special) if is_divergent_special(*special) => {
            Some(Cause::Special(*special))
        }
        _ => None,
    }
}

fn address_divergence(addr: &Address, state: &RegisterSet) -> Option<Cause> {
    match addr.base {
        AddressBase::Reg(reg) if state.contains(reg) => Some(Cause::Register(reg)),
        _ => None,
    }
}

/// The special registers whose value differs between the threads of a block.
/// `%ntid`, `%ctaid`, `%nctaid` and `%nwarpid` are the same for all of them.
fn is_divergent_special(special: SpecialReg) -> bool {
    match special {
        SpecialReg::Tid(_)
        | SpecialReg::LaneId
        | SpecialReg::WarpId
        | SpecialReg::Clock
        | SpecialReg::Clock64
        | SpecialReg::LaneMask(_) => true,
        SpecialReg::Ntid(_)
        | SpecialReg::Ctaid(_)
        | SpecialReg::Nctaid(_)
        | SpecialReg::NWarpId => false,
    }
}
