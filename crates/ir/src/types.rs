//! Scalar types, state spaces, scopes and special registers: the vocabulary the
//! instructions are written in (PTX ISA, "Types" and "State Spaces").

use std::fmt;

/// A scalar type, as written after an opcode (`add.s32`) or in a register
/// declaration (`.reg .f32`). `Pred` is the one-bit predicate type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScalarType {
    Pred,
    B8,
    B16,
    B32,
    B64,
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    /// Half precision: a storage and conversion type (`cvt.f32.f16`).
    F16,
    /// Two halves in 32 bits (`add.f16x2`), element 0 in the low 16 bits:
    /// an arithmetic type of `add sub mul fma neg abs min max` only.
    F16x2,
    /// bfloat16: 1 sign bit, the 8 exponent bits of an `f32` and 7 mantissa
    /// bits, the upper half of an `f32` (`cvt.rn.bf16.f32`, `add.bf16`).
    Bf16,
    /// Two bfloat16 values in 32 bits (`add.bf16x2`), element 0 in the low
    /// 16 bits, as `.f16x2`.
    Bf16x2,
    F32,
    F64,
}

/// How the bits of a scalar are interpreted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeKind {
    Predicate,
    Bits,
    Unsigned,
    Signed,
    Float,
}

impl ScalarType {
    /// Every type, in the order used for parsing and documentation.
    pub const ALL: [ScalarType; 19] = [
        ScalarType::Pred,
        ScalarType::B8,
        ScalarType::B16,
        ScalarType::B32,
        ScalarType::B64,
        ScalarType::U8,
        ScalarType::U16,
        ScalarType::U32,
        ScalarType::U64,
        ScalarType::S8,
        ScalarType::S16,
        ScalarType::S32,
        ScalarType::S64,
        ScalarType::F16,
        ScalarType::F16x2,
        ScalarType::Bf16,
        ScalarType::Bf16x2,
        ScalarType::F32,
        ScalarType::F64,
    ];

