//! Memory: shared, global, local and param accesses, parameter layout,
//! vector `ld/st.v2/.v4`, sub-word loads and stores with sign and zero
//! extension, generic addressing, dynamic shared memory, out-of-bounds and
//! misaligned accesses (exact fault kind and site), atomics on shared and
//! global memory with many lanes on one address, global sector counts and
//! shared-memory wavefronts and bank conflicts measured through real kernels.

mod common;
use common::*;
use warpsim_ir::{ScalarType, StateSpace};
use warpsim_machine::memory::{buffer_base, SHARED_WINDOW};
use warpsim_machine::program::ParamSlot;
use warpsim_machine::{FaultKind, InstrStats};

// Scalar parameters of several types, laid out with their alignment; each is read back.
const PARAMS: &str = r#"
.kernel params(.param .u32 A, .param .u64 OUT, .param .u8 C, .param .u16 D, .param .f32 E, .param .s32 F)
{
    .reg .u32 %a, %c, %d, %t;
    .reg .s32 %f;
    .reg .f32 %e;
    .reg .u64 %po, %off;
    mov.u32 %t, %tid.x;
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 16;
    add.u64 %po, %po, %off;
    ld.param.u32 %a, [A];
    add.u32 %a, %a, %t;
    st.global.u32 [%po], %a;
    ld.param.u8 %c, [C];
    ld.param.u16 %d, [D];
    shl.b32 %d, %d, 8;
    or.b32 %c, %c, %d;
    st.global.u32 [%po+4], %c;
    ld.param.f32 %e, [E];
    st.global.f32 [%po+8], %e;
    ld.param.s32 %f, [F];
    st.global.s32 [%po+12], %f;
}
"#;

#[test]
fn parameters_are_laid_out_with_alignment_and_read_back() {
    let out = kernel(PARAMS)
        .threads(4)
        .args(&[
            Arg::U32(1000),
            Arg::zeros(16),
            Arg::U8(0xab),
            Arg::U16(0x1234),
            Arg::F32(-2.5),
            Arg::S32(-7),
        ])
        .run()
        .ok();
    let slot = |name: &str, ty: ScalarType, offset| ParamSlot {
        name: name.to_string(),
        ty,
        offset,
        size: ty.size_bytes(),
        is_array: false,
    };
    assert_eq!(
        out.program.params,
        vec![
            slot("A", ScalarType::U32, 0),
            slot("OUT", ScalarType::U64, 8),
            slot("C", ScalarType::U8, 16),
            slot("D", ScalarType::U16, 18),
            slot("E", ScalarType::F32, 20),
            slot("F", ScalarType::S32, 24),
        ]
    );
    assert_eq!(out.program.param_bytes, 28);
    let words = out.u32s(0);
    for t in 0..4 {
        assert_eq!(
            &words[t * 4..t * 4 + 4],
            &[
                1000 + t as u32,
                0x0012_34ab,
                (-2.5f32).to_bits(),
                (-7i32) as u32
            ]
        );
    }
}

// A per-thread .local array: arr[i] = 10 t + i, read back through registers and a symbol.
const LOCAL: &str = r#"
.kernel local(.param .u64 OUT)
{
    .local .align 4 .u32 arr[8];
    .reg .u32 %t, %i, %v, %la, %a, %j, %x, %y;
    .reg .u64 %po, %off;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    mov.u32 %la, arr;
    mov.u32 %i, 0;
FILL:
    mad.lo.u32 %v, %t, 10, %i;
    mad.lo.u32 %a, %i, 4, %la;
    st.local.u32 [%a], %v;           // @local_store
    add.u32 %i, %i, 1;
    setp.lt.u32 %p, %i, 8;
@%p bra FILL;
    add.u32 %j, %t, 3;
    and.b32 %j, %j, 7;
    mad.lo.u32 %a, %j, 4, %la;
    ld.local.u32 %x, [%a];           // @local_load
    and.b32 %j, %t, 7;
    sub.u32 %j, 7, %j;
    mad.lo.u32 %a, %j, 4, %la;
    ld.local.u32 %y, [%a];
    mad.lo.u32 %x, %y, 1000, %x;
    ld.local.u32 %v, [arr+4];
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 8;
    add.u64 %po, %po, %off;
    st.global.v2.u32 [%po], {%x, %v};
}
"#;

#[test]
fn local_arrays_are_private_to_each_thread() {
    let out = run_kernel(LOCAL, 1, 64, &[Arg::zeros(128)]).ok();
    let words = out.u32s(0);
    for t in 0..64u32 {
        let x = t * 10 + (t + 3) % 8;
        let y = t * 10 + 7 - t % 8;
        assert_eq!(
            &words[2 * t as usize..2 * t as usize + 2],
            &[x + 1000 * y, t * 10 + 1],
            "thread {t}"
        );
    }
    assert_eq!(out.program.local_bytes, 32);
    // Local accesses count neither wavefronts nor sectors.
    assert_eq!(out.stats("@local_store"), counts(16, 512));
    assert_eq!(out.stats("@local_load"), counts(2, 64));
}

// Vector accesses: a v4 global load, a v4 shared store (reversed), two v2 shared loads, a v4 global store.
const VECTORS: &str = r#"
.kernel vectors(.param .u64 IN, .param .u64 OUT)
{
    .shared .align 16 .u32 sh[128];
    .reg .u32 %t, %a, %b, %c, %d, %s, %base;
    .reg .u64 %pi, %po, %off;
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 16;
    ld.param.u64 %pi, [IN];
    add.u64 %pi, %pi, %off;
    ld.param.u64 %po, [OUT];
    add.u64 %po, %po, %off;
    ld.global.v4.u32 {%a, %b, %c, %d}, [%pi];        // @gld4
    mov.u32 %base, sh;
    mad.lo.u32 %s, %t, 16, %base;
    st.shared.v4.u32 [%s], {%d, %c, %b, %a};         // @sst4
    ld.shared.v2.u32 {%a, %b}, [%s];                 // @sld2
    ld.shared.v2.u32 {%c, %d}, [%s+8];
    st.global.v4.u32 [%po], {%a, %b, %c, %d};        // @gst4
}
"#;

