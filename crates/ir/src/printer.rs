//! Writes a [`Module`] back as `.kir` text. The output parses back to an equal
//! module (`parse(print(m)) == m`): every location is written with an explicit
//! `.loc`, every literal in a form that reads back to the same bits.

use std::fmt::{self, Write};

use crate::instr::*;
use crate::kernel::*;
use crate::types::{ScalarType, StateSpace, TypeKind};

/// The whole module as `.kir` text.
pub fn print_module(module: &Module) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = write_module(&mut out, module);
    out
}

/// One instruction as it appears in a `.kir` file, without location or `;`:
/// the text reports show beside their counts.
pub fn instruction_text(kernel: &Kernel, instr: &Instr) -> String {
    let mut out = String::new();
    let _ = write_instruction(&mut out, kernel, instr);
    out
}

fn write_module(out: &mut String, module: &Module) -> fmt::Result {
    for (index, file) in module.files.iter().enumerate() {
        writeln!(out, ".file {index} \"{file}\"")?;
    }
    let mut last_loc = None;
    for kernel in &module.kernels {
        writeln!(out)?;
        write_loc(out, module, &mut last_loc, kernel.loc, "")?;
        write!(out, ".kernel {}(", kernel.name)?;
        for (position, (_, param)) in kernel.params().enumerate() {
            if position > 0 {
                write!(out, ", ")?;
            }
            if param.align > param.ty.size_bytes() {
                write!(out, ".param .align {} ", param.align)?;
            } else {
                write!(out, ".param ")?;
            }
            write!(out, ".{} {}", param.ty, param.name)?;
            if param.is_array {
                write!(out, "[{}]", param.len.unwrap_or(1))?;
            }
        }
        writeln!(out, ")")?;
        writeln!(out, "{{")?;
        for symbol in kernel
            .symbols
            .iter()
            .filter(|s| s.space != StateSpace::Param)
        {
            write_loc(out, module, &mut last_loc, symbol.loc, "    ")?;
            let prefix = if symbol.len.is_none() { ".extern " } else { "" };
            write!(
                out,
                "    {prefix}.{} .align {} .{} {}",
                symbol.space.name(),
                symbol.align,
                symbol.ty,
                symbol.name
            )?;
            match (symbol.is_array, symbol.len) {
                (true, Some(len)) => write!(out, "[{len}]")?,
                (true, None) => write!(out, "[]")?,
                (false, _) => {}
            }
            if !symbol.init.is_empty() {
                let values: Vec<String> = symbol
                    .init
                    .iter()
                    .map(|&bits| literal_text(bits, symbol.ty))
                    .collect();
                if symbol.is_array {
                    write!(out, " = {{{}}}", values.join(", "))?;
                } else {
                    write!(out, " = {}", values.join(", "))?;
                }
            }
            writeln!(out, ";")?;
        }
        let mut position = 0;
        while position < kernel.regs.len() {
            let ty = kernel.regs[position].ty;
            let run_end = kernel.regs[position..]
                .iter()
                .position(|reg| reg.ty != ty)
                .map_or(kernel.regs.len(), |length| position + length);
            // Long runs are split so that lines stay readable.
            for chunk in kernel.regs[position..run_end].chunks(16) {
                let names: Vec<&str> = chunk.iter().map(|reg| reg.name.as_str()).collect();
                writeln!(out, "    .reg .{ty} {};", names.join(", "))?;
            }
            position = run_end;
        }
        let labels_at = labels_by_position(kernel);
        for (index, instr) in kernel.instrs.iter().enumerate() {
            write_labels(out, &labels_at[index])?;
            write_loc(out, module, &mut last_loc, instr.loc, "    ")?;
            write!(out, "    ")?;
            write_instruction(out, kernel, instr)?;
            writeln!(out, ";")?;
        }
        write_labels(out, &labels_at[kernel.instrs.len()])?;
        writeln!(out, "}}")?;
    }
    Ok(())
}

fn write_loc(
    out: &mut String,
    module: &Module,
    last: &mut Option<SourceLoc>,
    loc: SourceLoc,
    indent: &str,
) -> fmt::Result {
    if *last != Some(loc) {
        write!(out, "{indent}.loc {} {}", loc.file.0, loc.line)?;
        for &(file, line) in &module.inline_chain(loc)[1..] {
            write!(out, " inlined_at {} {line}", file.0)?;
        }
        writeln!(out)?;
        *last = Some(loc);
    }
    Ok(())
}

