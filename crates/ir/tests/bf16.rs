//! bfloat16 in the IR: the `.bf16` and `.bf16x2` types, and the PTX that
//! NVRTC 12 emits for `cuda_bf16.h` on sm_90 (inline PTX in `{ }` blocks
//! with `U`-suffixed literals, `cvt.rn.bf16x2.f32` with two sources,
//! `fma.rn.relu`, `min.NaN`, `set` into a bfloat16, `atom.add.noftz`),
//! parse, verify, print as `.kir` and read back to the same module.

use warpsim_ir::{parse_module, parse_ptx, print_module, verify_module, ScalarType};

/// Lines of the PTX NVRTC 12.9 wrote for a kernel calling `__hadd`,
/// `__hfma_relu`, `__hmin_nan`, `__hadd_sat`, `__hlt`, `__hisnan`,
/// `__floats2bfloat162_rn`, `__low2bfloat16`, `__heq2`, `__hfma2`,
/// `htrunc`, `__float2bfloat16_rz`, `__int2bfloat16_rn`,
/// `__bfloat162int_rn` and `atomicAdd` on bfloat16 values.
const NVRTC_PTX: &str = r#"
.version 8.8
.target sm_90
.address_size 64

.visible .entry probe(
	.param .u64 probe_param_0,
	.param .bf16 probe_param_1
)
{
	.reg .pred 	%p<3>;
	.reg .b16 	%rs<40>;
	.reg .f32 	%f<10>;
	.reg .b32 	%r<20>;
	.reg .f64 	%fd<2>;
	.reg .b64 	%rd<4>;

	ld.param.u64 	%rd1, [probe_param_0];
	ld.param.b16 	%rs9, [probe_param_1];
	cvta.to.global.u64 	%rd2, %rd1;
	ld.global.u16 	%rs1, [%rd2];
	ld.global.u16 	%rs2, [%rd2+2];
	ld.global.u16 	%rs3, [%rd2+4];
	ld.global.f32 	%f1, [%rd2+8];
	{ add.bf16 %rs6,%rs1,%rs2; }
	{ sub.rn.bf16 %rs7,%rs1,%rs2; }
	{ mul.bf16x2 %r3,%r1,%r2; }
	{fma.rn.bf16 %rs8,%rs1,%rs2,%rs3;
}
	{ fma.rn.relu.bf16 %rs10,%rs1,%rs2,%rs3;
}
	{ min.NaN.bf16 %rs11,%rs1,%rs2;
}
	{ max.NaN.bf16x2 %r4,%r1,%r2;
}
	{neg.bf16 %rs12,%rs1;
}
	{abs.bf16x2 %r5,%r1;
}
	{ .reg .b16 f, one, zero;
  mov.b16 one, 0x3f80U;
  mov.b16 zero, 0;
  fma.rn.bf16 f, %rs1, one, %rs2;
  max.bf16 f, f, zero;
  min.bf16 %rs13, f, one;
}
	{ .reg .pred __$temp3;
  setp.lt.bf16  __$temp3, %rs1, %rs2;
  selp.u16 %rs14, 1, 0, __$temp3;}
	{set.nan.bf16.bf16 %rs15,%rs1,%rs1;
}
	{ set.eq.bf16x2.bf16x2 %r6,%r1,%r2;
}
	{ cvt.rn.bf16x2.f32 %r7, %f2, %f1;}
	{ cvt.rn.f16x2.f32 %r8, %f2, %f1;}
	{.reg .b16 low,high;
 mov.b32 {low,high}, %r7;
 mov.b16 %rs16, low;}
	{ cvt.f32.bf16 %f3, %rs1;}
	{  cvt.rn.bf16.f32 %rs17, %f3;}
	{  cvt.rz.bf16.f32 %rs18, %f3;}
	{  cvt.rn.bf16.f64 %rs19, %fd1;}
	cvt.rzi.bf16.bf16 %rs20, %rs1;
	cvt.rn.bf16.s32 %rs21, %r9;
	cvt.rn.bf16.u64 %rs22, %rd3;
	{  cvt.rni.s32.bf16 %r10, %rs1;}
	{ atom.add.noftz.bf16 %rs23,[%rd2],%rs1; }
	ret;
}
"#;

