//! Which registers of a kernel may share storage: a liveness analysis over
//! the control-flow graph and a greedy colouring of the interference graph
//! (Chaitin's register allocation without spilling, as Appel, "Modern
//! Compiler Implementation", chapters 10 and 11, presents it).
//!
//! PTX registers are virtual: a front end names a fresh one for nearly every
//! value, and ptxas maps them onto far fewer hardware registers. A machine
//! that keeps 32 lanes of every virtual register for every resident warp
//! holds several times the storage the program needs; two registers that
//! are never live at the same point of any thread can use the same lanes.
//!
//! Liveness is per thread: the analysis runs on the control-flow graph that
//! one thread follows, so lanes of a warp on different paths each see their
//! own registers. A guarded instruction may leave its destination as it was
//! (the guard is false in some lanes), so only an unguarded write ends a
//! register's previous value. An instruction's destinations interfere with
//! its own sources as well as with what is live after it, so no lowering of
//! it has to worry about a destination overwriting a source it has not read
//! yet (another lane's, for a shuffle or a matrix instruction).

use crate::cfg::{Cfg, Successor};
use crate::kernel::{Kernel, RegId};
use crate::merge::read_registers;

/// Above this many registers in the class the interference matrix (a bit
/// per pair) would pass 8 MiB; each register then keeps storage of its own.
const MAX_SHARED_REGISTERS: usize = 8192;

/// A storage slot for every register of `kernel` that `in_class` accepts
/// (`None` for the others), and how many slots there are. Registers share
/// a slot only when no thread can need both values at one point; slots are
/// numbered from zero in the order of the registers that open them, so the
/// result depends only on the kernel.
pub fn share_registers(
    kernel: &Kernel,
    in_class: impl Fn(RegId) -> bool,
) -> (Vec<Option<u32>>, u32) {
    let registers = kernel.regs.len();
    // Dense indices of the registers in the class.
    let mut dense = vec![None; registers];
    let mut members = Vec::new();
    for index in 0..registers {
        let reg = RegId(index as u32);
        if in_class(reg) {
            dense[index] = Some(members.len());
            members.push(reg);
        }
    }
    let count = members.len();
    if count > MAX_SHARED_REGISTERS {
        let slots = dense
            .iter()
            .map(|slot| slot.map(|slot| slot as u32))
            .collect();
        return (slots, count as u32);
    }
    let words = count.div_ceil(64);
    let instructions: Vec<(Vec<usize>, Vec<usize>, bool)> = kernel
        .instrs
        .iter()
        .map(|instr| {
            let dense_of = |regs: Vec<RegId>| -> Vec<usize> {
                regs.into_iter()
                    .filter_map(|reg| dense[reg.index()])
                    .collect()
            };
            (
                dense_of(read_registers(instr)),
                dense_of(instr.op.destinations()),
                instr.guard.is_none(),
            )
        })
        .collect();
    let cfg = Cfg::build(kernel);
    let live_in = live_into_blocks(&cfg, &instructions, words);
    let mut interference = vec![0u64; count * words];
    let mut add_edge = |a: usize, b: usize| {
        if a != b {
            interference[a * words + b / 64] |= 1 << (b % 64);
            interference[b * words + a / 64] |= 1 << (a % 64);
        }
    };
    let mut live = vec![0u64; words];
    for (block_index, block) in cfg.blocks.iter().enumerate() {
        live_out_of(&cfg, block_index, &live_in, &mut live);
        for (reads, writes, kills) in instructions[block.start.index()..block.end.index()]
            .iter()
            .rev()
        {
            for &written in writes {
                for_each_bit(&live, |other| add_edge(written, other));
                for &other in reads.iter().chain(writes) {
                    add_edge(written, other);
                }
            }
            if *kills {
                for &written in writes {
                    live[written / 64] &= !(1 << (written % 64));
                }
            }
            for &read in reads {
                live[read / 64] |= 1 << (read % 64);
            }
        }
    }
    // Greedy colouring in register order: each takes the lowest slot none
    // of its neighbours coloured so far holds.
    let mut color = vec![u32::MAX; count];
    let mut slots = 0u32;
    let mut taken = Vec::new();
    for register in 0..count {
        taken.clear();
        taken.resize(slots as usize + 1, false);
        let row = &interference[register * words..(register + 1) * words];
        for_each_bit(row, |neighbour| {
            if let Some(slot) = color.get(neighbour).filter(|&&slot| slot != u32::MAX) {
                taken[*slot as usize] = true;
            }
        });
        let slot = taken
            .iter()
            .position(|&taken| !taken)
            .unwrap_or(slots as usize) as u32;
        color[register] = slot;
        slots = slots.max(slot + 1);
    }
    let slot_of = dense
        .iter()
        .map(|index| index.map(|index| color[index]))
        .collect();
    (slot_of, slots)
}

/// The registers live on entry to each block, by iterating the dataflow
/// equations to their fixed point (blocks in reverse order, which for
/// loop-free code is one pass).
fn live_into_blocks(
    cfg: &Cfg,
    instructions: &[(Vec<usize>, Vec<usize>, bool)],
    words: usize,
) -> Vec<Vec<u64>> {
    let blocks = cfg.blocks.len();
    // Per block: read before any unguarded write in it, and written unguarded.
    let mut uses = vec![vec![0u64; words]; blocks];
    let mut kills = vec![vec![0u64; words]; blocks];
    for (index, block) in cfg.blocks.iter().enumerate() {
        for (reads, writes, kill) in &instructions[block.start.index()..block.end.index()] {
            for &read in reads {
                if kills[index][read / 64] & (1 << (read % 64)) == 0 {
                    uses[index][read / 64] |= 1 << (read % 64);
                }
            }
            if *kill {
                for &written in writes {
                    kills[index][written / 64] |= 1 << (written % 64);
                }
            }
        }
    }
    let mut live_in = vec![vec![0u64; words]; blocks];
    let mut out = vec![0u64; words];
    let mut changed = true;
    while changed {
        changed = false;
        for index in (0..blocks).rev() {
            live_out_of(cfg, index, &live_in, &mut out);
            for word in 0..words {
                let value = uses[index][word] | (out[word] & !kills[index][word]);
                if value != live_in[index][word] {
                    live_in[index][word] = value;
                    changed = true;
                }
            }
        }
    }
    live_in
}

/// Sets `out` to the registers live on leaving block `index`.
fn live_out_of(cfg: &Cfg, index: usize, live_in: &[Vec<u64>], out: &mut [u64]) {
    out.fill(0);
    for successor in &cfg.blocks[index].successors {
        if let Successor::Block(next) = successor {
            for (out, word) in out.iter_mut().zip(&live_in[*next]) {
                *out |= word;
            }
        }
    }
}

fn for_each_bit(words: &[u64], mut f: impl FnMut(usize)) {
    for (index, &word) in words.iter().enumerate() {
        let mut rest = word;
        while rest != 0 {
            let bit = rest.trailing_zeros() as usize;
            f(index * 64 + bit);
            rest &= rest - 1;
        }
    }
}

#[cfg(test)]
mod tests;
