//! Reorders each basic block the way ptxas schedules global loads: as early
//! as their operands and memory ordering allow, with the arithmetic that
//! computes their addresses, so that a thread's independent loads are in
//! flight together. NVVM (and a person writing PTX) puts a load next to its
//! use, `ld.global` then `st.shared` of its value, eight times over; ptxas
//! issues the eight loads first. A machine that issues the PTX in its own
//! order waits a memory latency per pair instead of one for all eight, which
//! was the timing model's largest error against an H100 (docs/timing.md,
//! "The largest errors": `matmul_register_tiled`, `transpose_diagonal`,
//! `matmulTiled16`, `reduce6_multi_element_8M`).
//!
//! The rewrite is a list schedule of each basic block (instructions never
//! leave their block, so control flow, labels and the convergence points
//! built on them do not change but for the predication below), over a
//! dependence graph that keeps the kernel's meaning for every thread:
//!
//! - registers: an instruction follows the last writer of every register it
//!   reads (a guard included, and a guarded instruction's destinations,
//!   which keep their old values in the lanes it skips), and the last
//!   writer and every reader since of every register it writes; the carry
//!   flag of `add.cc`/`addc` counts as a register;
//! - memory: only a plain (weak) `ld.global` moves past instructions that
//!   touch memory, and only past those that cannot write global memory or
//!   order accesses: it may pass shared, local, constant and parameter
//!   accesses, warp shuffles and votes, but never a global or generic store,
//!   an atomic, a barrier, a fence, a warp sync, an `mbarrier` or `cp.async`
//!   operation, a volatile, relaxed or acquire load, another plain global
//!   load (their order stays), a read of `%clock`, a `printf`, a trap or an
//!   exit. Every other instruction that touches memory or the warp keeps its
//!   order with all of those;
//! - the block's branch (or exit) stays last.
//!
//! First, a short forward branch around global loads becomes predication,
//! as ptxas does with a bounds check (`if (i < n) x = in[i];`: NVVM's
//! `@%p bra SKIP; ld.global ...; SKIP:`, ptxas's `@!P0 LDG`): where the
//! instructions the branch skips are at most [`MAX_PREDICATED`], none
//! guarded, each arithmetic, a parameter load (which
//! [`crate::parameter_placement`] may have put there) or a plain global
//! load (one at least), none
//! writing the branch's predicate and none a branch target, each takes
//! the branch's guard negated and the branch goes, with its label if no
//! other branch names it. Each thread runs the same instructions as before;
//! the loads can then join the block before them.
//!
//! Among the instructions whose predecessors are all placed, the schedule
//! takes first those a global load of the block depends on through
//! registers (the loads themselves included), then the rest, each group in
//! the kernel's order. Nothing moves where nothing gains: a block without a
//! global load keeps its order. Register pressure, which bounds how far
//! ptxas hoists, is not modelled: PTX names a fresh register per value, and
//! the machine's registers are not the hardware's. The SASS order ptxas
//! gave four corpus kernels on an H200 is in
//! `programs/timing/hardware/h200-load-schedule.txt`, and
//! `tests/ptxas_schedule.rs` checks this schedule against it.

use std::collections::BTreeSet;

use crate::cfg::Cfg;
use crate::instr::{Instr, MemoryOrder, Op, Operand};
use crate::kernel::{Kernel, LabelId};
use crate::merge::read_registers;
use crate::types::{SpecialReg, StateSpace};

/// The most instructions a branch may skip for the skip to become
/// predication: the bounds checks of the corpus skip one to three (a load
/// and its address); ptxas's own limit is not documented.
pub const MAX_PREDICATED: usize = 8;

/// What the schedule changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScheduleSummary {
    /// Branches around loads made predication.
    pub branches_predicated: usize,
    /// Global loads now placed before an instruction that came before them.
    pub loads_hoisted: usize,
    /// Basic blocks whose order changed.
    pub blocks_reordered: usize,
}

/// How an instruction may move relative to the others, besides its
/// register dependences.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// Touches neither memory nor the warp's other lanes: only its
    /// registers hold it in place.
    Free,
    /// A plain global load: it may move above anything but an
    /// [`Role::Ordering`] instruction.
    GlobalLoad,
    /// Touches memory or the warp in a way a global load may pass, in the
    /// kernel's order with every other such instruction.
    InOrder,
    /// May write global memory or orders accesses: nothing that touches
    /// memory passes it.
    Ordering,
}

/// Whether `instr` may write global memory or orders accesses or time (a
/// barrier, a fence, a clock read, a branch): no load moves past it.
pub(crate) fn orders_memory(instr: &Instr) -> bool {
    role(instr) == Role::Ordering
}

