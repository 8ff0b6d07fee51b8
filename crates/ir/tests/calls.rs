//! PTX device functions (`.func`) and `call`: the parser inlines each call,
//! so these tests read the inlined kernel as text (labels and instructions as
//! the `.kir` printer writes them) and check the errors for calls that
//! cannot be inlined. Every module that parses must also survive the `.kir`
//! round trip and the verifier.

use warpsim_ir::{instruction_text, parse_module, parse_ptx, print_module, verify_module, Module};

const HEADER: &str = ".version 8.8\n.target sm_90\n.address_size 64\n";

/// Parses PTX, checks that it verifies and that `parse(print(m)) == m`.
fn parse(text: &str) -> Module {
    let module = parse_ptx("t.ptx", &format!("{HEADER}{text}"))
        .unwrap_or_else(|error| panic!("{error}\n{text}"));
    verify_module(&module).unwrap_or_else(|error| panic!("{error}"));
    let printed = print_module(&module);
    let reparsed = parse_module("t.kir", &printed)
        .unwrap_or_else(|error| panic!("the printed form does not parse: {error}\n{printed}"));
    assert_eq!(reparsed, module, "parse(print(m)) != m\n{printed}");
    module
}

/// The first kernel's body: `label:` lines and instructions, in order.
fn body(module: &Module) -> Vec<String> {
    let kernel = &module.kernels[0];
    let mut lines = Vec::new();
    for index in 0..=kernel.instrs.len() {
        for label in kernel
            .labels
            .iter()
            .filter(|label| label.target.index() == index)
        {
            lines.push(format!("{}:", label.name));
        }
        if let Some(instr) = kernel.instrs.get(index) {
            lines.push(instruction_text(kernel, instr));
        }
    }
    lines
}

/// The parse error's `line: message`.
fn error(text: &str) -> String {
    let full = format!("{HEADER}{text}");
    match parse_ptx("t.ptx", &full) {
        Ok(module) => panic!("parsed:\n{}", print_module(&module)),
        // Line numbers below count from the first line after the header.
        Err(error) => format!("{}: {}", error.line - 3, error.message),
    }
}

/// `inc(x) = x + 1`, as NVRTC writes a function returning a value.
const INC: &str = "
.func (.param .b32 func_retval0) inc(
    .param .b32 inc_param_0
)
{
    .reg .b32 %r<3>;
    ld.param.u32 %r1, [inc_param_0];
    add.s32 %r2, %r1, 1;
    st.param.b32 [func_retval0+0], %r2;
    ret;
}
";

/// A kernel whose body is `body`, with a few registers.
fn kernel(body: &str) -> String {
    format!(
        ".visible .entry k(.param .u64 k_param_0)\n{{\n.reg .pred %p<2>;\n.reg .b32 %r<4>;\n{body}\nret;\n}}\n"
    )
}

/// A call sequence `%r{out} = inc(%r{arg})`, as NVRTC writes it.
fn call_inc(arg: u32, out: u32) -> String {
    format!(
        "{{
    .reg .b32 temp_param_reg;
    .param .b32 param0;
    st.param.b32 [param0+0], %r{arg};
    .param .b32 retval0;
    call.uni (retval0),
    inc,
    (
    param0
    );
    ld.param.b32 %r{out}, [retval0+0];
}}"
    )
}

#[test]
fn a_call_is_the_callee_body_between_parameter_stores_and_loads() {
    let module = parse(&format!("{INC}{}", kernel(&call_inc(1, 2))));
    assert_eq!(
        body(&module),
        [
            "st.local.b32 [param0], %r1",
            "ld.local.u32 %r1$8, [param0]",
            "add.s32 %r2$9, %r1$8, 1",
            "st.local.b32 [retval0], %r2$9",
            "bra $ret$call1",
            "$ret$call1:",
            "ld.local.b32 %r2, [retval0]",
            "exit",
        ]
    );
    let kernel = &module.kernels[0];
    // The call sequence's `.param` variables are per-thread `.local` ones.
    let locals: Vec<(&str, u32)> = kernel
        .symbols
        .iter()
        .filter(|symbol| symbol.space == warpsim_ir::StateSpace::Local)
        .map(|symbol| (symbol.name.as_str(), symbol.ty.size_bytes()))
        .collect();
    assert_eq!(locals, [("param0", 4), ("retval0", 4)]);
    // `temp_param_reg`, declared without `%`, is a register of its own.
    assert!(kernel
        .regs
        .iter()
        .any(|reg| reg.name.starts_with("%temp_param_reg")));
}