#[test]
fn vector_loads_and_stores_move_every_element() {
    let input: Vec<u32> = (0..128).map(|i| i * 3 + 1).collect();
    let out = run_kernel(VECTORS, 1, 32, &[Arg::u32s(&input), Arg::zeros(128)]).ok();
    let want: Vec<u32> = (0..128).map(|i| input[(i / 4) * 4 + 3 - i % 4]).collect();
    assert_eq!(out.u32s(1), want);
    // 32 lanes x 16 contiguous bytes: 16 sectors.
    assert_eq!(out.stats("@gld4"), global(1, 32, 16));
    assert_eq!(out.stats("@gst4"), global(1, 32, 16));
    // 16-byte accesses go by quarter warps: 4 wavefronts, ideal 4.
    assert_eq!(out.stats("@sst4"), shared(1, 32, 4, 4));
    // 8-byte accesses at a 16-byte stride: two half warps of 2 wavefronts; ideal 2.
    assert_eq!(out.stats("@sld2"), shared(1, 32, 4, 2));
}

// Sub-word loads widen (ld.s8 into .s32 and .s64 sign-extends, ld.u8 zero-extends); sub-word stores truncate.
const SUBWORD: &str = r#"
.kernel subword(.param .u64 IN8, .param .u64 IN16, .param .u64 OUT)
{
    .reg .u32 %t, %u;
    .reg .s32 %s;
    .reg .s64 %w;
    .reg .u64 %p8, %p16, %po, %off;
    mov.u32 %t, %tid.x;
    cvt.u64.u32 %off, %t;
    ld.param.u64 %p8, [IN8];
    add.u64 %p8, %p8, %off;
    mul.wide.u32 %off, %t, 2;
    ld.param.u64 %p16, [IN16];
    add.u64 %p16, %p16, %off;
    mul.wide.u32 %off, %t, 32;
    ld.param.u64 %po, [OUT];
    add.u64 %po, %po, %off;
    ld.global.s8 %s, [%p8];
    st.global.s32 [%po], %s;
    ld.global.u8 %u, [%p8];
    st.global.u32 [%po+4], %u;
    ld.global.s8 %w, [%p8];
    st.global.s64 [%po+8], %w;
    ld.global.s16 %s, [%p16];
    st.global.s32 [%po+16], %s;
    ld.global.u16 %u, [%p16];
    st.global.u32 [%po+20], %u;
    add.u32 %u, %t, 0x11223344;
    st.global.u8 [%po+24], %u;
    st.global.u16 [%po+26], %u;
}
"#;

#[test]
fn sub_word_loads_extend_and_sub_word_stores_truncate() {
    let in8: Vec<u8> = (0..32u32).map(|t| (t * 37 + 100) as u8).collect();
    let in16: Vec<u16> = (0..32u32).map(|t| (t * 4099 + 30000) as u16).collect();
    let in16_bytes: Vec<u8> = in16.iter().flat_map(|v| v.to_le_bytes()).collect();
    let out = run_kernel(
        SUBWORD,
        1,
        32,
        &[
            Arg::bytes(&in8),
            Arg::bytes(&in16_bytes),
            Arg::bytes(&[0xaa; 32 * 32]),
        ],
    )
    .ok();
    let bytes = out.bytes(2);
    for t in 0..32usize {
        let chunk = &bytes[t * 32..t * 32 + 32];
        let word = |at: usize| u32::from_le_bytes(chunk[at..at + 4].try_into().unwrap());
        let b = in8[t];
        let h = in16[t];
        assert_eq!(word(0), b as i8 as i32 as u32, "thread {t}: s8 -> s32");
        assert_eq!(word(4), u32::from(b), "thread {t}: u8 -> u32");
        assert_eq!(
            u64::from_le_bytes(chunk[8..16].try_into().unwrap()),
            b as i8 as i64 as u64,
            "thread {t}: s8 -> s64"
        );
        assert_eq!(word(16), h as i16 as i32 as u32, "thread {t}: s16 -> s32");
        assert_eq!(word(20), u32::from(h), "thread {t}: u16 -> u32");
        let v = 0x1122_3344u32 + t as u32;
        assert_eq!(chunk[24], v as u8, "thread {t}: st.u8");
        assert_eq!(
            chunk[25], 0xaa,
            "thread {t}: the byte after st.u8 is untouched"
        );
        assert_eq!(
            u16::from_le_bytes([chunk[26], chunk[27]]),
            v as u16,
            "thread {t}: st.u16"
        );
        assert_eq!(&chunk[28..32], &[0xaa; 4], "thread {t}: untouched");
    }
}

