//! Rewrites a kernel's shared-memory accesses the way ptxas does before the
//! hardware sees them, so that the bank arbiter counts the instructions that
//! really run: adjacent 32-bit (and 64-bit) accesses of one thread whose
//! alignment can be proved become one 64- or 128-bit access, and an
//! `atomicAdd(p, 1)` on shared memory whose result is unused becomes a
//! population-count increment. The rules are ptxas 12.9's for sm_90, measured
//! on the kernels of `programs/ptxas` and written down in
//! `docs/access-merging.md`; this module implements them.
//!
//! In short:
//!
//! - Only plain (`.weak` or `.relaxed`) unguarded `ld.shared`/`st.shared` of
//!   one basic block take part. Their addresses must be one value plus
//!   constants: the same register, or registers that `mov`, `add` or `sub` of
//!   a constant made from it, or the same variable.
//! - Loads: the 32-bit loads of an aligned 16-byte group are read by one
//!   128-bit load when three or four of its words are loaded (ptxas reads the
//!   fourth word too); otherwise both words of an aligned 8-byte group make one
//!   64-bit load; two 64-bit loads of an aligned 16-byte group make one
//!   128-bit load. 8- and 16-bit loads are never merged. The merged load takes
//!   the place, and the source line, of the first of its loads. A store to
//!   shared or generic memory, an atomic, a barrier or a fence between the
//!   loads ends the group.
//! - Stores: the stores that cover an aligned 16-byte group completely become
//!   one 128-bit store; otherwise those that cover an aligned 8-byte group
//!   become one 64-bit store; two 16-bit stores of an aligned 32-bit word
//!   become one 32-bit store. 8-bit stores are never merged. The merged store
//!   takes the place, and the source line, of the last of its stores. A load
//!   from shared or generic memory, a store to another address that may be
//!   the same, an atomic, a barrier or a fence between the stores ends the
//!   group.
//! - `atom.shared.add.u32` (or `red`) of the constant 1 whose result no
//!   instruction reads becomes `red.shared.popc_inc.u32`, ptxas's
//!   ATOMS.POPC.INC, which the hardware serves like a load: lanes that name
//!   one word share it.
//!
//! The rewrite keeps the kernel's meaning: a merged load writes the
//! registers of its loads directly where nothing reads or writes them in
//! between, and otherwise into fresh registers that a `mov` copies at the
//! original load's place; a merged store reads the values of its stores
//! through fresh registers copied at the original stores' places where a
//! value is overwritten before the last store.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::cfg::Cfg;
use crate::instr::{
    Address, AddressBase, AtomOp, BinaryOp, Instr, MemoryOrder, Op, Operand, SourceLoc, UnaryOp,
};
use crate::kernel::{InstrId, Kernel, Module, RegDecl, RegId, SymbolId};
use crate::known_bits::{self, KernelKnownBits, KnownBits};
use crate::types::{ScalarType, StateSpace};

/// What [`merge_accesses`] changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MergeSummary {
    /// Vector loads made from several loads.
    pub merged_loads: usize,
    /// The loads they replace.
    pub loads_replaced: usize,
    /// Vector stores made from several stores.
    pub merged_stores: usize,
    /// The stores they replace.
    pub stores_replaced: usize,
    /// Atomic adds of 1 turned into population-count increments.
    pub popc_increments: usize,
}

impl std::ops::AddAssign for MergeSummary {
    fn add_assign(&mut self, other: MergeSummary) {
        self.merged_loads += other.merged_loads;
        self.loads_replaced += other.loads_replaced;
        self.merged_stores += other.merged_stores;
        self.stores_replaced += other.stores_replaced;
        self.popc_increments += other.popc_increments;
    }
}

/// Merges the shared-memory accesses of every kernel of `module` as ptxas
/// would (see the module documentation).
pub fn merge_accesses(module: &mut Module) -> MergeSummary {
    let mut summary = MergeSummary::default();
    for kernel in &mut module.kernels {
        summary += merge_kernel(kernel);
    }
    summary
}

/// Merges the shared-memory accesses of one kernel.
pub fn merge_kernel(kernel: &mut Kernel) -> MergeSummary {
    let known = known_bits::analyze(kernel);
    let mut summary = MergeSummary {
        popc_increments: rewrite_popc_increments(kernel, &known),
        ..MergeSummary::default()
    };
    let cfg = Cfg::build(kernel);
    let mut plan = Plan::new(kernel);
    for block in &cfg.blocks {
        let mut walk = BlockWalk::new(kernel, &known, &mut plan);
        for index in block.start.index()..block.end.index() {
            walk.visit(index);
        }
        walk.close_all();
        summary += walk.summary;
    }
    plan.apply(kernel);
    summary
}

// ---------------------------------------------------------------------------
// Population-count increments.
// ---------------------------------------------------------------------------