#[test]
fn two_calls_of_one_function_get_their_own_registers_and_labels() {
    let looping = "
.func (.param .b32 func_retval0) count(.param .b32 count_param_0)
{
    .reg .pred %p<2>;
    .reg .b32 %r<3>;
    ld.param.u32 %r1, [count_param_0];
$L__BB0_1:
    add.s32 %r1, %r1, -1;
    setp.ne.s32 %p1, %r1, 0;
    @%p1 bra $L__BB0_1;
    st.param.b32 [func_retval0+0], %r1;
    ret;
}
";
    let call = |arg: u32, out: u32| call_inc(arg, out).replace("inc,", "count,");
    let module = parse(&format!(
        "{looping}{}",
        kernel(&format!("{}\n{}", call(1, 2), call(2, 3)))
    ));
    assert_eq!(
        body(&module),
        [
            "st.local.b32 [param0], %r1",
            "ld.local.u32 %r1$10, [param0]",
            "$L__BB0_1$call1:",
            "add.s32 %r1$10, %r1$10, -1",
            "setp.ne.s32 %p1$8, %r1$10, 0",
            "@%p1$8 bra $L__BB0_1$call1",
            "st.local.b32 [retval0], %r1$10",
            "bra $ret$call1",
            "$ret$call1:",
            "ld.local.b32 %r2, [retval0]",
            "st.local.b32 [param0$1], %r2",
            "ld.local.u32 %r1$16, [param0$1]",
            "$L__BB0_1$call2:",
            "add.s32 %r1$16, %r1$16, -1",
            "setp.ne.s32 %p1$14, %r1$16, 0",
            "@%p1$14 bra $L__BB0_1$call2",
            "st.local.b32 [retval0$1], %r1$16",
            "bra $ret$call2",
            "$ret$call2:",
            "ld.local.b32 %r3, [retval0$1]",
            "exit",
        ]
    );
}

#[test]
fn a_guarded_call_is_a_branch_around_the_inlined_body() {
    let call = call_inc(1, 2).replace("call.uni", "@!%p1 call");
    let module = parse(&format!(
        "{INC}{}",
        kernel(&format!("setp.eq.s32 %p1, %r1, 0;\n{call}"))
    ));
    assert_eq!(
        body(&module),
        [
            "setp.eq.s32 %p1, %r1, 0",
            "st.local.b32 [param0], %r1",
            "@%p1 bra $skip$call1",
            "ld.local.u32 %r1$8, [param0]",
            "add.s32 %r2$9, %r1$8, 1",
            "st.local.b32 [retval0], %r2$9",
            "bra $ret$call1",
            "$skip$call1:",
            "$ret$call1:",
            "ld.local.b32 %r2, [retval0]",
            "exit",
        ]
    );
}

#[test]
fn ret_in_the_middle_of_a_callee_branches_to_its_end() {
    let early = "
.func (.param .b32 func_retval0) clamp(.param .b32 clamp_param_0)
{
    .reg .pred %p<2>;
    .reg .b32 %r<2>;
    ld.param.u32 %r1, [clamp_param_0];
    st.param.b32 [func_retval0+0], %r1;
    setp.lt.u32 %p1, %r1, 100;
    @%p1 ret;
    st.param.b32 [func_retval0+0], 100;
    ret;
}
";
    let call = call_inc(1, 2).replace("inc,", "clamp,");
    let module = parse(&format!("{early}{}", kernel(&call)));
    assert_eq!(
        body(&module),
        [
            "st.local.b32 [param0], %r1",
            "ld.local.u32 %r1$10, [param0]",
            "st.local.b32 [retval0], %r1$10",
            "setp.lt.u32 %p1$8, %r1$10, 100",
            "@%p1$8 bra $ret$call1",
            "st.local.b32 [retval0], 0x64",
            "bra $ret$call1",
            "$ret$call1:",
            "ld.local.b32 %r2, [retval0]",
            "exit",
        ]
    );
}

