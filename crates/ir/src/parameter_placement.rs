//! Moves each kernel-parameter load to where ptxas reads the parameter: in
//! the basic block of its uses, after the last barrier, clock read or other
//! ordering instruction before the first of them, and out of any loop that
//! the load was not in.
//!
//! NVVM writes every `ld.param` at the top of the kernel. ptxas has no
//! parameter loads to keep there: a parameter is a word of constant bank 0
//! (from `c[0x0][0x210]` on sm_90), which an instruction reads as an operand
//! or through `ULDC`/`LDC` next to where it is used, as a value that never
//! changes can be read again wherever it is needed. The SASS of
//! `programs/timing/tails.cu` and of the seed kernels on an H200 shows it
//! (docs/timing.md, "Parameters where ptxas reads them"): `storeSpinBarrier`
//! reads its output pointer with `LDC.64` after the kernel's first
//! `BAR.SYNC` and the clock read after it; `sharedStoreBarrier` reads one
//! pointer inside `if (threadIdx.x == 0)` and the other after the branch
//! rejoins; `seed1_noconflict` reads its output pointer after its
//! `__syncthreads()`; `storeSpinExit` reads the spin count a loop compares
//! with before the loop, not in it. Where the constant cache misses, the
//! miss is paid there, not at the top where it overlapped the kernel's
//! start: the 150-300 cycles that a store after a barrier cost the H200
//! beyond its parts, in launches that read the store's pointer after it.
//!
//! A load moves only when nothing can tell: it is unguarded, reads a
//! parameter by name (no register in its address), and is the only writer
//! of each register it loads, so that the value is the same wherever it is
//! loaded. It goes to the nearest block that dominates all of its uses;
//! while that block is on a cycle that does not pass through the load's own
//! block, to that block's immediate dominator (a loop's invariant stays out
//! of the loop, as ptxas hoists it); and in that block, after the last
//! instruction at or before the first use that orders memory or time (the
//! instructions [`crate::schedule`] lets no load pass), or, where the block
//! holds no use, after its last barrier or fence (or at its start), as
//! ptxas hoists a loop's invariant to the top of the block before the loop.
//!
//! A read of the launch's shape (`%ntid`, `%nctaid`) is a read of constant
//! bank 0 too (`ULDC c[0x0][0x0]`, or `LDC` of it): it rises to the top of
//! its block, or to just after the last instruction before it that orders
//! memory or time or touches its register, as ptxas issues it early.

use crate::cfg::{Cfg, Successor};
use crate::instr::{AddressBase, Instr, MemoryOrder, Op, Operand, UnaryOp};
use crate::kernel::Kernel;
use crate::merge::read_registers;
use crate::schedule::orders_memory;
use crate::types::{SpecialReg, StateSpace};

/// Where a moved load goes: before or after instruction `index` of the
/// kernel as it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    Before(usize),
    After(usize),
}

/// Whether `instr` is a load of a kernel parameter that may be read again
/// anywhere: unguarded, weak, and addressed by the parameter's name.
pub fn is_movable_parameter_load(instr: &Instr) -> bool {
    instr.guard.is_none()
        && matches!(
            &instr.op,
            Op::Load {
                space: StateSpace::Param,
                order: MemoryOrder::Weak,
                addr,
                ..
            } if matches!(addr.base, AddressBase::Symbol(_))
        )
}

/// Whether `instr` reads the block's or grid's shape (`%ntid`, `%nctaid`),
/// which ptxas reads from constant bank 0 as it reads parameters, early in
/// its block (`ULDC c[0x0][0x0]`).
fn is_launch_shape_read(instr: &Instr) -> bool {
    instr.guard.is_none()
        && matches!(
            instr.op,
            Op::Unary {
                op: UnaryOp::Mov,
                a: Operand::Special(SpecialReg::Ntid(_) | SpecialReg::Nctaid(_)),
                ..
            }
        )
}