/// Turns every `atom.shared.add.u32 d, [a], 1` whose `d` no instruction
/// reads (and every such `red`) into `red.shared.popc_inc.u32 [a], 1`. The
/// constant may be a register known to hold 1, as ptxas propagates it. A
/// `.s32` add stays an add: ptxas keeps ATOMS.ADD.S32 for it.
fn rewrite_popc_increments(kernel: &mut Kernel, known: &KernelKnownBits) -> usize {
    let mut read = HashSet::new();
    for instr in &kernel.instrs {
        read.extend(read_registers(instr));
    }
    let mut count = 0;
    for instr in &mut kernel.instrs {
        let Op::Atom {
            space: StateSpace::Shared,
            op: AtomOp::Add,
            ty: ScalarType::U32,
            dst,
            a,
            b: None,
            ..
        } = &mut instr.op
        else {
            continue;
        };
        let unused = dst.is_none_or(|reg| !read.contains(&reg));
        if unused && known.operand(a, ScalarType::U32).constant == Some(1) {
            let Op::Atom { op, dst, a, .. } = &mut instr.op else {
                continue;
            };
            *op = AtomOp::PopcIncrement;
            *dst = None;
            *a = Operand::Imm {
                bits: 1,
                ty: ScalarType::U32,
            };
            count += 1;
        }
    }
    count
}

// ---------------------------------------------------------------------------
// Where addresses point: a root value plus a constant.
// ---------------------------------------------------------------------------

/// A value that addresses are measured from, within one basic block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Root {
    /// What a register held when the block began.
    Entry(RegId),
    /// What an instruction wrote into a register.
    Written(RegId, InstrId),
    /// The address of a variable.
    Symbol(SymbolId),
    /// Zero: absolute addresses.
    Absolute,
}

/// A value known to be `root + offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Place {
    root: Root,
    offset: i64,
}

// ---------------------------------------------------------------------------
// The edit plan, applied once every block has been walked.
// ---------------------------------------------------------------------------

/// The rewrite of a kernel: what each instruction becomes, and the registers
/// to add.
struct Plan {
    /// Instructions that become something else (possibly nothing).
    replacements: HashMap<usize, Vec<Instr>>,
    /// Registers to declare, after the kernel's own.
    new_regs: Vec<RegDecl>,
    first_new_reg: u32,
    /// Every register name in use, so that new names are fresh.
    names: HashSet<String>,
    next_name: usize,
}

impl Plan {
    fn new(kernel: &Kernel) -> Plan {
        Plan {
            replacements: HashMap::new(),
            new_regs: Vec::new(),
            first_new_reg: kernel.regs.len() as u32,
            names: kernel.regs.iter().map(|reg| reg.name.clone()).collect(),
            next_name: 0,
        }
    }

    /// Declares a fresh register of type `ty`.
    fn fresh_reg(&mut self, ty: ScalarType) -> RegId {
        let name = loop {
            let name = format!("%merged{}", self.next_name);
            self.next_name += 1;
            if self.names.insert(name.clone()) {
                break name;
            }
        };
        self.new_regs.push(RegDecl { name, ty });
        RegId(self.first_new_reg + self.new_regs.len() as u32 - 1)
    }

    /// The type of a register, including the ones this plan declares.
    fn reg_type(&self, kernel: &Kernel, reg: RegId) -> Option<ScalarType> {
        match reg.index().checked_sub(self.first_new_reg as usize) {
            Some(new) => self.new_regs.get(new).map(|decl| decl.ty),
            None => kernel.regs.get(reg.index()).map(|decl| decl.ty),
        }
    }

    /// Rebuilds the kernel's instruction list and moves every label to the
    /// first instruction at or after its old target.
    fn apply(self, kernel: &mut Kernel) {
        if self.replacements.is_empty() && self.new_regs.is_empty() {
            return;
        }
        let mut replacements = self.replacements;
        kernel.rewrite_instructions(
            |index, instr, rewritten| match replacements.remove(&index) {
                Some(instrs) => rewritten.extend(instrs),
                None => rewritten.push(instr),
            },
        );
        kernel.regs.extend(self.new_regs);
    }
}

// ---------------------------------------------------------------------------
// Walking a basic block.
// ---------------------------------------------------------------------------

/// One candidate access: a plain, unguarded shared load or store.
#[derive(Clone, Debug)]
struct Member {
    /// Its index in the kernel.
    position: usize,
    /// Its address's offset from the group's root.
    offset: i64,
    /// The offset from the root of its address register's value (the
    /// address is `base + (offset - base_offset)`).
    base_offset: i64,
    base: AddressBase,
    ty: ScalarType,
    order: MemoryOrder,
    /// Bytes per element: the type's size.
    element: u32,
    /// Destination registers (loads) or stored values (stores), one per element.
    load_registers: Vec<RegId>,
    store_values: Vec<Operand>,
    loc: SourceLoc,
}