#[test]
fn a_function_defined_after_the_kernel_with_a_prototype_before_is_inlined() {
    let prototype = ".func (.param .b32 func_retval0) inc(.param .b32 inc_param_0);\n";
    let module = parse(&format!("{prototype}{}{INC}", kernel(&call_inc(1, 2))));
    assert_eq!(body(&module).len(), 8);
}

#[test]
fn nested_calls_are_inlined_inside_the_inlined_body() {
    let twice = format!(
        "
.func (.param .b32 func_retval0) twice(.param .b32 twice_param_0)
{{
    .reg .b32 %r<4>;
    ld.param.u32 %r1, [twice_param_0];
    {}
    {}
    st.param.b32 [func_retval0+0], %r3;
    ret;
}}
",
        call_inc(1, 2),
        call_inc(2, 3)
    );
    let call = call_inc(1, 2).replace("inc,", "twice,");
    let module = parse(&format!("{INC}{twice}{}", kernel(&call)));
    let lines = body(&module);
    let adds: Vec<&String> = lines.iter().filter(|l| l.starts_with("add.s32")).collect();
    assert_eq!(adds.len(), 2, "{lines:?}");
    for label in ["$ret$call1:", "$ret$call2:", "$ret$call3:"] {
        assert!(lines.iter().any(|l| l == label), "{label} in {lines:?}");
    }
}

#[test]
fn recursion_is_an_error_naming_the_function_and_the_line() {
    let recursive = "
.func (.param .b32 func_retval0) f(.param .b32 f_param_0)
{
    .reg .b32 %r<3>;
    ld.param.u32 %r1, [f_param_0];
    {
    .param .b32 param0;
    st.param.b32 [param0+0], %r1;
    .param .b32 retval0;
    call.uni (retval0), f, (param0);
    ld.param.b32 %r2, [retval0+0];
    }
    st.param.b32 [func_retval0+0], %r2;
    ret;
}
";
    assert_eq!(
        error(recursive),
        "10: recursive call of `f` (`f` calls `f`): device functions are inlined, so recursion is not supported"
    );
    // Through another function: `h` calls `g`, which calls `h`. The body of
    // `h` is checked first (it comes first), so the call found recursive is
    // the one in `g`, on line 10.
    let mutual = "
.func g();
.func h()
{
    call.uni g, ();
    ret;
}
.func g()
{
    call.uni h, ();
    ret;
}
";
    assert_eq!(
        error(mutual),
        "10: recursive call of `h` (`h` calls `g` calls `h`): device functions are inlined, so recursion is not supported"
    );
}

#[test]
fn a_call_of_an_undefined_or_external_function_is_an_error() {
    assert_eq!(
        error(&kernel("call.uni nowhere, ();")),
        "5: call of undefined function `nowhere`"
    );
    let external =
        ".extern .func (.param .b32 func_retval0) malloc(.param .b64 a, .param .b64 b);\n";
    let call = "{\n.param .b64 param0;\n.param .b64 param1;\n.param .b32 retval0;\ncall.uni (retval0), malloc, (param0, param1);\n}";
    assert_eq!(
        error(&format!("{external}{}", kernel(call))),
        "10: `malloc` is declared but not defined in this module; of the external device functions, warpsim provides `vprintf` (printf) and `__assertfail` (assert)"
    );
    // The runtime's own functions must be declared as the runtime has them.
    let wrong = ".extern .func (.param .b32 func_retval0) vprintf(.param .b64 a);\n";
    let call =
        "{\n.param .b64 param0;\n.param .b32 retval0;\ncall.uni (retval0), vprintf, (param0);\n}";
    assert_eq!(
        error(&format!("{wrong}{}", kernel(call))),
        "1: `vprintf` is declared with parameters that differ from the CUDA runtime's"
    );
}

