//! Tests of register sharing: registers share a slot exactly when no thread
//! needs both at once, through straight code, loops, guarded writes and
//! branches.

use super::*;
use crate::{parse_module, ScalarType};

/// The slot of each value register of the only kernel of `text`, by name,
/// and the number of slots.
fn slots(text: &str) -> (Vec<(String, u32)>, u32) {
    let module = parse_module("sharing.kir", text).expect("parses");
    let kernel = &module.kernels[0];
    let (slot_of, count) = share_registers(kernel, |reg| kernel.reg(reg).ty != ScalarType::Pred);
    let named = kernel
        .regs
        .iter()
        .zip(&slot_of)
        .filter_map(|(decl, slot)| slot.map(|slot| (decl.name.clone(), slot)))
        .collect();
    (named, count)
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