#[test]
fn nvrtc_bfloat16_ptx_prints_and_parses_back() {
    let module = parse_ptx("probe.ptx", NVRTC_PTX).unwrap_or_else(|error| panic!("{error}"));
    verify_module(&module).unwrap_or_else(|error| panic!("{error}"));
    let printed = print_module(&module);
    for spelling in [
        ".param .bf16 probe_param_1",
        "add.bf16 %rs6, %rs1, %rs2",
        "mul.bf16x2 %r3, %r1, %r2",
        "fma.rn.relu.bf16 %rs10, %rs1, %rs2, %rs3",
        "min.NaN.bf16 %rs11, %rs1, %rs2",
        "max.NaN.bf16x2 %r4, %r1, %r2",
        "abs.bf16x2 %r5, %r1",
        "mov.b16 %one",
        "setp.lt.bf16",
        "set.nan.bf16.bf16 %rs15, %rs1, %rs1",
        "set.eq.bf16x2.bf16x2 %r6, %r1, %r2",
        // `a` (here %f2) is the upper half, `b` (%f1) the lower.
        "cvt.rn.bf16x2.f32 %r7, %f2, %f1",
        "cvt.rn.f16x2.f32 %r8, %f2, %f1",
        "cvt.rz.bf16.f32 %rs18, %f3",
        "cvt.rzi.bf16.bf16 %rs20, %rs1",
        "cvt.rn.bf16.u64 %rs22, %rd3",
        "cvt.rni.s32.bf16 %r10, %rs1",
        "atom.add.noftz.bf16 %rs23, [%rd2], %rs1",
    ] {
        assert!(printed.contains(spelling), "`{spelling}` in\n{printed}");
    }
    let again =
        parse_module("printed.kir", &printed).unwrap_or_else(|error| panic!("{error}\n{printed}"));
    assert_eq!(again, module);
}

/// `.bf16` and `.bf16x2` are float types of 2 and 4 bytes, spelled as PTX
/// spells them; a `.b16` register holds a `.bf16` and a `.b32` register a
/// `.bf16x2`, as for `.f16` and `.f16x2`, and nothing else of another size
/// or kind does.
#[test]
fn bfloat16_types() {
    for (ty, name, size) in [
        (ScalarType::Bf16, "bf16", 2),
        (ScalarType::Bf16x2, "bf16x2", 4),
    ] {
        assert_eq!(ty.name(), name);
        assert_eq!(ScalarType::from_name(name), Some(ty));
        assert_eq!(ty.size_bytes(), size);
        assert!(ty.is_float() && ty.is_half());
    }
    assert!(ScalarType::Bf16x2.is_half_pair() && !ScalarType::Bf16.is_half_pair());
    assert!(ScalarType::B16.register_accepts(ScalarType::Bf16));
    assert!(ScalarType::B32.register_accepts(ScalarType::Bf16x2));
    assert!(ScalarType::Bf16.register_accepts(ScalarType::B16));
    assert!(!ScalarType::B32.register_accepts(ScalarType::Bf16));
    assert!(!ScalarType::U16.register_accepts(ScalarType::Bf16));
    assert!(!ScalarType::Bf16.register_accepts(ScalarType::U16));
}

/// An `.f32` literal in a bfloat16 instruction is refused at its place,
/// as for `.f16`.
#[test]
fn a_bfloat16_literal_is_an_error_naming_its_line() {
    let text = ".version 8.8\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n.reg .b16 %h;\nadd.bf16 %h, %h, 0f3F800000;\nret;\n}\n";
    let error = parse_ptx("t.ptx", text).expect_err("a .bf16 literal");
    assert_eq!(
        (error.line, error.column, error.message.as_str()),
        (
            7,
            18,
            "a `.bf16` operand cannot be a literal: move its bits with `mov.b16`"
        )
    );
}
