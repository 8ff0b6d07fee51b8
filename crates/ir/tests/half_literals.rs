//! `.f16` operands: PTX writes halves as bits (`mov.b16 %rs1, 0x3C00`), so a
//! decimal literal read as `.f16` is refused with a clear error rather than
//! stored with the bits of another type.

use warpsim_ir::parse_ptx;

#[test]
fn a_half_literal_is_an_error_naming_its_line() {
    let text = ".version 8.8\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n.reg .f16 %h;\nadd.f16 %h, %h, 1.0;\nret;\n}\n";
    let error = parse_ptx("t.ptx", text).expect_err("a .f16 literal");
    assert_eq!(
        (error.line, error.column, error.message.as_str()),
        (
            7,
            17,
            "a `.f16` operand cannot be a literal: move its bits with `mov.b16`"
        )
    );
}
