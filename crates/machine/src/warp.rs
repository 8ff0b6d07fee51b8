//! The state of one warp: its register files (32 lanes of 32 or 64 bits per
//! value register, one 32-bit lane mask per predicate) and its divergent paths.
//!
//! Divergence follows the reconvergence-stack model with independent thread
//! scheduling (Volta and later): a divergent branch turns the running path
//! into a *reconvergence entry* at the branch's immediate post-dominator and
//! adds one path per side above it. A path ends when it reaches its
//! reconvergence point (its lanes are already in the entry below) or when its
//! lanes have all exited. The scheduler runs the topmost path that is ready
//! and is not a reconvergence entry still waiting for paths above it, so when
//! the running path waits at a barrier the warp runs its other paths: the seed
//! documents' `if/else` with `__syncthreads()` in both arms completes, as it
//! does on Volta and later GPUs.

use crate::program::{Kind, Program};

/// Lanes of a full warp.
pub const WARP_SIZE: usize = 32;

/// One group of lanes of a warp that runs together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Path {
    pub pc: u32,
    /// Where this path ends and rejoins the entry below
    /// ([`crate::program::NO_RECONVERGENCE`] for never).
    pub reconverge: u32,
    pub mask: u32,
    pub wait: PathWait,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PathWait {
    Ready,
    /// At a block barrier; ready again once the barrier's generation moves on.
    Barrier {
        id: u8,
        generation: u32,
    },
    /// At `bar.warp.sync` with this mask.
    WarpSync {
        mask: u32,
    },
}

/// A block barrier (PTX `bar`): arrivals counted per thread (Volta and later).
#[derive(Clone, Copy, Debug)]
pub struct Barrier {
    pub arrived: u32,
    /// The thread count given by `bar.sync a, b`, if any.
    pub count: Option<u32>,
    /// Completions so far; waiting paths compare it with the value they saw.
    pub generation: u32,
    pub popc: u32,
    pub all: bool,
    pub any: bool,
    /// The reductions of the last completion, read by waking `bar.red` paths.
    pub result_popc: u32,
    pub result_all: bool,
    pub result_any: bool,
}

impl Default for Barrier {
    fn default() -> Self {
        Barrier {
            arrived: 0,
            count: None,
            generation: 0,
            popc: 0,
            all: true,
            any: false,
            result_popc: 0,
            result_all: true,
            result_any: false,
        }
    }
}

impl Barrier {
    /// Completes the barrier if every expected thread has arrived: without a
    /// count, every thread of the block that has not exited.
    pub fn try_complete(&mut self, live_threads: u32) -> bool {
        let expected = self.count.unwrap_or(live_threads);
        if self.arrived == 0 || self.arrived < expected {
            return false;
        }
        self.result_popc = self.popc;
        self.result_all = self.all;
        self.result_any = self.any;
        self.generation = self.generation.wrapping_add(1);
        self.arrived = 0;
        self.count = None;
        self.popc = 0;
        self.all = true;
        self.any = false;
        true
    }

    pub fn expected(&self, live_threads: u32) -> u32 {
        self.count.unwrap_or(live_threads)
    }
}

/// A warp's value registers: 32 lanes each, in planes of 32-bit lanes, and
/// a second plane of high halves for a register that holds 64 bits.
///
/// Every block resident on the simulated GPU keeps its registers live at
/// once, and each time window visits them all, so their size is most of
/// what a launch's host memory and host cache traffic are; most registers
/// of real kernels are 32 bits wide. Lowering numbers the wide registers
/// first (`Program::wide_value_regs`), so telling one apart is a
/// comparison. A narrow register keeps the low 32 bits of what is written
/// to it and reads back zero-extended: PTX reads a register at most as
/// wide as its declared type.
#[derive(Clone, Debug, Default, Hash)]
pub struct RegisterFile {
    /// Plane `r` holds the low halves of register `r`; plane
    /// `registers + r` the high halves of wide register `r`.
    planes: Vec<u32>,
    /// The values of the warp-uniform registers, from `registers` on.
    uniform: Vec<u64>,
    /// Registers held per lane.
    registers: u32,
    wide: u32,
}