/// Moves the parameter loads of `kernel` (see the module documentation),
/// and raises each read of the launch's shape to the top of its block or
/// to just after the last instruction before it that orders memory or
/// time or touches its register; returns how many instructions moved.
pub fn place_parameter_loads(kernel: &mut Kernel) -> usize {
    let cfg = Cfg::build(kernel);
    if cfg.blocks.is_empty() {
        return 0;
    }
    let dominators = cfg.immediate_dominators();
    let depth = dominator_depths(&dominators);
    let mut writers = vec![0u32; kernel.regs.len()];
    for instr in &kernel.instrs {
        for register in instr.op.destinations() {
            writers[register.index()] += 1;
        }
    }
    // Per register, the instructions that read it, in the kernel's order.
    let mut readers: Vec<Vec<usize>> = vec![Vec::new(); kernel.regs.len()];
    for (index, instr) in kernel.instrs.iter().enumerate() {
        let mut read = read_registers(instr);
        read.dedup();
        for register in read {
            if readers[register.index()].last() != Some(&index) {
                readers[register.index()].push(index);
            }
        }
    }
    let mut moves: Vec<(Place, usize)> = Vec::new();
    for (index, instr) in kernel.instrs.iter().enumerate() {
        if is_launch_shape_read(instr) {
            let start = cfg.blocks[cfg.block_of[index]].start.index();
            let place = (start..index)
                .rev()
                .find(|&at| {
                    orders_memory(&kernel.instrs[at])
                        || writes_or_reads_shape_target(kernel, at, instr)
                })
                .map_or(Place::Before(start), Place::After);
            if !stays(place, index) {
                moves.push((place, index));
            }
            continue;
        }
        if !is_movable_parameter_load(instr) {
            continue;
        }
        let loaded = instr.op.destinations();
        if loaded.is_empty() || loaded.iter().any(|register| writers[register.index()] != 1) {
            continue;
        }
        let mut uses: Vec<usize> = loaded
            .iter()
            .flat_map(|register| readers[register.index()].iter().copied())
            .collect();
        uses.sort_unstable();
        uses.dedup();
        if uses.is_empty() {
            continue;
        }
        let home = cfg.block_of[index];
        // A use above the load in its own block reads the register before
        // the load wrote it (around a loop): nothing may tell, so it stays.
        if uses
            .iter()
            .any(|&at| at < index && cfg.block_of[at] == home)
        {
            continue;
        }
        let mut block = cfg.block_of[uses[0]];
        for &use_at in &uses[1..] {
            match common_dominator(&dominators, &depth, block, cfg.block_of[use_at]) {
                Some(common) => block = common,
                None => break,
            }
        }
        if !dominates(&dominators, home, block) {
            continue;
        }
        while block != home && on_cycle_avoiding(&cfg, block, home) {
            match dominators[block] {
                Some(up) => block = up,
                None => break,
            }
        }
        let (start, end) = (
            cfg.blocks[block].start.index(),
            cfg.blocks[block].end.index(),
        );
        // In its own block the load may only move down, past what comes
        // after it.
        let from = if block == home { index + 1 } else { start };
        let first_use = uses.iter().copied().find(|&at| at >= from && at < end);
        let place = match first_use {
            Some(first_use) => (from..first_use)
                .rev()
                .find(|&at| orders_memory(&kernel.instrs[at]))
                .map_or(Place::Before(from), Place::After),
            // A block that dominates the uses without holding one (a
            // loop's preheader, or where branches part): early, after its
            // last barrier or fence, as ptxas hoists an invariant
            // (storeSpinBarrier's spin count comes before its first clock
            // read).
            None => (start..end)
                .rev()
                .find(|&at| {
                    matches!(
                        kernel.instrs[at].op,
                        Op::Barrier { .. } | Op::Fence { .. } | Op::WarpSync { .. }
                    )
                })
                .map_or(Place::Before(start), Place::After),
        };
        if !stays(place, index) {
            moves.push((place, index));
        }
    }
    let moved = moves.len();
    if moved == 0 {
        return 0;
    }
    // In the kernel's order of places; the loads bound for one place keep
    // their own order.
    moves.sort_unstable_by_key(|&(place, index)| match place {
        Place::Before(at) => (at, false, index),
        Place::After(at) => (at, true, index),
    });
    let mut leaving = vec![false; kernel.instrs.len()];
    for &(_, index) in &moves {
        leaving[index] = true;
    }
    let mut taken: Vec<Option<Instr>> = vec![None; kernel.instrs.len()];
    for &(_, index) in &moves {
        taken[index] = Some(kernel.instrs[index].clone());
    }
    let mut pending = moves.iter().peekable();
    kernel.rewrite_instructions(|index, instr, kept| {
        while let Some(&&(Place::Before(at), load)) = pending.peek() {
            if at != index {
                break;
            }
            kept.push(taken[load].take().expect("each load placed once"));
            pending.next();
        }
        if !leaving[index] {
            kept.push(instr);
        }
        while let Some(&&(Place::After(at), load)) = pending.peek() {
            if at != index {
                break;
            }
            kept.push(taken[load].take().expect("each load placed once"));
            pending.next();
        }
    });
    debug_assert!(
        taken.iter().all(Option::is_none),
        "every moved instruction placed"
    );
    moved
}