impl Member {
    fn bytes(&self) -> i64 {
        i64::from(self.element) * self.element_count() as i64
    }

    fn element_count(&self) -> usize {
        self.load_registers.len().max(self.store_values.len())
    }
}

/// The accesses of one root waiting to be merged.
#[derive(Default)]
struct Group {
    members: Vec<Member>,
}

struct BlockWalk<'a> {
    kernel: &'a Kernel,
    known: &'a KernelKnownBits,
    plan: &'a mut Plan,
    /// What each register holds, as a root plus a constant; a register not
    /// written in this block yet holds its entry value.
    places: HashMap<RegId, Place>,
    loads: BTreeMap<Root, Group>,
    stores: BTreeMap<Root, Group>,
    summary: MergeSummary,
}

/// What an instruction of the block does to the groups.
enum Effect {
    /// A candidate load of a root.
    Load(Root, Member),
    /// A candidate store of a root.
    Store(Root, Member),
    /// May read shared memory: no store may move across it.
    ReadsShared,
    /// May write shared memory, or orders memory: nothing may move across it.
    Fence,
    /// Touches no shared memory.
    None,
}

impl<'a> BlockWalk<'a> {
    fn new(kernel: &'a Kernel, known: &'a KernelKnownBits, plan: &'a mut Plan) -> BlockWalk<'a> {
        BlockWalk {
            kernel,
            known,
            plan,
            places: HashMap::new(),
            loads: BTreeMap::new(),
            stores: BTreeMap::new(),
            summary: MergeSummary::default(),
        }
    }

    fn place_of(&self, reg: RegId) -> Place {
        self.places.get(&reg).copied().unwrap_or(Place {
            root: Root::Entry(reg),
            offset: 0,
        })
    }

    /// The place an address points to, and the place of its base.
    fn address_place(&self, addr: &Address) -> (Place, i64) {
        let base = match addr.base {
            AddressBase::Reg(reg) => self.place_of(reg),
            AddressBase::Symbol(symbol) => Place {
                root: Root::Symbol(symbol),
                offset: 0,
            },
            AddressBase::Absolute => Place {
                root: Root::Absolute,
                offset: 0,
            },
        };
        (
            Place {
                root: base.root,
                offset: base.offset.wrapping_add(addr.offset),
            },
            base.offset,
        )
    }

    fn visit(&mut self, index: usize) {
        let instr = &self.kernel.instrs[index];
        match self.effect(index, instr) {
            Effect::Load(root, member) => {
                // A load may read what a pending store writes.
                self.close_stores();
                self.loads.entry(root).or_default().members.push(member);
            }
            Effect::Store(root, member) => {
                self.close_loads();
                let others: Vec<Root> =
                    self.stores.keys().copied().filter(|r| *r != root).collect();
                for other in others {
                    self.close_store_group(other);
                }
                let overlaps = self.stores.get(&root).is_some_and(|group| {
                    group.members.iter().any(|m| {
                        m.offset < member.offset + member.bytes()
                            && member.offset < m.offset + m.bytes()
                    })
                });
                if overlaps {
                    // The later store must stay after the earlier one.
                    self.close_store_group(root);
                }
                self.stores.entry(root).or_default().members.push(member);
            }
            Effect::ReadsShared => self.close_stores(),
            Effect::Fence => self.close_all(),
            Effect::None => {}
        }
        self.update_places(index);
    }

    /// Classifies an instruction.
    fn effect(&self, index: usize, instr: &Instr) -> Effect {
        let may_alias_shared =
            |space: StateSpace| matches!(space, StateSpace::Shared | StateSpace::Generic);
        match &instr.op {
            Op::Load {
                space,
                order,
                ty,
                dst,
                addr,
            } => {
                if !may_alias_shared(*space) {
                    return Effect::None;
                }
                let plain = matches!(order, MemoryOrder::Weak | MemoryOrder::Relaxed(_));
                if !plain {
                    return Effect::Fence;
                }
                let element = ty.size_bytes();
                let bytes = element as usize * dst.len();
                if *space == StateSpace::Shared
                    && !dst.is_empty()
                    && instr.guard.is_none()
                    && matches!(element, 4 | 8)
                    && bytes < 16
                {
                    let (place, base_offset) = self.address_place(addr);
                    return Effect::Load(
                        place.root,
                        Member {
                            position: index,
                            offset: place.offset,
                            base_offset,
                            base: addr.base,
                            ty: *ty,
                            order: *order,
                            element,
                            load_registers: dst.clone(),
                            store_values: Vec::new(),
                            loc: instr.loc,
                        },
                    );
                }
                Effect::ReadsShared
            }
            Op::Store {
                space,
                order,
                ty,
                addr,
                src,
            } => {
                if !may_alias_shared(*space) {
                    return Effect::None;
                }
                let plain = matches!(order, MemoryOrder::Weak | MemoryOrder::Relaxed(_));
                let element = ty.size_bytes();
                let bytes = element as usize * src.len();
                if plain
                    && *space == StateSpace::Shared
                    && !src.is_empty()
                    && instr.guard.is_none()
                    && matches!(element, 2 | 4 | 8)
                    && bytes < 16
                {
                    let (place, base_offset) = self.address_place(addr);
                    return Effect::Store(
                        place.root,
                        Member {
                            position: index,
                            offset: place.offset,
                            base_offset,
                            base: addr.base,
                            ty: *ty,
                            order: *order,
                            element,
                            load_registers: Vec::new(),
                            store_values: src.clone(),
                            loc: instr.loc,
                        },
                    );
                }
                Effect::Fence
            }
            Op::Atom { space, .. } if may_alias_shared(*space) => Effect::Fence,
            Op::Barrier { .. } | Op::Fence { .. } | Op::WarpSync { .. } => Effect::Fence,
            // Warp-synchronous accesses of shared memory: nothing moves across them.
            Op::MatrixLoad { .. }
            | Op::MatrixStore { .. }
            | Op::WmmaLoad { .. }
            | Op::WmmaStore { .. } => Effect::Fence,
            _ => Effect::None,
        }
    }

    /// Records what the instruction's destinations hold now.
    fn update_places(&mut self, index: usize) {
        let instr = &self.kernel.instrs[index];
        let derived = if instr.guard.is_some() {
            None
        } else {
            match &instr.op {
                Op::Unary {
                    op: UnaryOp::Mov,
                    ty,
                    dst,
                    a,
                } if ty.is_integer() => match a {
                    Operand::Reg(reg) => Some((*dst, self.place_of(*reg))),
                    Operand::Symbol(symbol) => Some((
                        *dst,
                        Place {
                            root: Root::Symbol(*symbol),
                            offset: 0,
                        },
                    )),
                    _ => None,
                },
                Op::Binary {
                    op: op @ (BinaryOp::Add | BinaryOp::Sub),
                    ty,
                    saturate: false,
                    dst,
                    a,
                    b,
                } if ty.is_integer() => {
                    let constant = |operand: &Operand| match operand {
                        Operand::Imm { bits, .. } => Some(sign_extend(*bits, ty.bits())),
                        _ => None,
                    };
                    match (a, b, op) {
                        (Operand::Reg(reg), other, _) if constant(other).is_some() => {
                            let value = constant(other).unwrap_or(0);
                            let place = self.place_of(*reg);
                            let delta = if *op == BinaryOp::Add {
                                value
                            } else {
                                value.wrapping_neg()
                            };
                            Some((
                                *dst,
                                Place {
                                    root: place.root,
                                    offset: place.offset.wrapping_add(delta),
                                },
                            ))
                        }
                        (other, Operand::Reg(reg), BinaryOp::Add) if constant(other).is_some() => {
                            let place = self.place_of(*reg);
                            Some((
                                *dst,
                                Place {
                                    root: place.root,
                                    offset: place.offset.wrapping_add(constant(other).unwrap_or(0)),
                                },
                            ))
                        }
                        _ => None,
                    }
                }
                _ => None,
            }
        };
        let written = instr.op.destinations();
        for dst in written {
            let place = match derived {
                Some((reg, place)) if reg == dst => place,
                _ => Place {
                    root: Root::Written(dst, InstrId(index as u32)),
                    offset: 0,
                },
            };
            self.places.insert(dst, place);
        }
    }

    /// What is known about the address `root + offset`.
    fn known_at(&self, root: Root, offset: i64) -> KnownBits {
        let root_bits = match root {
            Root::Entry(reg) | Root::Written(reg, _) => self.known.register(reg),
            Root::Symbol(symbol) => self.known.symbol_address(symbol),
            Root::Absolute => KnownBits::constant(0, 64),
        };
        root_bits.plus(offset, 64)
    }

    /// The start (as an offset from `root`) of the aligned `size`-byte group
    /// that holds byte `offset`, when the alignment of `root` tells it.
    fn aligned_start(&self, root: Root, offset: i64, size: i64) -> Option<i64> {
        let root_bits = self.known_at(root, 0);
        let phase = match root_bits.constant {
            Some(value) => (value as i64).wrapping_add(offset).rem_euclid(size),
            None if root_bits.alignment() as i64 >= size => offset.rem_euclid(size),
            None => return None,
        };
        let start = offset - phase;
        // The proof, restated: the group's first byte is aligned.
        (self.known_at(root, start).alignment() as i64 >= size).then_some(start)
    }

    fn close_all(&mut self) {
        self.close_loads();
        self.close_stores();
    }

    fn close_loads(&mut self) {
        for (root, group) in std::mem::take(&mut self.loads) {
            self.merge_loads(root, group.members);
        }
    }

    fn close_stores(&mut self) {
        for (root, group) in std::mem::take(&mut self.stores) {
            self.merge_stores(root, group.members);
        }
    }

    fn close_store_group(&mut self, root: Root) {
        if let Some(group) = self.stores.remove(&root) {
            self.merge_stores(root, group.members);
        }
    }

    // -----------------------------------------------------------------------
    // Loads.
    // -----------------------------------------------------------------------

    fn merge_loads(&mut self, root: Root, members: Vec<Member>) {
        let mut taken = vec![false; members.len()];
        // Aligned 16-byte groups: three or four 32-bit words, or two 64-bit loads.
        for chunk in self.chunks(root, &members, &taken, 16) {
            let words = covered_words(&members, &chunk);
            let element = members[chunk.indices[0]].element;
            let enough = match element {
                4 => words.count_ones() >= 3,
                _ => words == 0b1111,
            };
            if enough && self.emit_load(&members, &chunk, 16) {
                for &index in &chunk.indices {
                    taken[index] = true;
                }
            }
        }
        // Aligned 8-byte groups of two 32-bit words.
        for chunk in self.chunks(root, &members, &taken, 8) {
            let element = members[chunk.indices[0]].element;
            if element == 4
                && covered_words(&members, &chunk) == 0b11
                && self.emit_load(&members, &chunk, 8)
            {
                for &index in &chunk.indices {
                    taken[index] = true;
                }
            }
        }
    }

    /// Emits one load for the members of an aligned group; says whether it did.
    fn emit_load(&mut self, members: &[Member], chunk: &Chunk, size: i64) -> bool {
        let group: Vec<&Member> = chunk.indices.iter().map(|&i| &members[i]).collect();
        if group.len() < 2 {
            return false;
        }
        let element = group[0].element;
        let anchor = group
            .iter()
            .min_by_key(|m| m.position)
            .copied()
            .expect("a group has members");
        // Every destination must be one element wide, so that a vector
        // register or a `mov` of the element's bits can stand for it.
        let element_bits = bits_type(element);
        if group.iter().any(|m| {
            m.load_registers.iter().any(|&reg| {
                self.plan
                    .reg_type(self.kernel, reg)
                    .is_none_or(|ty| ty.size_bytes() != element)
            })
        }) {
            return false;
        }
        let ty = common_type(&group).unwrap_or(element_bits);
        let vector_reg_ty = match self.plan.reg_type(self.kernel, anchor.load_registers[0]) {
            Some(ty) => ty,
            None => return false,
        };
        let count = (size / i64::from(element)) as usize;
        let mut slots: Vec<Option<RegId>> = vec![None; count];
        let mut copies: Vec<(usize, RegId, RegId, SourceLoc)> = Vec::new();
        let mut used = HashSet::new();
        for member in &group {
            let first_slot = ((member.offset - chunk.start) / i64::from(element)) as usize;
            for (element_index, &reg) in member.load_registers.iter().enumerate() {
                let direct = member.position == anchor.position
                    || !self.touched_between(reg, anchor.position, member.position);
                let same_type = self.plan.reg_type(self.kernel, reg) == Some(vector_reg_ty);
                let slot = if direct && same_type && used.insert(reg) {
                    reg
                } else {
                    let temporary = self.plan.fresh_reg(vector_reg_ty);
                    copies.push((member.position, reg, temporary, member.loc));
                    temporary
                };
                slots[first_slot + element_index] = Some(slot);
            }
        }
        let dst: Vec<RegId> = slots
            .into_iter()
            .map(|slot| slot.unwrap_or_else(|| self.plan.fresh_reg(vector_reg_ty)))
            .collect();
        let merged = Instr {
            guard: None,
            op: Op::Load {
                space: StateSpace::Shared,
                order: anchor.order,
                ty,
                dst,
                addr: Address {
                    base: anchor.base,
                    offset: chunk.start - anchor.base_offset,
                },
            },
            loc: anchor.loc,
        };
        for member in &group {
            self.plan.replacements.insert(member.position, Vec::new());
        }
        self.plan.replacements.insert(anchor.position, vec![merged]);
        for (position, reg, temporary, loc) in copies {
            self.plan
                .replacements
                .entry(position)
                .or_default()
                .push(copy(element_bits, reg, Operand::Reg(temporary), loc));
        }
        self.summary.merged_loads += 1;
        self.summary.loads_replaced += group.len();
        true
    }

    // -----------------------------------------------------------------------
    // Stores.
    // -----------------------------------------------------------------------

    fn merge_stores(&mut self, root: Root, members: Vec<Member>) {
        let mut taken = vec![false; members.len()];
        for size in [16, 8, 4] {
            for chunk in self.chunks(root, &members, &taken, size) {
                let element = members[chunk.indices[0]].element;
                let fits = match element {
                    4 => size >= 8,
                    8 => size == 16,
                    _ => size <= 8,
                };
                let full = covered_bytes(&members, &chunk) == size;
                if fits && full && self.emit_store(&members, &chunk, size) {
                    for &index in &chunk.indices {
                        taken[index] = true;
                    }
                }
            }
        }
    }

    /// Emits one store for the members of an aligned group; says whether it did.
    fn emit_store(&mut self, members: &[Member], chunk: &Chunk, size: i64) -> bool {
        let group: Vec<&Member> = chunk.indices.iter().map(|&i| &members[i]).collect();
        if group.len() < 2 {
            return false;
        }
        let element = group[0].element;
        let element_bits = bits_type(element);
        let anchor = group
            .iter()
            .max_by_key(|m| m.position)
            .copied()
            .expect("a group has members");
        let ty = common_type(&group).unwrap_or(element_bits);
        let count = (size / i64::from(element)) as usize;
        let mut values: Vec<Option<Operand>> = vec![None; count];
        let mut copies: Vec<(usize, Instr)> = Vec::new();
        for member in &group {
            let first_slot = ((member.offset - chunk.start) / i64::from(element)) as usize;
            for (element_index, value) in member.store_values.iter().enumerate() {
                let value = match *value {
                    Operand::Reg(reg)
                        if member.position != anchor.position
                            && self.written_between(reg, member.position, anchor.position) =>
                    {
                        // The value changes before the merged store: copy it
                        // where the original store was.
                        if self
                            .plan
                            .reg_type(self.kernel, reg)
                            .is_none_or(|ty| ty.size_bytes() != element)
                        {
                            return false;
                        }
                        let temporary = self.plan.fresh_reg(element_bits);
                        copies.push((
                            member.position,
                            copy(element_bits, temporary, Operand::Reg(reg), member.loc),
                        ));
                        Operand::Reg(temporary)
                    }
                    Operand::Imm { bits, .. } => Operand::Imm { bits, ty },
                    other => other,
                };
                values[first_slot + element_index] = Some(value);
            }
        }
        let Some(src) = values.into_iter().collect::<Option<Vec<Operand>>>() else {
            return false;
        };
        let merged = Instr {
            guard: None,
            op: Op::Store {
                space: StateSpace::Shared,
                order: anchor.order,
                ty,
                addr: Address {
                    base: anchor.base,
                    offset: chunk.start - anchor.base_offset,
                },
                src,
            },
            loc: anchor.loc,
        };
        for member in &group {
            self.plan.replacements.insert(member.position, Vec::new());
        }
        for (position, instr) in copies {
            self.plan
                .replacements
                .entry(position)
                .or_default()
                .push(instr);
        }
        self.plan.replacements.insert(anchor.position, vec![merged]);
        self.summary.merged_stores += 1;
        self.summary.stores_replaced += group.len();
        true
    }

    // -----------------------------------------------------------------------
    // Shared helpers.
    // -----------------------------------------------------------------------

    /// The members not yet taken, grouped by the aligned `size`-byte group
    /// that wholly holds them, each at a multiple of its element size in it.
    /// A group qualifies only if its members have one element size and one
    /// memory order and do not overlap.
    fn chunks(&self, root: Root, members: &[Member], taken: &[bool], size: i64) -> Vec<Chunk> {
        let mut by_start: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
        for (index, member) in members.iter().enumerate() {
            if taken[index] {
                continue;
            }
            let Some(start) = self.aligned_start(root, member.offset, size) else {
                continue;
            };
            let naturally_placed = (member.offset - start) % i64::from(member.element) == 0;
            if naturally_placed && member.offset + member.bytes() <= start + size {
                by_start.entry(start).or_default().push(index);
            }
        }
        by_start
            .into_iter()
            .filter(|(_, indices)| {
                let first = &members[indices[0]];
                let uniform = indices.iter().all(|&i| {
                    members[i].element == first.element && members[i].order == first.order
                });
                let disjoint = indices.iter().enumerate().all(|(n, &i)| {
                    indices[n + 1..].iter().all(|&j| {
                        let (a, b) = (&members[i], &members[j]);
                        a.offset + a.bytes() <= b.offset || b.offset + b.bytes() <= a.offset
                    })
                });
                uniform && disjoint
            })
            .map(|(start, indices)| Chunk { start, indices })
            .collect()
    }

    /// Whether an instruction strictly between `from` and `to` reads or
    /// writes `reg`.
    fn touched_between(&self, reg: RegId, from: usize, to: usize) -> bool {
        self.kernel.instrs[from + 1..to].iter().any(|instr| {
            instr.op.destinations().contains(&reg) || read_registers(instr).contains(&reg)
        })
    }

    /// Whether an instruction strictly between `from` and `to` writes `reg`.
    fn written_between(&self, reg: RegId, from: usize, to: usize) -> bool {
        self.kernel.instrs[from + 1..to]
            .iter()
            .any(|instr| instr.op.destinations().contains(&reg))
    }
}

/// Members of one aligned group of bytes.
struct Chunk {
    /// The group's first byte, as an offset from the root.
    start: i64,
    /// Indices into the members.
    indices: Vec<usize>,
}

/// Which 4-byte words of a chunk its members cover, as bits.
fn covered_words(members: &[Member], chunk: &Chunk) -> u32 {
    let mut words = 0u32;
    for &index in &chunk.indices {
        let member = &members[index];
        let first = (member.offset - chunk.start) / 4;
        let last = (member.offset + member.bytes() - 1 - chunk.start) / 4;
        for word in first..=last {
            words |= 1 << word;
        }
    }
    words
}

/// How many bytes of a chunk its (disjoint) members cover.
fn covered_bytes(members: &[Member], chunk: &Chunk) -> i64 {
    chunk.indices.iter().map(|&i| members[i].bytes()).sum()
}

/// The type all members share, if they do.
fn common_type(group: &[&Member]) -> Option<ScalarType> {
    let first = group[0].ty;
    group.iter().all(|m| m.ty == first).then_some(first)
}

/// The bit type of `bytes` bytes (`.b16`, `.b32`, `.b64`): what a merged
/// access moves when its parts have different types.
fn bits_type(bytes: u32) -> ScalarType {
    match bytes {
        1 => ScalarType::B8,
        2 => ScalarType::B16,
        4 => ScalarType::B32,
        _ => ScalarType::B64,
    }
}

/// `mov.<ty> dst, src`.
fn copy(ty: ScalarType, dst: RegId, src: Operand, loc: SourceLoc) -> Instr {
    Instr {
        guard: None,
        op: Op::Unary {
            op: UnaryOp::Mov,
            ty,
            dst,
            a: src,
        },
        loc,
    }
}

fn sign_extend(bits: u64, width: u32) -> i64 {
    if width >= 64 {
        bits as i64
    } else {
        let shift = 64 - width;
        ((bits << shift) as i64) >> shift
    }
}

/// Every register an instruction reads: its guard, operands, predicate
/// operands and address registers.
pub fn read_registers(instr: &Instr) -> Vec<RegId> {
    let mut regs = Vec::new();
    if let Some(guard) = instr.guard {
        regs.push(guard.reg);
    }
    let mut operand = |operand: &Operand| {
        if let Operand::Reg(reg) = operand {
            regs.push(*reg);
        }
    };
    let address_reg = |addr: &Address| match addr.base {
        AddressBase::Reg(reg) => Some(reg),
        _ => None,
    };
    let mut address = None;
    match &instr.op {
        Op::Binary { a, b, .. }
        | Op::Mul24 { a, b, .. }
        | Op::CopySign { a, b, .. }
        | Op::CvtPair { a, b, .. } => {
            operand(a);
            operand(b);
        }
        Op::Unary { a, .. } | Op::Testp { a, .. } => operand(a),
        Op::MulAdd { a, b, c, .. }
        | Op::Sad { a, b, c, .. }
        | Op::FunnelShift { a, b, c, .. }
        | Op::Lop3 { a, b, c, .. } => {
            operand(a);
            operand(b);
            operand(c);
        }
        Op::Setp { a, b, combine, .. } | Op::Set { a, b, combine, .. } => {
            operand(a);
            operand(b);
            if let Some((_, predicate)) = combine {
                operand(&predicate.value);
            }
        }
        Op::Selp { a, b, cond, .. } => {
            operand(a);
            operand(b);
            operand(&cond.value);
        }
        Op::Cvt { src, .. } | Op::Cvta { src, .. } | Op::Unpack { src, .. } => operand(src),
        Op::Load { addr, .. } => address = address_reg(addr),
        Op::Store { addr, src, .. } => {
            address = address_reg(addr);
            src.iter().for_each(&mut operand);
        }
        Op::Atom { addr, a, b, .. } => {
            address = address_reg(addr);
            operand(a);
            if let Some(b) = b {
                operand(b);
            }
        }
        Op::Barrier {
            id,
            count,
            reduction,
            ..
        } => {
            operand(id);
            if let Some(count) = count {
                operand(count);
            }
            if let Some((_, predicate)) = reduction {
                operand(&predicate.value);
            }
        }
        Op::WarpSync { mask } => operand(mask),
        Op::Shuffle { a, b, c, mask, .. } => {
            operand(a);
            operand(b);
            operand(c);
            operand(mask);
        }
        Op::Vote { pred, mask, .. } => {
            operand(&pred.value);
            operand(mask);
        }
        Op::Redux { a, mask, .. } | Op::Match { a, mask, .. } => {
            operand(a);
            operand(mask);
        }
        Op::BitFieldExtract {
            a,
            position,
            length,
            ..
        } => {
            operand(a);
            operand(position);
            operand(length);
        }
        Op::BitFieldInsert {
            field,
            base,
            position,
            length,
            ..
        } => {
            operand(field);
            operand(base);
            operand(position);
            operand(length);
        }
        Op::Permute { a, b, selector, .. } => {
            operand(a);
            operand(b);
            operand(selector);
        }
        Op::Pack { src, .. } => src.iter().for_each(&mut operand),
        Op::Printf {
            format, arguments, ..
        } => {
            operand(format);
            operand(arguments);
        }
        Op::AssertFail {
            message,
            file,
            line,
            function,
        } => {
            operand(message);
            operand(file);
            operand(line);
            operand(function);
        }
        Op::NanoSleep { duration } => operand(duration),
        // Asynchronous copies and mbarriers: two addresses at most, the
        // second's register listed as an operand.
        Op::CpAsync {
            dst,
            src,
            src_size,
            ignore_src,
            cache_policy,
            ..
        } => {
            address = address_reg(dst);
            if let Some(reg) = address_reg(src) {
                regs.push(reg);
            }
            let mut operand = |value: &Operand| {
                if let Operand::Reg(reg) = value {
                    regs.push(*reg);
                }
            };
            src_size.iter().for_each(&mut operand);
            ignore_src.iter().for_each(|pred| operand(&pred.value));
            cache_policy.iter().for_each(&mut operand);
        }
        Op::CpAsyncBulk {
            dst,
            src,
            size,
            mbarrier,
        } => {
            operand(size);
            address = address_reg(dst);
            regs.extend(address_reg(src));
            regs.extend(address_reg(mbarrier));
        }
        Op::CpAsyncMbarrierArrive { addr, .. } => address = address_reg(addr),
        Op::Mbarrier { op, addr, .. } => {
            address = address_reg(addr);
            match op {
                crate::MbarrierOp::Init { count: value }
                | crate::MbarrierOp::ExpectTx { bytes: value }
                | crate::MbarrierOp::CompleteTx { bytes: value } => operand(value),
                crate::MbarrierOp::Arrive {
                    count, expect_tx, ..
                } => {
                    count.iter().for_each(&mut operand);
                    expect_tx.iter().for_each(&mut operand);
                }
                crate::MbarrierOp::Wait {
                    phase,
                    suspend_hint,
                    ..
                } => {
                    operand(phase);
                    suspend_hint.iter().for_each(&mut operand);
                }
                crate::MbarrierOp::Invalidate => {}
            }
        }
        Op::MbarrierPendingCount { state, .. } => operand(state),
        Op::CpAsyncCommitGroup | Op::CpAsyncWait { .. } => {}
        Op::ActiveMask { .. } | Op::Fence { .. } | Op::Branch { .. } | Op::Trap | Op::Exit => {}
        // Integer dot products, carry chains, mad24, redux.sync.f32 and narrow-float conversions.
        Op::DotProduct { a, b, c, .. } | Op::MulAdd24 { a, b, c, .. } => {
            operand(a);
            operand(b);
            operand(c);
        }
        Op::CarryArith { a, b, c, .. } => {
            operand(a);
            operand(b);
            if let Some(c) = c {
                operand(c);
            }
        }
        Op::ReduxFloat { a, mask, .. } => {
            operand(a);
            operand(mask);
        }
        Op::CvtTf32 { src, .. } | Op::CvtFromFp8 { src, .. } | Op::CvtBf16Relu { src, .. } => {
            operand(src)
        }
        Op::CvtToFp8 { a, b, .. } | Op::NarrowFloat { a, b, .. } => {
            operand(a);
            if let Some(b) = b {
                operand(b);
            }
        }
        // Tensor-core instructions.
        Op::MatrixLoad { addr, .. } => address = address_reg(addr),
        Op::MatrixStore { addr, src, .. } => {
            address = address_reg(addr);
            regs.extend(src);
        }
        Op::MatrixMultiplyAccumulate { a, b, c, .. } | Op::WmmaMma { a, b, c, .. } => {
            regs.extend(a.iter().chain(b).chain(c));
        }
        Op::WmmaLoad { addr, stride, .. } => {
            address = address_reg(addr);
            if let Some(Operand::Reg(reg)) = stride {
                regs.push(*reg);
            }
        }
        Op::WmmaStore {
            addr, src, stride, ..
        } => {
            address = address_reg(addr);
            regs.extend(src);
            if let Some(Operand::Reg(reg)) = stride {
                regs.push(*reg);
            }
        }
    }
    regs.extend(address);
    regs
}

#[cfg(test)]
mod tests;
