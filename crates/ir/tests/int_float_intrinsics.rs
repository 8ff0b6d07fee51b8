//! `mul24`, `sad`, `testp` and `copysign`: every form parses (as `.kir` and
//! as PTX), verifies, prints and reads back to the same module; the forms
//! the PTX ISA does not define are errors naming them.

use warpsim_ir::{parse_module, parse_ptx, print_module, verify_module, FloatClass, Op};

fn kernel(body: &str) -> String {
    format!(
        ".kernel k()\n{{\n.reg .s32 %s, %t;\n.reg .u32 %u, %w;\n.reg .b32 %b;\n\
         .reg .u16 %h;\n.reg .s64 %q;\n.reg .u64 %l;\n.reg .f32 %f, %g;\n.reg .f64 %x, %y;\n\
         .reg .pred %p;\n{body}\nexit;\n}}\n"
    )
}

/// The line of `kernel(body)` that holds the one-line `body`.
fn body_line(body: &str) -> usize {
    kernel(body)
        .lines()
        .position(|line| line == body)
        .expect("a one-line body")
        + 1
}

/// Fails unless every line of a verifier report is a problem found at the
/// line of `body` in `file`.
fn assert_reported_at_body(file: &str, body: &str, report: &str) {
    let at = format!("{file}:{}: in kernel `k`: ", body_line(body));
    assert!(
        report.lines().all(|line| line.starts_with(&at)),
        "{body}: expected every problem at `{at}`, got:\n{report}"
    );
}

fn round_trip(body: &str) -> (String, Vec<Op>) {
    let text = kernel(body);
    let module = parse_module("small.kir", &text).unwrap_or_else(|error| panic!("{error}"));
    verify_module(&module).unwrap_or_else(|error| panic!("{error}"));
    let printed = print_module(&module);
    assert_eq!(
        parse_module("printed.kir", &printed).unwrap_or_else(|error| panic!("{error}\n{printed}")),
        module
    );
    let ops = module.kernels[0]
        .instrs
        .iter()
        .map(|instr| instr.op.clone())
        .collect();
    (printed, ops)
}

#[test]
fn every_form_round_trips() {
    let (printed, ops) = round_trip(
        "mul24.lo.u32 %u, %u, %w;\nmul24.hi.u32 %u, %w, 0x123;\nmul24.lo.s32 %s, %s, -5;\n\
         mul24.hi.s32 %s, %s, %t;\nsad.u32 %u, %u, %w, 1;\nsad.s32 %s, %s, %t, -1;\n\
         sad.u64 %l, %l, %l, %l;\nsad.s64 %q, %q, 3, %q;\nsad.u16 %h, %h, %h, %h;\n\
         testp.finite.f32 %p, %f;\ntestp.infinite.f64 %p, %x;\ntestp.number.f32 %p, 1.5;\n\
         testp.notanumber.f64 %p, %y;\ntestp.normal.f32 %p, %g;\ntestp.subnormal.f64 %p, %x;\n\
         copysign.f32 %f, %g, %f;\ncopysign.f64 %x, %y, -2.5;",
    );
    for spelling in [
        "mul24.lo.u32 %u, %u, %w",
        "mul24.hi.u32 %u, %w, 291",
        "mul24.lo.s32 %s, %s, -5",
        "mul24.hi.s32",
        "sad.u32 %u, %u, %w, 1",
        "sad.s32 %s, %s, %t, -1",
        "sad.u64",
        "sad.s64 %q, %q, 3, %q",
        "sad.u16",
        "testp.finite.f32 %p, %f",
        "testp.infinite.f64",
        "testp.number.f32 %p, 1.5",
        "testp.notanumber.f64",
        "testp.normal.f32",
        "testp.subnormal.f64",
        "copysign.f32 %f, %g, %f",
        "copysign.f64 %x, %y, -2.5",
    ] {
        assert!(printed.contains(spelling), "{spelling} in\n{printed}");
    }
    let classes: Vec<FloatClass> = ops
        .iter()
        .filter_map(|op| match op {
            Op::Testp { class, .. } => Some(*class),
            _ => None,
        })
        .collect();
    assert_eq!(classes, FloatClass::ALL);
}

#[test]
fn undefined_forms_are_errors() {
    for (body, expected) in [
        ("mul24.u32 %u, %u, %w;", "`mul24` needs `.lo` or `.hi`"),
        ("mul24.lo.u64 %l, %l, %l;", "`mul24` takes `.u32` or `.s32`"),
        ("mul24.wide.u32 %u, %u, %w;", "`mul24` needs `.lo` or `.hi`"),
        (
            "sad.b32 %b, %b, %b, %b;",
            "`sad` takes a signed or unsigned",
        ),
        (
            "sad.f32 %f, %f, %f, %f;",
            "`sad` takes a signed or unsigned",
        ),
        ("testp.f32 %p, %f;", "missing a class"),
        ("testp.zero.f32 %p, %f;", "missing a class"),
        ("testp.finite.f16 %p, %f;", "`testp` takes `.f32` or `.f64`"),
        ("testp.finite.u32 %p, %u;", "`testp` takes `.f32` or `.f64`"),
        (
            "copysign.f16 %f, %f, %f;",
            "`copysign` takes `.f32` or `.f64`",
        ),
        (
            "copysign.s32 %s, %s, %s;",
            "`copysign` takes `.f32` or `.f64`",
        ),
        (
            "copysign.ftz.f32 %f, %f, %f;",
            "modifier `.ftz` is not valid here",
        ),
    ] {
        let error = match parse_module("small.kir", &kernel(body)) {
            Ok(_) => panic!("`{body}` parsed"),
            Err(error) => error,
        };
        assert_eq!(
            (error.file.as_str(), error.line as usize),
            ("small.kir", body_line(body)),
            "{body}: {error}"
        );
        assert!(error.message.contains(expected), "{body}: {error}");
    }
}

#[test]
fn mistyped_operands_are_verify_errors() {
    for (body, expected) in [
        ("mul24.lo.u32 %l, %u, %w;", "destination"),
        ("sad.s32 %s, %s, %t, %l;", "addend"),
        ("testp.finite.f32 %u, %f;", "destination"),
        ("testp.finite.f64 %p, %f;", "source"),
        ("copysign.f32 %f, %x, %f;", "sign source"),
        ("copysign.f64 %x, %y, %f;", "magnitude source"),
    ] {
        let module =
            parse_module("small.kir", &kernel(body)).unwrap_or_else(|error| panic!("{error}"));
        let message = match verify_module(&module) {
            Ok(()) => panic!("`{body}` verified"),
            Err(error) => error.to_string(),
        };
        assert_reported_at_body("small.kir", body, &message);
        assert!(message.contains(expected), "{body}: {message}");
    }
}

#[test]
fn nvrtc_spellings_parse_as_ptx() {
    let text = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\
        .reg .b32 %r<32>;\n.reg .f32 %f<8>;\n.reg .f64 %fd<4>;\n.reg .pred %p<4>;\n\
        sad.s32 \t%r30, %r7, %r28, %r29;\ncopysign.f32 \t%f4, %f3, %f2;\n\
        mul24.hi.s32 %r1, %r2, %r3;\ntestp.notanumber.f32 %p1, %f1;\n\
        testp.infinite.f64 %p2, %fd1;\ncopysign.f64 %fd2, %fd1, %fd3;\nret;\n}\n";
    let module = parse_ptx("k.ptx", text).unwrap_or_else(|error| panic!("{error}"));
    verify_module(&module).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(module.kernels[0].instrs.len(), 7);
}
