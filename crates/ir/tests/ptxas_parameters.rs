//! The parameter placement against ptxas: for each kernel whose SASS
//! `programs/timing/hardware/h200-constant-reads.txt` holds, the order of
//! its barriers, clock reads, fences, global stores and parameter reads in
//! warpsim's placed PTX is the SASS's order of the same (`BAR.SYNC`,
//! `CS2R SR_CLOCKLO`, `MEMBAR`, `STG`, and `LDC`/`ULDC` of a parameter,
//! named by its offset in constant bank 0), but for the two kernels whose
//! pointer NVVM converts (`cvta.to.global`) right after loading it at the
//! top: that use, which SASS does not have, keeps warpsim's load there,
//! where ptxas reads the pointer next to the address arithmetic. (Moving
//! the conversion with the load matched all six, and made the validation
//! and the tails kernels land further from the hardware: docs/timing.md,
//! "Parameters where ptxas reads them".)

use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;

use warpsim_ir::{parse_ptx, AddressBase, Kernel, Op, Operand, SpecialReg, StateSpace};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Where the parameters start in constant bank 0 on sm_90.
const PARAM_BANK_OFFSET: u64 = 0x210;

/// Each kernel's SASS events in the file, in address order.
fn sass_events() -> BTreeMap<String, Vec<String>> {
    let text =
        fs::read_to_string(repo_root().join("programs/timing/hardware/h200-constant-reads.txt"))
            .expect("the SASS is committed");
    let mut kernels: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut current = None;
    for line in text.lines() {
        if let Some(name) = line.trim().strip_prefix("Function : ") {
            current = Some(name.to_string());
            kernels.entry(name.to_string()).or_default();
            continue;
        }
        let Some(name) = &current else { continue };
        let event = if line.contains("BAR.SYNC") {
            Some("bar".to_string())
        } else if line.contains("SR_CLOCKLO") {
            Some("clock".to_string())
        } else if line.contains("MEMBAR") {
            Some("fence".to_string())
        } else if line.contains(" STG") {
            Some("store".to_string())
        } else if line.contains("LDC") {
            // A parameter's read: c[0x0][0x210] on.
            line.split("c[0x0][0x")
                .nth(1)
                .and_then(|rest| rest.split(']').next())
                .and_then(|hex| u64::from_str_radix(hex, 16).ok())
                .filter(|&offset| offset >= PARAM_BANK_OFFSET)
                .map(|offset| format!("param {offset:#x}"))
        } else {
            None
        };
        kernels.get_mut(name).expect("a kernel").extend(event);
    }
    kernels
}

/// The same events of `kernel`'s instructions, in their order.
fn ptx_events(kernel: &Kernel) -> Vec<String> {
    // Each parameter's offset in the bank: its place in the parameter
    // buffer, each aligned to its size.
    let mut offsets = BTreeMap::new();
    let mut next = 0u64;
    for (id, symbol) in kernel.params() {
        let size = u64::from(symbol.ty.size_bytes()) * symbol.len.unwrap_or(1);
        let align = u64::from(symbol.align.max(1));
        next = next.div_ceil(align) * align;
        offsets.insert(id, PARAM_BANK_OFFSET + next);
        next += size;
    }
    let reads_clock = |operand: &Operand| {
        matches!(
            operand,
            Operand::Special(SpecialReg::Clock | SpecialReg::Clock64)
        )
    };
    kernel
        .instrs
        .iter()
        .filter_map(|instr| match &instr.op {
            Op::Barrier { .. } => Some("bar".to_string()),
            Op::Fence { .. } => Some("fence".to_string()),
            Op::Unary { a, .. } if reads_clock(a) => Some("clock".to_string()),
            Op::Store {
                space: StateSpace::Global,
                ..
            } => Some("store".to_string()),
            Op::Load {
                space: StateSpace::Param,
                addr,
                ..
            } => match addr.base {
                AddressBase::Symbol(symbol) => offsets
                    .get(&symbol)
                    .map(|offset| format!("param {:#x}", offset + addr.offset as u64)),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

#[test]
fn parameters_are_read_in_the_order_ptxas_reads_them_on_an_h200() {
    let sass = sass_events();
    let sources = [
        "programs/timing/tails.ptx",
        "programs/timing/stores.ptx",
        "programs/cuda/seed-kernels.ptx",
    ];
    let mut compared = Vec::new();
    let mut mismatches = Vec::new();
    // Each kernel where the order differs, with where warpsim reads the
    // pointer that ptxas reads later.
    let known: BTreeMap<&str, &[&str]> = [
        (
            "storeSpinExit",
            &["param 0x218", "param 0x210", "clock", "store", "clock"][..],
        ),
        (
            "storeSpinBarrier",
            &[
                "param 0x210",
                "bar",
                "param 0x220",
                "clock",
                "param 0x218",
                "store",
                "clock",
                "clock",
                "bar",
                "clock",
                "store",
                "store",
            ][..],
        ),
    ]
    .into_iter()
    .collect();
    for file in sources {
        let text = fs::read_to_string(repo_root().join(file)).expect("the PTX is committed");
        let mut module = parse_ptx(file, &text).unwrap_or_else(|error| panic!("{file}: {error}"));
        for kernel in &mut module.kernels {
            let Some(expected) = sass.get(&kernel.name) else {
                continue;
            };
            warpsim_ir::parameter_placement::place_parameter_loads(kernel);
            let placed = ptx_events(kernel);
            let expected: Vec<String> = match known.get(kernel.name.as_str()) {
                Some(order) => order.iter().map(|event| event.to_string()).collect(),
                None => expected.clone(),
            };
            if placed != expected {
                mismatches.push(format!(
                    "{}:\n  SASS   {expected:?}\n  placed {placed:?}",
                    kernel.name
                ));
            }
            compared.push(kernel.name.clone());
        }
    }
    compared.sort();
    let mut listed: Vec<String> = sass.keys().cloned().collect();
    listed.sort();
    assert_eq!(compared, listed, "every kernel of the SASS file compared");
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
