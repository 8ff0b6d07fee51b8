//! Tests of register sharing: registers share a slot exactly when no thread
//! needs both at once, through straight code, loops, guarded writes and
//! branches.

use super::*;
use crate::cfg::Cfg;
use crate::merge::read_registers;
use crate::{parse_module, ScalarType};

/// The slot of each value register of the only kernel of `text`, by name,
/// and the number of slots, sharing the IR's value registers.
fn slots(text: &str) -> (Vec<(String, u32)>, u32) {
    let module = parse_module("sharing.kir", text).expect("parses");
    let kernel = &module.kernels[0];
    // Dense indices of the value registers.
    let mut dense = vec![None; kernel.regs.len()];
    let mut names = Vec::new();
    for (index, decl) in kernel.regs.iter().enumerate() {
        if decl.ty != ScalarType::Pred {
            dense[index] = Some(names.len() as u32);
            names.push(decl.name.clone());
        }
    }
    let uses: Vec<RegisterUse> = kernel
        .instrs
        .iter()
        .map(|instr| RegisterUse {
            reads: read_registers(instr)
                .into_iter()
                .filter_map(|reg| dense[reg.index()])
                .collect(),
            writes: instr
                .op
                .destinations()
                .into_iter()
                .filter_map(|reg| dense[reg.index()])
                .collect(),
            unguarded: instr.guard.is_none(),
            written_late: false,
        })
        .collect();
    let (slot_of, count) = share_slots(&Cfg::build(kernel), &uses, names.len(), &[], &[]);
    (names.into_iter().zip(slot_of).collect(), count)
}

fn slot(named: &[(String, u32)], name: &str) -> u32 {
    named.iter().find(|(n, _)| n == name).expect("register").1
}

#[test]
fn a_register_dead_before_another_is_written_shares_its_slot() {
    let (named, count) = slots(
        ".kernel k(.param .u64 out)
{
    .reg .u32 %a, %b, %c;
    .reg .u64 %o;
    mov.u32 %a, %tid.x;
    add.u32 %b, %a, 1;
    add.u32 %c, %b, 1;
    ld.param.u64 %o, [out];
    st.global.u32 [%o], %c;
    exit;
}",
    );
    // %a dies where %b is written, but an instruction's sources and
    // destinations never share; %c may take %a's slot; %o is written while
    // %c is live.
    assert_eq!(slot(&named, "%a"), 0);
    assert_eq!(slot(&named, "%b"), 1);
    assert_eq!(slot(&named, "%c"), 0);
    assert_eq!(slot(&named, "%o"), 1);
    assert_eq!(count, 2);
}

#[test]
fn a_value_carried_around_a_loop_keeps_its_slot_through_the_loop() {
    let (named, count) = slots(
        ".kernel k(.param .u64 out)
{
    .reg .u32 %sum, %i, %t;
    .reg .u64 %o;
    .reg .pred %p;
    mov.u32 %sum, 0;
    mov.u32 %i, 0;
LOOP:
    add.u32 %t, %i, %i;
    add.u32 %sum, %sum, %t;
    add.u32 %i, %i, 1;
    setp.lt.u32 %p, %i, 10;
@%p bra LOOP;
    ld.param.u64 %o, [out];
    st.global.u32 [%o], %sum;
    exit;
}",
    );
    // %sum and %i are live around the whole loop, and %t while %sum is
    // updated: three slots; %o takes a slot %i or %t left.
    assert_ne!(slot(&named, "%sum"), slot(&named, "%i"));
    assert_ne!(slot(&named, "%t"), slot(&named, "%i"));
    assert_ne!(slot(&named, "%t"), slot(&named, "%sum"));
    assert_ne!(slot(&named, "%o"), slot(&named, "%sum"));
    assert_eq!(count, 3);
}

#[test]
fn a_guarded_write_keeps_the_value_it_may_not_replace() {
    let (named, _) = slots(
        ".kernel k(.param .u64 out)
{
    .reg .u32 %a, %b, %c;
    .reg .u64 %o;
    .reg .pred %p;
    mov.u32 %a, %tid.x;
    mov.u32 %c, 7;
    setp.lt.u32 %p, %a, 16;
    mov.u32 %b, %a;
@%p mov.u32 %c, %a;
    ld.param.u64 %o, [out];
    st.global.u32 [%o], %c;
    st.global.u32 [%o+4], %b;
    exit;
}",
    );
    // Lanes where %p is false keep the first %c, so it is live from its
    // first write to the store: %b, written in between, cannot share it.
    assert_ne!(slot(&named, "%b"), slot(&named, "%c"));
}