    /// The PTX spelling without the leading dot.
    pub fn name(self) -> &'static str {
        match self {
            ScalarType::Pred => "pred",
            ScalarType::B8 => "b8",
            ScalarType::B16 => "b16",
            ScalarType::B32 => "b32",
            ScalarType::B64 => "b64",
            ScalarType::U8 => "u8",
            ScalarType::U16 => "u16",
            ScalarType::U32 => "u32",
            ScalarType::U64 => "u64",
            ScalarType::S8 => "s8",
            ScalarType::S16 => "s16",
            ScalarType::S32 => "s32",
            ScalarType::S64 => "s64",
            ScalarType::F16 => "f16",
            ScalarType::F16x2 => "f16x2",
            ScalarType::Bf16 => "bf16",
            ScalarType::Bf16x2 => "bf16x2",
            ScalarType::F32 => "f32",
            ScalarType::F64 => "f64",
        }
    }

    /// Parses the spelling without the leading dot.
    pub fn from_name(name: &str) -> Option<ScalarType> {
        ScalarType::ALL.into_iter().find(|ty| ty.name() == name)
    }

    /// Size in bytes when stored in memory; a predicate has no memory form and reports 0.
    pub fn size_bytes(self) -> u32 {
        match self {
            ScalarType::Pred => 0,
            ScalarType::B8 | ScalarType::U8 | ScalarType::S8 => 1,
            ScalarType::B16
            | ScalarType::U16
            | ScalarType::S16
            | ScalarType::F16
            | ScalarType::Bf16 => 2,
            ScalarType::B32
            | ScalarType::U32
            | ScalarType::S32
            | ScalarType::F16x2
            | ScalarType::Bf16x2
            | ScalarType::F32 => 4,
            ScalarType::B64 | ScalarType::U64 | ScalarType::S64 | ScalarType::F64 => 8,
        }
    }

    /// Width in bits (1 for a predicate).
    pub fn bits(self) -> u32 {
        match self {
            ScalarType::Pred => 1,
            other => other.size_bytes() * 8,
        }
    }

    pub fn kind(self) -> TypeKind {
        match self {
            ScalarType::Pred => TypeKind::Predicate,
            ScalarType::B8 | ScalarType::B16 | ScalarType::B32 | ScalarType::B64 => TypeKind::Bits,
            ScalarType::U8 | ScalarType::U16 | ScalarType::U32 | ScalarType::U64 => {
                TypeKind::Unsigned
            }
            ScalarType::S8 | ScalarType::S16 | ScalarType::S32 | ScalarType::S64 => {
                TypeKind::Signed
            }
            ScalarType::F16
            | ScalarType::F16x2
            | ScalarType::Bf16
            | ScalarType::Bf16x2
            | ScalarType::F32
            | ScalarType::F64 => TypeKind::Float,
        }
    }

    /// The 16-bit float types and their pairs (`.f16 .f16x2 .bf16 .bf16x2`),
    /// which PTX moves as bits and the machine computes with on its own.
    pub fn is_half(self) -> bool {
        matches!(
            self,
            ScalarType::F16 | ScalarType::F16x2 | ScalarType::Bf16 | ScalarType::Bf16x2
        )
    }

    /// A pair of 16-bit floats in 32 bits (`.f16x2`, `.bf16x2`).
    pub fn is_half_pair(self) -> bool {
        matches!(self, ScalarType::F16x2 | ScalarType::Bf16x2)
    }

    pub fn is_float(self) -> bool {
        self.kind() == TypeKind::Float
    }

    pub fn is_signed(self) -> bool {
        self.kind() == TypeKind::Signed
    }

    /// Integer-like: bits, unsigned or signed.
    pub fn is_integer(self) -> bool {
        matches!(
            self.kind(),
            TypeKind::Bits | TypeKind::Unsigned | TypeKind::Signed
        )
    }

    /// Whether a register declared with `self` may hold an operand of type
    /// `operand`: the PTX rule is that sizes must match, a float register takes
    /// only float or bit types, and a predicate only a predicate.
    pub fn register_accepts(self, operand: ScalarType) -> bool {
        if self == ScalarType::Pred || operand == ScalarType::Pred {
            return self == operand;
        }
        if self.size_bytes() != operand.size_bytes() {
            return false;
        }
        match (self.kind(), operand.kind()) {
            (TypeKind::Float, TypeKind::Float | TypeKind::Bits) => true,
            (TypeKind::Float, _) => false,
            (_, TypeKind::Float) => self.kind() == TypeKind::Bits,
            _ => true,
        }
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A PTX state space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StateSpace {
    Global,
    Shared,
    Local,
    Param,
    Const,
    /// No space named: the address is decoded at run time (PTX "generic addressing").
    Generic,
}

impl StateSpace {
    pub fn name(self) -> &'static str {
        match self {
            StateSpace::Global => "global",
            StateSpace::Shared => "shared",
            StateSpace::Local => "local",
            StateSpace::Param => "param",
            StateSpace::Const => "const",
            StateSpace::Generic => "generic",
        }
    }

    /// The space a modifier names: `shared::cta` (PTX ISA 7.8's spelling
    /// of the block's own shared memory) is `.shared`; `shared::cluster`,
    /// another block's, is not modelled.
    pub fn from_name(name: &str) -> Option<StateSpace> {
        Some(match name {
            "global" => StateSpace::Global,
            "shared" | "shared::cta" => StateSpace::Shared,
            "local" => StateSpace::Local,
            "param" => StateSpace::Param,
            "const" => StateSpace::Const,
            _ => return None,
        })
    }
}

/// The set of threads a fence or a strong memory operation orders against
/// (PTX ISA, "Scope").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    Cta,
    /// The CTAs of one cluster (sm_90). warpsim launches one CTA per
    /// cluster, so the machine treats it as `.gpu`, the next wider scope it
    /// models, which is stronger, never weaker.
    Cluster,
    Gpu,
    Sys,
}

impl Scope {
    pub fn name(self) -> &'static str {
        match self {
            Scope::Cta => "cta",
            Scope::Cluster => "cluster",
            Scope::Gpu => "gpu",
            Scope::Sys => "sys",
        }
    }
}

/// One of the three dimensions of a grid or block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    X,
    Y,
    Z,
}