// Generic addressing: a global pointer used without a space, and a generic
// store into the shared window read back with ld.shared.
const GENERIC: &str = r#"
.kernel generic(.param .u64 IN, .param .u64 OUT)
{
    .shared .align 4 .u32 sh[32];
    .reg .u32 %t, %v, %s;
    .reg .u64 %pi, %po, %off, %g;
    mov.u32 %t, %tid.x;
    mul.wide.u32 %off, %t, 4;
    ld.param.u64 %pi, [IN];
    add.u64 %pi, %pi, %off;
    ld.u32 %v, [%pi];                // @generic_global_load
    add.u32 %v, %v, 1;
    mov.u32 %s, sh;
    cvt.u64.u32 %g, %s;
    add.u64 %g, %g, 0x4000000000000000;
    sub.u32 %s, 31, %t;
    mul.wide.u32 %off, %s, 4;
    add.u64 %g, %g, %off;
    st.u32 [%g], %v;                 // @generic_shared_store
    bar.sync 0;
    mov.u32 %s, sh;
    mad.lo.u32 %s, %t, 4, %s;
    ld.shared.u32 %v, [%s];
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    st.u32 [%po], %v;                // @generic_global_store
}
"#;

#[test]
fn generic_addresses_reach_global_and_shared_memory() {
    assert_eq!(SHARED_WINDOW, 0x4000_0000_0000_0000);
    let input: Vec<u32> = (0..32).map(|i| i * 100).collect();
    let out = run_kernel(GENERIC, 1, 32, &[Arg::u32s(&input), Arg::zeros(32)]).ok();
    let want: Vec<u32> = (0..32).map(|t| (31 - t) * 100 + 1).collect();
    assert_eq!(out.u32s(1), want);
    assert_eq!(out.stats("@generic_global_load"), global(1, 32, 4));
    assert_eq!(out.stats("@generic_shared_store"), shared(1, 32, 1, 1));
    assert_eq!(out.stats("@generic_global_store"), global(1, 32, 4));
}

// Dynamic shared memory after a static array: dyn[t + N] = 5 t, then out[t] = dyn[31 - t].
const DYNAMIC_SHARED: &str = r#"
.kernel dynshared(.param .u64 OUT, .param .u32 N)
{
    .shared .align 4 .u32 small[3];
    .extern .shared .align 4 .u32 dyn[];
    .reg .u32 %t, %v, %d, %a, %n;
    .reg .u64 %po, %off;
    mov.u32 %t, %tid.x;
    ld.param.u32 %n, [N];
    mov.u32 %d, dyn;
    add.u32 %a, %t, %n;
    mad.lo.u32 %a, %a, 4, %d;
    mul.lo.u32 %v, %t, 5;
    st.shared.u32 [%a], %v;          // @store
    bar.sync 0;
    sub.u32 %a, 31, %t;
    mad.lo.u32 %a, %a, 4, %d;
    ld.shared.u32 %v, [%a];
    ld.param.u64 %po, [OUT];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    st.global.u32 [%po], %v;
}
"#;

#[test]
fn dynamic_shared_memory_follows_static_and_is_bounds_checked() {
    let out = kernel(DYNAMIC_SHARED)
        .threads(32)
        .dynamic_shared(128)
        .args(&[Arg::zeros(32), Arg::U32(0)])
        .run()
        .ok();
    assert_eq!(out.program.static_shared_bytes, 12);
    assert_eq!(out.program.dynamic_shared_offset, 16);
    let want: Vec<u32> = (0..32).map(|t| (31 - t) * 5).collect();
    assert_eq!(out.u32s(0), want);

    // One word further: lane 31 writes dyn[32], at 16 + 128 = 144, past the end.
    let out = kernel(DYNAMIC_SHARED)
        .threads(32)
        .dynamic_shared(128)
        .args(&[Arg::zeros(32), Arg::U32(1)])
        .run();
    assert_site(
        out.fault(),
        FaultKind::OutOfBounds {
            space: StateSpace::Shared,
            address: 144,
            size: 4,
            store: true,
            place: None,
        },
        [0, 0, 0],
        out.pc("@store"),
        0,
        31,
        [31, 0, 0],
    );
}

// out[ctaid.x * 64 + tid.x] = index, over 2 blocks of 64, into a buffer of 100 words.
const OOB_GLOBAL_STORE: &str = r#"
.kernel oobstore(.param .u64 OUT)
{
    .reg .u32 %t, %b, %i;
    .reg .u64 %po, %off;
    mov.u32 %t, %tid.x;
    mov.u32 %b, %ctaid.x;
    mad.lo.u32 %i, %b, 64, %t;
    mul.wide.u32 %off, %i, 4;
    ld.param.u64 %po, [OUT];
    add.u64 %po, %po, %off;
    st.global.u32 [%po], %i;         // @store
}
"#;

#[test]
fn out_of_bounds_global_store_names_buffer_block_thread_and_pc() {
    for host_threads in [1, 2] {
        let out = kernel(OOB_GLOBAL_STORE)
            .grid([2, 1, 1])
            .threads(64)
            .arg(Arg::zeros(100))
            .host_threads(host_threads)
            .run();
        // Block 1, warp 1, lane 4 is thread 36, index 100: byte 400 of OUT.
        assert_site(
            out.fault(),
            FaultKind::OutOfBounds {
                space: StateSpace::Global,
                address: buffer_base(0) + 400,
                size: 4,
                store: true,
                place: Some(place("OUT", 400, 400)),
            },
            [1, 0, 0],
            out.pc("@store"),
            1,
            4,
            [36, 0, 0],
        );
        assert_eq!(out.outcome.failed_blocks, 1);
        assert_eq!(out.outcome.stats.blocks_run, 2);
        // Lanes before the faulting one stored (lanes run in order); nothing after.
        let want: Vec<u32> = (0..100).collect();
        assert_eq!(out.u32s(0), want);
        // The faulting request counts as issued but neither it nor its sectors
        // count as a request to memory.
        assert_eq!(
            out.stats("@store"),
            InstrStats {
                global_requests: 3,
                ..global(4, 128, 12)
            }
        );
    }
}