impl RegisterFile {
    /// Makes the file `registers` registers of zeros held per lane, the
    /// first `wide` of them 64 bits wide, then `uniform` held once for the
    /// warp, reusing its allocations.
    pub fn reset(&mut self, registers: u32, wide: u32, uniform: u32) {
        debug_assert!(wide <= registers);
        self.registers = registers;
        self.wide = wide;
        self.planes.clear();
        self.planes
            .resize((registers + wide) as usize * WARP_SIZE, 0);
        self.uniform.clear();
        self.uniform.resize(uniform as usize, 0);
    }

    /// Sets warp-uniform register `reg`, as the warp starts.
    pub fn set_uniform(&mut self, reg: u32, value: u64) {
        self.uniform[(reg - self.registers) as usize] = value;
    }

    /// The value of register `reg` if it is warp-uniform.
    #[inline(always)]
    pub fn uniform_value(&self, reg: u32) -> Option<u64> {
        (reg >= self.registers).then(|| self.uniform[(reg - self.registers) as usize])
    }

    /// Where register `reg`'s high plane starts, if it has one.
    #[inline(always)]
    fn high_plane(&self, reg: u32) -> Option<usize> {
        (reg < self.wide).then(|| (self.registers + reg) as usize * WARP_SIZE)
    }

    /// Lane `lane` of register `reg`.
    #[inline(always)]
    pub fn get(&self, reg: u32, lane: usize) -> u64 {
        if let Some(value) = self.uniform_value(reg) {
            return value;
        }
        let low = u64::from(self.planes[reg as usize * WARP_SIZE + lane]);
        match self.high_plane(reg) {
            Some(high) => low | u64::from(self.planes[high + lane]) << 32,
            None => low,
        }
    }

    /// Sets lane `lane` of register `reg` to `value` (its low 32 bits for a
    /// narrow register). `reg` is held per lane: no instruction writes a
    /// warp-uniform register.
    #[inline(always)]
    pub fn set(&mut self, reg: u32, lane: usize, value: u64) {
        debug_assert!(reg < self.registers, "a warp-uniform register is written");
        self.planes[reg as usize * WARP_SIZE + lane] = value as u32;
        if let Some(high) = self.high_plane(reg) {
            self.planes[high + lane] = (value >> 32) as u32;
        }
    }

    /// Every lane of register `reg`.
    #[inline(always)]
    pub fn read(&self, reg: u32) -> [u64; WARP_SIZE] {
        if let Some(value) = self.uniform_value(reg) {
            return [value; WARP_SIZE];
        }
        let start = reg as usize * WARP_SIZE;
        let mut out = [0u64; WARP_SIZE];
        for (out, &low) in out.iter_mut().zip(&self.planes[start..start + WARP_SIZE]) {
            *out = u64::from(low);
        }
        if let Some(high) = self.high_plane(reg) {
            for (out, &high) in out.iter_mut().zip(&self.planes[high..high + WARP_SIZE]) {
                *out |= u64::from(high) << 32;
            }
        }
        out
    }

    /// Whether register `reg` keeps 32 bits a lane: a narrow register held
    /// per lane (a write keeps the low 32 bits of each value).
    #[inline(always)]
    pub fn is_narrow(&self, reg: u32) -> bool {
        reg >= self.wide && reg < self.registers
    }

    /// Whether register `reg` holds no more than 32 bits in any lane: a
    /// narrow one, or a warp-uniform one whose value fits.
    #[inline(always)]
    pub fn holds_narrow(&self, reg: u32) -> bool {
        match self.uniform_value(reg) {
            Some(value) => value <= u64::from(u32::MAX),
            None => reg >= self.wide,
        }
    }

