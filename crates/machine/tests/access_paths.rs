//! The whole-warp path of `access.rs` (shared, global, `.param` and
//! `.const` accesses with no checker watching): its shared and global
//! accesses against the lane-by-lane path that the initialization and race
//! checkers force (the same bytes, registers, wavefronts and sectors), and
//! all of it against the host, on accesses chosen to tell the paths apart
//! (vectors, sign extension, lanes storing to one word, inactive lanes,
//! broadcasts).

mod common;

use common::*;

// Lane l of each warp: loads IN[l] as a v2 pair, a sign-extended byte, and a
// constant; the even lanes store into one shared word (the highest even
// lane's value stays), every lane stores a v4 into its own 16 bytes at a
// stride that conflicts, then lanes read back across the block (a
// broadcast of the shared word and a neighbour's v4).
const MIXED: &str = r#"
.kernel mixed(.param .u64 IN, .param .u64 OUT, .param .u32 SCALE)
{
    .shared .align 16 .u32 tile[512];
    .shared .align 4 .u32 word[1];
    .const .align 4 .u32 table[3] = {7, 9, 11};
    .reg .u32 %t, %l, %scale, %x, %y, %c, %k, %a, %w, %n, %r0, %r1, %r2, %r3, %m;
    .reg .s32 %b;
    .reg .u64 %pin, %pout, %o, %p8;
    .reg .pred %even;
    mov.u32 %t, %tid.x;
    and.b32 %l, %t, 31;
    ld.param.u64 %pin, [IN];                         // @param_in
    ld.param.u64 %pout, [OUT];
    ld.param.u32 %scale, [SCALE];                    // @param_scale
    mul.wide.u32 %o, %t, 8;
    add.u64 %o, %pin, %o;
    ld.global.v2.u32 {%x, %y}, [%o];                 // @global_v2
    cvt.u64.u32 %p8, %t;
    add.u64 %p8, %pin, %p8;
    ld.global.s8 %b, [%p8];                          // @global_s8
    rem.u32 %k, %l, 3;
    shl.b32 %k, %k, 2;
    mov.u32 %a, table;
    add.u32 %a, %a, %k;
    ld.const.u32 %c, [%a];                           // @const
    and.b32 %m, %t, 1;
    setp.eq.u32 %even, %m, 0;
    mov.u32 %w, word;
@%even st.shared.u32 [%w], %t;                       // @same_word
    mul.lo.u32 %a, %t, 64;
    and.b32 %a, %a, 2047;
    mov.u32 %n, tile;
    add.u32 %a, %a, %n;
    mul.lo.u32 %x, %x, %scale;
    st.shared.v4.u32 [%a], {%x, %y, %c, %t};         // @shared_v4
    bar.sync 0;
    ld.shared.u32 %w, [%w];                          // @broadcast
    add.u32 %n, %t, 1;
    and.b32 %n, %n, 31;
    mul.lo.u32 %n, %n, 64;
    mov.u32 %a, tile;
    add.u32 %a, %a, %n;
    ld.shared.v4.u32 {%r0, %r1, %r2, %r3}, [%a];     // @neighbour
    add.u32 %r0, %r0, %r1;
    add.u32 %r0, %r0, %r2;
    add.u32 %r0, %r0, %w;
    cvt.u32.s32 %r1, %b;
    mul.wide.u32 %o, %t, 16;
    add.u64 %o, %pout, %o;
    st.global.v4.u32 [%o], {%r0, %r1, %r3, %c};     // @global_v4
}
"#;

fn input() -> Vec<u8> {
    // Bytes that make the sign-extended loads negative and positive.
    (0..64 * 8).map(|i| (i * 37 + 5) as u8).collect()
}

fn run(checked: bool) -> Outcome {
    let mut launcher = kernel(MIXED).grid([1, 1, 1]).block([64, 1, 1]).args(&[
        Arg::bytes(&input()),
        Arg::zeros(64 * 4),
        Arg::U32(3),
    ]);
    if checked {
        launcher = launcher.check_initialization().check_races();
    }
    launcher.run().ok()
}

#[test]
fn the_whole_warp_path_agrees_with_the_lane_by_lane_path() {
    let fast = run(false);
    let checked = run(true);
    assert_eq!(fast.u32s(1), checked.u32s(1));
    for marker in [
        "@param_in",
        "@param_scale",
        "@global_v2",
        "@global_s8",
        "@const",
        "@same_word",
        "@shared_v4",
        "@broadcast",
        "@neighbour",
        "@global_v4",
    ] {
        assert_eq!(fast.stats(marker), checked.stats(marker), "{marker}");
    }
}

#[test]
fn the_whole_warp_path_computes_what_the_host_does() {
    let out = run(false);
    let input = input();
    let word = |i: usize| u32::from_le_bytes(input[4 * i..4 * i + 4].try_into().unwrap());
    let table = [7u32, 9, 11];
    let results = out.u32s(1);
    let mut words = Vec::new();
    // Thread t stored {IN[2t] * 3, IN[2t + 1], table[t % 32 % 3], t} at
    // tile[(t * 16) % 512]: threads t and t + 32 share a slot, and which
    // warp stored last is the scheduler's choice, so the writer is read
    // from the result and both candidates are accepted.
    for t in 0..64usize {
        let neighbour = ((t + 1) % 32) as u32;
        let row = results[4 * t..4 * t + 4].to_vec();
        let signed = input[t] as i8 as i32 as u32;
        assert_eq!(row[1], signed, "thread {t}: the sign-extended byte");
        assert_eq!(row[3], table[t % 32 % 3], "thread {t}: the constant");
        let writer = row[2];
        assert!(
            writer == neighbour || writer == neighbour + 32,
            "thread {t}"
        );
        let w = writer as usize;
        // Every even thread stored its index into the shared word, lane by
        // lane, so the highest even lane of the warp that stored last
        // stays: 30 or 62, the same for every thread.
        let shared_word = row[0]
            .wrapping_sub(word(2 * w).wrapping_mul(3))
            .wrapping_sub(word(2 * w + 1))
            .wrapping_sub(table[w % 32 % 3]);
        assert!(shared_word == 30 || shared_word == 62, "thread {t}");
        words.push(shared_word);
    }
    assert!(words.windows(2).all(|pair| pair[0] == pair[1]));
    // One store instruction per warp to one word: one wavefront each.
    let same_word = out.stats("@same_word");
    assert_eq!(same_word.shared_requests, 2);
    assert_eq!(same_word.wavefronts, 2);
    // 16-byte stores at a 64-byte stride go in quarter-warp phases
    // (bank-rules.md): in each phase of 8 lanes, four start at bank 0 and
    // four at bank 16, at different addresses: 4 wavefronts a phase, 16 a
    // request.
    let v4 = out.stats("@shared_v4");
    assert_eq!(v4.shared_requests, 2);
    assert_eq!(v4.wavefronts, 2 * 16);
}