// ld.shared of s[t + 40] from a 64-word array: lane 24 reads s[64].
const OOB_SHARED_LOAD: &str = r#"
.kernel oobshared()
{
    .shared .align 4 .u32 s[64];
    .reg .u32 %t, %i, %a, %v;
    mov.u32 %t, %tid.x;
    add.u32 %i, %t, 40;
    mov.u32 %a, s;
    mad.lo.u32 %a, %i, 4, %a;
    ld.shared.u32 %v, [%a];          // @load
}
"#;

#[test]
fn out_of_bounds_shared_load() {
    let out = run_kernel(OOB_SHARED_LOAD, 1, 32, &[]);
    assert_site(
        out.fault(),
        FaultKind::OutOfBounds {
            space: StateSpace::Shared,
            address: 256,
            size: 4,
            store: false,
            place: None,
        },
        [0, 0, 0],
        out.pc("@load"),
        0,
        24,
        [24, 0, 0],
    );
}

// ld.local of arr[linear thread index] from an 8-word local array, in a 4 x 8
// block: lane 8, thread (0, 2, 0), reads arr[8].
const OOB_LOCAL_LOAD: &str = r#"
.kernel ooblocal()
{
    .local .align 4 .u32 arr[8];
    .reg .u32 %t, %a, %v, %y, %nx;
    mov.u32 %t, %tid.x;
    mov.u32 %y, %tid.y;
    mov.u32 %nx, %ntid.x;
    mad.lo.u32 %t, %y, %nx, %t;
    mov.u32 %a, arr;
    mad.lo.u32 %a, %t, 4, %a;
    ld.local.u32 %v, [%a];           // @load
}
"#;

#[test]
fn out_of_bounds_local_load() {
    let out = kernel(OOB_LOCAL_LOAD).block([4, 8, 1]).run();
    assert_site(
        out.fault(),
        FaultKind::OutOfBounds {
            space: StateSpace::Local,
            address: 32,
            size: 4,
            store: false,
            place: None,
        },
        [0, 0, 0],
        out.pc("@load"),
        0,
        8,
        [0, 2, 0],
    );
}

// A 4-byte load at byte 2 of a buffer.
const MISALIGNED_GLOBAL: &str = r#"
.kernel misaligned(.param .u64 IN)
{
    .reg .u32 %v;
    .reg .u64 %pi;
    ld.param.u64 %pi, [IN];
    ld.global.u32 %v, [%pi+2];       // @load
}
"#;

#[test]
fn misaligned_global_load() {
    let out = run_kernel(MISALIGNED_GLOBAL, 1, 32, &[Arg::zeros(4)]);
    assert_site(
        out.fault(),
        FaultKind::Misaligned {
            space: StateSpace::Global,
            address: buffer_base(0) + 2,
            size: 4,
            place: Some(place("IN", 2, 16)),
        },
        [0, 0, 0],
        out.pc("@load"),
        0,
        0,
        [0, 0, 0],
    );
}

// A 4-byte shared load at byte 2 t (lane 1 is misaligned), and an 8-byte vector load at byte 4.
const MISALIGNED_OTHERS: &str = r#"
.kernel misaligned2(.param .u64 IN, .param .u32 WHICH)
{
    .shared .align 4 .u32 sh[64];
    .reg .u32 %t, %a, %v, %w, %which;
    .reg .u64 %pi;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    ld.param.u32 %which, [WHICH];
    setp.eq.u32 %p, %which, 1;
@%p bra VECTOR;
    mov.u32 %a, sh;
    mad.lo.u32 %a, %t, 2, %a;
    ld.shared.u32 %v, [%a];          // @shared_load
    exit;
VECTOR:
    ld.param.u64 %pi, [IN];
    ld.global.v2.u32 {%v, %w}, [%pi+4]; // @vector_load
}
"#;

#[test]
fn misaligned_shared_and_vector_loads() {
    let out = run_kernel(MISALIGNED_OTHERS, 1, 32, &[Arg::zeros(4), Arg::U32(0)]);
    assert_site(
        out.fault(),
        FaultKind::Misaligned {
            space: StateSpace::Shared,
            address: 2,
            size: 4,
            place: None,
        },
        [0, 0, 0],
        out.pc("@shared_load"),
        0,
        1,
        [1, 0, 0],
    );
    // A vector must be aligned to its whole size: 8 bytes.
    let out = run_kernel(MISALIGNED_OTHERS, 1, 32, &[Arg::zeros(4), Arg::U32(1)]);
    assert_site(
        out.fault(),
        FaultKind::Misaligned {
            space: StateSpace::Global,
            address: buffer_base(0) + 4,
            size: 8,
            place: Some(place("IN", 4, 16)),
        },
        [0, 0, 0],
        out.pc("@vector_load"),
        0,
        0,
        [0, 0, 0],
    );
}

// `.const` data: lane l reads table[l % 3] (every lane of a warp shares the
// three words), then one lane reads past the table's 12 bytes.
const CONST_LOAD: &str = r#"
.kernel constload(.param .u64 out)
{
    .const .align 4 .u32 table[3] = {7, 9, 11};
    .reg .u32 %l, %index, %base, %v;
    .reg .u64 %out, %offset;
    .reg .pred %p;
    ld.param.u64 %out, [out];
    mov.u32 %l, %laneid;
    rem.u32 %index, %l, 3;
    mov.u32 %base, table;
    mad.lo.u32 %base, %index, 4, %base;
    ld.const.u32 %v, [%base];
    mul.wide.u32 %offset, %l, 4;
    add.s64 %out, %out, %offset;
    st.global.u32 [%out], %v;
    setp.eq.u32 %p, %l, 5;
@%p ld.const.u32 %v, [12];           // @past_end
    exit;
}
"#;

