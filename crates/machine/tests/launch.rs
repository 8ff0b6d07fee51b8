//! Launch validation (block and grid shapes, parameter buffer size, shared
//! memory limits) and the partial last warp of a block
//! whose size is not a multiple of 32: its missing lanes never run, vote, take
//! part in shuffles or bank conflicts, nor count as barrier arrivals.

mod common;
use common::*;

// A kernel that does nothing but store its thread index.
const STORE_TID: &str = r#"
.kernel storetid(.param .u64 OUT)
{
    .reg .u32 %t;
    .reg .u64 %po, %off;
    mov.u32 %t, %tid.x;
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    st.global.u32 [%po], %t;
}
"#;

fn refused(launcher: Launcher) -> String {
    match launcher.try_run() {
        Ok(_) => panic!("the launch was expected to be refused"),
        Err(error) => error.message,
    }
}

#[test]
fn block_shapes_beyond_the_device_limits_are_refused() {
    let message = refused(kernel(STORE_TID).block([1025, 1, 1]).arg(Arg::zeros(2048)));
    assert!(message.contains("block dimension x is 1025"), "{message}");
    let message = refused(kernel(STORE_TID).block([32, 33, 1]).arg(Arg::zeros(2048)));
    assert!(message.contains("1056 threads"), "{message}");
    let message = refused(kernel(STORE_TID).block([1, 1, 65]).arg(Arg::zeros(2048)));
    assert!(message.contains("block dimension z is 65"), "{message}");
    let message = refused(kernel(STORE_TID).block([1, 0, 1]).arg(Arg::zeros(2048)));
    assert!(message.contains("block dimension y is 0"), "{message}");
    // The largest block is accepted.
    let out = kernel(STORE_TID)
        .block([1024, 1, 1])
        .arg(Arg::zeros(1024))
        .run()
        .ok();
    assert_eq!(out.u32s(0), (0..1024).collect::<Vec<u32>>());
}

#[test]
fn zero_grid_dimensions_are_refused() {
    for grid in [[0, 1, 1], [1, 0, 1], [1, 1, 0]] {
        let message = refused(kernel(STORE_TID).grid(grid).arg(Arg::zeros(32)));
        assert!(
            message.contains("grid dimension") && message.contains("is 0"),
            "{message}"
        );
    }
    let message = refused(kernel(STORE_TID).grid([1, 65_536, 1]).arg(Arg::zeros(32)));
    assert!(message.contains("grid dimension y is 65536"), "{message}");
}

#[test]
fn a_parameter_buffer_of_the_wrong_size_is_refused() {
    for size in [0, 4, 9, 16] {
        let message = refused(
            kernel(STORE_TID)
                .arg(Arg::zeros(32))
                .raw_params(vec![0; size]),
        );
        assert!(
            message.contains(&format!("{size} bytes")) && message.contains("take 8"),
            "{message}"
        );
    }
}

// 12289 words of static shared memory: 4 bytes more than a block may declare.
const TOO_MUCH_SHARED: &str = r#"
.kernel bigshared()
{
    .shared .align 4 .u32 big[12289];
    .reg .u32 %t;
    mov.u32 %t, %tid.x;
}
"#;

// Dynamic shared memory only.
const DYNAMIC_ONLY: &str = r#"
.kernel dynonly()
{
    .extern .shared .align 4 .u32 dyn[];
    .reg .u32 %t;
    mov.u32 %t, %tid.x;
}
"#;

#[test]
fn shared_memory_beyond_the_limits_is_refused() {
    let message = refused(kernel(TOO_MUCH_SHARED));
    assert!(
        message.contains("49156 bytes of static shared memory"),
        "{message}"
    );
    kernel(DYNAMIC_ONLY).dynamic_shared(227 * 1024).run().ok();
    let message = refused(kernel(DYNAMIC_ONLY).dynamic_shared(227 * 1024 + 1));
    assert!(message.contains("exceed"), "{message}");
}

// A block of 16 x 3 = 48 threads: warp 1 holds threads (0..16, 2) in lanes 0..15.
const PARTIAL_WARP: &str = r#"
.kernel partial(.param .u64 OUT)
{
    .shared .align 4 .u32 sh[2048];
    .reg .u32 %x, %y, %lin, %lane, %v, %r, %a, %s;
    .reg .u64 %po, %off;
    .reg .pred %p, %all;
    mov.u32 %x, %tid.x;
    mov.u32 %y, %tid.y;
    mad.lo.u32 %lin, %y, 16, %x;
    mov.u32 %lane, %laneid;
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %lin, 16;
    add.u64 %po, %po, %off;
    // sh[lin * 32] = lin: one bank for the whole warp.
    mov.u32 %s, sh;
    mul.lo.u32 %a, %lin, 128;
    add.u32 %a, %a, %s;
    st.shared.u32 [%a], %lin;                        // @conflicting_store
    bar.sync 0;                                      // @sync
    setp.lt.u32 %p, %lin, 1000;
    vote.sync.ballot.b32 %v, %p, 0xffffffff;         // @ballot
    vote.sync.all.pred %all, %p, 0xffffffff;
    // Sum of lin over the lanes of each 16-lane half, by a width-16 butterfly.
    mov.u32 %v, %lin;
    shfl.sync.bfly.b32 %r, %v, 8, 0x101f, 0xffffffff;
    add.u32 %v, %v, %r;
    shfl.sync.bfly.b32 %r, %v, 4, 0x101f, 0xffffffff;
    add.u32 %v, %v, %r;
    shfl.sync.bfly.b32 %r, %v, 2, 0x101f, 0xffffffff;
    add.u32 %v, %v, %r;
    shfl.sync.bfly.b32 %r, %v, 1, 0x101f, 0xffffffff;
    add.u32 %v, %v, %r;
    vote.sync.ballot.b32 %r, %p, 0xffffffff;
    selp.u32 %a, 1, 0, %all;
    st.global.v4.u32 [%po], {%lin, %r, %v, %a};      // @store
}
"#;

#[test]
fn partial_last_warp_has_permanently_inactive_lanes() {
    let out = kernel(PARTIAL_WARP)
        .block([16, 3, 1])
        .arg(Arg::zeros(48 * 4))
        .run()
        .ok();
    let words = out.u32s(0);
    for lin in 0..48u32 {
        let half: u32 = (lin / 16 * 16..lin / 16 * 16 + 16).sum();
        let ballot = if lin < 32 { u32::MAX } else { 0xffff };
        assert_eq!(
            &words[lin as usize * 4..lin as usize * 4 + 4],
            &[lin, ballot, half, 1],
            "thread {lin}"
        );
    }
    // Two warps issue every instruction; 48 threads execute it.
    assert_eq!(out.stats("@sync"), counts(2, 48));
    assert_eq!(out.stats("@ballot"), counts(2, 48));
    // 32 lanes in one bank, then 16: 48 wavefronts.
    assert_eq!(out.stats("@conflicting_store"), shared(2, 48, 48, 2));
    // 512 + 256 contiguous bytes: 16 + 8 sectors.
    assert_eq!(out.stats("@store"), global(2, 48, 24));
}
