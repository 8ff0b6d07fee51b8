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
//! The analysis works on any code over the blocks of a [`Cfg`]: the
//! machine runs it on lowered code, where literals and special registers
//! are registers set when a warp starts.
//!
//! Liveness is per thread: the analysis runs on the control-flow graph that
//! one thread follows, so lanes of a warp on different paths each see their
//! own registers. A guarded instruction may leave its destination as it was
//! (the guard is false in some lanes), so only an unguarded write ends a
//! register's previous value. An instruction's destinations interfere with
//! its own sources as well as with what is live after it, so no lowering of
//! it has to worry about a destination overwriting a source it has not read
//! yet (another lane's, for a shuffle or a matrix instruction). Registers
//! written late (see [`RegisterUse::written_late`]) share with nothing.

use crate::cfg::{Cfg, Successor};

/// Above this many registers the interference matrix (a bit per pair)
/// would pass 8 MiB; each register then keeps storage of its own.
const MAX_SHARED_REGISTERS: usize = 8192;

/// The registers one instruction reads and writes, as dense indices.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegisterUse {
    pub reads: Vec<u32>,
    pub writes: Vec<u32>,
    /// Whether the writes replace the registers' values in every thread
    /// that runs the instruction (it has no guard).
    pub unguarded: bool,
    /// Whether the writes land some time after the instruction runs (a
    /// machine may deliver an atomic's old value later): each written
    /// register then keeps a slot no other register uses, since a thread
    /// for which it is dead from the instruction on could otherwise have
    /// written another value to the slot before it lands.
    pub written_late: bool,
}

/// A storage slot for each of `registers` registers, and how many slots
/// there are, for code whose instruction `i` (in the blocks of `cfg`) uses
/// registers as `uses[i]` says. `defined_at_entry` are registers a thread
/// starts with a value in (set before the first instruction): they never
/// share with one another, nor with a register read before it is written.
/// Registers share a slot only when no thread can need both values at one
/// point; slots are numbered from zero in the order of the registers that
/// open them, so the result depends only on the code.
///
/// `wide[r]` says register `r` holds 64 bits (all are alike when it is
/// empty): a slot holds registers of one width only, so that a machine
/// which keeps a narrow slot in 32 bits never has to read or write a
/// 32-bit register as a 64-bit one for sharing with one.
pub fn share_slots(
    cfg: &Cfg,
    uses: &[RegisterUse],
    registers: usize,
    defined_at_entry: &[u32],
    wide: &[bool],
) -> (Vec<u32>, u32) {
    if registers > MAX_SHARED_REGISTERS || cfg.blocks.is_empty() {
        return ((0..registers as u32).collect(), registers as u32);
    }
    let words = registers.div_ceil(64);
    let live_in = live_into_blocks(cfg, uses, words);
    let mut interference = vec![0u64; registers * words];
    let mut add_edge = |a: usize, b: usize| {
        if a != b {
            interference[a * words + b / 64] |= 1 << (b % 64);
            interference[b * words + a / 64] |= 1 << (a % 64);
        }
    };
    let mut live = vec![0u64; words];
    for (block_index, block) in cfg.blocks.iter().enumerate() {
        live_out_of(cfg, block_index, &live_in, &mut live);
        for used in uses[block.start.index()..block.end.index()].iter().rev() {
            for &written in &used.writes {
                let written = written as usize;
                for_each_bit(&live, |other| add_edge(written, other));
                for &other in used.reads.iter().chain(&used.writes) {
                    add_edge(written, other as usize);
                }
            }
            if used.unguarded {
                for &written in &used.writes {
                    live[written as usize / 64] &= !(1 << (written % 64));
                }
            }
            for &read in &used.reads {
                live[read as usize / 64] |= 1 << (read % 64);
            }
        }
    }
    // What a thread holds before its first instruction: registers set at
    // entry and those read before any write (which read the zero every
    // register starts at).
    let mut at_entry = live_in[0].clone();
    for &register in defined_at_entry {
        at_entry[register as usize / 64] |= 1 << (register % 64);
    }
    let mut entry_registers = Vec::new();
    for_each_bit(&at_entry, |register| entry_registers.push(register));
    for (index, &first) in entry_registers.iter().enumerate() {
        for &second in &entry_registers[index + 1..] {
            add_edge(first, second);
        }
    }
    for used in uses.iter().filter(|used| used.written_late) {
        for &written in &used.writes {
            for other in 0..registers {
                add_edge(written as usize, other);
            }
        }
    }
    // Greedy colouring in register order: each takes the lowest slot of its
    // width none of its neighbours coloured so far holds.
    let mut color = vec![u32::MAX; registers];
    let mut slot_wide: Vec<bool> = Vec::new();
    let mut taken = Vec::new();
    for register in 0..registers {
        let width = wide.get(register).copied().unwrap_or(false);
        taken.clear();
        taken.extend(slot_wide.iter().map(|&slot_width| slot_width != width));
        taken.push(false);
        let row = &interference[register * words..(register + 1) * words];
        for_each_bit(row, |neighbour| {
            if color[neighbour] != u32::MAX {
                taken[color[neighbour] as usize] = true;
            }
        });
        let slot = taken
            .iter()
            .position(|&taken| !taken)
            .expect("the last entry is a new slot");
        if slot == slot_wide.len() {
            slot_wide.push(width);
        }
        color[register] = slot as u32;
    }
    (color, slot_wide.len() as u32)
}

/// The registers live on entry to each block, by iterating the dataflow
/// equations to their fixed point (blocks in reverse order, which for
/// loop-free code is one pass).
fn live_into_blocks(cfg: &Cfg, uses: &[RegisterUse], words: usize) -> Vec<Vec<u64>> {
    let blocks = cfg.blocks.len();
    // Per block: read before any unguarded write in it, and written unguarded.
    let mut read_first = vec![vec![0u64; words]; blocks];
    let mut kills = vec![vec![0u64; words]; blocks];
    for (index, block) in cfg.blocks.iter().enumerate() {
        for used in &uses[block.start.index()..block.end.index()] {
            for &read in &used.reads {
                let (word, bit) = (read as usize / 64, 1 << (read % 64));
                if kills[index][word] & bit == 0 {
                    read_first[index][word] |= bit;
                }
            }
            if used.unguarded {
                for &written in &used.writes {
                    kills[index][written as usize / 64] |= 1 << (written % 64);
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
                let value = read_first[index][word] | (out[word] & !kills[index][word]);
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
