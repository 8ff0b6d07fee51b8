//! Integer dot products, carry chains and narrow-float conversions, in the grammar PTX and
//! `.kir` share: `dp4a`/`dp2a` (PTX ISA 9.7.1.23/24), the extended-precision
//! integer arithmetic `add.cc`, `addc`, `sub.cc`, `subc`, `mad.cc`, `madc`
//! (PTX ISA 9.7.2), `mad24` (PTX ISA 9.7.1.9), `redux.sync` on `.f32`
//! (PTX ISA 9.7.13.11), `cvt` to and from `.tf32`, `.e4m3x2` and
//! `.e5m2x2`, `cvt.relu` and `cvt.satfinite` to the half types (PTX ISA
//! 9.7.9.21), `tanh.approx` (PTX ISA 9.7.4.10/11), `ex2.approx` of the half
//! types (PTX ISA 9.7.4.9) and `min/max.xorsign.abs` (PTX ISA 9.7.4.6,
//! 9.7.3.8). Each is parsed here before the general opcodes, which would
//! reject their modifiers.

use super::*;

impl Parser<'_> {
    /// One of this module's instructions, or `None` when `mnemonic` with
    /// `mods` is not one of them (nothing is taken from `mods` then).
    pub(super) fn parse_scalar_extension(
        &mut self,
        scope: &KernelScope,
        mnemonic: &str,
        mods: &mut Modifiers,
        opcode: &Token,
    ) -> Result<Option<Op>> {
        let op = match mnemonic {
            "add" | "sub" if mods.has("cc") => {
                mods.take("cc");
                let op = if mnemonic == "add" {
                    CarryOp::Add
                } else {
                    CarryOp::Sub
                };
                self.parse_carry(scope, mnemonic, op, false, true, mods, opcode)?
            }
            "addc" | "subc" => {
                let carry_out = mods.take("cc");
                let op = if mnemonic == "addc" {
                    CarryOp::Add
                } else {
                    CarryOp::Sub
                };
                self.parse_carry(scope, mnemonic, op, true, carry_out, mods, opcode)?
            }
            "mad" if mods.has("cc") => {
                mods.take("cc");
                let op = self.take_carry_half(mnemonic, mods, opcode)?;
                self.parse_carry(scope, mnemonic, op, false, true, mods, opcode)?
            }
            "madc" => {
                let op = self.take_carry_half(mnemonic, mods, opcode)?;
                let carry_out = mods.take("cc");
                self.parse_carry(scope, mnemonic, op, true, carry_out, mods, opcode)?
            }
            "dp4a" | "dp2a" => self.parse_dot_product(scope, mnemonic, mods, opcode)?,
            "mad24" => {
                let hi = if mods.take("hi") {
                    true
                } else if mods.take("lo") {
                    false
                } else {
                    return Err(self.error_at(opcode, "`mad24` needs `.lo` or `.hi`"));
                };
                let saturate = mods.take("sat");
                let ty = self.take_type(mods, opcode)?;
                if !matches!(ty, ScalarType::U32 | ScalarType::S32) {
                    return Err(self.error_at(opcode, "`mad24` takes `.u32` or `.s32`"));
                }
                if saturate && !(hi && ty == ScalarType::S32) {
                    return Err(self.error_at(opcode, "`mad24` has `.sat` only in `.hi.s32`"));
                }
                let dst = self.parse_destination(scope)?;
                let [a, b, c] = self.parse_sources(scope, [ty; 3])?;
                Op::MulAdd24 {
                    hi,
                    saturate,
                    ty,
                    dst,
                    a,
                    b,
                    c,
                }
            }
            "redux" if mods.has("f32") => {
                if !mods.take("sync") {
                    return Err(self.error_at(opcode, "only `redux.sync` is supported"));
                }
                let max = if mods.take("max") {
                    true
                } else if mods.take("min") {
                    false
                } else {
                    return Err(
                        self.error_at(opcode, "`redux.sync` of `.f32` takes `.min` or `.max`")
                    );
                };
                let abs = mods.take("abs");
                let nan = mods.take("NaN");
                mods.take("f32");
                let dst = self.parse_destination(scope)?;
                let [a, mask] = self.parse_sources(scope, [ScalarType::F32, ScalarType::B32])?;
                Op::ReduxFloat {
                    max,
                    abs,
                    nan,
                    dst,
                    a,
                    mask,
                }
            }
            "cvt" if mods.has("tf32") => self.parse_cvt_tf32(scope, mods, opcode)?,
            "cvt" if mods.has("e4m3x2") || mods.has("e5m2x2") => {
                self.parse_cvt_fp8(scope, mods, opcode)?
            }
            "tanh" => {
                let ty = self.take_narrow_float_type(mnemonic, mods, opcode, true)?;
                self.parse_narrow_unary(scope, NarrowFloatFunction::Tanh, ty)?
            }
            "ex2"
                if ["f16", "f16x2", "bf16", "bf16x2"]
                    .iter()
                    .any(|name| mods.has(name)) =>
            {
                let ty = self.take_narrow_float_type(mnemonic, mods, opcode, false)?;
                let bfloat = matches!(ty, ScalarType::Bf16 | ScalarType::Bf16x2);
                // PTX has `ex2.approx.f16` and `ex2.approx.ftz.bf16`: the
                // flush is part of the bfloat16 form and absent from the half one.
                if mods.take("ftz") != bfloat {
                    let form = if bfloat {
                        "`ex2.approx` of bfloat16 needs `.ftz`"
                    } else {
                        "`ex2.approx` of `.f16` has no `.ftz` form"
                    };
                    return Err(self.error_at(opcode, form));
                }
                self.parse_narrow_unary(scope, NarrowFloatFunction::Ex2, ty)?
            }
            "min" | "max" if mods.has("xorsign") => {
                mods.take("xorsign");
                if !mods.take("abs") {
                    return Err(self.error_at(
                        opcode,
                        format!("`{mnemonic}.xorsign` needs `.abs` after it"),
                    ));
                }
                let nan = mods.take("NaN");
                let ty = self.take_narrow_float_type(mnemonic, mods, opcode, true)?;
                let function = if mnemonic == "min" {
                    NarrowFloatFunction::MinXorSignAbs { nan }
                } else {
                    NarrowFloatFunction::MaxXorSignAbs { nan }
                };
                let dst = self.parse_destination(scope)?;
                let [a, b] = self.parse_sources(scope, [ty, ty])?;
                Op::NarrowFloat {
                    function,
                    ty,
                    dst,
                    a,
                    b: Some(b),
                }
            }
            "cvt"
                if (mods.has("relu") || mods.has("satfinite"))
                    && mods.has("f32")
                    && (mods.has("f16")
                        || mods.has("f16x2")
                        || mods.has("bf16x2")
                        || (mods.has("bf16") && mods.has("satfinite"))) =>
            {
                self.parse_cvt_narrow(scope, mods, opcode)?
            }
            "cvt" if mods.has("relu") && mods.has("bf16") && mods.has("f32") => {
                let toward_zero = if mods.take("rz") {
                    true
                } else if mods.take("rn") {
                    false
                } else {
                    return Err(self.error_at(opcode, "`cvt.relu` to `.bf16` needs `.rn` or `.rz`"));
                };
                mods.take("relu");
                mods.take("bf16");
                mods.take("f32");
                let dst = self.parse_destination(scope)?;
                let [src] = self.parse_sources(scope, [ScalarType::F32])?;
                Op::CvtBf16Relu {
                    toward_zero,
                    dst,
                    src,
                }
            }
            _ => return Ok(None),
        };
        Ok(Some(op))
    }

    /// The type of `tanh`, `ex2` and the `xorsign` forms: a half type, or
    /// `.f32` where `single` allows it.
    fn take_narrow_float_type(
        &self,
        mnemonic: &str,
        mods: &mut Modifiers,
        opcode: &Token,
        single: bool,
    ) -> Result<ScalarType> {
        if mnemonic != "min" && mnemonic != "max" && !mods.take("approx") {
            return Err(self.error_at(opcode, format!("`{mnemonic}` needs `.approx`")));
        }
        let ty = self.take_type(mods, opcode)?;
        let allowed = match ty {
            ScalarType::F16 | ScalarType::F16x2 | ScalarType::Bf16 | ScalarType::Bf16x2 => true,
            ScalarType::F32 => single,
            _ => false,
        };
        if !allowed {
            let types = if single {
                "`.f32`, `.f16`, `.f16x2`, `.bf16` or `.bf16x2`"
            } else {
                "`.f16`, `.f16x2`, `.bf16` or `.bf16x2`"
            };
            return Err(self.error_at(
                opcode,
                format!("`{mnemonic}` here takes {types}, not `.{ty}`"),
            ));
        }
        Ok(ty)
    }

    /// The operands of `tanh` and `ex2` on narrow floats.
    fn parse_narrow_unary(
        &mut self,
        scope: &KernelScope,
        function: NarrowFloatFunction,
        ty: ScalarType,
    ) -> Result<Op> {
        let dst = self.parse_destination(scope)?;
        let [a] = self.parse_sources(scope, [ty])?;
        Ok(Op::NarrowFloat {
            function,
            ty,
            dst,
            a,
            b: None,
        })
    }

    /// `cvt.rn/.rz{.relu}{.satfinite}.ty.f32 d, a` to `.f16` or `.bf16`, and
    /// `d, a, b` to `.f16x2` or `.bf16x2`.
    fn parse_cvt_narrow(
        &mut self,
        scope: &KernelScope,
        mods: &mut Modifiers,
        opcode: &Token,
    ) -> Result<Op> {
        let toward_zero = if mods.take("rz") {
            true
        } else if mods.take("rn") {
            false
        } else {
            return Err(self.error_at(
                opcode,
                "`cvt.relu` and `cvt.satfinite` from `.f32` need `.rn` or `.rz`",
            ));
        };
        let relu = mods.take("relu");
        let satfinite = mods.take("satfinite");
        let ty = self.take_type(mods, opcode)?;
        let source = self.take_type(mods, opcode)?;
        if !matches!(
            ty,
            ScalarType::F16 | ScalarType::F16x2 | ScalarType::Bf16 | ScalarType::Bf16x2
        ) || source != ScalarType::F32
        {
            return Err(self.error_at(
                opcode,
                format!(
                    "`cvt.{ty}.{source}`: `.relu` and `.satfinite` convert `.f32` to `.f16`, `.f16x2`, `.bf16` or `.bf16x2`"
                ),
            ));
        }
        let dst = self.parse_destination(scope)?;
        let (a, b) = if matches!(ty, ScalarType::F16x2 | ScalarType::Bf16x2) {
            let [a, b] = self.parse_sources(scope, [ScalarType::F32, ScalarType::F32])?;
            (a, Some(b))
        } else {
            let [a] = self.parse_sources(scope, [ScalarType::F32])?;
            (a, None)
        };
        Ok(Op::NarrowFloat {
            function: NarrowFloatFunction::FromF32 {
                toward_zero,
                relu,
                satfinite,
            },
            ty,
            dst,
            a,
            b,
        })
    }

    /// `.lo` or `.hi` of `mad.cc` and `madc`.
    fn take_carry_half(
        &self,
        mnemonic: &str,
        mods: &mut Modifiers,
        opcode: &Token,
    ) -> Result<CarryOp> {
        if mods.take("lo") {
            Ok(CarryOp::MulAddLow)
        } else if mods.take("hi") {
            Ok(CarryOp::MulAddHigh)
        } else {
            Err(self.error_at(
                opcode,
                format!("`{mnemonic}` with a carry needs `.lo` or `.hi`"),
            ))
        }
    }

    /// The type and operands of an extended-precision instruction.
    #[allow(clippy::too_many_arguments)]
    fn parse_carry(
        &mut self,
        scope: &KernelScope,
        mnemonic: &str,
        op: CarryOp,
        carry_in: bool,
        carry_out: bool,
        mods: &mut Modifiers,
        opcode: &Token,
    ) -> Result<Op> {
        let ty = self.take_type(mods, opcode)?;
        if !matches!(
            ty,
            ScalarType::U32 | ScalarType::S32 | ScalarType::U64 | ScalarType::S64
        ) {
            return Err(self.error_at(
                opcode,
                format!("`{mnemonic}` takes `.u32`, `.s32`, `.u64` or `.s64`, not `.{ty}`"),
            ));
        }
        let dst = self.parse_destination(scope)?;
        let [a, b] = self.parse_sources(scope, [ty, ty])?;
        let c = match op {
            CarryOp::MulAddLow | CarryOp::MulAddHigh => {
                let [c] = self.parse_sources(scope, [ty])?;
                Some(c)
            }
            CarryOp::Add | CarryOp::Sub => None,
        };
        Ok(Op::CarryArith {
            op,
            carry_in,
            carry_out,
            ty,
            dst,
            a,
            b,
            c,
        })
    }

    /// `dp4a.atype.btype` and `dp2a.lo/.hi.atype.btype`.
    fn parse_dot_product(
        &mut self,
        scope: &KernelScope,
        mnemonic: &str,
        mods: &mut Modifiers,
        opcode: &Token,
    ) -> Result<Op> {
        let shape = if mnemonic == "dp4a" {
            DotProductShape::FourBytes
        } else if mods.take("lo") {
            DotProductShape::TwoHalvesLow
        } else if mods.take("hi") {
            DotProductShape::TwoHalvesHigh
        } else {
            return Err(self.error_at(opcode, "`dp2a` needs `.lo` or `.hi`"));
        };
        let mut signed = [false; 2];
        for (position, signed) in signed.iter_mut().enumerate() {
            let ty = self.take_type(mods, opcode)?;
            *signed = match ty {
                ScalarType::U32 => false,
                ScalarType::S32 => true,
                _ => {
                    let which = if position == 0 { "first" } else { "second" };
                    return Err(self.error_at(
                        opcode,
                        format!(
                            "`{mnemonic}`: the {which} type must be `.u32` or `.s32`, not `.{ty}`"
                        ),
                    ));
                }
            };
        }
        let [a_signed, b_signed] = signed;
        let result_ty = if a_signed || b_signed {
            ScalarType::S32
        } else {
            ScalarType::U32
        };
        let a_ty = if a_signed {
            ScalarType::S32
        } else {
            ScalarType::U32
        };
        let b_ty = if b_signed {
            ScalarType::S32
        } else {
            ScalarType::U32
        };
        let dst = self.parse_destination(scope)?;
        let [a, b, c] = self.parse_sources(scope, [a_ty, b_ty, result_ty])?;
        Ok(Op::DotProduct {
            shape,
            a_signed,
            b_signed,
            dst,
            a,
            b,
            c,
        })
    }

    /// `cvt.rna{.satfinite}.tf32.f32` and `cvt.rn/.rz{.satfinite}{.relu}.tf32.f32`.
    fn parse_cvt_tf32(
        &mut self,
        scope: &KernelScope,
        mods: &mut Modifiers,
        opcode: &Token,
    ) -> Result<Op> {
        let rounding = mods
            .take_map(|m| match m {
                "rna" => Some(Tf32Rounding::NearestAway),
                "rn" => Some(Tf32Rounding::NearestEven),
                "rz" => Some(Tf32Rounding::Zero),
                _ => None,
            })
            .ok_or_else(|| {
                self.error_at(opcode, "`cvt` to `.tf32` needs `.rna`, `.rn` or `.rz`")
            })?;
        let satfinite = mods.take("satfinite");
        let relu = mods.take("relu");
        if relu && rounding == Tf32Rounding::NearestAway {
            return Err(self.error_at(opcode, "`cvt.rna` to `.tf32` has no `.relu` form"));
        }
        if !mods.take("tf32") || !mods.take("f32") {
            return Err(self.error_at(opcode, "`cvt` to `.tf32` converts from `.f32` only"));
        }
        let dst = self.parse_destination(scope)?;
        let [src] = self.parse_sources(scope, [ScalarType::F32])?;
        Ok(Op::CvtTf32 {
            rounding,
            satfinite,
            relu,
            dst,
            src,
        })
    }

    /// `cvt.rn.satfinite{.relu}.fmt.f32 d, a, b`, `cvt.rn.satfinite{.relu}.fmt.f16x2
    /// d, a` and `cvt.rn{.relu}.f16x2.fmt d, a`, `fmt` being `e4m3x2` or `e5m2x2`.
    fn parse_cvt_fp8(
        &mut self,
        scope: &KernelScope,
        mods: &mut Modifiers,
        opcode: &Token,
    ) -> Result<Op> {
        if !mods.take("rn") {
            return Err(self.error_at(opcode, "`cvt` of 8-bit floats needs `.rn`"));
        }
        let satfinite = mods.take("satfinite");
        let relu = mods.take("relu");
        // The first of the two types is the destination's.
        let mut types = Vec::new();
        while let Some(name) = mods
            .take_map(|m| matches!(m, "e4m3x2" | "e5m2x2" | "f32" | "f16x2").then(|| m.to_string()))
        {
            types.push(name);
        }
        let format_of = |name: &str| match name {
            "e4m3x2" => Some(Fp8Format::E4m3),
            "e5m2x2" => Some(Fp8Format::E5m2),
            _ => None,
        };
        let pair = match types.as_slice() {
            [dst, src] => (dst.as_str(), src.as_str()),
            _ => {
                return Err(self.error_at(
                    opcode,
                    "`cvt` of 8-bit floats needs a destination and a source type",
                ))
            }
        };
        match pair {
            (dst, source @ ("f32" | "f16x2")) if format_of(dst).is_some() => {
                if !satfinite {
                    return Err(self.error_at(
                        opcode,
                        format!("`cvt` to `.{dst}` needs `.rn.satfinite`"),
                    ));
                }
                let format = format_of(dst).unwrap_or(Fp8Format::E4m3);
                let register = self.parse_destination(scope)?;
                let (a, b) = if source == "f32" {
                    let [a, b] = self.parse_sources(scope, [ScalarType::F32, ScalarType::F32])?;
                    (a, Some(b))
                } else {
                    let [a] = self.parse_sources(scope, [ScalarType::F16x2])?;
                    (a, None)
                };
                Ok(Op::CvtToFp8 {
                    format,
                    relu,
                    dst: register,
                    a,
                    b,
                })
            }
            ("f16x2", src) if format_of(src).is_some() => {
                if satfinite {
                    return Err(self.error_at(
                        opcode,
                        format!("`cvt` from `.{src}` has no `.satfinite` form"),
                    ));
                }
                let format = format_of(src).unwrap_or(Fp8Format::E4m3);
                let dst = self.parse_destination(scope)?;
                let [src] = self.parse_sources(scope, [ScalarType::B16])?;
                Ok(Op::CvtFromFp8 {
                    format,
                    relu,
                    dst,
                    src,
                })
            }
            (dst, src) => Err(self.error_at(
                opcode,
                format!(
                    "`cvt.{dst}.{src}`: 8-bit floats convert from `.f32` or `.f16x2`, and to `.f16x2`"
                ),
            )),
        }
    }
}