fn reads_clock(operand: &Operand) -> bool {
    matches!(
        operand,
        Operand::Special(SpecialReg::Clock | SpecialReg::Clock64)
    )
}

fn role(instr: &Instr) -> Role {
    use Role::*;
    let local = |space: &StateSpace| {
        matches!(
            space,
            StateSpace::Shared | StateSpace::Local | StateSpace::Param | StateSpace::Const
        )
    };
    match &instr.op {
        Op::Load {
            space: StateSpace::Global,
            order: MemoryOrder::Weak,
            ..
        } => GlobalLoad,
        Op::Load {
            order: MemoryOrder::Weak,
            ..
        } => InOrder,
        Op::Load { .. } => Ordering,
        Op::Store {
            space,
            order: MemoryOrder::Weak,
            ..
        } if local(space) => InOrder,
        Op::Store { .. } => Ordering,
        Op::MatrixLoad { .. } | Op::WmmaLoad { .. } => InOrder,
        Op::MatrixStore { space, .. } | Op::WmmaStore { space, .. } if local(space) => InOrder,
        Op::MatrixStore { .. } | Op::WmmaStore { .. } => Ordering,
        Op::Atom { .. }
        | Op::Barrier { .. }
        | Op::WarpSync { .. }
        | Op::Fence { .. }
        | Op::Branch { .. }
        | Op::Exit
        | Op::Printf { .. }
        | Op::AssertFail { .. }
        | Op::Trap
        | Op::NanoSleep { .. }
        | Op::CpAsync { .. }
        | Op::CpAsyncCommitGroup
        | Op::CpAsyncWait { .. }
        | Op::CpAsyncMbarrierArrive { .. }
        | Op::CpAsyncBulk { .. }
        | Op::Mbarrier { .. } => Ordering,
        Op::Shuffle { .. }
        | Op::Vote { .. }
        | Op::Redux { .. }
        | Op::ReduxFloat { .. }
        | Op::Match { .. }
        | Op::ActiveMask { .. } => InOrder,
        // A read of the clock measures what is around it.
        Op::Unary { a, .. } | Op::Cvt { src: a, .. } if reads_clock(a) => Ordering,
        Op::Binary { a, b, .. } if reads_clock(a) || reads_clock(b) => Ordering,
        Op::Binary { .. }
        | Op::Unary { .. }
        | Op::MulAdd { .. }
        | Op::Setp { .. }
        | Op::Set { .. }
        | Op::Selp { .. }
        | Op::Cvt { .. }
        | Op::CvtPair { .. }
        | Op::Mul24 { .. }
        | Op::Sad { .. }
        | Op::Testp { .. }
        | Op::CopySign { .. }
        | Op::BitFieldExtract { .. }
        | Op::BitFieldInsert { .. }
        | Op::Permute { .. }
        | Op::FunnelShift { .. }
        | Op::Lop3 { .. }
        | Op::Pack { .. }
        | Op::Unpack { .. }
        | Op::MbarrierPendingCount { .. }
        | Op::Cvta { .. }
        | Op::DotProduct { .. }
        | Op::CarryArith { .. }
        | Op::MulAdd24 { .. }
        | Op::CvtTf32 { .. }
        | Op::CvtToFp8 { .. }
        | Op::CvtBf16Relu { .. }
        | Op::CvtFromFp8 { .. }
        | Op::NarrowFloat { .. }
        | Op::MatrixMultiplyAccumulate { .. }
        | Op::WmmaMma { .. } => Free,
    }
}

/// Schedules every basic block of `kernel` (see the module documentation).
pub fn schedule_kernel(kernel: &mut Kernel) -> ScheduleSummary {
    let mut summary = ScheduleSummary {
        branches_predicated: predicate_short_branches(kernel),
        ..ScheduleSummary::default()
    };
    let cfg = Cfg::build(kernel);
    let mut order: Vec<usize> = Vec::with_capacity(kernel.instrs.len());
    let mut scratch = BlockGraph::default();
    for block in &cfg.blocks {
        let (start, end) = (block.start.index(), block.end.index());
        let placed = order.len();
        scratch.schedule(kernel, start, end, &mut order);
        let block_order = &order[placed..];
        if block_order
            .iter()
            .enumerate()
            .any(|(at, &index)| index != start + at)
        {
            summary.blocks_reordered += 1;
            // A load rose if an instruction before it in the kernel now
            // comes after it: the least index placed after each position.
            let mut least_after = usize::MAX;
            for &index in block_order.iter().rev() {
                if least_after < index && role(&kernel.instrs[index]) == Role::GlobalLoad {
                    summary.loads_hoisted += 1;
                }
                least_after = least_after.min(index);
            }
        }
    }
    if summary.blocks_reordered > 0 {
        let mut old: Vec<Option<Instr>> = std::mem::take(&mut kernel.instrs)
            .into_iter()
            .map(Some)
            .collect();
        kernel.instrs = order
            .iter()
            .map(|&index| old[index].take().expect("each instruction placed once"))
            .collect();
    }
    summary
}

