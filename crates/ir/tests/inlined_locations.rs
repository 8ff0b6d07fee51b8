//! `.loc ... inlined_at`: where code the compiler inlined came from. A call
//! site is named by its place only; where that place was itself inlined is
//! what the last `.loc` naming it said. The chain survives the `.kir` round
//! trip, and sites are numbered the same way whichever text they came from.

use warpsim_ir::{parse_module, parse_ptx, print_module, FileId, Module};

/// `inner` (lines 2-3) inlined into `outer` at line 6, `outer` inlined into
/// the kernel at line 12, as NVRTC writes it for nested inline calls.
const NESTED: &str = ".version 8.8
.target sm_90
.address_size 64
.visible .entry k()
{
.reg .b32 %r<3>;
.loc 1 11 3
mov.u32 %r1, 1;
.loc 1 12 3
.loc 1 6 3, function_name $L__info_string0, inlined_at 1 12 3
mov.u32 %r2, 2;
.loc 1 2 3, function_name $L__info_string1, inlined_at 1 6 3
bar.sync 0;
.loc 1 7 3, function_name $L__info_string0+4, inlined_at 1 12 3
add.s32 %r2, %r2, %r1;
.loc 1 13 1
ret;
}
.file 1 \"nested.cu\"
";

fn chains(module: &Module) -> Vec<Vec<(u32, u32)>> {
    module.kernels[0]
        .instrs
        .iter()
        .map(|instr| {
            module
                .inline_chain(instr.loc)
                .into_iter()
                .map(|(file, line)| (file.0, line))
                .collect()
        })
        .collect()
}

#[test]
fn nested_inline_chains_are_followed_out_to_the_kernel() {
    let module = parse_ptx("nested.ptx", NESTED).expect("it parses");
    let file = module
        .files
        .iter()
        .position(|name| name == "nested.cu")
        .unwrap() as u32;
    assert_eq!(
        chains(&module),
        [
            vec![(file, 11)],
            vec![(file, 6), (file, 12)],
            vec![(file, 2), (file, 6), (file, 12)],
            vec![(file, 7), (file, 12)],
            vec![(file, 13)],
        ]
    );
    // Two sites: line 12 (the kernel's call of `outer`), then line 6
    // inlined at it, outer sites first.
    assert_eq!(module.inline_sites.len(), 2);
    assert_eq!(module.inline_sites[0].line, 12);
    assert_eq!(module.inline_sites[0].inlined_at, None);
    assert_eq!(module.inline_sites[1].line, 6);
    assert_eq!(
        module.inline_sites[1].inlined_at,
        Some(warpsim_ir::InlineSiteId(0))
    );
    assert_eq!(module.inline_sites[0].file, FileId(file));
}

#[test]
fn inline_chains_survive_the_kir_round_trip() {
    let module = parse_ptx("nested.ptx", NESTED).expect("it parses");
    let printed = print_module(&module);
    assert!(
        printed.contains(".loc 1 2 inlined_at 1 6 inlined_at 1 12"),
        "{printed}"
    );
    let reparsed = parse_module("nested.kir", &printed).expect("the printed form parses");
    assert_eq!(reparsed, module);
}

#[test]
fn a_malformed_loc_attribute_is_an_error() {
    let text = NESTED.replace(
        "function_name $L__info_string0,",
        "function_nam $L__info_string0,",
    );
    let error = parse_ptx("nested.ptx", &text).unwrap_err();
    assert_eq!(error.line, 10);
    assert!(
        error.message.contains("`function_name` or `inlined_at`"),
        "{}",
        error.message
    );
}