    /// Every lane of register `reg` as a 32-bit word: the low half of each
    /// (all of it where [`RegisterFile::holds_narrow`]). A reference to the
    /// register's plane, or for a warp-uniform register to `scratch`, filled
    /// with its value: a reference either way, so that the lane loops that
    /// read it vectorise. (Given a choice between two arrays, the compiler
    /// holds each lane in a scalar of its own.) A warp-uniform register has
    /// no plane: its value is one word of the warp's, kept in few cache
    /// lines across the many warps a time window visits.
    #[inline(always)]
    pub fn narrow_lanes<'a>(
        &'a self,
        reg: u32,
        scratch: &'a mut [u32; WARP_SIZE],
    ) -> &'a [u32; WARP_SIZE] {
        if let Some(value) = self.uniform_value(reg) {
            *scratch = [value as u32; WARP_SIZE];
            return scratch;
        }
        let start = reg as usize * WARP_SIZE;
        self.planes[start..start + WARP_SIZE]
            .try_into()
            .expect("a plane is a warp's lanes")
    }

    /// Sets narrow register `reg` ([`RegisterFile::is_narrow`]) to `values`
    /// in `lanes`, leaving the others.
    #[inline(always)]
    pub fn write_narrow(&mut self, reg: u32, lanes: u32, values: &[u32; WARP_SIZE]) {
        debug_assert!(self.is_narrow(reg));
        let start = reg as usize * WARP_SIZE;
        let plane = &mut self.planes[start..start + WARP_SIZE];
        if lanes == u32::MAX {
            plane.copy_from_slice(values);
            return;
        }
        // A blend without branches, which vectorises.
        for (lane, (slot, &value)) in plane.iter_mut().zip(values).enumerate() {
            let keep = (lanes >> lane & 1).wrapping_sub(1);
            *slot = (value & !keep) | (*slot & keep);
        }
    }

    /// Sets register `reg` (held per lane) to `values` in `lanes`, leaving
    /// the others.
    #[inline(always)]
    pub fn write(&mut self, reg: u32, lanes: u32, values: &[u64; WARP_SIZE]) {
        debug_assert!(reg < self.registers, "a warp-uniform register is written");
        let start = reg as usize * WARP_SIZE;
        let high = self.high_plane(reg);
        if lanes == u32::MAX {
            for (slot, &value) in self.planes[start..start + WARP_SIZE].iter_mut().zip(values) {
                *slot = value as u32;
            }
            if let Some(high) = high {
                for (slot, &value) in self.planes[high..high + WARP_SIZE].iter_mut().zip(values) {
                    *slot = (value >> 32) as u32;
                }
            }
            return;
        }
        for (lane, &value) in values.iter().enumerate() {
            if lanes >> lane & 1 != 0 {
                self.planes[start + lane] = value as u32;
                if let Some(high) = high {
                    self.planes[high + lane] = (value >> 32) as u32;
                }
            }
        }
    }

    /// Sets register `reg` (held per lane) to `value` in `lanes`, leaving
    /// the others.
    #[inline]
    pub fn fill(&mut self, reg: u32, lanes: u32, value: u64) {
        self.write(reg, lanes, &[value; WARP_SIZE]);
    }
}

/// A warp's registers and paths. Reused from block to block.
#[derive(Debug, Default)]
pub struct Warp {
    pub index: u32,
    pub values: RegisterFile,
    pub preds: Vec<u32>,
    pub paths: Vec<Path>,
    /// Lanes that hold a thread of the block.
    pub valid: u32,
    pub exited: u32,
    /// Warp synchronizations completed (`bar.warp.sync` and the other
    /// `.sync` collectives): accesses of its lanes on either side of one
    /// are ordered (`racecheck.rs`).
    pub syncs: u32,
}

impl Warp {
    /// The lanes where predicate `reg` (negated if asked) is true.
    #[inline(always)]
    pub fn pred_bits(&self, reg: u32, negated: bool) -> u32 {
        self.preds[reg as usize] ^ if negated { u32::MAX } else { 0 }
    }

    /// Sets predicate `reg` to `bits` in the `active` lanes, leaving the others.
    #[inline(always)]
    pub fn set_pred(&mut self, reg: u32, active: u32, bits: u32) {
        let pred = &mut self.preds[reg as usize];
        *pred = (*pred & !active) | (bits & active);
    }

    /// Lanes that exist and have not exited.
    pub fn live(&self) -> u32 {
        self.valid & !self.exited
    }

    /// Picks the path to run next, waking paths whose barrier completed and
    /// dropping paths that ended. `None`: every path waits, or none is left.
    /// With `per_warp` (pre-Volta), a path waiting at a barrier holds the
    /// whole warp.
    #[inline]
    pub fn select_path(
        &mut self,
        program: &Program,
        barriers: &[Barrier; 16],
        per_warp: bool,
    ) -> Option<usize> {
        if let Some(top) = self.paths.last() {
            if top.wait == PathWait::Ready
                && top.mask != 0
                && top.pc != top.reconverge
                && !(per_warp && self.paths.len() > 1)
            {
                return Some(self.paths.len() - 1);
            }
        }
        self.select_path_slow(program, barriers, per_warp)
    }