impl Dim {
    pub fn index(self) -> usize {
        match self {
            Dim::X => 0,
            Dim::Y => 1,
            Dim::Z => 2,
        }
    }

    fn suffix(self) -> &'static str {
        match self {
            Dim::X => "x",
            Dim::Y => "y",
            Dim::Z => "z",
        }
    }
}

/// The comparison a lane mask register selects (PTX `%lanemask_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LaneMaskKind {
    Eq,
    Lt,
    Le,
    Gt,
    Ge,
}

/// Read-only special registers (PTX ISA, "Special Registers").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpecialReg {
    Tid(Dim),
    Ntid(Dim),
    Ctaid(Dim),
    Nctaid(Dim),
    LaneId,
    WarpId,
    NWarpId,
    Clock,
    Clock64,
    LaneMask(LaneMaskKind),
}

impl SpecialReg {
    /// The type the register reads as.
    pub fn ty(self) -> ScalarType {
        match self {
            SpecialReg::Clock64 => ScalarType::U64,
            _ => ScalarType::U32,
        }
    }

    pub fn from_name(name: &str) -> Option<SpecialReg> {
        let dim = |suffix: &str| match suffix {
            "x" => Some(Dim::X),
            "y" => Some(Dim::Y),
            "z" => Some(Dim::Z),
            _ => None,
        };
        if let Some((base, suffix)) = name.split_once('.') {
            let dim = dim(suffix)?;
            return Some(match base {
                "%tid" => SpecialReg::Tid(dim),
                "%ntid" => SpecialReg::Ntid(dim),
                "%ctaid" => SpecialReg::Ctaid(dim),
                "%nctaid" => SpecialReg::Nctaid(dim),
                _ => return None,
            });
        }
        Some(match name {
            "%laneid" => SpecialReg::LaneId,
            "%warpid" => SpecialReg::WarpId,
            "%nwarpid" => SpecialReg::NWarpId,
            "%clock" => SpecialReg::Clock,
            "%clock64" => SpecialReg::Clock64,
            "%lanemask_eq" => SpecialReg::LaneMask(LaneMaskKind::Eq),
            "%lanemask_lt" => SpecialReg::LaneMask(LaneMaskKind::Lt),
            "%lanemask_le" => SpecialReg::LaneMask(LaneMaskKind::Le),
            "%lanemask_gt" => SpecialReg::LaneMask(LaneMaskKind::Gt),
            "%lanemask_ge" => SpecialReg::LaneMask(LaneMaskKind::Ge),
            _ => return None,
        })
    }

    /// Whether `name` (with its `%`) is reserved for a special register, so a
    /// user register may not take it.
    pub fn is_reserved_name(name: &str) -> bool {
        matches!(
            name,
            "%tid"
                | "%ntid"
                | "%ctaid"
                | "%nctaid"
                | "%laneid"
                | "%warpid"
                | "%nwarpid"
                | "%clock"
                | "%clock64"
        ) || name.starts_with("%lanemask_")
    }
}

impl fmt::Display for SpecialReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpecialReg::Tid(d) => write!(f, "%tid.{}", d.suffix()),
            SpecialReg::Ntid(d) => write!(f, "%ntid.{}", d.suffix()),
            SpecialReg::Ctaid(d) => write!(f, "%ctaid.{}", d.suffix()),
            SpecialReg::Nctaid(d) => write!(f, "%nctaid.{}", d.suffix()),
            SpecialReg::LaneId => f.write_str("%laneid"),
            SpecialReg::WarpId => f.write_str("%warpid"),
            SpecialReg::NWarpId => f.write_str("%nwarpid"),
            SpecialReg::Clock => f.write_str("%clock"),
            SpecialReg::Clock64 => f.write_str("%clock64"),
            SpecialReg::LaneMask(kind) => {
                let suffix = match kind {
                    LaneMaskKind::Eq => "eq",
                    LaneMaskKind::Lt => "lt",
                    LaneMaskKind::Le => "le",
                    LaneMaskKind::Gt => "gt",
                    LaneMaskKind::Ge => "ge",
                };
                write!(f, "%lanemask_{suffix}")
            }
        }
    }
}