/// For each instruction and for the end of the kernel, the names of the
/// labels there in declaration order, gathered in one pass over the labels.
/// A label past the end (which the verifier reports) is not printed.
fn labels_by_position(kernel: &Kernel) -> Vec<Vec<&str>> {
    let mut labels_at = vec![Vec::new(); kernel.instrs.len() + 1];
    for label in &kernel.labels {
        if let Some(names) = labels_at.get_mut(label.target.index()) {
            names.push(label.name.as_str());
        }
    }
    labels_at
}

fn write_labels(out: &mut String, names: &[&str]) -> fmt::Result {
    for name in names {
        writeln!(out, "{name}:")?;
    }
    Ok(())
}

fn write_instruction(out: &mut String, kernel: &Kernel, instr: &Instr) -> fmt::Result {
    if let Some(guard) = instr.guard {
        let bang = if guard.negated { "!" } else { "" };
        write!(out, "@{bang}{} ", kernel.reg(guard.reg).name)?;
    }
    let reg = |id: RegId| kernel.reg(id).name.as_str();
    let operand = |operand: &Operand| operand_text(kernel, operand);
    let pred = |p: &PredOperand| {
        format!(
            "{}{}",
            if p.negated { "!" } else { "" },
            operand_text(kernel, &p.value)
        )
    };
    match &instr.op {
        Op::Binary {
            op,
            ty,
            saturate,
            dst,
            a,
            b,
        } => {
            let name = match op {
                BinaryOp::Add => "add",
                BinaryOp::Sub => "sub",
                BinaryOp::Mul if ty.is_float() => "mul",
                BinaryOp::Mul => "mul.lo",
                BinaryOp::MulHi => "mul.hi",
                BinaryOp::MulWide => "mul.wide",
                BinaryOp::Div if ty.is_float() => "div.rn",
                BinaryOp::Div => "div",
                BinaryOp::Rem => "rem",
                BinaryOp::Min => "min",
                BinaryOp::Max => "max",
                BinaryOp::MinNan => "min.NaN",
                BinaryOp::MaxNan => "max.NaN",
                BinaryOp::And => "and",
                BinaryOp::Or => "or",
                BinaryOp::Xor => "xor",
                BinaryOp::Shl => "shl",
                BinaryOp::Shr => "shr",
            };
            let sat = if *saturate { ".sat" } else { "" };
            write!(
                out,
                "{name}{sat}.{ty} {}, {}, {}",
                reg(*dst),
                operand(a),
                operand(b)
            )
        }
        Op::Unary { op, ty, dst, a } => {
            let name = match op {
                UnaryOp::Mov => "mov",
                UnaryOp::Neg => "neg",
                UnaryOp::Abs => "abs",
                UnaryOp::Not => "not",
                UnaryOp::Popc => "popc",
                UnaryOp::Clz => "clz",
                UnaryOp::Brev => "brev",
                UnaryOp::Sqrt => "sqrt.rn",
                UnaryOp::Rcp => "rcp.rn",
                UnaryOp::Rsqrt => "rsqrt.approx",
                UnaryOp::Ex2 => "ex2.approx",
                UnaryOp::Lg2 => "lg2.approx",
                UnaryOp::Sin => "sin.approx",
                UnaryOp::Cos => "cos.approx",
                UnaryOp::Bfind => "bfind",
                UnaryOp::BfindShiftAmount => "bfind.shiftamt",
            };
            write!(out, "{name}.{ty} {}, {}", reg(*dst), operand(a))
        }
        Op::MulAdd {
            mode,
            ty,
            saturate,
            dst,
            a,
            b,
            c,
        } => {
            let name = match mode {
                MulAddMode::Lo => "mad.lo".to_string(),
                MulAddMode::Hi => "mad.hi".to_string(),
                MulAddMode::Wide => "mad.wide".to_string(),
                MulAddMode::Fused => "fma.rn".to_string(),
                MulAddMode::FusedRelu => "fma.rn.relu".to_string(),
                MulAddMode::FusedDirected(rounding) => format!("fma.{}", rounding.name()),
            };
            let sat = if *saturate { ".sat" } else { "" };
            write!(
                out,
                "{name}{sat}.{ty} {}, {}, {}, {}",
                reg(*dst),
                operand(a),
                operand(b),
                operand(c)
            )
        }
        Op::Setp {
            cmp,
            ty,
            dst,
            dst_not,
            a,
            b,
            combine,
        } => {
            write!(out, "setp.{}", cmp.name())?;
            if let Some((op, _)) = combine {
                write!(out, ".{}", op.name())?;
            }
            write!(out, ".{ty} {}", reg(*dst))?;
            if let Some(q) = dst_not {
                write!(out, "|{}", reg(*q))?;
            }
            write!(out, ", {}, {}", operand(a), operand(b))?;
            if let Some((_, c)) = combine {
                write!(out, ", {}", pred(c))?;
            }
            Ok(())
        }
        Op::Set {
            cmp,
            dst_ty,
            src_ty,
            dst,
            a,
            b,
            combine,
        } => {
            write!(out, "set.{}", cmp.name())?;
            if let Some((op, _)) = combine {
                write!(out, ".{}", op.name())?;
            }
            write!(
                out,
                ".{dst_ty}.{src_ty} {}, {}, {}",
                reg(*dst),
                operand(a),
                operand(b)
            )?;
            if let Some((_, c)) = combine {
                write!(out, ", {}", pred(c))?;
            }
            Ok(())
        }
        Op::Selp {
            ty,
            dst,
            a,
            b,
            cond,
        } => write!(
            out,
            "selp.{ty} {}, {}, {}, {}",
            reg(*dst),
            operand(a),
            operand(b),
            pred(cond)
        ),
        Op::Cvt {
            dst_ty,
            src_ty,
            rounding,
            saturate,
            dst,
            src,
        } => {
            write!(out, "cvt")?;
            if let Some(rounding) = rounding {
                write!(out, ".{}", rounding.name())?;
            }
            if *saturate {
                write!(out, ".sat")?;
            }
            write!(out, ".{dst_ty}.{src_ty} {}, {}", reg(*dst), operand(src))
        }
        Op::CvtPair {
            dst_ty,
            rounding,
            dst,
            a,
            b,
        } => write!(
            out,
            "cvt.{}.{dst_ty}.f32 {}, {}, {}",
            rounding.name(),
            reg(*dst),
            operand(a),
            operand(b)
        ),
        Op::Load {
            space,
            order,
            ty,
            dst,
            addr,
        } => {
            write!(out, "ld")?;
            write_access_modifiers(out, *space, *order, dst.len())?;
            write!(out, ".{ty} ")?;
            if dst.len() == 1 {
                write!(out, "{}", reg(dst[0]))?;
            } else {
                let names: Vec<&str> = dst.iter().map(|&r| reg(r)).collect();
                write!(out, "{{{}}}", names.join(", "))?;
            }
            write!(out, ", {}", address_text(kernel, addr))
        }
        Op::Store {
            space,
            order,
            ty,
            addr,
            src,
        } => {
            write!(out, "st")?;
            write_access_modifiers(out, *space, *order, src.len())?;
            write!(out, ".{ty} {}, ", address_text(kernel, addr))?;
            if src.len() == 1 {
                write!(out, "{}", operand(&src[0]))
            } else {
                let values: Vec<String> = src.iter().map(operand).collect();
                write!(out, "{{{}}}", values.join(", "))
            }
        }
        Op::Atom {
            space,
            order,
            op,
            ty,
            dst,
            addr,
            a,
            b,
        } => {
            write!(out, "{}", if dst.is_some() { "atom" } else { "red" })?;
            // PTX's default, `.relaxed.gpu`, is left unwritten, as most
            // atomics are written.
            if order.semantics != AtomicSemantics::Relaxed {
                write!(out, ".{}", order.semantics.name())?;
            }
            if order.scope != crate::types::Scope::Gpu {
                write!(out, ".{}", order.scope.name())?;
            }
            if *space != StateSpace::Generic {
                write!(out, ".{}", space.name())?;
            }
            // PTX spells the half-precision additions `.noftz`; the IR
            // keeps no trace of it, and writes it back for those types.
            let noftz = if ty.is_half() { ".noftz" } else { "" };
            write!(out, ".{}{noftz}.{ty} ", op.name())?;
            if let Some(dst) = dst {
                write!(out, "{}, ", reg(*dst))?;
            }
            write!(out, "{}, {}", address_text(kernel, addr), operand(a))?;
            if let Some(b) = b {
                write!(out, ", {}", operand(b))?;
            }
            Ok(())
        }
        Op::Barrier {
            kind,
            id,
            count,
            reduction,
        } => {
            match kind {
                BarrierKind::Sync => write!(out, "bar.sync ")?,
                BarrierKind::Arrive => write!(out, "bar.arrive ")?,
                BarrierKind::Reduce(BarrierReduction::Popc) => write!(out, "bar.red.popc.u32 ")?,
                BarrierKind::Reduce(BarrierReduction::And) => write!(out, "bar.red.and.pred ")?,
                BarrierKind::Reduce(BarrierReduction::Or) => write!(out, "bar.red.or.pred ")?,
            }
            if let Some((dst, _)) = reduction {
                write!(out, "{}, ", reg(*dst))?;
            }
            write!(out, "{}", operand(id))?;
            if let Some(count) = count {
                write!(out, ", {}", operand(count))?;
            }
            if let Some((_, p)) = reduction {
                write!(out, ", {}", pred(p))?;
            }
            Ok(())
        }
        Op::WarpSync { mask } => write!(out, "bar.warp.sync {}", operand(mask)),
        Op::Fence { kind, scope } => match kind {
            FenceKind::Membar => {
                let scope = match scope {
                    crate::types::Scope::Cta => "cta",
                    // `membar` has no cluster form; the parser never makes one.
                    crate::types::Scope::Cluster => "cluster",
                    crate::types::Scope::Gpu => "gl",
                    crate::types::Scope::Sys => "sys",
                };
                write!(out, "membar.{scope}")
            }
            FenceKind::SequentiallyConsistent => write!(out, "fence.sc.{}", scope.name()),
            FenceKind::AcquireRelease => write!(out, "fence.acq_rel.{}", scope.name()),
        },
        Op::Shuffle {
            mode,
            dst,
            dst_pred,
            a,
            b,
            c,
            mask,
        } => {
            write!(out, "shfl.sync.{}.b32 {}", mode.name(), reg(*dst))?;
            if let Some(p) = dst_pred {
                write!(out, "|{}", reg(*p))?;
            }
            write!(
                out,
                ", {}, {}, {}, {}",
                operand(a),
                operand(b),
                operand(c),
                operand(mask)
            )
        }
        Op::Vote {
            mode,
            dst,
            pred: p,
            mask,
        } => {
            let ty = if *mode == VoteMode::Ballot {
                "b32"
            } else {
                "pred"
            };
            write!(
                out,
                "vote.sync.{}.{ty} {}, {}, {}",
                mode.name(),
                reg(*dst),
                pred(p),
                operand(mask)
            )
        }
        Op::Mul24 { hi, ty, dst, a, b } => write!(
            out,
            "mul24.{}.{ty} {}, {}, {}",
            if *hi { "hi" } else { "lo" },
            reg(*dst),
            operand(a),
            operand(b)
        ),
        Op::Sad { ty, dst, a, b, c } => write!(
            out,
            "sad.{ty} {}, {}, {}, {}",
            reg(*dst),
            operand(a),
            operand(b),
            operand(c)
        ),
        Op::Testp { class, ty, dst, a } => write!(
            out,
            "testp.{}.{ty} {}, {}",
            class.name(),
            reg(*dst),
            operand(a)
        ),
        Op::CopySign { ty, dst, a, b } => write!(
            out,
            "copysign.{ty} {}, {}, {}",
            reg(*dst),
            operand(a),
            operand(b)
        ),
        Op::Redux {
            op,
            ty,
            dst,
            a,
            mask,
        } => write!(
            out,
            "redux.sync.{}.{ty} {}, {}, {}",
            op.name(),
            reg(*dst),
            operand(a),
            operand(mask)
        ),
        Op::Match {
            all,
            ty,
            dst,
            dst_pred,
            a,
            mask,
        } => {
            let mode = if *all { "all" } else { "any" };
            write!(out, "match.{mode}.sync.{ty} {}", reg(*dst))?;
            if let Some(p) = dst_pred {
                write!(out, "|{}", reg(*p))?;
            }
            write!(out, ", {}, {}", operand(a), operand(mask))
        }
        Op::Branch { target } => write!(out, "bra {}", kernel.label(*target).name),
        Op::BitFieldExtract {
            ty,
            dst,
            a,
            position,
            length,
        } => write!(
            out,
            "bfe.{ty} {}, {}, {}, {}",
            reg(*dst),
            operand(a),
            operand(position),
            operand(length)
        ),
        Op::BitFieldInsert {
            ty,
            dst,
            field,
            base,
            position,
            length,
        } => write!(
            out,
            "bfi.{ty} {}, {}, {}, {}, {}",
            reg(*dst),
            operand(field),
            operand(base),
            operand(position),
            operand(length)
        ),
        Op::Permute {
            dst,
            a,
            b,
            selector,
        } => write!(
            out,
            "prmt.b32 {}, {}, {}, {}",
            reg(*dst),
            operand(a),
            operand(b),
            operand(selector)
        ),
        Op::FunnelShift {
            left,
            clamp,
            dst,
            a,
            b,
            c,
        } => write!(
            out,
            "shf.{}.{}.b32 {}, {}, {}, {}",
            if *left { "l" } else { "r" },
            if *clamp { "clamp" } else { "wrap" },
            reg(*dst),
            operand(a),
            operand(b),
            operand(c)
        ),
        Op::Lop3 { dst, a, b, c, lut } => write!(
            out,
            "lop3.b32 {}, {}, {}, {}, {lut:#04x}",
            reg(*dst),
            operand(a),
            operand(b),
            operand(c)
        ),
        Op::Pack { ty, dst, src } => {
            let values: Vec<String> = src.iter().map(operand).collect();
            write!(out, "mov.{ty} {}, {{{}}}", reg(*dst), values.join(", "))
        }
        Op::Unpack { ty, dst, src } => {
            let names: Vec<&str> = dst.iter().map(|reg_id| reg_id.map_or("_", reg)).collect();
            write!(out, "mov.{ty} {{{}}}, {}", names.join(", "), operand(src))
        }
        Op::ActiveMask { dst } => write!(out, "activemask.b32 {}", reg(*dst)),
        Op::Cvta {
            space,
            to_generic,
            ty,
            dst,
            src,
        } => {
            let to = if *to_generic { "" } else { "to." };
            write!(
                out,
                "cvta.{to}{}.{ty} {}, {}",
                space.name(),
                reg(*dst),
                operand(src)
            )
        }
        Op::Printf {
            dst,
            format,
            arguments,
        } => write!(
            out,
            "vprintf.b32 {}, {}, {}",
            dst.map_or("_", reg),
            operand(format),
            operand(arguments)
        ),
        Op::AssertFail {
            message,
            file,
            line,
            function,
        } => write!(
            out,
            "assertfail {}, {}, {}, {}",
            operand(message),
            operand(file),
            operand(line),
            operand(function)
        ),
        Op::Trap => write!(out, "trap"),
        Op::NanoSleep { duration } => write!(out, "nanosleep.u32 {}", operand(duration)),
        Op::Exit => write!(out, "exit"),
        // Integer dot products, carry chains, mad24, redux.sync.f32 and narrow-float conversions.
        Op::DotProduct {
            shape,
            a_signed,
            b_signed,
            dst,
            a,
            b,
            c,
        } => {
            let opcode = match shape {
                DotProductShape::FourBytes => "dp4a",
                DotProductShape::TwoHalvesLow => "dp2a.lo",
                DotProductShape::TwoHalvesHigh => "dp2a.hi",
            };
            let sign = |signed: bool| if signed { "s32" } else { "u32" };
            write!(
                out,
                "{opcode}.{}.{} {}, {}, {}, {}",
                sign(*a_signed),
                sign(*b_signed),
                reg(*dst),
                operand(a),
                operand(b),
                operand(c)
            )
        }
        Op::CarryArith {
            op,
            carry_in,
            carry_out,
            ty,
            dst,
            a,
            b,
            c,
        } => {
            let base = match op {
                CarryOp::Add => "add",
                CarryOp::Sub => "sub",
                CarryOp::MulAddLow | CarryOp::MulAddHigh => "mad",
            };
            let carry = if *carry_in { "c" } else { "" };
            let half = match op {
                CarryOp::MulAddLow => ".lo",
                CarryOp::MulAddHigh => ".hi",
                CarryOp::Add | CarryOp::Sub => "",
            };
            let cc = if *carry_out { ".cc" } else { "" };
            write!(
                out,
                "{base}{carry}{half}{cc}.{ty} {}, {}, {}",
                reg(*dst),
                operand(a),
                operand(b)
            )?;
            if let Some(c) = c {
                write!(out, ", {}", operand(c))?;
            }
            Ok(())
        }
        Op::MulAdd24 {
            hi,
            saturate,
            ty,
            dst,
            a,
            b,
            c,
        } => write!(
            out,
            "mad24.{}{}.{ty} {}, {}, {}, {}",
            if *hi { "hi" } else { "lo" },
            if *saturate { ".sat" } else { "" },
            reg(*dst),
            operand(a),
            operand(b),
            operand(c)
        ),
        Op::ReduxFloat {
            max,
            abs,
            nan,
            dst,
            a,
            mask,
        } => write!(
            out,
            "redux.sync.{}{}{}.f32 {}, {}, {}",
            if *max { "max" } else { "min" },
            if *abs { ".abs" } else { "" },
            if *nan { ".NaN" } else { "" },
            reg(*dst),
            operand(a),
            operand(mask)
        ),
        Op::CvtTf32 {
            rounding,
            satfinite,
            relu,
            dst,
            src,
        } => write!(
            out,
            "cvt.{}{}{}.tf32.f32 {}, {}",
            rounding.name(),
            if *satfinite { ".satfinite" } else { "" },
            if *relu { ".relu" } else { "" },
            reg(*dst),
            operand(src)
        ),
        Op::CvtToFp8 {
            format,
            relu,
            dst,
            a,
            b,
        } => {
            let relu = if *relu { ".relu" } else { "" };
            let source = if b.is_some() { "f32" } else { "f16x2" };
            write!(
                out,
                "cvt.rn.satfinite{relu}.{}.{source} {}, {}",
                format.pair_name(),
                reg(*dst),
                operand(a)
            )?;
            if let Some(b) = b {
                write!(out, ", {}", operand(b))?;
            }
            Ok(())
        }
        Op::CvtBf16Relu {
            toward_zero,
            dst,
            src,
        } => write!(
            out,
            "cvt.{}.relu.bf16.f32 {}, {}",
            if *toward_zero { "rz" } else { "rn" },
            reg(*dst),
            operand(src)
        ),
        Op::CvtFromFp8 {
            format,
            relu,
            dst,
            src,
        } => write!(
            out,
            "cvt.rn{}.f16x2.{} {}, {}",
            if *relu { ".relu" } else { "" },
            format.pair_name(),
            reg(*dst),
            operand(src)
        ),
        // Asynchronous copies and mbarriers.
        Op::CpAsync {
            bypass_l1,
            size,
            dst,
            src,
            src_size,
            ignore_src,
            cache_policy,
            prefetch,
        } => {
            let cache = if *bypass_l1 { "cg" } else { "ca" };
            write!(out, "cp.async.{cache}.shared.global")?;
            if cache_policy.is_some() {
                write!(out, ".L2::cache_hint")?;
            }
            if let Some(bytes) = prefetch {
                write!(out, ".L2::{bytes}B")?;
            }
            write!(
                out,
                " {}, {}, {size}",
                address_text(kernel, dst),
                address_text(kernel, src)
            )?;
            if let Some(src_size) = src_size {
                write!(out, ", {}", operand(src_size))?;
            }
            if let Some(ignore_src) = ignore_src {
                write!(out, ", {}", pred(ignore_src))?;
            }
            if let Some(policy) = cache_policy {
                write!(out, ", {}", operand(policy))?;
            }
            Ok(())
        }
        Op::CpAsyncCommitGroup => write!(out, "cp.async.commit_group"),
        Op::CpAsyncWait { pending: None } => write!(out, "cp.async.wait_all"),
        Op::CpAsyncWait {
            pending: Some(pending),
        } => write!(out, "cp.async.wait_group {pending}"),
        Op::CpAsyncMbarrierArrive { noinc, addr } => write!(
            out,
            "cp.async.mbarrier.arrive{}.shared.b64 {}",
            if *noinc { ".noinc" } else { "" },
            address_text(kernel, addr)
        ),
        Op::CpAsyncBulk {
            dst,
            src,
            size,
            mbarrier,
        } => write!(
            out,
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes {}, {}, {}, {}",
            address_text(kernel, dst),
            address_text(kernel, src),
            operand(size),
            address_text(kernel, mbarrier)
        ),
        Op::Mbarrier { op, space, addr } => {
            write!(out, "mbarrier.{}", op.name())?;
            if *space != StateSpace::Generic {
                write!(out, ".{}", space.name())?;
            }
            write!(out, ".b64 ")?;
            let addr = address_text(kernel, addr);
            match op {
                MbarrierOp::Init { count: value }
                | MbarrierOp::ExpectTx { bytes: value }
                | MbarrierOp::CompleteTx { bytes: value } => {
                    write!(out, "{addr}, {}", operand(value))
                }
                MbarrierOp::Invalidate => write!(out, "{addr}"),
                MbarrierOp::Arrive {
                    state,
                    count,
                    expect_tx,
                    ..
                } => {
                    write!(out, "{}, {addr}", state.map_or("_", reg))?;
                    if let Some(extra) = count.as_ref().or(expect_tx.as_ref()) {
                        write!(out, ", {}", operand(extra))?;
                    }
                    Ok(())
                }
                MbarrierOp::Wait {
                    done,
                    phase,
                    suspend_hint,
                    ..
                } => {
                    write!(out, "{}, {addr}, {}", reg(*done), operand(phase))?;
                    if let Some(hint) = suspend_hint {
                        write!(out, ", {}", operand(hint))?;
                    }
                    Ok(())
                }
            }
        }
        Op::MbarrierPendingCount { dst, state } => write!(
            out,
            "mbarrier.pending_count.b64 {}, {}",
            reg(*dst),
            operand(state)
        ),
        Op::NarrowFloat {
            function,
            ty,
            dst,
            a,
            b,
        } => {
            let bfloat = matches!(ty, ScalarType::Bf16 | ScalarType::Bf16x2);
            match function {
                NarrowFloatFunction::Tanh => write!(out, "tanh.approx.{ty}")?,
                NarrowFloatFunction::Ex2 if bfloat => write!(out, "ex2.approx.ftz.{ty}")?,
                NarrowFloatFunction::Ex2 => write!(out, "ex2.approx.{ty}")?,
                NarrowFloatFunction::MinXorSignAbs { nan } => write!(
                    out,
                    "min{}.xorsign.abs.{ty}",
                    if *nan { ".NaN" } else { "" }
                )?,
                NarrowFloatFunction::MaxXorSignAbs { nan } => write!(
                    out,
                    "max{}.xorsign.abs.{ty}",
                    if *nan { ".NaN" } else { "" }
                )?,
                NarrowFloatFunction::FromF32 {
                    toward_zero,
                    relu,
                    satfinite,
                } => write!(
                    out,
                    "cvt.{}{}{}.{ty}.f32",
                    if *toward_zero { "rz" } else { "rn" },
                    if *relu { ".relu" } else { "" },
                    if *satfinite { ".satfinite" } else { "" }
                )?,
            }
            write!(out, " {}, {}", reg(*dst), operand(a))?;
            if let Some(b) = b {
                write!(out, ", {}", operand(b))?;
            }
            Ok(())
        }
        // Tensor-core instructions.
        Op::MatrixLoad {
            space,
            transpose,
            dst,
            addr,
        } => {
            write!(out, "ldmatrix")?;
            write_matrix_modifiers(out, dst.len(), *transpose, *space)?;
            write!(
                out,
                " {}, {}",
                register_list(kernel, dst),
                address_text(kernel, addr)
            )
        }
        Op::MatrixStore {
            space,
            transpose,
            addr,
            src,
        } => {
            write!(out, "stmatrix")?;
            write_matrix_modifiers(out, src.len(), *transpose, *space)?;
            write!(
                out,
                " {}, {}",
                address_text(kernel, addr),
                register_list(kernel, src)
            )
        }
        Op::MatrixMultiplyAccumulate {
            shape,
            satfinite,
            d_type,
            a_type,
            b_type,
            c_type,
            d,
            a,
            b,
            c,
        } => write!(
            out,
            "mma.sync.aligned.{}.row.col{}.{}.{}.{}.{} {}, {}, {}, {}",
            shape.name(),
            if *satfinite { ".satfinite" } else { "" },
            d_type.name(),
            a_type.name(),
            b_type.name(),
            c_type.name(),
            register_list(kernel, d),
            register_list(kernel, a),
            register_list(kernel, b),
            register_list(kernel, c)
        ),
        Op::WmmaLoad {
            matrix,
            layout,
            space,
            ty,
            dst,
            addr,
            stride,
        } => {
            write!(
                out,
                "wmma.load.{}.sync.aligned.{}.m16n16k16",
                matrix.name(),
                layout.name()
            )?;
            if *space != StateSpace::Generic {
                write!(out, ".{}", space.name())?;
            }
            write!(
                out,
                ".{} {}, {}",
                ty.name(),
                register_list(kernel, dst),
                address_text(kernel, addr)
            )?;
            match stride {
                Some(stride) => write!(out, ", {}", operand(stride)),
                None => Ok(()),
            }
        }
        Op::WmmaStore {
            layout,
            space,
            ty,
            addr,
            src,
            stride,
        } => {
            write!(out, "wmma.store.d.sync.aligned.{}.m16n16k16", layout.name())?;
            if *space != StateSpace::Generic {
                write!(out, ".{}", space.name())?;
            }
            write!(
                out,
                ".{} {}, {}",
                ty.name(),
                address_text(kernel, addr),
                register_list(kernel, src)
            )?;
            match stride {
                Some(stride) => write!(out, ", {}", operand(stride)),
                None => Ok(()),
            }
        }
        Op::WmmaMma {
            a_layout,
            b_layout,
            input_type,
            d_type,
            c_type,
            d,
            a,
            b,
            c,
        } => {
            write!(
                out,
                "wmma.mma.sync.aligned.{}.{}.m16n16k16",
                a_layout.name(),
                b_layout.name()
            )?;
            if *input_type == MmaType::F16 {
                write!(out, ".{}.{}", d_type.name(), c_type.name())?;
            } else {
                let input = input_type.name();
                write!(out, ".{}.{input}.{input}.{}", d_type.name(), c_type.name())?;
            }
            write!(
                out,
                " {}, {}, {}, {}",
                register_list(kernel, d),
                register_list(kernel, a),
                register_list(kernel, b),
                register_list(kernel, c)
            )
        }
    }
}

