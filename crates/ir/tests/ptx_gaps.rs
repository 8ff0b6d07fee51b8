//! The PTX forms NVRTC commonly emits beyond the core set: `.sat`
//! arithmetic, vector packing with braces, funnel shifts and `lop3`, `set`
//! and two-destination `setp`, and the small ones (`mul24`, `sad`, `testp`,
//! `copysign`). Each parses, verifies, prints as `.kir` and reads back to the
//! same module; forms the IR does not define are errors naming them.

use warpsim_ir::{parse_module, parse_ptx, print_module, verify_module};

/// A `.kir` kernel with every register class the tests use, around `body`.
fn kernel(body: &str) -> String {
    format!(
        ".kernel k()\n{{\n.reg .s32 %s, %t, %v;\n.reg .u32 %u, %w;\n.reg .b32 %b, %c, %d;\n\
         .reg .b16 %h, %i;\n.reg .f32 %f, %g, %e;\n.reg .f64 %x;\n.reg .b64 %l;\n\
         .reg .u64 %m;\n.reg .pred %p, %q, %r;\n{body}\nexit;\n}}\n"
    )
}

/// Parses, verifies, prints and reparses `body`; returns the printed text.
fn round_trip(body: &str) -> String {
    let text = kernel(body);
    let module = parse_module("gaps.kir", &text).unwrap_or_else(|error| panic!("{error}"));
    verify_module(&module).unwrap_or_else(|error| panic!("{error}"));
    let printed = print_module(&module);
    assert_eq!(
        parse_module("printed.kir", &printed).unwrap_or_else(|error| panic!("{error}\n{printed}")),
        module
    );
    printed
}

/// The verifier's report on the one-line `body`, every problem on its line.
fn verify_error(body: &str) -> String {
    let module = parse_module("gaps.kir", &kernel(body)).unwrap_or_else(|error| panic!("{error}"));
    match verify_module(&module) {
        Ok(()) => panic!("`{body}` verified"),
        Err(error) => {
            let report = error.to_string();
            assert_reported_at_body("gaps.kir", body, &report);
            report
        }
    }
}

/// The parse error of the one-line `body`, which must be on its line.
fn parse_error(body: &str) -> String {
    match parse_module("gaps.kir", &kernel(body)) {
        Ok(_) => panic!("`{body}` parsed"),
        Err(error) => {
            assert_eq!(
                (error.file.as_str(), error.line as usize),
                ("gaps.kir", body_line(body)),
                "{body}: {error}"
            );
            error.message
        }
    }
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

#[test]
fn saturating_arithmetic_round_trips() {
    let printed = round_trip(
        "add.sat.s32 %s, %s, %t;\nsub.sat.s32 %s, %s, 5;\nmad.hi.sat.s32 %s, %s, %t, %v;\n\
         add.rn.sat.f32 %f, %f, %g;\nsub.sat.f32 %f, %f, 0.5;\nmul.sat.ftz.f32 %f, %f, %g;\n\
         fma.rn.sat.f32 %f, %f, %g, %e;\nmad.rn.sat.f32 %f, %f, %g, %e;",
    );
    for spelling in [
        "add.sat.s32",
        "sub.sat.s32",
        "mad.hi.sat.s32",
        "add.sat.f32",
        "sub.sat.f32",
        "mul.sat.f32",
        "fma.rn.sat.f32",
    ] {
        assert!(printed.contains(spelling), "{spelling} in\n{printed}");
    }
}

#[test]
fn saturation_outside_its_types_is_a_verify_error() {
    for body in [
        "add.sat.u32 %u, %u, %w;",
        "mul.lo.sat.s32 %s, %s, %t;",
        "mad.lo.sat.s32 %s, %s, %t, %v;",
        "add.sat.f64 %x, %x, %x;",
        "and.sat.b32 %b, %b, %c;",
    ] {
        let message = verify_error(body);
        assert!(
            message.contains("`.sat` is not defined"),
            "{body}: {message}"
        );
    }
}

#[test]
fn ptx_saturation_parses() {
    let text = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\
        .reg .b32 %r<4>;\n.reg .f32 %f<4>;\n\
        add.sat.s32 %r1, %r2, %r3;\nfma.rn.ftz.sat.f32 %f1, %f2, %f3, %f1;\nret;\n}\n";
    let module = parse_ptx("k.ptx", text).unwrap_or_else(|error| panic!("{error}"));
    verify_module(&module).unwrap();
}

#[test]
fn vector_packing_round_trips() {
    let printed = round_trip(
        "mov.b64 %l, {%b, %c};\nmov.b64 {%b, %c}, %l;\nmov.b64 {_, %d}, %l;\n\
         mov.b32 %b, {%h, %i};\nmov.b32 {%h, _}, %b;\nmov.b64 %x, {%b, 7};\n\
         mov.b64 {%b, %c}, %x;\nmov.b64 %l, {%h, %i, %h, %i};",
    );
    for spelling in [
        "mov.b64 %l, {%b, %c}",
        "mov.b64 {%b, %c}, %l",
        "mov.b64 {_, %d}, %l",
        "mov.b32 %b, {%h, %i}",
        "mov.b32 {%h, _}, %b",
        "mov.b64 %l, {%h, %i, %h, %i}",
    ] {
        assert!(printed.contains(spelling), "{spelling} in\n{printed}");
    }
}