#[test]
fn printf_and_assert_become_instructions_that_read_the_call_sequence() {
    let body_lines = body;
    let external = ".extern .func (.param .b32 func_retval0) vprintf(.param .b64 a, .param .b64 b);\n\
        .extern .func __assertfail(.param .b64 a, .param .b64 b, .param .b32 c, .param .b64 d, .param .b64 e);\n";
    let body = "{\n.param .b64 param0;\nst.param.b64 [param0], 0;\n.param .b64 param1;\n.param .b32 retval0;\n\
        call.uni (retval0), vprintf, (param0, param1);\nld.param.b32 %r1, [retval0];\n}\n\
        {\n.param .b64 a0;\n.param .b64 a1;\n.param .b32 a2;\n.param .b64 a3;\n.param .b64 a4;\n\
        @%p1 call.uni __assertfail, (a0, a1, a2, a3, a4);\n}";
    let module = parse(&format!("{external}{}", kernel(body)));
    assert_eq!(
        &body_lines(&module)[..11],
        [
            "st.local.b64 [param0], 0x0",
            "ld.local.b64 %vprintf$6, [param0]",
            "ld.local.b64 %vprintf$7, [param1]",
            "vprintf.b32 %vprintf$8, %vprintf$6, %vprintf$7",
            "st.local.b32 [retval0], %vprintf$8",
            "ld.local.b32 %r1, [retval0]",
            "@%p1 ld.local.b64 %__assertfail$9, [a0]",
            "@%p1 ld.local.b64 %__assertfail$10, [a1]",
            "@%p1 ld.local.b32 %__assertfail$11, [a2]",
            "@%p1 ld.local.b64 %__assertfail$12, [a3]",
            "@%p1 assertfail %__assertfail$9, %__assertfail$10, %__assertfail$11, %__assertfail$12",
        ]
    );
}

#[test]
fn a_call_with_the_wrong_number_of_arguments_is_an_error() {
    let call = call_inc(1, 2).replace("param0\n    );", "param0, param0\n    );");
    assert_eq!(
        error(&format!("{INC}{}", kernel(&call))),
        "22: `inc` takes 1 parameter(s), but this call passes 2"
    );
    let call = call_inc(1, 2).replace("call.uni (retval0),", "call.uni");
    assert_eq!(
        error(&format!("{INC}{}", kernel(&call))),
        "22: `inc` returns 1 value(s), but this call receives 0"
    );
    // An argument of the wrong size.
    let call = call_inc(1, 2).replace(".param .b32 param0;", ".param .b64 param0;");
    assert_eq!(
        error(&format!("{INC}{}", kernel(&call))),
        "24: `param0` has 8 bytes, but `inc_param_0` of `inc` has 4"
    );
}

#[test]
fn indirect_calls_are_an_error() {
    let call = "{\n.param .b32 param0;\ncall.uni %r1, (param0);\n}";
    assert_eq!(
        error(&kernel(call)),
        "7: indirect calls (through a register) are not supported: only calls that name their function"
    );
    let prototype = "{\n.param .b32 param0;\nprototype_0 : .callprototype ()_ (.param .b32 _);\n}";
    assert_eq!(
        error(&kernel(prototype)),
        "7: indirect calls (`.callprototype`) are not supported: only calls that name their function"
    );
}

#[test]
fn an_error_inside_a_function_that_nothing_calls_is_still_reported() {
    let broken = ".func f()\n{\n    frobnicate.u32 %r1;\n    ret;\n}\n";
    assert_eq!(error(broken), "3: unknown instruction `frobnicate`");
}

#[test]
fn a_function_defined_twice_is_an_error() {
    assert_eq!(
        error(&format!("{INC}{INC}")),
        // Line 5 of the whole file: the header's three lines and INC's blank first line.
        "13: function `inc` is defined twice (first at line 5)"
    );
}