/// `.sync.aligned.m8n8.xN[.trans][.shared].b16` of `ldmatrix` and `stmatrix`.
fn write_matrix_modifiers(
    out: &mut String,
    matrices: usize,
    transpose: bool,
    space: StateSpace,
) -> fmt::Result {
    write!(out, ".sync.aligned.m8n8.x{matrices}")?;
    if transpose {
        write!(out, ".trans")?;
    }
    if space != StateSpace::Generic {
        write!(out, ".{}", space.name())?;
    }
    write!(out, ".b16")
}

/// A brace list of registers, `{%r1, %r2}`.
fn register_list(kernel: &Kernel, regs: &[RegId]) -> String {
    let names: Vec<&str> = regs.iter().map(|&r| kernel.reg(r).name.as_str()).collect();
    format!("{{{}}}", names.join(", "))
}

fn write_access_modifiers(
    out: &mut String,
    space: StateSpace,
    order: MemoryOrder,
    vector: usize,
) -> fmt::Result {
    match order {
        MemoryOrder::Weak => {}
        MemoryOrder::Volatile => write!(out, ".volatile")?,
        MemoryOrder::Relaxed(scope) => write!(out, ".relaxed.{}", scope.name())?,
        MemoryOrder::Acquire(scope) => write!(out, ".acquire.{}", scope.name())?,
        MemoryOrder::Release(scope) => write!(out, ".release.{}", scope.name())?,
    }
    if space != StateSpace::Generic {
        write!(out, ".{}", space.name())?;
    }
    if vector > 1 {
        write!(out, ".v{vector}")?;
    }
    Ok(())
}