/// Makes each short forward branch around global loads predication (see
/// the module documentation); returns how many.
fn predicate_short_branches(kernel: &mut Kernel) -> usize {
    let mut references = vec![0usize; kernel.labels.len()];
    for instr in &kernel.instrs {
        if let Op::Branch { target } = instr.op {
            references[target.index()] += 1;
        }
    }
    let named: Vec<bool> = references.iter().map(|&count| count > 0).collect();
    // Where a branch may enter: a body must hold none of these.
    let mut entered = vec![false; kernel.instrs.len() + 1];
    for (label, &count) in kernel.labels.iter().zip(&references) {
        if count > 0 {
            entered[label.target.index().min(kernel.instrs.len())] = true;
        }
    }
    let mut removed_branches = Vec::new();
    for branch in 0..kernel.instrs.len() {
        let (Op::Branch { target }, Some(guard)) =
            (&kernel.instrs[branch].op, kernel.instrs[branch].guard)
        else {
            continue;
        };
        let target = *target;
        let end = kernel.label(target).target.index();
        let body = branch + 1..end;
        if body.is_empty() || body.len() > MAX_PREDICATED || entered[body.clone()].contains(&true) {
            continue;
        }
        let instrs = &kernel.instrs[body.clone()];
        let convertible = instrs.iter().all(|instr| {
            instr.guard.is_none()
                && (matches!(role(instr), Role::Free | Role::GlobalLoad)
                    || crate::parameter_placement::is_movable_parameter_load(instr))
                && !instr.op.destinations().contains(&guard.reg)
        }) && instrs.iter().any(|instr| role(instr) == Role::GlobalLoad);
        if !convertible {
            continue;
        }
        for instr in &mut kernel.instrs[body] {
            instr.guard = Some(crate::instr::Guard {
                reg: guard.reg,
                negated: !guard.negated,
            });
        }
        removed_branches.push(branch);
        references[target.index()] -= 1;
    }
    let predicated = removed_branches.len();
    if predicated > 0 {
        let mut removed = vec![false; kernel.instrs.len()];
        for branch in removed_branches {
            removed[branch] = true;
        }
        // The labels only the removed branches named go too.
        let keep: Vec<bool> = references
            .iter()
            .zip(&named)
            .map(|(&count, &named)| count > 0 || !named)
            .collect();
        remove_instructions(kernel, &removed, &keep);
    }
    predicated
}

/// Drops the instructions `removed` marks (labels move to the instruction
/// that now stands at or after their old target), and keeps only the
/// labels `keep` marks: a label no branch names any more would still end a
/// basic block.
fn remove_instructions(kernel: &mut Kernel, removed: &[bool], keep: &[bool]) {
    kernel.rewrite_instructions(|index, instr, kept| {
        if !removed[index] {
            kept.push(instr);
        }
    });
    let mut label_index = Vec::with_capacity(kernel.labels.len());
    let mut kept_labels = 0;
    for &kept in keep {
        label_index.push(kept_labels);
        kept_labels += u32::from(kept);
    }
    let mut kept = keep.iter();
    kernel
        .labels
        .retain(|_| *kept.next().expect("a flag per label"));
    for instr in &mut kernel.instrs {
        if let Op::Branch { target } = &mut instr.op {
            *target = LabelId(label_index[target.index()]);
        }
    }
}

/// The dependence graph of one block, its allocations kept from block to
/// block.
#[derive(Default)]
struct BlockGraph {
    successors: Vec<Vec<usize>>,
    waiting_for: Vec<usize>,
    /// Per instruction: a global load of the block depends on it.
    feeds_load: Vec<bool>,
    /// Per register (and the carry flag, last): the block's last writer,
    /// and the readers since.
    last_writer: Vec<Option<usize>>,
    readers: Vec<Vec<usize>>,
    /// Registers touched in this block, to reset.
    touched: Vec<usize>,
    /// Register predecessors of each instruction (for `feeds_load`).
    register_predecessors: Vec<Vec<usize>>,
}

