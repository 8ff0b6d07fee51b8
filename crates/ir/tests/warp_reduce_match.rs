//! `redux.sync` and `match.sync`: every form parses (as `.kir` and as PTX),
//! verifies, prints and reads back to the same module; the forms the PTX ISA
//! does not define are errors naming them.

use warpsim_ir::{parse_module, parse_ptx, print_module, verify_module, Op, ReduxOp};

fn kernel(body: &str) -> String {
    format!(
        ".kernel k()\n{{\n.reg .s32 %s, %t;\n.reg .u32 %u, %w;\n.reg .b32 %b, %m;\n\
         .reg .b64 %l;\n.reg .f32 %f;\n.reg .pred %p;\n{body}\nexit;\n}}\n"
    )
}

fn round_trip(body: &str) -> (String, Vec<Op>) {
    let text = kernel(body);
    let module = parse_module("warp.kir", &text).unwrap_or_else(|error| panic!("{error}"));
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

/// The parse error of the one-line `body`, which must be on its line.
fn parse_error(body: &str) -> String {
    match parse_module("warp.kir", &kernel(body)) {
        Ok(_) => panic!("`{body}` parsed"),
        Err(error) => {
            assert_eq!(
                (error.file.as_str(), error.line as usize),
                ("warp.kir", body_line(body)),
                "{body}: {error}"
            );
            error.message
        }
    }
}

/// The verifier's report on the one-line `body`, every problem on its line.
fn verify_error(body: &str) -> String {
    let module = parse_module("warp.kir", &kernel(body)).unwrap_or_else(|error| panic!("{error}"));
    match verify_module(&module) {
        Ok(()) => panic!("`{body}` verified"),
        Err(error) => {
            let report = error.to_string();
            assert_reported_at_body("warp.kir", body, &report);
            report
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
fn every_redux_form_round_trips() {
    let (printed, ops) = round_trip(
        "redux.sync.add.u32 %u, %w, 0xffffffff;\nredux.sync.add.s32 %s, %t, %m;\n\
         redux.sync.min.u32 %u, %u, %m;\nredux.sync.min.s32 %s, -3, %m;\n\
         redux.sync.max.u32 %u, %w, 0x0000ffff;\nredux.sync.max.s32 %s, %t, %m;\n\
         redux.sync.and.b32 %b, %b, %m;\nredux.sync.or.b32 %b, %m, %m;\n\
         redux.sync.xor.b32 %b, 0xff, %m;",
    );
    for spelling in [
        "redux.sync.add.u32 %u, %w, 0xffffffff",
        "redux.sync.add.s32",
        "redux.sync.min.u32",
        "redux.sync.min.s32 %s, -3, %m",
        "redux.sync.max.u32",
        "redux.sync.max.s32",
        "redux.sync.and.b32",
        "redux.sync.or.b32",
        "redux.sync.xor.b32 %b, 0xff, %m",
    ] {
        assert!(printed.contains(spelling), "{spelling} in\n{printed}");
    }
    let reductions: Vec<ReduxOp> = ops
        .iter()
        .filter_map(|op| match op {
            Op::Redux { op, .. } => Some(*op),
            _ => None,
        })
        .collect();
    use ReduxOp::*;
    assert_eq!(reductions, [Add, Add, Min, Min, Max, Max, And, Or, Xor]);
}

#[test]
fn every_match_form_round_trips() {
    let (printed, ops) = round_trip(
        "match.any.sync.b32 %b, %u, 0xffffffff;\nmatch.any.sync.b64 %b, %l, %m;\n\
         match.all.sync.b32 %b, %s, %m;\nmatch.all.sync.b32 %b|%p, %b, %m;\n\
         match.all.sync.b64 %m|%p, %l, 0x0000ffff;",
    );
    for spelling in [
        "match.any.sync.b32 %b, %u, 0xffffffff",
        "match.any.sync.b64 %b, %l, %m",
        "match.all.sync.b32 %b, %s, %m",
        "match.all.sync.b32 %b|%p, %b, %m",
        "match.all.sync.b64 %m|%p, %l, 0xffff",
    ] {
        assert!(printed.contains(spelling), "{spelling} in\n{printed}");
    }
    let forms: Vec<(bool, bool)> = ops
        .iter()
        .filter_map(|op| match op {
            Op::Match { all, dst_pred, .. } => Some((*all, dst_pred.is_some())),
            _ => None,
        })
        .collect();
    assert_eq!(
        forms,
        [
            (false, false),
            (false, false),
            (true, false),
            (true, true),
            (true, true)
        ]
    );
}

#[test]
fn undefined_forms_are_errors() {
    for (body, expected) in [
        ("redux.add.u32 %u, %w, %m;", "only `redux.sync`"),
        ("redux.sync.u32 %u, %w, %m;", "missing an operation"),
        (
            "redux.sync.add.b32 %b, %b, %m;",
            "`redux.sync.add` takes `.u32` or `.s32`",
        ),
        (
            "redux.sync.and.u32 %u, %u, %m;",
            "`redux.sync.and` takes `.b32`",
        ),
        ("redux.sync.min.u64 %l, %l, %m;", "`redux.sync.min` takes"),
        ("redux.sync.add.f32 %f, %f, %m;", "takes"),
        ("redux.sync.mul.u32 %u, %u, %m;", "missing an operation"),
        ("match.sync.b32 %b, %b, %m;", "`.any` or `.all`"),
        ("match.any.b32 %b, %b, %m;", "only `match.sync`"),
        ("match.any.sync.u32 %b, %u, %m;", "`.b32` or `.b64`"),
        ("match.all.sync.b16 %b, %b, %m;", "`.b32` or `.b64`"),
        (
            "match.any.sync.b32 %b|%p, %b, %m;",
            "only `match.all.sync` has a predicate",
        ),
    ] {
        let message = parse_error(body);
        assert!(message.contains(expected), "{body}: {message}");
    }
}

#[test]
fn mistyped_operands_are_verify_errors() {
    for (body, expected) in [
        ("redux.sync.add.u32 %l, %w, %m;", "destination"),
        ("redux.sync.add.u32 %u, %l, %m;", "value"),
        ("redux.sync.or.b32 %b, %b, %l;", "mask"),
        ("match.any.sync.b32 %l, %b, %m;", "destination"),
        ("match.any.sync.b64 %b, %b, %m;", "value"),
        ("match.all.sync.b32 %b|%u, %b, %m;", "predicate destination"),
    ] {
        let message = verify_error(body);
        assert!(message.contains(expected), "{body}: {message}");
    }
}

#[test]
fn nvrtc_spellings_parse_as_ptx() {
    let text = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\
        .reg .b32 %r<22>;\n.reg .pred %p<4>;\n.reg .b64 %rd<2>;\n\
        redux.sync.add.u32 %r10, %r8, %r6;\nredux.sync.min.s32 %r12, %r7, %r6;\n\
        redux.sync.or.b32 %r14, %r13, %r6;\nmatch.any.sync.b32 \t%r16, %r15, %r6;\n\
        match.all.sync.b32 \t%r18|%p2, %r17, %r6;\nmatch.any.sync.b64 %r19, %rd1, -1;\nret;\n}\n";
    let module = parse_ptx("k.ptx", text).unwrap_or_else(|error| panic!("{error}"));
    verify_module(&module).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(module.kernels[0].instrs.len(), 7);
}

/// A reduction is the same in every lane of a warp but differs between the
/// warps of a block, and a match mask differs between lanes: a branch on
/// either around `bar.sync` is a finding, with the instruction as its reason.
#[test]
fn results_are_divergent_across_the_block() {
    for (source, reason) in [
        ("redux.sync.add.u32 %r, %n, 0xffffffff;", "redux.sync"),
        ("redux.sync.or.b32 %r, %n, 0xffffffff;", "redux.sync"),
        ("match.any.sync.b32 %r, %n, 0xffffffff;", "match.sync"),
        ("match.all.sync.b32 %r|%q, %n, 0xffffffff;", "match.sync"),
    ] {
        let text = format!(
            ".kernel k(.param .u32 n)\n{{\n.shared .align 4 .u32 sh[4];\n.reg .u32 %r, %n;\n\
             .reg .pred %p, %q;\nld.param.u32 %n, [n];\n{source}\nsetp.eq.u32 %p, %r, 0;\n\
             @%p bra AFTER;\nbar.sync 0;\nAFTER:\nst.shared.u32 [sh], %r;\nexit;\n}}\n"
        );
        let module = parse_module("u.kir", &text).unwrap_or_else(|error| panic!("{error}"));
        verify_module(&module).unwrap_or_else(|error| panic!("{error}"));
        let findings = warpsim_ir::uniformity::divergent_barriers(&module.kernels[0]);
        assert_eq!(findings.len(), 1, "{source}");
        assert!(
            findings[0].reason.contains(reason),
            "{source}: {}",
            findings[0].reason
        );
    }
}