/// Whether a load at `index` that goes to `place` stays where it is.
fn stays(place: Place, index: usize) -> bool {
    match place {
        Place::Before(at) => at == index + 1 || at == index,
        Place::After(at) => at == index || at + 1 == index,
    }
}

/// Whether instruction `at` of `kernel` touches the register that `read`
/// (a move) writes, so that the move may not rise above it.
fn writes_or_reads_shape_target(kernel: &Kernel, at: usize, read: &Instr) -> bool {
    let other = &kernel.instrs[at];
    read.op.destinations().iter().any(|register| {
        other.op.destinations().contains(register) || read_registers(other).contains(register)
    })
}

/// Each block's depth in the dominator tree (the entry's, and an
/// unreachable block's, is 0).
fn dominator_depths(dominators: &[Option<usize>]) -> Vec<usize> {
    (0..dominators.len())
        .map(|block| {
            let mut depth = 0;
            let mut at = block;
            while let Some(up) = dominators[at] {
                depth += 1;
                at = up;
                if depth > dominators.len() {
                    break;
                }
            }
            depth
        })
        .collect()
}

/// The nearest block that dominates both `a` and `b`, if any.
fn common_dominator(
    dominators: &[Option<usize>],
    depth: &[usize],
    mut a: usize,
    mut b: usize,
) -> Option<usize> {
    while a != b {
        if depth[a] >= depth[b] {
            a = dominators[a]?;
        } else {
            b = dominators[b]?;
        }
    }
    Some(a)
}

/// Whether block `a` dominates block `b`.
fn dominates(dominators: &[Option<usize>], a: usize, mut b: usize) -> bool {
    loop {
        if a == b {
            return true;
        }
        match dominators[b] {
            Some(up) => b = up,
            None => return false,
        }
    }
}

/// Whether a path leads from `block` back to itself without entering
/// `avoid`: `block` is in a loop that `avoid` is not in.
fn on_cycle_avoiding(cfg: &Cfg, block: usize, avoid: usize) -> bool {
    let mut seen = vec![false; cfg.blocks.len()];
    let mut stack = vec![block];
    while let Some(current) = stack.pop() {
        for successor in &cfg.blocks[current].successors {
            let Successor::Block(next) = *successor else {
                continue;
            };
            if next == block {
                return true;
            }
            if next != avoid && !seen[next] {
                seen[next] = true;
                stack.push(next);
            }
        }
    }
    false
}

#[cfg(test)]
mod tests;