#[test]
fn const_space_holds_its_declared_values_and_nothing_past_them() {
    let out = run_kernel(CONST_LOAD, 1, 32, &[Arg::zeros(32)]);
    let error = out.fault();
    assert!(
        matches!(
            error.kind,
            FaultKind::OutOfBounds {
                space: StateSpace::Const,
                address: 12,
                size: 4,
                store: false,
                ..
            }
        ),
        "{error:?}"
    );
    let site = error.site.unwrap();
    assert_eq!((site.pc, site.lane), (out.pc("@past_end"), 5));
    let want: Vec<u32> = (0..32).map(|lane| [7, 9, 11][lane % 3]).collect();
    assert_eq!(out.u32s(0), want);
}

/// The atomic operations of the atomics kernels, one word each; `{S}` is the
/// space and `{B}` the base address register. Lane t uses t, x = t - 16,
/// y = (7 t) mod 23, bit = 1 << t, f = t / 4.
const ATOMIC_BODY: &str = r#"
    atom.{S}.add.u32 %old, [{B}], %t;                                                 // @atom_add
    st.global.u32 [%po], %old;
    atom.{S}.min.s32 %old, [{B}+4], %x;               st.global.u32 [%po+128], %old;
    atom.{S}.max.u32 %old, [{B}+8], %y;               st.global.u32 [%po+256], %old;
    atom.{S}.exch.b32 %old, [{B}+12], %t;             st.global.u32 [%po+384], %old;
    atom.{S}.cas.b32 %old, [{B}+16], %t, %t1;         st.global.u32 [%po+512], %old;
    atom.{S}.and.b32 %old, [{B}+20], %nbit;           st.global.u32 [%po+640], %old;
    atom.{S}.or.b32 %old, [{B}+24], %bit;             st.global.u32 [%po+768], %old;
    atom.{S}.xor.b32 %old, [{B}+28], %xv;             st.global.u32 [%po+896], %old;
    atom.{S}.inc.u32 %old, [{B}+32], 5;               st.global.u32 [%po+1024], %old;
    atom.{S}.dec.u32 %old, [{B}+36], 5;               st.global.u32 [%po+1152], %old;
    atom.{S}.add.f32 %fold, [{B}+40], %f;             st.global.f32 [%po+1280], %fold;
    red.{S}.add.u32 [{B}+44], %t;                                                     // @red_add
    atom.{S}.max.s32 %old, [{B}+48], %x;              st.global.u32 [%po+1536], %old;
    atom.{S}.min.u32 %old, [{B}+52], %y;              st.global.u32 [%po+1664], %old;
"#;

const ATOMIC_PROLOGUE: &str = r#"
    .reg .u32 %t, %t1, %x, %y, %bit, %nbit, %xv, %old, %v, %s, %sa;
    .reg .f32 %f, %fold;
    .reg .u64 %pg, %pgt, %po, %off;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    add.u32 %t1, %t, 1;
    sub.u32 %x, %t, 16;
    mul.lo.u32 %y, %t, 7;
    rem.u32 %y, %y, 23;
    shl.b32 %bit, 1, %t;
    not.b32 %nbit, %bit;
    mul.lo.u32 %xv, %t, 0x01010101;
    cvt.rn.f32.u32 %f, %t;
    mul.f32 %f, %f, 0f3E800000;
    ld.param.u64 %pg, [G];
    ld.param.u64 %po, [OLD];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    add.u64 %pgt, %pg, %off;
"#;

fn global_atomics_kernel() -> String {
    format!(
        ".kernel atomg(.param .u64 G, .param .u64 OLD)\n{{\n{ATOMIC_PROLOGUE}{}}}\n",
        ATOMIC_BODY.replace("{S}", "global").replace("{B}", "%pg")
    )
}

/// The same operations on shared memory: threads 0..16 copy G into S first and back after.
fn shared_atomics_kernel() -> String {
    format!(
        r#".kernel atoms(.param .u64 G, .param .u64 OLD)
{{
    .shared .align 4 .u32 S[16];
{ATOMIC_PROLOGUE}
    mov.u32 %s, S;
    mad.lo.u32 %sa, %t, 4, %s;
    setp.lt.u32 %p, %t, 16;
@%p ld.global.u32 %v, [%pgt];
@%p st.shared.u32 [%sa], %v;
    bar.sync 0;
{}
    bar.sync 0;
@%p ld.shared.u32 %v, [%sa];
@%p st.global.u32 [%pgt], %v;
}}
"#,
        ATOMIC_BODY.replace("{S}", "shared").replace("{B}", "%s")
    )
}

const ATOMIC_INITIAL: [u32; 16] = [
    100,
    0,
    0,
    0xdead_beef,
    0,
    0xffff_ffff,
    0,
    0x0f0f_0f0f,
    0,
    3,
    0x3fc0_0000, // 1.5
    7,
    (-100i32) as u32,
    1000,
    0,
    0,
];