    #[cold]
    fn select_path_slow(
        &mut self,
        program: &Program,
        barriers: &[Barrier; 16],
        per_warp: bool,
    ) -> Option<usize> {
        if per_warp {
            for index in 0..self.paths.len() {
                let path = self.paths[index];
                if let PathWait::Barrier { id, generation } = path.wait {
                    if path.mask == 0 {
                        continue;
                    }
                    let barrier = &barriers[id as usize];
                    if barrier.generation == generation {
                        return None;
                    }
                    self.wake_from_barrier(program, index, barrier);
                }
            }
        }
        'scan: loop {
            for index in (0..self.paths.len()).rev() {
                let path = self.paths[index];
                if path.mask == 0 || path.pc == path.reconverge {
                    self.paths.remove(index);
                    continue 'scan;
                }
                if let PathWait::Barrier { id, generation } = path.wait {
                    let barrier = &barriers[id as usize];
                    if barrier.generation != generation {
                        self.wake_from_barrier(program, index, barrier);
                    }
                }
                if self.paths[index].wait == PathWait::Ready && !self.has_children(index) {
                    return Some(index);
                }
            }
            return None;
        }
    }

    /// A path leaves a completed barrier: `bar.red` writes its reduction, and
    /// the path moves past the barrier.
    fn wake_from_barrier(&mut self, program: &Program, index: usize, barrier: &Barrier) {
        let path = self.paths[index];
        if let Kind::Barrier {
            reduction: Some(reduction),
            ..
        } = &program.code[path.pc as usize].kind
        {
            let lanes = path.mask;
            match reduction.reduction {
                warpsim_ir::BarrierReduction::Popc => {
                    self.values
                        .fill(reduction.dst, lanes, u64::from(barrier.result_popc));
                }
                warpsim_ir::BarrierReduction::And | warpsim_ir::BarrierReduction::Or => {
                    let result = if reduction.reduction == warpsim_ir::BarrierReduction::And {
                        barrier.result_all
                    } else {
                        barrier.result_any
                    };
                    self.set_pred(reduction.dst, lanes, if result { u32::MAX } else { 0 });
                }
            }
        }
        let path = &mut self.paths[index];
        path.wait = PathWait::Ready;
        path.pc += 1;
    }

    /// Whether the path at `index` is a reconvergence entry still waiting for
    /// paths above it that will rejoin it (their reconvergence point is its pc).
    pub fn has_children(&self, index: usize) -> bool {
        let pc = self.paths[index].pc;
        self.paths[index + 1..]
            .iter()
            .any(|above| above.reconverge == pc && above.mask != 0)
    }

    /// Lets lanes that wait at a reconvergence point go on when every path
    /// they wait for is held at a barrier or a warp sync: on Volta and later
    /// a convergence barrier does not wait for threads blocked elsewhere
    /// (an H100 finishes kernels where some lanes of a warp wait at
    /// `__syncthreads()` while the others must run on to exit). The held
    /// paths then rejoin one level further out. Called only when the block
    /// could not otherwise move, so lanes stay together wherever they can.
    /// Returns whether some lanes were let go.
    pub fn release_blocked_reconvergence(&mut self) -> bool {
        let mut released = false;
        for index in 0..self.paths.len() {
            let entry = self.paths[index];
            if entry.mask == 0 || entry.wait != PathWait::Ready {
                continue;
            }
            let children = || {
                self.paths[index + 1..]
                    .iter()
                    .filter(|above| above.reconverge == entry.pc && above.mask != 0)
            };
            if children().next().is_none() || children().any(|child| child.wait == PathWait::Ready)
            {
                continue;
            }
            let held = children().fold(0, |lanes, child| lanes | child.mask);
            let own = entry.mask & !held;
            if own == 0 {
                continue;
            }
            for above in &mut self.paths[index + 1..] {
                if above.reconverge == entry.pc && above.mask != 0 {
                    above.reconverge = entry.reconverge;
                }
            }
            self.paths[index].mask = own;
            released = true;
        }
        released
    }

    /// Moves the (ready, childless) path at `index` to the bottom of its
    /// level: just above the reconvergence entry it will rejoin, below every
    /// other path that rejoins it there. The scheduler then prefers the others.
    pub fn yield_path(&mut self, index: usize) {
        let path = self.paths.remove(index);
        let parent = self.paths[..index]
            .iter()
            .rposition(|candidate| candidate.pc == path.reconverge);
        self.paths
            .insert(parent.map_or(0, |parent| parent + 1), path);
    }

    /// Whether every lane of the warp has exited (no path has lanes left).
    pub fn is_finished(&self) -> bool {
        self.paths.iter().all(|path| path.mask == 0)
    }
}

