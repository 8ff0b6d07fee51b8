//! The load schedule against ptxas: for each kernel of
//! `programs/timing/hardware/h200-load-schedule.txt`, the order in which
//! warpsim's scheduled PTX issues its global loads, shared stores, barriers
//! and double fused multiply-adds (from the first global load on) is the
//! order of the SASS ptxas made of the same PTX on an H200.

use std::fs;
use std::path::PathBuf;

use warpsim_ir::{parse_ptx, Op, ScalarType, StateSpace};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The SASS's mnemonic of an instruction of the four kinds compared.
fn kind(op: &Op) -> Option<&'static str> {
    match op {
        Op::Load {
            space: StateSpace::Global,
            ..
        } => Some("LDG"),
        Op::Store {
            space: StateSpace::Shared,
            ..
        } => Some("STS"),
        Op::Barrier { .. } => Some("BAR"),
        Op::MulAdd {
            ty: ScalarType::F64,
            ..
        } => Some("DFMA"),
        _ => None,
    }
}

#[test]
fn scheduled_loads_come_in_the_order_ptxas_gives_them_on_an_h200() {
    let root = repo_root();
    let table = fs::read_to_string(root.join("programs/timing/hardware/h200-load-schedule.txt"))
        .expect("the measurement is committed");
    let rows: Vec<(&str, &str, String)> = table
        .lines()
        .skip_while(|line| !line.starts_with("kernel "))
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .map(|line| {
            let mut fields = line.split_whitespace();
            let kernel = fields.next().expect("a kernel");
            let file = fields.next().expect("a file");
            (kernel, file, fields.collect::<Vec<_>>().join(" "))
        })
        .collect();
    assert_eq!(rows.len(), 4, "{table}");
    for (kernel_name, file, sass) in rows {
        let text = fs::read_to_string(root.join(file)).expect("the PTX is committed");
        let mut module = parse_ptx(file, &text).unwrap_or_else(|error| panic!("{file}: {error}"));
        let kernel = module
            .kernels
            .iter_mut()
            .find(|kernel| kernel.name == kernel_name)
            .unwrap_or_else(|| panic!("no {kernel_name} in {file}"));
        let unscheduled: Vec<&str> = kernel.instrs.iter().filter_map(|i| kind(&i.op)).collect();
        // As the driver does for NVVM's PTX: merge, then schedule.
        warpsim_ir::merge::merge_kernel(kernel);
        warpsim_ir::schedule::schedule_kernel(kernel);
        let kinds: Vec<&str> = kernel
            .instrs
            .iter()
            .filter_map(|instr| kind(&instr.op))
            .skip_while(|&kind| kind != "LDG")
            .collect();
        let count = sass.split(' ').count();
        let scheduled = kinds[..count.min(kinds.len())].join(" ");
        assert_eq!(scheduled, sass, "{kernel_name}");
        // The PTX as written does not have that order.
        let written: Vec<&str> = unscheduled
            .into_iter()
            .skip_while(|&kind| kind != "LDG")
            .take(count)
            .collect();
        assert_ne!(written.join(" "), sass, "{kernel_name} needs no schedule");
    }
}