fn address_text(kernel: &Kernel, addr: &Address) -> String {
    let base = match addr.base {
        AddressBase::Reg(reg) => kernel.reg(reg).name.clone(),
        AddressBase::Symbol(symbol) => kernel.symbol(symbol).name.clone(),
        AddressBase::Absolute => return format!("[{}]", addr.offset),
    };
    match addr.offset {
        0 => format!("[{base}]"),
        offset if offset < 0 => format!("[{base}-{}]", offset.unsigned_abs()),
        offset => format!("[{base}+{offset}]"),
    }
}

fn operand_text(kernel: &Kernel, operand: &Operand) -> String {
    match operand {
        Operand::Reg(reg) => kernel.reg(*reg).name.clone(),
        Operand::Special(special) => special.to_string(),
        Operand::Symbol(symbol) => kernel.symbol(*symbol).name.clone(),
        Operand::Imm { bits, ty } => literal_text(*bits, *ty),
    }
}

/// A literal of type `ty` in a form the parser reads back to the same bits.
pub fn literal_text(bits: u64, ty: ScalarType) -> String {
    match ty.kind() {
        TypeKind::Signed => {
            let shift = 64 - ty.bits();
            (((bits << shift) as i64) >> shift).to_string()
        }
        TypeKind::Unsigned | TypeKind::Predicate => bits.to_string(),
        TypeKind::Bits => format!("{bits:#x}"),
        TypeKind::Float => {
            if ty == ScalarType::F32 {
                let value = f32::from_bits(bits as u32);
                let text = format!("{value:?}");
                if value.is_finite() && text.parse::<f32>().map(f32::to_bits) == Ok(bits as u32) {
                    text
                } else {
                    format!("0f{:08X}", bits as u32)
                }
            } else {
                let value = f64::from_bits(bits);
                let text = format!("{value:?}");
                if value.is_finite() && text.parse::<f64>().map(f64::to_bits) == Ok(bits) {
                    text
                } else {
                    format!("0d{bits:016X}")
                }
            }
        }
    }
}