/// Runs the atomics of one warp in lane order; returns the final words and
/// the old values (14 slots of 32 lanes; slot 11, `red`, returns nothing).
fn atomic_model() -> (Vec<u32>, Vec<u32>) {
    let mut g = ATOMIC_INITIAL.to_vec();
    let mut old = vec![0u32; 14 * 32];
    for t in 0..32u32 {
        let x = t.wrapping_sub(16);
        let y = t * 7 % 23;
        let f = t as f32 * 0.25;
        let olds = [
            g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10], 0, g[12], g[13],
        ];
        for (slot, value) in olds.iter().enumerate() {
            old[slot * 32 + t as usize] = *value;
        }
        g[0] = g[0].wrapping_add(t);
        g[1] = (g[1] as i32).min(x as i32) as u32;
        g[2] = g[2].max(y);
        g[3] = t;
        if g[4] == t {
            g[4] = t + 1;
        }
        g[5] &= !(1 << t);
        g[6] |= 1 << t;
        g[7] ^= t * 0x0101_0101;
        g[8] = if g[8] >= 5 { 0 } else { g[8] + 1 };
        g[9] = if g[9] == 0 || g[9] > 5 { 5 } else { g[9] - 1 };
        g[10] = (f32::from_bits(g[10]) + f).to_bits();
        g[11] = g[11].wrapping_add(t);
        g[12] = (g[12] as i32).max(x as i32) as u32;
        g[13] = g[13].min(y);
    }
    (g, old)
}

#[test]
fn global_atomics_of_one_warp_on_one_address_apply_in_lane_order() {
    let (final_words, olds) = atomic_model();
    // The cas chain: lane t finds t and writes t + 1.
    assert_eq!(final_words[4], 32);
    let out = run_kernel(
        &global_atomics_kernel(),
        1,
        32,
        &[Arg::u32s(&ATOMIC_INITIAL), Arg::zeros(14 * 32)],
    )
    .ok();
    assert_eq!(out.u32s(0), final_words);
    let got = out.u32s(1);
    for slot in 0..14 {
        assert_eq!(
            &got[slot * 32..slot * 32 + 32],
            &olds[slot * 32..slot * 32 + 32],
            "old values of atomic {slot}"
        );
    }
    // 32 lanes on one word: one sector.
    assert_eq!(out.stats("@atom_add"), global(1, 32, 1));
    assert_eq!(out.stats("@red_add"), global(1, 32, 1));
}

#[test]
fn shared_atomics_of_one_warp_on_one_address_apply_in_lane_order() {
    let (final_words, olds) = atomic_model();
    let out = run_kernel(
        &shared_atomics_kernel(),
        1,
        32,
        &[Arg::u32s(&ATOMIC_INITIAL), Arg::zeros(14 * 32)],
    )
    .ok();
    assert_eq!(out.u32s(0), final_words);
    assert_eq!(out.u32s(1), olds);
    // Shared atomics never merge: 32 lanes on one word take 32 wavefronts.
    assert_eq!(out.stats("@atom_add"), shared(1, 32, 32, 1));
    assert_eq!(out.stats("@red_add"), shared(1, 32, 32, 1));
}

// Two warps add their thread index to one global word and keep the old values.
const ATOMIC_TWO_WARPS: &str = r#"
.kernel atomadd(.param .u64 G, .param .u64 OLD)
{
    .reg .u32 %t, %old;
    .reg .u64 %pg, %po, %off;
    mov.u32 %t, %tid.x;
    ld.param.u64 %pg, [G];
    atom.global.add.u32 %old, [%pg], %t;
    ld.param.u64 %po, [OLD];
    mul.wide.u32 %off, %t, 4;
    add.u64 %po, %po, %off;
    st.global.u32 [%po], %old;
}
"#;

#[test]
fn atomic_add_from_two_warps_returns_running_sums() {
    let out = run_kernel(ATOMIC_TWO_WARPS, 1, 64, &[Arg::u32s(&[5]), Arg::zeros(64)]).ok();
    assert_eq!(out.u32s(0), vec![5 + 2016]);
    let want: Vec<u32> = (0..64).map(|t| 5 + t * (t.max(1) - 1) / 2).collect();
    assert_eq!(out.u32s(1), want);
}

// 64-bit atomics: add.u64 and cas.b64 and exch.b64 on global words.
const ATOMIC_64: &str = r#"
.kernel atom64(.param .u64 G, .param .u64 OLD)
{
    .reg .u32 %t;
    .reg .u64 %pg, %po, %off, %v, %old, %n;
    mov.u32 %t, %tid.x;
    ld.param.u64 %pg, [G];
    ld.param.u64 %po, [OLD];
    mul.wide.u32 %off, %t, 8;
    add.u64 %po, %po, %off;
    mul.wide.u32 %v, %t, 0x40000000;
    atom.global.add.u64 %old, [%pg], %v;
    st.global.u64 [%po], %old;
    cvt.u64.u32 %v, %t;
    add.u64 %n, %v, 1;
    atom.global.cas.b64 %old, [%pg+8], %v, %n;
    st.global.u64 [%po+256], %old;
    atom.global.exch.b64 %old, [%pg+16], %n;
    st.global.u64 [%po+512], %old;
}
"#;

#[test]
fn atomics_on_64_bit_words() {
    let start = 0xffff_ffff_0000_0000u64;
    let out = run_kernel(
        ATOMIC_64,
        1,
        32,
        &[Arg::u64s(&[start, 0, 77]), Arg::Buffer(vec![0; 3 * 32 * 8])],
    )
    .ok();
    let total: u64 = (0..32u64).map(|t| t << 30).sum();
    assert_eq!(out.u64s(0), vec![start.wrapping_add(total), 32, 32]);
    let olds = out.u64s(1);
    for t in 0..32u64 {
        let before: u64 = (0..t).map(|s| s << 30).sum();
        assert_eq!(
            olds[t as usize],
            start.wrapping_add(before),
            "add of lane {t}"
        );
        assert_eq!(olds[32 + t as usize], t, "cas of lane {t}");
        assert_eq!(
            olds[64 + t as usize],
            if t == 0 { 77 } else { t },
            "exch of lane {t}"
        );
    }
}