impl BlockGraph {
    /// Appends to `order` the instructions `start..end` of `kernel` in their
    /// scheduled order.
    fn schedule(&mut self, kernel: &Kernel, start: usize, end: usize, order: &mut Vec<usize>) {
        let count = end - start;
        let roles: Vec<Role> = kernel.instrs[start..end].iter().map(role).collect();
        if !roles.contains(&Role::GlobalLoad) {
            order.extend(start..end);
            return;
        }
        let carry = kernel.regs.len();
        if self.last_writer.len() < carry + 1 {
            self.last_writer.resize(carry + 1, None);
            self.readers.resize(carry + 1, Vec::new());
        }
        for list in [&mut self.successors, &mut self.register_predecessors] {
            list.iter_mut().for_each(Vec::clear);
            list.resize(count, Vec::new());
        }
        self.waiting_for.clear();
        self.waiting_for.resize(count, 0);
        self.feeds_load.clear();
        self.feeds_load.resize(count, false);
        let edge = |graph: &mut BlockGraph, from: usize, to: usize, register: bool| {
            if from != to {
                graph.successors[from].push(to);
                graph.waiting_for[to] += 1;
                if register {
                    graph.register_predecessors[to].push(from);
                }
            }
        };
        let mut last_in_order: Option<usize> = None;
        let mut last_ordering: Option<usize> = None;
        let mut loads_since_ordering: Vec<usize> = Vec::new();
        for (at, &instr_role) in roles.iter().enumerate() {
            let instr = &kernel.instrs[start + at];
            let mut reads: Vec<usize> = read_registers(instr)
                .iter()
                .map(|reg| reg.index())
                .collect();
            let mut writes: Vec<usize> = instr
                .op
                .destinations()
                .iter()
                .map(|reg| reg.index())
                .collect();
            // A guarded write keeps the old value in the lanes it skips: it
            // reads its destinations too.
            if instr.guard.is_some() {
                reads.extend_from_slice(&writes);
            }
            if let Op::CarryArith {
                carry_in,
                carry_out,
                ..
            } = instr.op
            {
                if carry_in {
                    reads.push(carry);
                }
                if carry_out {
                    writes.push(carry);
                }
            }
            for &register in &reads {
                if let Some(writer) = self.last_writer[register] {
                    edge(self, writer, at, true);
                }
            }
            for &register in &writes {
                if let Some(writer) = self.last_writer[register] {
                    edge(self, writer, at, false);
                }
                for reader in std::mem::take(&mut self.readers[register]) {
                    edge(self, reader, at, false);
                }
            }
            for &register in &reads {
                self.readers[register].push(at);
                self.touched.push(register);
            }
            for &register in &writes {
                self.last_writer[register] = Some(at);
                self.touched.push(register);
            }
            match instr_role {
                Role::Free => {}
                Role::GlobalLoad => {
                    if let Some(ordering) = last_ordering {
                        edge(self, ordering, at, false);
                    }
                    // Plain global loads keep their order among themselves.
                    if let Some(&previous) = loads_since_ordering.last() {
                        edge(self, previous, at, false);
                    }
                    loads_since_ordering.push(at);
                }
                Role::InOrder | Role::Ordering => {
                    if let Some(previous) = last_in_order {
                        edge(self, previous, at, false);
                    }
                    last_in_order = Some(at);
                    if instr_role == Role::Ordering {
                        if let Some(ordering) = last_ordering {
                            edge(self, ordering, at, false);
                        }
                        for load in loads_since_ordering.drain(..) {
                            edge(self, load, at, false);
                        }
                        last_ordering = Some(at);
                    }
                }
            }
        }
        for register in self.touched.drain(..) {
            self.last_writer[register] = None;
            self.readers[register].clear();
        }
        // What the block's loads depend on through registers, walked
        // backwards: a predecessor comes before its successor.
        for at in (0..count).rev() {
            if roles[at] == Role::GlobalLoad {
                self.feeds_load[at] = true;
            }
            if self.feeds_load[at] {
                for index in 0..self.register_predecessors[at].len() {
                    let predecessor = self.register_predecessors[at][index];
                    self.feeds_load[predecessor] = true;
                }
            }
        }
        // The block's branch or exit stays last.
        let last = count - 1;
        let terminator =
            matches!(kernel.instrs[start + last].op, Op::Branch { .. } | Op::Exit).then_some(last);
        let key = |at: usize, feeds_load: &[bool]| (!feeds_load[at], at);
        let mut ready: BTreeSet<(bool, usize)> = (0..count)
            .filter(|&at| self.waiting_for[at] == 0 && Some(at) != terminator)
            .map(|at| key(at, &self.feeds_load))
            .collect();
        let mut placed = 0;
        while let Some((_, at)) = ready.pop_first() {
            order.push(start + at);
            placed += 1;
            for index in 0..self.successors[at].len() {
                let successor = self.successors[at][index];
                self.waiting_for[successor] -= 1;
                if self.waiting_for[successor] == 0 && Some(successor) != terminator {
                    ready.insert(key(successor, &self.feeds_load));
                }
            }
        }
        if let Some(terminator) = terminator {
            order.push(start + terminator);
            placed += 1;
        }
        debug_assert_eq!(placed, count, "the block's dependence graph has a cycle");
    }
}

#[cfg(test)]
mod tests;