#[test]
fn registers_on_different_sides_of_a_branch_share() {
    let (named, count) = slots(
        ".kernel k(.param .u64 out)
{
    .reg .u32 %a, %x, %y, %r;
    .reg .u64 %o;
    .reg .pred %p;
    mov.u32 %a, %tid.x;
    setp.lt.u32 %p, %a, 16;
@%p bra ELSE;
    mul.lo.u32 %x, %a, 3;
    add.u32 %r, %x, 1;
    bra DONE;
ELSE:
    mul.lo.u32 %y, %a, 5;
    add.u32 %r, %y, 2;
DONE:
    ld.param.u64 %o, [out];
    st.global.u32 [%o], %r;
    exit;
}",
    );
    assert_eq!(slot(&named, "%x"), slot(&named, "%y"));
    assert_ne!(slot(&named, "%x"), slot(&named, "%a"));
    assert_ne!(slot(&named, "%o"), slot(&named, "%r"));
    assert_eq!(count, 2);
}

#[test]
fn registers_set_at_entry_never_share_with_each_other_or_with_a_register_read_first() {
    // Code over three registers: 0 read before any write, 1 and 2 set at
    // entry and never read.
    let module = parse_module(
        "sharing.kir",
        ".kernel k()
{
    exit;
}",
    )
    .expect("parses");
    let cfg = Cfg::build(&module.kernels[0]);
    let uses = [RegisterUse {
        reads: vec![0],
        writes: vec![],
        unguarded: true,
        written_late: false,
    }];
    let (slots, count) = share_slots(&cfg, &uses, 3, &[1, 2], &[]);
    assert_eq!(slots, [0, 1, 2]);
    assert_eq!(count, 3);
    // Without the entry values, all three can share one slot.
    assert_eq!(share_slots(&cfg, &uses, 3, &[], &[]), (vec![0, 0, 0], 1));
}

#[test]
fn past_the_matrix_limit_every_register_keeps_its_own_slot() {
    let module = parse_module("sharing.kir", ".kernel k()\n{\n    exit;\n}").expect("parses");
    let cfg = Cfg::build(&module.kernels[0]);
    let uses = [RegisterUse::default()];
    // At the limit the registers, never used, all share one slot; one
    // past it, none does.
    assert_eq!(
        share_slots(&cfg, &uses, MAX_SHARED_REGISTERS, &[], &[]).1,
        1
    );
    let (slots, count) = share_slots(&cfg, &uses, MAX_SHARED_REGISTERS + 1, &[], &[]);
    assert_eq!(count as usize, MAX_SHARED_REGISTERS + 1);
    assert!(slots
        .iter()
        .enumerate()
        .all(|(index, &slot)| slot as usize == index));
}

/// The control-flow graph of straight code of four instructions (what
/// they are does not matter: the tests' uses say what they read and
/// write).
fn four_straight_instructions() -> Cfg {
    let module = parse_module(
        "sharing.kir",
        ".kernel k()
{
    .reg .u32 %a;
    mov.u32 %a, 1;
    mov.u32 %a, 1;
    mov.u32 %a, 1;
    exit;
}",
    )
    .expect("parses");
    Cfg::build(&module.kernels[0])
}

/// An unguarded instruction's use of registers.
fn unguarded(reads: &[u32], writes: &[u32]) -> RegisterUse {
    RegisterUse {
        reads: reads.to_vec(),
        writes: writes.to_vec(),
        unguarded: true,
        written_late: false,
    }
}

#[test]
fn a_register_written_late_shares_with_nothing() {
    // Register 0 is written and never read; 1 and 2 are each written and
    // read next.
    let cfg = four_straight_instructions();
    let mut uses = vec![
        unguarded(&[], &[0]),
        unguarded(&[], &[1]),
        unguarded(&[1], &[2]),
        unguarded(&[2], &[]),
    ];
    assert_eq!(share_slots(&cfg, &uses, 3, &[], &[]), (vec![0, 0, 1], 2));
    uses[0].written_late = true;
    assert_eq!(share_slots(&cfg, &uses, 3, &[], &[]), (vec![0, 1, 2], 3));
}

#[test]
fn registers_of_different_widths_never_share_a_slot() {
    // Two registers, each written and then read by the next instruction:
    // never live at once, so they share one slot when they are of one
    // width.
    let cfg = four_straight_instructions();
    let uses = [
        unguarded(&[], &[0]),
        unguarded(&[0], &[]),
        unguarded(&[], &[1]),
        unguarded(&[1], &[]),
    ];
    assert_eq!(share_slots(&cfg, &uses, 2, &[], &[]), (vec![0, 0], 1));
    assert_eq!(
        share_slots(&cfg, &uses, 2, &[], &[false, false]),
        (vec![0, 0], 1)
    );
    // Register 1 wide: it opens a slot of its own.
    assert_eq!(
        share_slots(&cfg, &uses, 2, &[], &[false, true]),
        (vec![0, 1], 2)
    );
}