// Each lane loads a u32 at OFFSET + lane * STRIDE bytes of the buffer.
const SECTORS: &str = r#"
.kernel sectors(.param .u64 IN, .param .u32 STRIDE, .param .u32 OFFSET)
{
    .reg .u32 %t, %stride, %offset, %v;
    .reg .u64 %pi, %off;
    mov.u32 %t, %laneid;
    ld.param.u32 %stride, [STRIDE];
    ld.param.u32 %offset, [OFFSET];
    mad.lo.u32 %offset, %t, %stride, %offset;
    cvt.u64.u32 %off, %offset;
    ld.param.u64 %pi, [IN];
    add.u64 %pi, %pi, %off;
    ld.global.u32 %v, [%pi];         // @load
}
"#;

#[test]
fn global_sectors_count_distinct_32_byte_sectors() {
    for (stride, offset, sectors) in [
        (4, 0, 4),    // 128 contiguous bytes
        (32, 0, 32),  // one lane per sector
        (128, 0, 32), // one lane per line
        (0, 0, 1),    // every lane on one word
        (4, 16, 5),   // 128 bytes starting mid-sector
        (8, 0, 8),    // every other word
        (2 * 4, 4, 8),
    ] {
        let out = run_kernel(
            SECTORS,
            1,
            32,
            &[Arg::zeros(32 * 33), Arg::U32(stride), Arg::U32(offset)],
        )
        .ok();
        assert_eq!(
            out.stats("@load"),
            global(1, 32, sectors),
            "stride {stride}, offset {offset}"
        );
    }
    // Two warps each count their own request.
    let out = run_kernel(
        SECTORS,
        1,
        64,
        &[Arg::zeros(32 * 33), Arg::U32(4), Arg::U32(0)],
    )
    .ok();
    assert_eq!(out.stats("@load"), global(2, 64, 8));
}

/// A kernel doing one shared access `access` at byte lane * K of a 4352-byte array.
fn bank_kernel(access: &str) -> String {
    format!(
        r#".kernel banks(.param .u32 K)
{{
    .shared .align 16 .b8 sh[4352];
    .reg .u32 %t, %k, %a, %v, %w, %x, %y;
    .reg .u64 %d;
    .reg .b16 %h;
    .reg .b8 %c;
    mov.u32 %t, %laneid;
    ld.param.u32 %k, [K];
    mov.u32 %a, sh;
    mad.lo.u32 %a, %t, %k, %a;
    {access}                         // @access
}}
"#
    )
}

#[test]
fn bank_conflicts_of_real_kernels_match_the_measured_cases() {
    // (access, bytes per lane K, wavefronts, ideal) from reference/bank-rules.md; the ideal
    // counts of the two broadcasts (K = 0) of 8 and 16 bytes as an H100 measured them
    // (crates/banks/tests/data/h100): never more than the wavefronts.
    let cases: &[(&str, u32, u64, u64)] = &[
        ("ld.shared.u32 %v, [%a];", 4, 1, 1),
        ("ld.shared.u32 %v, [%a];", 8, 2, 1),
        ("ld.shared.u32 %v, [%a];", 128, 32, 1),
        ("ld.shared.u32 %v, [%a];", 0, 1, 1),
        ("ld.shared.u32 %v, [%a];", 132, 1, 1),
        ("ld.shared.u64 %d, [%a];", 8, 2, 2),
        ("ld.shared.u64 %d, [%a];", 16, 4, 2),
        ("ld.shared.u64 %d, [%a];", 0, 1, 1),
        ("ld.shared.v4.u32 {%v, %w, %x, %y}, [%a];", 16, 4, 4),
        ("ld.shared.v4.u32 {%v, %w, %x, %y}, [%a];", 0, 2, 2),
        ("ld.shared.v4.u32 {%v, %w, %x, %y}, [%a];", 32, 8, 4),
        ("ld.shared.v4.u32 {%v, %w, %x, %y}, [%a];", 128, 32, 4),
        ("ld.shared.u8 %c, [%a];", 0, 1, 1),
        ("ld.shared.u8 %c, [%a];", 1, 1, 1),
        ("ld.shared.u8 %c, [%a];", 4, 1, 1),
        ("ld.shared.u8 %c, [%a];", 128, 32, 1),
        ("ld.shared.u16 %h, [%a];", 2, 1, 1),
        ("ld.shared.u16 %h, [%a];", 64, 16, 1),
        ("st.shared.u32 [%a], %t;", 4, 1, 1),
        ("st.shared.u32 [%a], %t;", 8, 2, 1),
        ("st.shared.u32 [%a], %t;", 128, 32, 1),
        ("st.shared.u32 [%a], %t;", 0, 1, 1),
        ("st.shared.v2.u32 [%a], {%t, %t};", 8, 2, 2),
        ("st.shared.v4.u32 [%a], {%t, %t, %t, %t};", 16, 4, 4),
        ("st.shared.v4.u32 [%a], {%t, %t, %t, %t};", 0, 4, 4),
        ("atom.shared.add.u32 %v, [%a], 1;", 4, 1, 1),
        ("atom.shared.add.u32 %v, [%a], 1;", 0, 32, 1),
        ("atom.shared.add.u32 %v, [%a], 1;", 128, 32, 1),
        ("atom.shared.add.u32 %v, [%a], 1;", 8, 2, 1),
    ];
    for &(access, k, wavefronts, ideal) in cases {
        let out = run_kernel(&bank_kernel(access), 1, 32, &[Arg::U32(k)]).ok();
        let want = InstrStats {
            executed: 1,
            threads: 32,
            shared_requests: 1,
            wavefronts,
            ideal_wavefronts: ideal,
            bank_conflicts: wavefronts.saturating_sub(ideal),
            ..InstrStats::default()
        };
        assert_eq!(out.stats("@access"), want, "`{access}` at lane * {k}");
    }
}