/// How many times the barriers have opened (wrapping): a number that
/// changes whenever one of them opens, and the block's barrier epoch for
/// the race checker.
pub(crate) fn barrier_openings(barriers: &[Barrier]) -> u32 {
    barriers
        .iter()
        .fold(0u32, |sum, barrier| sum.wrapping_add(barrier.generation))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_narrow_register_keeps_32_bits_a_wide_one_64_and_a_uniform_one_a_value_for_every_lane() {
        let mut registers = RegisterFile::default();
        // Three registers held per lane, the first one wide, then two
        // warp-uniform ones.
        registers.reset(3, 1, 2);
        let value = 0x1234_5678_9abc_def0;
        registers.set(0, 5, value);
        registers.set(2, 5, value);
        assert_eq!(registers.get(0, 5), value);
        assert_eq!(registers.get(2, 5), 0x9abc_def0);
        assert_eq!(registers.get(1, 5), 0);
        let mut lanes = [0u64; WARP_SIZE];
        for (lane, slot) in lanes.iter_mut().enumerate() {
            *slot = ((lane as u64) << 32) | (lane as u64 + 100);
        }
        // Only the even lanes are written.
        registers.write(0, 0x5555_5555, &lanes);
        registers.write(1, 0x5555_5555, &lanes);
        let (wide, narrow) = (registers.read(0), registers.read(1));
        for lane in 0..WARP_SIZE {
            let written = lane % 2 == 0;
            assert_eq!(
                wide[lane],
                if written {
                    lanes[lane]
                } else if lane == 5 {
                    value
                } else {
                    0
                }
            );
            assert_eq!(narrow[lane], if written { lane as u64 + 100 } else { 0 });
        }
        registers.fill(2, u32::MAX, u64::MAX);
        assert_eq!(registers.read(2), [0xffff_ffff; WARP_SIZE]);
        // A uniform register keeps all 64 bits, the same in every lane.
        registers.set_uniform(4, value);
        assert_eq!(registers.read(4), [value; WARP_SIZE]);
        assert_eq!(registers.get(4, 17), value);
        assert_eq!(registers.get(3, 17), 0);
        // What the 32-bit paths may read as 32-bit words: narrow registers
        // and uniform ones whose value fits, not wide or larger ones.
        assert!(registers.is_narrow(2) && !registers.is_narrow(0) && !registers.is_narrow(4));
        assert!(registers.holds_narrow(2) && registers.holds_narrow(3));
        assert!(!registers.holds_narrow(0) && !registers.holds_narrow(4));
        let mut scratch = [0; WARP_SIZE];
        assert_eq!(
            registers.narrow_lanes(2, &mut scratch),
            &[0xffff_ffff; WARP_SIZE]
        );
        assert_eq!(
            registers.narrow_lanes(4, &mut scratch),
            &[value as u32; WARP_SIZE]
        );
        // A write to some lanes leaves every other lane as it was.
        let lanes = 0b10 | 1 << 17 | 1 << 31;
        registers.write_narrow(2, lanes, &[7; WARP_SIZE]);
        for lane in 0..WARP_SIZE {
            let expected = if lanes >> lane & 1 != 0 {
                7
            } else {
                0xffff_ffff
            };
            assert_eq!(registers.get(2, lane), expected, "lane {lane}");
        }
        // A reset zeroes every lane.
        registers.reset(2, 2, 1);
        assert_eq!(registers.read(1), [0; WARP_SIZE]);
        assert_eq!(registers.read(2), [0; WARP_SIZE]);
    }
}