#[test]
fn vector_packing_checks_its_element_sizes() {
    for (body, expected) in [
        (
            "mov.b64 %l, {%h, %i};",
            "element `%h` is declared `.b16` but the instruction uses it as `.b32`",
        ),
        (
            "mov.b32 {%b, %c}, %b;",
            "element `%b` is declared `.b32` but the instruction uses it as `.b16`",
        ),
        (
            "mov.u64 %m, {%b, %c};",
            "`mov.u64` with braces packs 2 or 4 elements",
        ),
        (
            "mov.b16 {%h, %i}, %h;",
            "element `%h` is declared `.b16` but the instruction uses it as `.b8`",
        ),
    ] {
        let message = verify_error(body);
        assert!(message.contains(expected), "{body}: {message}");
    }
    for body in ["mov.b64 %l, {%b, %c, %d};", "mov.b8 {%h, %i}, %h;"] {
        let message = parse_error(body);
        assert!(message.contains("cannot be split"), "{body}: {message}");
    }
}

/// As NVRTC writes them for `__shfl_down_sync` on a double and for
/// `__halves2half2`, in a nested scope with a temporary.
#[test]
fn ptx_vector_packing_parses() {
    let text = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\
        .reg .b16 %rs<3>;\n.reg .b32 %r<5>;\n.reg .f64 %fd<3>;\n\
        mov.b64 {%r1,%r2}, %fd1;\nmov.b64 %fd2, {%r3,%r4};\n{  mov.b32 %r3, {%rs1,%rs2};}\n\
        { .reg .b32 %temp; mov.b64 {%temp, %r4}, %fd2; }\nret;\n}\n";
    let module = parse_ptx("k.ptx", text).unwrap_or_else(|error| panic!("{error}"));
    verify_module(&module).unwrap();
    let printed = print_module(&module);
    assert_eq!(parse_module("printed.kir", &printed).unwrap(), module);
}

#[test]
fn funnel_shifts_and_lop3_round_trip() {
    let printed = round_trip(
        "shf.l.wrap.b32 %b, %b, %c, %u;\nshf.r.clamp.b32 %b, %c, %d, 40;\n\
         shf.l.clamp.b32 %d, %b, %c, %w;\nshf.r.wrap.b32 %d, %d, %d, 1;\n\
         lop3.b32 %b, %b, %c, %d, 0x96;\nlop3.b32 %d, %b, 0xff00, %d, 232;",
    );
    for spelling in [
        "shf.l.wrap.b32 %b, %b, %c, %u",
        "shf.r.clamp.b32 %b, %c, %d, 40",
        "lop3.b32 %b, %b, %c, %d, 0x96",
        "lop3.b32 %d, %b, 0xff00, %d, 0xe8",
    ] {
        assert!(printed.contains(spelling), "{spelling} in\n{printed}");
    }
    for (body, message) in [
        ("shf.l.b32 %b, %b, %c, %u;", "`.wrap` or `.clamp`"),
        ("shf.wrap.b32 %b, %b, %c, %u;", "`.l` or `.r`"),
        ("shf.l.wrap.b64 %l, %l, %l, %u;", "`.b32`"),
        ("lop3.b32 %b, %b, %c, %d, 256;", "0 to 255"),
        ("lop3.b32 %b, %b, %c, %d, %u;", "truth table"),
    ] {
        let error = parse_error(body);
        assert!(error.contains(message), "{body}: {error}");
    }
}

#[test]
fn set_and_two_destination_setp_round_trip() {
    let printed = round_trip(
        "set.lt.u32.s32 %u, %s, %t;\nset.nan.f32.f32 %f, %f, %g;\n\
         set.gtu.and.s32.f32 %s, %f, 0.5, !%p;\nset.ne.u32.f16 %u, %h, %i;\n\
         setp.lt.s32 %p|%q, %s, %t;\nsetp.num.xor.f32 %p|%q, %f, %g, %r;",
    );
    for spelling in [
        "set.lt.u32.s32 %u, %s, %t",
        "set.nan.f32.f32 %f, %f, %g",
        "set.gtu.and.s32.f32 %s, %f, 0.5, !%p",
        "set.ne.u32.f16 %u, %h, %i",
        "setp.lt.s32 %p|%q, %s, %t",
        "setp.num.xor.f32 %p|%q, %f, %g, %r",
    ] {
        assert!(printed.contains(spelling), "{spelling} in\n{printed}");
    }
    for body in [
        "set.lt.u64.s32 %m, %s, %t;",
        "set.lo.u32.s32 %u, %s, %t;",
        "set.nan.u32.s32 %u, %s, %t;",
        "setp.lt.s32 %p|%u, %s, %t;",
    ] {
        verify_error(body);
    }
}