// Stride-32 loads by half of the lanes: inactive lanes take no part (16 wavefronts).
const BANKS_HALF_WARP: &str = r#"
.kernel halfwarp()
{
    .shared .align 4 .u32 sh[1024];
    .reg .u32 %t, %a, %v;
    .reg .pred %p;
    mov.u32 %t, %tid.x;
    mov.u32 %a, sh;
    mad.lo.u32 %a, %t, 128, %a;
    setp.lt.u32 %p, %t, 16;
@%p ld.shared.u32 %v, [%a];          // @load
}
"#;

#[test]
fn bank_conflicts_count_active_lanes_only() {
    let out = run_kernel(BANKS_HALF_WARP, 1, 64, &[]).ok();
    // Warp 0: 16 lanes in one bank; warp 1 issues with no lane active and
    // sends no request.
    assert_eq!(
        out.stats("@load"),
        InstrStats {
            shared_requests: 1,
            ..shared(2, 16, 16, 1)
        }
    );
}

// s[3] of a 3-word shared array: past the 12 bytes the kernel declares.
const SHARED_PAST_DECLARED: &str = r#"
.kernel sharedpast()
{
    .shared .align 4 .u32 s[3];
    .reg .u32 %t, %a;
    mov.u32 %t, %tid.x;
    mov.u32 %a, s;
    mad.lo.u32 %a, %t, 4, %a;
    st.shared.u32 [%a], %t;          // @store
}
"#;

#[test]
fn shared_memory_is_bounded_by_the_declared_size() {
    let out = run_kernel(SHARED_PAST_DECLARED, 1, 32, &[]);
    assert_eq!(out.program.static_shared_bytes, 12);
    assert_site(
        out.fault(),
        FaultKind::OutOfBounds {
            space: StateSpace::Shared,
            address: 12,
            size: 4,
            store: true,
            place: None,
        },
        [0, 0, 0],
        out.pc("@store"),
        0,
        3,
        [3, 0, 0],
    );
}

// a[1] of a one-word local array: past the 4 bytes the kernel declares.
const LOCAL_PAST_DECLARED: &str = r#"
.kernel localpast()
{
    .local .align 4 .u32 a[1];
    .reg .u32 %v;
    ld.local.u32 %v, [a+4];          // @load
}
"#;

#[test]
fn local_memory_is_bounded_by_the_declared_size() {
    let out = run_kernel(LOCAL_PAST_DECLARED, 1, 32, &[]);
    assert_site(
        out.fault(),
        FaultKind::OutOfBounds {
            space: StateSpace::Local,
            address: 4,
            size: 4,
            store: false,
            place: None,
        },
        [0, 0, 0],
        out.pc("@load"),
        0,
        0,
        [0, 0, 0],
    );
}

// A load past the end of the parameter buffer (8 bytes).
const PARAM_PAST_END: &str = r#"
.kernel parampast(.param .u64 P)
{
    .reg .u32 %v;
    ld.param.u32 %v, [P+8];          // @load
}
"#;

#[test]
fn out_of_bounds_param_load() {
    let out = run_kernel(PARAM_PAST_END, 1, 32, &[Arg::U64(0)]);
    assert_site(
        out.fault(),
        FaultKind::OutOfBounds {
            space: StateSpace::Param,
            address: 8,
            size: 4,
            store: false,
            place: None,
        },
        [0, 0, 0],
        out.pc("@load"),
        0,
        0,
        [0, 0, 0],
    );
}

// Negative offsets: a shared address below 0 wraps to the top of the 32-bit
// window, a global address below a buffer's base names no buffer.
const BELOW_ZERO: &str = r#"
.kernel belowzero(.param .u64 IN, .param .u32 WHICH)
{
    .reg .u32 %a, %v, %which;
    .reg .u64 %pi;
    .reg .pred %p;
    ld.param.u32 %which, [WHICH];
    setp.eq.u32 %p, %which, 1;
@%p bra GLOBAL;
    mov.u32 %a, 0;
    ld.shared.u32 %v, [%a-4];        // @shared_load
    exit;
GLOBAL:
    ld.param.u64 %pi, [IN];
    ld.global.u32 %v, [%pi-4];       // @global_load
}
"#;

#[test]
fn addresses_below_a_window_or_buffer_are_out_of_bounds() {
    let out = run_kernel(BELOW_ZERO, 1, 32, &[Arg::zeros(4), Arg::U32(0)]);
    assert_site(
        out.fault(),
        FaultKind::OutOfBounds {
            space: StateSpace::Shared,
            address: 0xffff_fffc,
            size: 4,
            store: false,
            place: None,
        },
        [0, 0, 0],
        out.pc("@shared_load"),
        0,
        0,
        [0, 0, 0],
    );
    let out = run_kernel(BELOW_ZERO, 1, 32, &[Arg::zeros(4), Arg::U32(1)]);
    assert_site(
        out.fault(),
        FaultKind::OutOfBounds {
            space: StateSpace::Global,
            address: buffer_base(0) - 4,
            size: 4,
            store: false,
            // `p[-1]`: just before the buffer, not in the null page.
            place: Some(warpsim_machine::error::GlobalPlace::BeforeStart {
                buffer: "IN".to_string(),
                bytes: 4,
            }),
        },
        [0, 0, 0],
        out.pc("@global_load"),
        0,
        0,
        [0, 0, 0],
    );
}
