//! Modules and kernels: the containers that own instructions, registers,
//! variables and labels, and the typed indices that name them.

use crate::instr::{Instr, SourceLoc};
use crate::types::{ScalarType, StateSpace};

macro_rules! typed_index {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);

        impl $name {
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

typed_index!(
    /// A source file of [`Module::files`].
    FileId
);
typed_index!(
    /// A kernel of [`Module::kernels`].
    KernelId
);
typed_index!(
    /// A virtual register of [`Kernel::regs`].
    RegId
);
typed_index!(
    /// An instruction of [`Kernel::instrs`], its position in the kernel.
    InstrId
);
typed_index!(
    /// A label of [`Kernel::labels`].
    LabelId
);
typed_index!(
    /// A variable or parameter of [`Kernel::symbols`].
    SymbolId
);
typed_index!(
    /// A call site that code was inlined at, of [`Module::inline_sites`].
    InlineSiteId
);

/// A parsed translation unit: the source files its locations name, the call
/// sites compiled code was inlined at, and its kernels.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Module {
    /// File names, as written in `.file` directives or given to the parser.
    pub files: Vec<String>,
    /// Every call site a location of the module was inlined at, each
    /// before the sites inlined in it are listed (an outer site comes
    /// first), in the order the kernels first use them.
    pub inline_sites: Vec<InlineSite>,
    pub kernels: Vec<Kernel>,
}

/// A call site that inlined code came from: a line, itself perhaps inlined
/// at another site (a device function called by a device function).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InlineSite {
    pub file: FileId,
    pub line: u32,
    pub inlined_at: Option<InlineSiteId>,
}

impl Module {
    pub fn kernel(&self, name: &str) -> Option<KernelId> {
        self.kernels
            .iter()
            .position(|kernel| kernel.name == name)
            .map(|index| KernelId(index as u32))
    }

    pub fn file_name(&self, file: FileId) -> &str {
        self.files
            .get(file.index())
            .map_or("<unknown>", String::as_str)
    }

    /// The places a location stands for, innermost first: its own file and
    /// line, then each call site it was inlined at, out to the kernel's.
    pub fn inline_chain(&self, loc: SourceLoc) -> Vec<(FileId, u32)> {
        let mut chain = vec![(loc.file, loc.line)];
        let mut next = loc.inlined_at;
        // A chain visits each site once at most; the bound keeps a module
        // built by hand with a cycle from looping.
        for _ in 0..self.inline_sites.len() {
            let Some(site) = next.and_then(|id| self.inline_sites.get(id.index())) else {
                break;
            };
            chain.push((site.file, site.line));
            next = site.inlined_at;
        }
        chain
    }
}

/// A kernel entry point (`.kernel name(params) { ... }`).
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    pub name: String,
    /// Where the `.kernel` line is.
    pub loc: SourceLoc,
    /// Parameters, then variables, in declaration order. Parameters are the
    /// symbols in [`StateSpace::Param`], in parameter order.
    pub symbols: Vec<Symbol>,
    pub regs: Vec<RegDecl>,
    pub labels: Vec<Label>,
    pub instrs: Vec<Instr>,
}

impl Kernel {
    pub fn params(&self) -> impl Iterator<Item = (SymbolId, &Symbol)> {
        self.symbols
            .iter()
            .enumerate()
            .filter(|(_, symbol)| symbol.space == StateSpace::Param)
            .map(|(index, symbol)| (SymbolId(index as u32), symbol))
    }

    pub fn reg(&self, reg: RegId) -> &RegDecl {
        &self.regs[reg.index()]
    }

    pub fn symbol(&self, symbol: SymbolId) -> &Symbol {
        &self.symbols[symbol.index()]
    }

    pub fn label(&self, label: LabelId) -> &Label {
        &self.labels[label.index()]
    }

    /// Rebuilds the instruction list: `rewrite` is given each instruction
    /// with its index and pushes what it becomes (nothing, itself, or
    /// several) onto the new list; every label then moves to the first
    /// instruction at or after its old target.
    pub(crate) fn rewrite_instructions(
        &mut self,
        mut rewrite: impl FnMut(usize, Instr, &mut Vec<Instr>),
    ) {
        let old = std::mem::take(&mut self.instrs);
        let mut new_index = Vec::with_capacity(old.len() + 1);
        for (index, instr) in old.into_iter().enumerate() {
            new_index.push(self.instrs.len() as u32);
            rewrite(index, instr, &mut self.instrs);
        }
        new_index.push(self.instrs.len() as u32);
        for label in &mut self.labels {
            let target = label.target.index().min(new_index.len() - 1);
            label.target = InstrId(new_index[target]);
        }
    }
}

/// A virtual register declaration (`.reg .u32 %r1`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegDecl {
    pub name: String,
    pub ty: ScalarType,
}

/// A named variable of a state space, or a kernel parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    pub space: StateSpace,
    pub ty: ScalarType,
    /// Number of elements; `None` for an `.extern .shared` array, whose size is
    /// the launch's dynamic shared memory. A scalar has `Some(1)` and `is_array` false.
    pub len: Option<u64>,
    pub is_array: bool,
    /// Byte alignment (at least the element size).
    pub align: u32,
    /// Initial values of a `.const` variable, one element's bits each; the
    /// elements past the list are zero. Empty for other spaces.
    pub init: Vec<u64>,
    pub loc: SourceLoc,
}

impl Symbol {
    /// Size in bytes, `None` for a dynamically sized array.
    pub fn size_bytes(&self) -> Option<u64> {
        self.len.map(|len| len * u64::from(self.ty.size_bytes()))
    }
}

/// A branch target: the instruction it stands before. A label after the last
/// instruction targets `InstrId(instrs.len())`, the implicit exit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    pub name: String,
    pub target: InstrId,
}
