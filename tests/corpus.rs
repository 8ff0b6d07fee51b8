//! A corpus of real-world CUDA kernels (`programs/corpus/`: reductions, scans,
//! a histogram, a bitonic sort, a convolution, a transpose, a matrix multiply,
//! device-function calls, cooperative groups, warp-aggregated atomics, softmax,
//! layer normalisation, vector loads, float atomics, barrier reductions, half
//! precision), compiled to PTX by NVRTC (committed beside the `.cu`). Every
//! kernel's output is checked against a computation on the host, and the bank
//! conflicts the report gives per CUDA line are checked against the access
//! pattern worked out in the comments (4-byte banks, 32 of them: a warp's
//! request takes as many wavefronts as the most distinct words any one bank is
//! asked for; lanes reading the same word share it; shared atomics never
//! share).

mod support;

use std::collections::BTreeMap;

use support::{f32s, i32s, repo_root, run_program, run_program_on, u32s, ProgramRun};

// ---------------------------------------------------------------------------
// Helpers

/// Runs a corpus kernel with its accesses as the PTX writes them: the
/// conflicts worked out here are those of the PTX's loads and stores, before
/// ptxas merges neighbouring ones (what that does to the counts is checked
/// against an H100 in crates/machine/tests/merged_accesses.rs).
fn run(name: &str) -> ProgramRun {
    let mut config = warpsim_driver::MachineConfig::hopper();
    config.compiler.merge_accesses = false;
    let run = run_program_on(&format!("corpus/{name}"), config, 2);
    assert!(run.failure.is_none(), "{name}: {:?}", run.failure);
    assert_eq!(run.report.status, "ok", "{name}");
    run
}

fn u16s(bytes: &[u8]) -> Vec<u16> {
    bytes
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// The 1-based line of the first line containing `needle` after the line that
/// defines `function` in `programs/corpus/<file>`.
fn line_of(file: &str, function: &str, needle: &str) -> u32 {
    let source = std::fs::read_to_string(repo_root().join("programs/corpus").join(file))
        .unwrap_or_else(|error| panic!("{file}: {error}"));
    let start = source
        .lines()
        .position(|line| line.contains(&format!(" {function}(")))
        .unwrap_or_else(|| panic!("no function {function} in {file}"));
    let offset = source
        .lines()
        .skip(start)
        .position(|line| line.contains(needle))
        .unwrap_or_else(|| panic!("no `{needle}` in {function}"));
    (start + offset + 1) as u32
}

/// Bank conflicts per CUDA line of `file`, only the lines that have some.
fn conflicts_by_line(run: &ProgramRun, file: &str) -> BTreeMap<u32, u64> {
    let mut lines = BTreeMap::new();
    for instruction in &run.report.instructions {
        if instruction.counts.bank_conflicts > 0 {
            assert_eq!(
                instruction.file,
                format!("programs/corpus/{file}"),
                "{}",
                instruction.text
            );
            *lines.entry(instruction.line).or_insert(0) += instruction.counts.bank_conflicts;
        }
    }
    lines
}

/// Asserts that the lines of `function` holding `needle`s are exactly the
/// lines with bank conflicts, with these counts.
fn assert_conflicts(run: &ProgramRun, file: &str, function: &str, expected: &[(&str, u64)]) {
    let expected: BTreeMap<u32, u64> = expected
        .iter()
        .map(|&(needle, conflicts)| (line_of(file, function, needle), conflicts))
        .collect();
    assert_eq!(conflicts_by_line(run, file), expected, "{function}");
}

/// Wavefronts of one warp's request for these 4-byte word indices on 32 banks
/// of 4 bytes: the most distinct words asked of any one bank (a word asked by
/// several lanes is read once). 0 for no active lane.
fn wavefronts(words: &[u32]) -> u64 {
    let mut per_bank: [Vec<u32>; 32] = std::array::from_fn(|_| Vec::new());
    for &word in words {
        let bank = &mut per_bank[(word % 32) as usize];
        if !bank.contains(&word) {
            bank.push(word);
        }
    }
    per_bank.iter().map(|bank| bank.len() as u64).max().unwrap()
}

/// Wavefronts of one warp's shared atomic: atomics do not merge, so the most
/// lanes on any one bank.
fn atomic_wavefronts(words: &[u32]) -> u64 {
    let mut per_bank = [0u64; 32];
    for &word in words {
        per_bank[(word % 32) as usize] += 1;
    }
    per_bank.into_iter().max().unwrap()
}

fn wrapping_sum(values: &[i32]) -> i32 {
    values.iter().fold(0i32, |sum, &x| sum.wrapping_add(x))
}

fn block_sums(values: &[i32], per_block: usize) -> Vec<i32> {
    values.chunks(per_block).map(wrapping_sum).collect()
}

/// Float `a` is within `ulps` units in the last place of `b`.
fn close_in_ulps(a: f32, b: f32, ulps: i64) -> bool {
    let key = |x: f32| {
        let bits = x.to_bits() as i32 as i64;
        if bits < 0 {
            i64::from(i32::MIN) - bits
        } else {
            bits
        }
    };
    (key(a) - key(b)).abs() <= ulps
}

// ---------------------------------------------------------------------------
// Reductions (reductions.cu): each block's sum of wrapping i32s, exact.

/// Harris #1, `if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];`: no bank
/// conflicts. At step s the active lanes of a warp are 2s apart and touch
/// words tid and tid + s, 2s apart too: at most 32 / 2s lanes, on distinct
/// banks (2s·k mod 32 differs for k < 32 / 2s); from s = 32 on, one lane per
/// warp. The cost of this version is divergence, not conflicts: every warp
/// runs every level with few lanes (47 warp requests per block per access
/// instead of 15).
#[test]
fn reduce0_interleaved_divergent() {
    let run = run("reduce0_interleaved_divergent");
    let input = i32s(&run.initial("in"));
    assert_eq!(i32s(&run.buffer("out")), block_sums(&input, 256));
    assert_conflicts(&run, "reductions.cu", "reduce0_interleaved_divergent", &[]);
    let line = line_of(
        "reductions.cu",
        "reduce0_interleaved_divergent",
        "sdata[tid] += sdata[tid + s];",
    );
    let stores: u64 = run
        .report
        .instructions
        .iter()
        .filter(|i| i.line == line && i.text.starts_with("st.shared"))
        .map(|i| i.counts.executed)
        .sum();
    // 8 warps at s = 1..16, then 4, 2, 1: 47 per block, 4 blocks.
    assert_eq!(stores, 4 * 47);
}

/// Harris #2, `index = 2 * s * tid; sdata[index] += sdata[index + s];`: lane l
/// of a warp touches word 2s·l (+ s), so the warp spreads over 64s words and
/// each bank is asked for several of them. Per block and per access:
///   s = 1: 4 warps (index < 256), words 2l: 2-way, 1 extra wavefront each = 4
///   s = 2: 2 warps, words 4l: 4-way = 2 x 3 = 6
///   s = 4: 1 warp, words 8l: 8-way = 7
///   s = 8: 16 lanes, words 16l, banks 0 and 16 eight times each: 8-way = 7
///   s = 16: 8 lanes, words 32l, all bank 0: 8-way = 7
///   s = 32, 64, 128: 4, 2, 1 lanes on bank 0 = 3 + 1 + 0
/// = 35 conflicts per block per access, 140 for 4 blocks, and the line has
/// three accesses (two loads, one store): 420. The initial store
/// `sdata[tid] = in[i]` is consecutive: none.
#[test]
fn reduce1_interleaved_strided() {
    let run = run("reduce1_interleaved_strided");
    let input = i32s(&run.initial("in"));
    assert_eq!(i32s(&run.buffer("out")), block_sums(&input, 256));
    assert_conflicts(
        &run,
        "reductions.cu",
        "reduce1_interleaved_strided",
        &[("sdata[index] += sdata[index + s];", 3 * 4 * 35)],
    );
}

/// Harris #3, sequential addressing, `if (tid < s) sdata[tid] += sdata[tid + s];`:
/// the active lanes are consecutive and so are their words, tid and tid + s:
/// no conflicts.
#[test]
fn reduce2_sequential() {
    let run = run("reduce2_sequential");
    let input = i32s(&run.initial("in"));
    assert_eq!(i32s(&run.buffer("out")), block_sums(&input, 256));
    assert_conflicts(&run, "reductions.cu", "reduce2_sequential", &[]);
}

/// Harris #4, first add during the load: each block sums 512 elements, the
/// tree is sequential addressing again: no conflicts.
#[test]
fn reduce3_first_add() {
    let run = run("reduce3_first_add");
    let input = i32s(&run.initial("in"));
    assert_eq!(i32s(&run.buffer("out")), block_sums(&input, 512));
    assert_conflicts(&run, "reductions.cu", "reduce3_first_add", &[]);
}

/// Harris #5, the last warp unrolled through `volatile` shared memory: every
/// `sdata[tid] += sdata[tid + k]` of warpReduce reads 32 consecutive words
/// (tid + k for k = 32..1) and writes 32 consecutive words: no conflicts. The
/// warp runs without divergence, so the warp-synchronous code is correct in
/// lockstep.
#[test]
fn reduce4_unroll_last_warp() {
    let run = run("reduce4_unroll_last_warp");
    let input = i32s(&run.initial("in"));
    assert_eq!(i32s(&run.buffer("out")), block_sums(&input, 512));
    assert!(conflicts_by_line(&run, "reductions.cu").is_empty());
    // The six volatile steps are six lines of the device function, each two
    // loads (volatile: both kept) and one store, once per block; NVRTC
    // inlined it, so they are reported at the kernel's call, each saying
    // which line of the function it came from.
    let call = line_of(
        "reductions.cu",
        "reduce4_unroll_last_warp",
        "warpReduce(sdata, tid);",
    );
    let line = line_of(
        "reductions.cu",
        "warpReduce",
        "sdata[tid] += sdata[tid + 32];",
    );
    for step in 0..6 {
        let executed: u64 = run
            .report
            .instructions
            .iter()
            .filter(|i| {
                i.line == call
                    && i.text.contains(".shared")
                    && i.inlined_from.len() == 1
                    && i.inlined_from[0].line == line + step
            })
            .map(|i| i.counts.executed)
            .sum();
        assert_eq!(executed, 3 * 2, "line {}", line + step);
    }
}

/// Warp shuffles: only lane 0 of each warp stores (8 consecutive words) and
/// warp 0 reads them back: no conflicts.
#[test]
fn reduce5_warp_shuffle() {
    let run = run("reduce5_warp_shuffle");
    let input = i32s(&run.initial("in"));
    assert_eq!(i32s(&run.buffer("out")), block_sums(&input, 256));
    assert_conflicts(&run, "reductions.cu", "reduce5_warp_shuffle", &[]);
}

/// Harris #7: a grid-stride loop (block b of 2 sums elements b·512 + t and
/// b·512 + t + 256, then the same 1024 further on), then the completely
/// unrolled tree: sequential addressing throughout, no conflicts.
#[test]
fn reduce6_multi_element() {
    let run = run("reduce6_multi_element");
    let input = i32s(&run.initial("in"));
    let expected: Vec<i32> = (0..2)
        .map(|block| {
            let mine: Vec<i32> = (0..2048)
                .filter(|i| (i / 512) % 2 == block)
                .map(|i| input[i])
                .collect();
            wrapping_sum(&mine)
        })
        .collect();
    assert_eq!(i32s(&run.buffer("out")), expected);
    assert_conflicts(&run, "reductions.cu", "reduce6_multi_element", &[]);
}

/// A butterfly over products (`mul.f32`, then `add.f32` with the partner lane's
/// value): the order of every addition is fixed, so the host reproduces the
/// float result bit for bit. The 8 warp sums go through 8 consecutive words:
/// no conflicts.
#[test]
fn dot_product_shfl_xor() {
    let run = run("dot_product_shfl_xor");
    let a = f32s(&run.initial("a"));
    let b = f32s(&run.initial("b"));
    let butterfly = |mut v: Vec<f32>| {
        for mask in [16, 8, 4, 2, 1] {
            v = (0..32).map(|l| v[l] + v[l ^ mask]).collect();
        }
        v[0]
    };
    let expected: Vec<f32> = (0..4)
        .map(|block| {
            // Warp 0 takes the 8 warp sums and zeros in lanes 8 to 31.
            let mut sums = vec![0.0f32; 32];
            for (warp, sum) in sums.iter_mut().enumerate().take(8) {
                let base = block * 256 + warp * 32;
                *sum = butterfly((0..32).map(|l| a[base + l] * b[base + l]).collect());
            }
            butterfly(sums)
        })
        .collect();
    let out = f32s(&run.buffer("out"));
    for (block, (&got, &want)) in out.iter().zip(&expected).enumerate() {
        assert_eq!(
            got.to_bits(),
            want.to_bits(),
            "block {block}: {got} vs {want}"
        );
    }
    assert!(conflicts_by_line(&run, "reductions.cu").is_empty());
}

/// Dynamic shared memory (`extern __shared__`, 1 KiB from the launch):
/// sequential addressing, no conflicts; u16 inputs summed in u32, exact.
#[test]
fn reduce_dynamic_shared() {
    let run = run("reduce_dynamic_shared");
    let input = u16s(&run.initial("in"));
    let expected: Vec<u32> = input
        .chunks(256)
        .map(|chunk| chunk.iter().map(|&x| u32::from(x)).sum())
        .collect();
    assert_eq!(u32s(&run.buffer("out")), expected);
    assert!(conflicts_by_line(&run, "dynamic-shared.cu").is_empty());
}

// ---------------------------------------------------------------------------
// Scans (scans.cu)

fn exclusive_scans(values: &[i32], per_block: usize) -> Vec<i32> {
    let mut out = Vec::with_capacity(values.len());
    for chunk in values.chunks(per_block) {
        let mut sum = 0i32;
        for &x in chunk {
            out.push(sum);
            sum = sum.wrapping_add(x);
        }
    }
    out
}

/// Blelloch's scan without padding. Per block (256 threads, 512 words) and per
/// access of the tree, `ai = offset*(2*thid+1)-1`, `bi = offset*(2*thid+2)-1`
/// put lane l on word 2·offset·l + const: 2·offset-way conflicts while the
/// warp is full, then as many ways as there are active lanes on one bank:
///   offset 1 (d = 256): 8 warps, 2-way = 8 extra wavefronts
///   offset 2 (d = 128): 4 warps, 4-way = 12
///   offset 4 (d = 64): 2 warps, 8-way = 14
///   offset 8 (d = 32): 1 warp, 16-way = 15
///   offset 16 (d = 16): 16 lanes 32 words apart, all one bank: 16-way = 15
///   offset 32, 64, 128, 256: 8, 4, 2, 1 lanes on one bank = 7 + 3 + 1 + 0
/// = 75 per access per block, 150 for 2 blocks. The up-sweep line
/// `temp[bi] += temp[ai]` has three accesses (450); the down-sweep runs the
/// same levels backwards: `int t = temp[ai]` one load (150),
/// `temp[ai] = temp[bi]` a load and a store (300), `temp[bi] += t` only the
/// store (150: the compiler keeps temp[bi] from the line before in a
/// register). The loads from and stores to global memory go through
/// `temp[2*thid]` and `temp[2*thid+1]`: words 2l, 2-way, 8 warps x 2 blocks = 16
/// per line.
#[test]
fn scan_blelloch() {
    let run = run("scan_blelloch");
    let input = i32s(&run.initial("in"));
    assert_eq!(i32s(&run.buffer("out")), exclusive_scans(&input, 512));
    assert_conflicts(
        &run,
        "scans.cu",
        "scan_blelloch",
        &[
            ("temp[2 * thid] = g_idata[2 * thid];", 16),
            ("temp[2 * thid + 1] = g_idata[2 * thid + 1];", 16),
            ("temp[bi] += temp[ai];", 3 * 150),
            ("int t = temp[ai];", 150),
            ("temp[ai] = temp[bi];", 2 * 150),
            ("temp[bi] += t;", 150),
            ("g_odata[2 * thid] = temp[2 * thid];", 16),
            ("g_odata[2 * thid + 1] = temp[2 * thid + 1];", 16),
        ],
    );
}

/// With GPU Gems 3's padding, index + (index >> 5): for offset < 32 the lanes
/// that collided (2·offset of them on one bank, 32 / (2·offset) lanes apart)
/// now sit in different 32-word rows and get shifts 0, 1, ... 2·offset - 1;
/// for offset >= 16 the indices offset·(2t+1) - 1 all shared one bank and now
/// get shifts offset/32·(2t+1) (or t for offset 16), distinct for the active
/// lanes. The loads and stores through `temp[ai + bankOffsetA]` are
/// consecutive words. For 512 elements every access is conflict-free: zero on
/// every line, against 1,114 conflicts without padding.
#[test]
fn scan_blelloch_conflict_free() {
    let run = run("scan_blelloch_conflict_free");
    let input = i32s(&run.initial("in"));
    assert_eq!(i32s(&run.buffer("out")), exclusive_scans(&input, 512));
    assert_conflicts(&run, "scans.cu", "scan_blelloch_conflict_free", &[]);
    let plain = self::run("scan_blelloch");
    let total = |run: &ProgramRun| -> u64 { conflicts_by_line(run, "scans.cu").values().sum() };
    assert_eq!(total(&plain), 16 * 4 + 150 * 7);
    assert_eq!(total(&run), 0);
}

/// Inclusive scan by `__shfl_up_sync`, warp totals through 8 consecutive
/// words: no conflicts.
#[test]
fn scan_warp_shuffle() {
    let run = run("scan_warp_shuffle");
    let input = i32s(&run.initial("in"));
    let mut expected = Vec::new();
    for chunk in input.chunks(256) {
        let mut sum = 0i32;
        for &x in chunk {
            sum = sum.wrapping_add(x);
            expected.push(sum);
        }
    }
    assert_eq!(i32s(&run.buffer("out")), expected);
    assert_conflicts(&run, "scans.cu", "scan_warp_shuffle", &[]);
}

// ---------------------------------------------------------------------------
// The other kernels

/// Shared-memory histogram. `bins[threadIdx.x] = 0` and the final
/// `bins[threadIdx.x]` read are consecutive: none. `atomicAdd(&bins[data[i]], 1u)`
/// conflicts as the data decide: shared atomics never merge, so a warp takes
/// as many wavefronts as the most lanes whose byte falls on one bank
/// (byte mod 32) — random bytes give about 3 to 5 ways, worked out here from
/// the data per warp and grid-stride iteration.
#[test]
fn histogram256_shared_atomics() {
    let run = run("histogram256_shared_atomics");
    let data = run.initial("data");
    let mut expected = vec![0u32; 256];
    for &byte in &data {
        expected[byte as usize] += 1;
    }
    assert_eq!(u32s(&run.buffer("hist")), expected);
    let mut conflicts = 0;
    for block in 0..4 {
        for iteration in 0..4 {
            for warp in 0..8 {
                let base = iteration * 1024 + block * 256 + warp * 32;
                let words: Vec<u32> = (0..32).map(|l| u32::from(data[base + l])).collect();
                conflicts += atomic_wavefronts(&words) - 1;
            }
        }
    }
    assert!(conflicts > 0);
    assert_conflicts(
        &run,
        "histogram.cu",
        "histogram256_shared_atomics",
        &[("atomicAdd(&bins[data[i]], 1u);", conflicts)],
    );
}

/// Bitonic sort: comparator(s[pos], s[pos + stride]) with
/// `pos = 2*tid - (tid & (stride-1))`. For stride < 32 a warp's 32 lanes take
/// half of 64 consecutive words (in runs of `stride`), so every bank is asked
/// for two words: 2-way on both loads; for stride >= 32 the lanes read 32
/// consecutive words: none. Of the 55 steps (45 while building bitonic runs,
/// 10 in the final merge), 40 have stride < 32: 40 steps x 16 warps x 2 loads
/// = 1,280 conflicts on the comparison line. The swap's stores (`a = b;`,
/// `b = t;`) are made only by the lanes that swap, so their conflicts depend on
/// the data: worked out here by running the same network on the host; both
/// lines conflict equally, since s[pos + stride] is s[pos] shifted by a
/// constant. NVRTC inlines the comparator, so its conflicts are reported at
/// its two calls: the building steps' and the final merge's, each with the
/// comparator's lines as where they came from.
#[test]
fn bitonic_sort_shared() {
    let run = run("bitonic_sort_shared");
    let mut s = i32s(&run.initial("in"));
    let mut expected = s.clone();
    expected.sort_unstable();
    assert_eq!(i32s(&run.buffer("out")), expected);

    // Conflicts of the loads and stores, while building and while merging.
    let mut load_conflicts = [0; 2];
    let mut store_conflicts = [0; 2];
    let mut phase = 0;
    let mut step =
        |s: &mut Vec<i32>, phase: usize, stride: usize, direction: &dyn Fn(usize) -> bool| {
            for warp in 0..16 {
                let mut loads = Vec::new();
                let mut stores = Vec::new();
                for lane in 0..32 {
                    let tid = warp * 32 + lane;
                    let pos = 2 * tid - (tid & (stride - 1));
                    loads.push(pos as u32);
                    if (s[pos] > s[pos + stride]) == direction(tid) {
                        s.swap(pos, pos + stride);
                        stores.push(pos as u32);
                    }
                }
                load_conflicts[phase] += 2 * (wavefronts(&loads) - 1);
                if !stores.is_empty() {
                    // `a = b;` and `b = t;` conflict alike.
                    store_conflicts[phase] += 2 * (wavefronts(&stores) - 1);
                }
            }
        };
    let mut size = 2;
    while size < 1024 {
        let mut stride = size / 2;
        while stride > 0 {
            step(&mut s, phase, stride, &|tid| tid & (size / 2) != 0);
            stride /= 2;
        }
        size *= 2;
    }
    phase = 1;
    let mut stride = 512;
    while stride > 0 {
        step(&mut s, phase, stride, &|_| true);
        stride /= 2;
    }
    assert_eq!(s, expected);
    assert_eq!(load_conflicts[0] + load_conflicts[1], 40 * 16 * 2);
    assert_conflicts(
        &run,
        "bitonic-sort.cu",
        "bitonic_sort_shared",
        &[
            (
                "comparator(s[pos], s[pos + stride], ddd);",
                load_conflicts[0] + store_conflicts[0],
            ),
            (
                "comparator(s[pos], s[pos + stride], 1u);",
                load_conflicts[1] + store_conflicts[1],
            ),
        ],
    );
    // Where they came from: the comparison and the two swapping stores.
    let from: std::collections::BTreeSet<u32> = run
        .report
        .instructions
        .iter()
        .filter(|instruction| instruction.counts.bank_conflicts > 0)
        .flat_map(|instruction| instruction.inlined_from.iter().map(|place| place.line))
        .collect();
    let line = |needle| line_of("bitonic-sort.cu", "comparator", needle);
    assert_eq!(
        from,
        [line("if ((a > b) == dir)"), line("a = b;"), line("b = t;")].into()
    );
}

/// 5x5 convolution over a 20x20 shared tile. The halo load
/// `tile[sy][sx] = ...` walks the tile linearly (k = ty·16 + tx): consecutive
/// words, none. The taps `tile[ty + fy][tx + fx]`: a warp is two rows of 16
/// threads (ty, ty + 1), words base + tx and base + 20 + tx; the second row
/// wraps onto the banks of the first row's first four words (base + 32 ..
/// base + 35), so every tap is exactly 2-way: 25 taps x 8 warps x 4 blocks =
/// 800 conflicts. The weights are binomial / 256, exact; the sum is one
/// `fma.rn` per tap in fy, fx order from 0: bit for bit on the host.
#[test]
fn convolution2d_tiled() {
    let run = run("convolution2d_tiled");
    let input = f32s(&run.initial("in"));
    let out = f32s(&run.buffer("out"));
    let binomial = [1.0f32, 4.0, 6.0, 4.0, 1.0];
    let (width, height) = (32i32, 32i32);
    for y in 0..height {
        for x in 0..width {
            let mut sum = 0.0f32;
            for fy in 0..5 {
                for fx in 0..5 {
                    let (gx, gy) = (x + fx - 2, y + fy - 2);
                    let value = if (0..width).contains(&gx) && (0..height).contains(&gy) {
                        input[(gy * width + gx) as usize]
                    } else {
                        0.0
                    };
                    let weight = binomial[fy as usize] * binomial[fx as usize] / 256.0;
                    sum = value.mul_add(weight, sum);
                }
            }
            let got = out[(y * width + x) as usize];
            assert_eq!(got.to_bits(), sum.to_bits(), "({x}, {y}): {got} vs {sum}");
        }
    }
    assert_conflicts(
        &run,
        "convolution.cu",
        "convolution2d_tiled",
        &[(
            "sum += tile[ty + fy][tx + fx] * c_filter[fy * FW + fx];",
            800,
        )],
    );
}

/// Diagonal transpose through a padded tile: the row writes
/// `tile[threadIdx.y + i][threadIdx.x]` are consecutive words; the column reads
/// `tile[threadIdx.x][threadIdx.y + i]` are 33 words apart, banks
/// (tx + ty + i) mod 32, distinct: no conflicts anywhere.
#[test]
fn transpose_diagonal() {
    let run = run("transpose_diagonal");
    let a = f32s(&run.initial("idata"));
    let b = f32s(&run.buffer("odata"));
    let n = 64;
    for row in 0..n {
        for column in 0..n {
            assert_eq!(b[column * n + row].to_bits(), a[row * n + column].to_bits());
        }
    }
    assert_conflicts(&run, "transpose-diagonal.cu", "transpose_diagonal", &[]);
}

/// Register tiling: a warp is one row ty of the 32x8 block. `As[ty + r*8][k]`
/// is one word for the whole warp (a broadcast), `Bs[k][tx]` 32 consecutive
/// words, and the tile loads write rows: no conflicts. Each output is one
/// `fma.rn` per k in k order: bit for bit.
#[test]
fn matmul_register_tiled() {
    let run = run("matmul_register_tiled");
    let a = f32s(&run.initial("A"));
    let b = f32s(&run.initial("B"));
    let c = f32s(&run.buffer("C"));
    let n = 64;
    for row in 0..n {
        for column in 0..n {
            let expected = (0..n).fold(0.0f32, |sum, k| {
                a[row * n + k].mul_add(b[k * n + column], sum)
            });
            assert_eq!(
                c[row * n + column].to_bits(),
                expected.to_bits(),
                "C[{row}][{column}]"
            );
        }
    }
    assert_conflicts(
        &run,
        "matmul-register-tiled.cu",
        "matmul_register_tiled",
        &[],
    );
}

/// Cooperative groups: `tiled_partition<32>` tiles are the warps, and
/// `tile.shfl_down` is `shfl.sync.down` with the full mask. Tile sums through
/// 8 consecutive words: no conflicts.
#[test]
fn cg_tile_reduce() {
    let run = run("cg_tile_reduce");
    let input = i32s(&run.initial("in"));
    assert_eq!(i32s(&run.buffer("out")), block_sums(&input, 256));
    assert_conflicts(&run, "cg-tiles.cu", "cg_tile_reduce", &[]);
}

/// Layer normalisation. The sums are reproduced bit for bit (shuffle tree,
/// then the 8 warp sums in order; `/ 256` is exact; `var + eps` is contracted
/// to `fma(sum, 1/256, eps)`). `rsqrtf` is `rsqrt.approx.f32`, whose maximum
/// relative error on the hardware is 2^-22.9, so the outputs are compared with
/// a bound of 2^-21 relative on the `d * r * gamma` term plus 2 ulp. No
/// conflicts: the warp sums sit in 8 consecutive words, read as broadcasts.
#[test]
fn layernorm_rows() {
    let run = run("layernorm_rows");
    let input = f32s(&run.initial("in"));
    let gamma = f32s(&run.initial("gamma"));
    let beta = f32s(&run.initial("beta"));
    let out = f32s(&run.buffer("out"));
    let block_sum = |v: &[f32]| -> f32 {
        let mut warp_sums = [0.0f32; 8];
        for (warp, sum) in warp_sums.iter_mut().enumerate() {
            let mut lanes: Vec<f32> = v[warp * 32..warp * 32 + 32].to_vec();
            for offset in [16, 8, 4, 2, 1] {
                // Lanes past 31 - offset add their own value back (shfl.down
                // returns the caller's value); only lane 0 matters here.
                lanes = (0..32)
                    .map(|l| {
                        lanes[l]
                            + if l + offset < 32 {
                                lanes[l + offset]
                            } else {
                                lanes[l]
                            }
                    })
                    .collect();
            }
            *sum = lanes[0];
        }
        warp_sums.iter().fold(0.0f32, |s, &w| s + w)
    };
    let eps = 0.00001f32;
    for row in 0..4 {
        let x = &input[row * 256..row * 256 + 256];
        let mean = block_sum(x) / 256.0;
        let d: Vec<f32> = x.iter().map(|&v| v - mean).collect();
        let squares: Vec<f32> = d.iter().map(|&v| v * v).collect();
        let var_eps = block_sum(&squares).mul_add(1.0 / 256.0, eps);
        let r = (1.0 / f64::from(var_eps).sqrt()) as f32;
        for t in 0..256 {
            let scaled = d[t] * r;
            let want = scaled.mul_add(gamma[t], beta[t]);
            let got = out[row * 256 + t];
            let bound =
                (scaled * gamma[t]).abs() * 2f32.powi(-21) + 2.0 * f32::EPSILON * want.abs();
            assert!(
                (got - want).abs() <= bound,
                "row {row} [{t}]: {got} vs {want}"
            );
        }
    }
    assert!(conflicts_by_line(&run, "layernorm.cu").is_empty());
}

/// float4 SAXPY through `ld.global.nc.v4.f32`: `a * x + y` is one `fma.rn`.
#[test]
fn saxpy_float4() {
    let run = run("saxpy_float4");
    let x = f32s(&run.initial("x"));
    let y = f32s(&run.initial("y"));
    let out = f32s(&run.buffer("y"));
    for i in 0..1024 {
        assert_eq!(
            out[i].to_bits(),
            2.5f32.mul_add(x[i], y[i]).to_bits(),
            "y[{i}]"
        );
    }
}

/// Float atomics: the maximum (an atomicCAS loop on the bits) is exact; the
/// sum adds 32 warp sums (each reproduced bit for bit) in the order the
/// atomics happen, which the hardware does not fix, so it is compared with
/// the exact sum within 32 roundings of the running total: 32 x 2^-24 x the
/// sum of the warp sums' magnitudes.
#[test]
fn float_sum_max_atomics() {
    let run = run("float_sum_max_atomics");
    let input = f32s(&run.initial("in"));
    let maximum = f32s(&run.buffer("maximum"))[0];
    assert_eq!(maximum, input.iter().copied().fold(0.0f32, f32::max));
    let warp_sums: Vec<f32> = input
        .chunks(32)
        .map(|warp| {
            let mut lanes = warp.to_vec();
            for offset in [16, 8, 4, 2, 1] {
                lanes = (0..32)
                    .map(|l| {
                        lanes[l]
                            + if l + offset < 32 {
                                lanes[l + offset]
                            } else {
                                lanes[l]
                            }
                    })
                    .collect();
            }
            lanes[0]
        })
        .collect();
    let exact: f64 = warp_sums.iter().map(|&s| f64::from(s)).sum();
    let magnitude: f64 = warp_sums.iter().map(|&s| f64::from(s).abs()).sum();
    let sum = f64::from(f32s(&run.buffer("sum"))[0]);
    assert!(
        (sum - exact).abs() <= 32.0 * 2f64.powi(-24) * magnitude,
        "{sum} vs {exact}"
    );
}

/// 3x3 median by insertion sort into `unsigned char window[9]`: the indices
/// depend on the data, so the array lives in local memory (`.local` depot,
/// `st.local.u8`/`ld.local.u8`). Bytes, exact.
#[test]
fn median_filter3x3() {
    let run = run("median_filter3x3");
    let input = run.initial("in");
    let out = run.buffer("out");
    let (width, height) = (32i32, 32i32);
    for y in 0..height {
        for x in 0..width {
            let mut window: Vec<u8> = Vec::new();
            for dy in -1..=1 {
                for dx in -1..=1 {
                    let sx = (x + dx).clamp(0, width - 1);
                    let sy = (y + dy).clamp(0, height - 1);
                    window.push(input[(sy * width + sx) as usize]);
                }
            }
            window.sort_unstable();
            assert_eq!(out[(y * width + x) as usize], window[4], "({x}, {y})");
        }
    }
}

/// GELU, tanh form: `tanhf` compiles to `ex2.approx.ftz.f32` and
/// `rcp.approx.ftz.f32`. CUDA documents tanhf within 2 ulp; tanh is at most 1
/// in magnitude and the polynomial's roundings reach it through a derivative
/// at most 1, so after the factor 0.5 x (|x| < 4) the output is within a few
/// 2^-23 of the exact value: compared with the exact GELU (in f64) within
/// 2^-20.
#[test]
fn gelu_tanh() {
    let run = run("gelu_tanh");
    let input = f32s(&run.initial("in"));
    let out = f32s(&run.buffer("out"));
    for (i, (&u, &got)) in input.iter().zip(&out).enumerate() {
        let x = f64::from(u.mul_add(8.0, -4.0));
        let want = 0.5 * x * (1.0 + (0.797_884_560_8 * (x + 0.044_715 * x * x * x)).tanh());
        assert!(
            (f64::from(got) - want).abs() <= 2f64.powi(-20),
            "out[{i}] = gelu({x}): {got} vs {want}"
        );
    }
}

/// Doubles: each norm is 8 `fma.rn.f64` in k order and `sqrt.rn.f64`, bit for
/// bit; the total adds 128 norms by `atom.global.add.f64` in an order the
/// hardware does not fix: within 128 roundings of the exact sum.
#[test]
fn row_norms_f64() {
    let run = run("row_norms_f64");
    let rows = support::f64s(&run.initial("rows"));
    let norms = support::f64s(&run.buffer("norms"));
    let expected: Vec<f64> = rows
        .chunks(8)
        .map(|row| row.iter().fold(0.0f64, |s, &a| a.mul_add(a, s)).sqrt())
        .collect();
    for (r, (&got, &want)) in norms.iter().zip(&expected).enumerate() {
        assert_eq!(got.to_bits(), want.to_bits(), "norm {r}");
    }
    let exact: f64 = expected.iter().sum();
    let total = support::f64s(&run.buffer("total"))[0];
    assert!(
        (total - exact).abs() <= 128.0 * f64::EPSILON * exact,
        "{total} vs {exact}"
    );
}

// ---------------------------------------------------------------------------
// Device functions (`.func`, inlined at each `call`)

fn collatz_steps(mut x: u32) -> u32 {
    let mut steps = 0;
    while x > 1 && steps < 1000 {
        x = if x & 1 == 1 { 3 * x + 1 } else { x / 2 };
        steps += 1;
    }
    steps
}

/// `__noinline__` device functions: a `.func` returning a value through
/// `.param` (a loop inside the callee) and a `.func` storing through a pointer,
/// called with `call.uni` from call sequences that declare `.param` variables
/// and a register named without `%` (`.reg .b32 temp_param_reg;`).
#[test]
fn noinline_device_call() {
    let run = run("noinline_device_call");
    let input = u32s(&run.initial("in"));
    let expected: Vec<u32> = input
        .iter()
        .map(|&x| collatz_steps((x & 0xffff) + 1))
        .collect();
    assert_eq!(u32s(&run.buffer("out")), expected);
    let clamped: Vec<u32> = expected.iter().map(|&s| s.min(100)).collect();
    assert_eq!(u32s(&run.buffer("clamped")), clamped);
    // The inlined loop body is reported at the callee's line: each of its
    // instructions runs once per step of each thread.
    let step_line = line_of("noinline-call.cu", "collatz_steps", "x = (x & 1)");
    let steps: u64 = expected.iter().map(|&s| u64::from(s)).sum();
    let at_line: Vec<u64> = run
        .report
        .instructions
        .iter()
        .filter(|instruction| instruction.line == step_line)
        .map(|instruction| instruction.counts.threads)
        .collect();
    assert!(!at_line.is_empty());
    assert!(
        at_line.iter().all(|&n| n == steps),
        "{at_line:?} vs {steps}"
    );
}

fn mix(a: u32, b: u32) -> u32 {
    a.wrapping_mul(2_654_435_761) ^ (b >> 3)
}

/// Device functions with a barrier and shared memory, and a nested call:
/// `mix_twice` calls `mix` twice and the kernel calls `mix` once more under
/// `if (threadIdx.x % 3 == 0)`, so the body of `mix` is inlined three times;
/// `strided_exchange` declares its `__shared__` array inside the function
/// (NVRTC demotes it into the `.func`), stores, waits at `__syncthreads`,
/// and reads the word (4 t) mod 256. Every count is reported at the device
/// functions' own CUDA lines.
#[test]
fn noinline_shared_calls() {
    let run = run("noinline_shared_calls");
    let input = u32s(&run.initial("in"));
    let published: Vec<u32> = input
        .iter()
        .enumerate()
        .map(|(i, &x)| mix(mix(x, i as u32), i as u32 + 1))
        .collect();
    let expected: Vec<u32> = (0..1024)
        .map(|i| {
            let (block, t) = (i / 256, i % 256);
            let r = published[block * 256 + (t * 4) % 256];
            if t % 3 == 0 {
                mix(r, 7)
            } else {
                r
            }
        })
        .collect();
    assert_eq!(u32s(&run.buffer("out")), expected);

    // The strided read: each warp asks for the words (4 t) mod 256 of its 32
    // threads; the store of tile[t] is one wavefront. 8 warps in 4 blocks.
    let read_conflicts: u64 = (0..8u32)
        .map(|warp| {
            let words: Vec<u32> = (warp * 32..warp * 32 + 32).map(|t| (t * 4) % 256).collect();
            wavefronts(&words) - 1
        })
        .sum::<u64>()
        * 4;
    assert_conflicts(
        &run,
        "noinline-shared.cu",
        "strided_exchange",
        &[("tile[(t * 4) % 256]", read_conflicts)],
    );

    // Each instruction of `mix`'s line belongs to one of its three inlined
    // copies: two run for all 1024 threads (from `mix_twice`), one for the
    // threads with t % 3 == 0.
    let mix_line = line_of("noinline-shared.cu", "mix", "return");
    let every_third = (0..1024).filter(|i| i % 256 % 3 == 0).count() as u64;
    let threads: Vec<u64> = run
        .report
        .instructions
        .iter()
        .filter(|instruction| instruction.line == mix_line)
        .map(|instruction| instruction.counts.threads)
        .collect();
    let all = threads.iter().filter(|&&n| n == 1024).count();
    let guarded = threads.iter().filter(|&&n| n == every_third).count();
    assert!(guarded > 0, "{threads:?}");
    assert_eq!(
        (all, all + guarded),
        (2 * guarded, threads.len()),
        "{threads:?}"
    );
}

/// Warp-aggregated atomics: `__ffs(__activemask()) - 1` compiles to `brev` and
/// `bfind.shiftamt.u32`. The order of the copies is the atomics' order, so the
/// copied values are compared as a multiset.
#[test]
fn filter_warp_aggregated() {
    let run = run_program("corpus/filter_warp_aggregated", None, 2);
    let src = i32s(&run.initial("src"));
    let mut positive: Vec<i32> = src.iter().copied().filter(|&x| x > 0).collect();
    let count = i32s(&run.buffer("nres"))[0] as usize;
    assert_eq!(count, positive.len());
    let dst = i32s(&run.buffer("dst"));
    let mut copied = dst[..count].to_vec();
    copied.sort_unstable();
    positive.sort_unstable();
    assert_eq!(copied, positive);
    assert!(dst[count..].iter().all(|&x| x == 0));
}

/// Row softmax: `expf` compiles to `fma.rm.f32`, `cvt.sat.f32.f32`,
/// `ex2.approx.ftz.f32` and a scaling by 2^n; CUDA documents expf within
/// 2 ulp, so with the row maximum exact, each e within 2 ulp, the sum of
/// 256 positive terms within 2 ulp relative plus its roundings and one
/// division, the outputs are compared within 16 ulp of the host's. The
/// reductions' words (8 consecutive) do not conflict.
#[test]
fn softmax_rows() {
    let run = run_program("corpus/softmax_rows", None, 2);
    let input = f32s(&run.initial("in"));
    let out = f32s(&run.buffer("out"));
    for row in 0..4 {
        let x = &input[row * 256..row * 256 + 256];
        let m = x.iter().copied().fold(f32::MIN, f32::max);
        let e: Vec<f64> = x.iter().map(|&v| f64::from(v - m).exp()).collect();
        let s: f64 = e.iter().sum();
        for t in 0..256 {
            let want = (e[t] / s) as f32;
            assert!(
                close_in_ulps(out[row * 256 + t], want, 16),
                "row {row} [{t}]: {} vs {want}",
                out[row * 256 + t]
            );
        }
    }
    assert!(conflicts_by_line(&run, "softmax.cu").is_empty());
}

/// `__syncthreads_count/or/and` compile to `bar.red.popc.u32` and
/// `bar.red.or/and.pred` inside `{ }` blocks that declare their own `%p1`,
/// `%p2`, shadowing the kernel's registers of the same name.
#[test]
fn syncthreads_count_threshold() {
    let run = run_program("corpus/syncthreads_count_threshold", None, 2);
    let input = u32s(&run.initial("in"));
    let counts: Vec<u32> = input
        .chunks(256)
        .map(|c| c.iter().filter(|&&v| v > 1 << 31).count() as u32)
        .collect();
    let any: Vec<u32> = input
        .chunks(256)
        .map(|c| u32::from(c.iter().any(|&v| v % 2 == 0)))
        .collect();
    let all: Vec<u32> = input
        .chunks(256)
        .map(|c| u32::from(c.iter().all(|&v| v % 2 == 0)))
        .collect();
    assert_eq!(u32s(&run.buffer("counts")), counts);
    assert_eq!(u32s(&run.buffer("anyEven")), any);
    assert_eq!(u32s(&run.buffer("allEven")), all);
}

fn half_to_f32(bits: u16) -> f32 {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exponent = i32::from((bits >> 10) & 0x1f);
    let mantissa = f32::from(bits & 0x3ff);
    sign * match exponent {
        0 => mantissa * 2f32.powi(-24),
        31 => f32::INFINITY,
        _ => (1.0 + mantissa / 1024.0) * 2f32.powi(exponent - 15),
    }
}

/// Half precision: `__half2float` is `cvt.f32.f16`. The inputs are k / 256
/// (k < 256), so every product is a multiple of 2^-16 below 1 and every sum
/// below 256 is exact in float, whatever the order of the atomics.
#[test]
fn half_dot() {
    let run = run_program("corpus/half_dot", None, 2);
    let a: Vec<f32> = u16s(&run.initial("a"))
        .into_iter()
        .map(half_to_f32)
        .collect();
    let b: Vec<f32> = u16s(&run.initial("b"))
        .into_iter()
        .map(half_to_f32)
        .collect();
    let expected: Vec<f32> = (0..4)
        .map(|block| (block * 256..block * 256 + 256).map(|i| a[i] * b[i]).sum())
        .collect();
    assert_eq!(f32s(&run.buffer("out")), expected);
}

/// The half inputs are what the comment of half_dot.toml says: k / 256.
#[test]
fn half_dot_inputs_are_multiples_of_1_256() {
    for name in ["half-dot-a.bin", "half-dot-b.bin"] {
        let bytes = std::fs::read(repo_root().join("programs/corpus").join(name)).unwrap();
        assert_eq!(bytes.len(), 2048);
        for bits in u16s(&bytes) {
            let value = half_to_f32(bits);
            assert!(
                (0.0..1.0).contains(&value) && (value * 256.0).fract() == 0.0,
                "{value}"
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Half-precision arithmetic: every result against exact integer arithmetic.

/// A half decoded for exact arithmetic: NaN, an infinity, or a finite value
/// `±units × 2^-24` (every half is a whole number of 2^-24).
#[derive(Clone, Copy)]
enum Half {
    Nan,
    Inf(bool),
    Finite(bool, i128),
}

const HALF_NAN: u16 = 0x7fff;

fn half(bits: u16) -> Half {
    let negative = bits & 0x8000 != 0;
    let exponent = (bits >> 10) & 0x1f;
    let mantissa = i128::from(bits & 0x3ff);
    match exponent {
        31 if mantissa != 0 => Half::Nan,
        31 => Half::Inf(negative),
        0 => Half::Finite(negative, mantissa),
        _ => Half::Finite(negative, (1024 + mantissa) << (exponent - 1)),
    }
}

/// `±magnitude × 2^-scale` (magnitude > 0, scale >= 24) rounded to the
/// nearest half, ties to even; past 65504 by half a step or more, infinity.
fn round_to_half(negative: bool, magnitude: u128, scale: u32) -> u16 {
    let sign = if negative { 0x8000 } else { 0 };
    let exponent = (127 - magnitude.leading_zeros() as i32) - scale as i32;
    // Normal halves below 2^(e+1) are multiples of 2^(e-10); subnormals of 2^-24.
    let exponent = exponent.max(-14);
    let shift = (exponent - 10 + scale as i32) as u32;
    let mut units = magnitude >> shift;
    if shift > 0 {
        let rest = magnitude & ((1 << shift) - 1);
        let halfway = 1u128 << (shift - 1);
        if rest > halfway || (rest == halfway && units & 1 == 1) {
            units += 1;
        }
    }
    // units is in [1024, 2048] for normals (2048 carries into the exponent),
    // below 1024 for subnormals at exponent -14.
    let bits = (((exponent + 14) as u128) << 10) + units;
    sign | bits.min(0x7c00) as u16
}

/// A finite exact value `value × 2^-scale`; an exact zero gets the sign given.
fn finite_result(value: i128, scale: u32, zero_negative: bool) -> u16 {
    if value == 0 {
        if zero_negative {
            0x8000
        } else {
            0
        }
    } else {
        round_to_half(value < 0, value.unsigned_abs(), scale)
    }
}

fn signed(negative: bool, units: i128) -> i128 {
    if negative {
        -units
    } else {
        units
    }
}

fn inf(negative: bool) -> u16 {
    if negative {
        0xfc00
    } else {
        0x7c00
    }
}

fn host_hadd(a: u16, b: u16) -> u16 {
    match (half(a), half(b)) {
        (Half::Nan, _) | (_, Half::Nan) => HALF_NAN,
        (Half::Inf(x), Half::Inf(y)) if x != y => HALF_NAN,
        (Half::Inf(x), _) | (_, Half::Inf(x)) => inf(x),
        // An exact zero sum is +0 unless both operands are negative (-0 + -0).
        (Half::Finite(x, p), Half::Finite(y, q)) => {
            finite_result(signed(x, p) + signed(y, q), 24, x && y)
        }
    }
}

fn host_hmul(a: u16, b: u16) -> u16 {
    match (half(a), half(b)) {
        (Half::Nan, _) | (_, Half::Nan) => HALF_NAN,
        (Half::Inf(_), Half::Finite(_, 0)) | (Half::Finite(_, 0), Half::Inf(_)) => HALF_NAN,
        (Half::Inf(x), Half::Inf(y) | Half::Finite(y, _)) | (Half::Finite(x, _), Half::Inf(y)) => {
            inf(x != y)
        }
        (Half::Finite(x, p), Half::Finite(y, q)) => {
            finite_result(signed(x != y, p * q), 48, x != y)
        }
    }
}

/// `a * b + c` with one rounding: the product is exact in units of 2^-48.
fn host_hfma(a: u16, b: u16, c: u16) -> u16 {
    let product = match (half(a), half(b)) {
        (Half::Nan, _) | (_, Half::Nan) => return HALF_NAN,
        (Half::Inf(_), Half::Finite(_, 0)) | (Half::Finite(_, 0), Half::Inf(_)) => return HALF_NAN,
        (Half::Inf(x), Half::Inf(y) | Half::Finite(y, _)) | (Half::Finite(x, _), Half::Inf(y)) => {
            Half::Inf(x != y)
        }
        (Half::Finite(x, p), Half::Finite(y, q)) => Half::Finite(x != y, p * q),
    };
    match (product, half(c)) {
        (_, Half::Nan) => HALF_NAN,
        (Half::Inf(x), Half::Inf(y)) if x != y => HALF_NAN,
        (Half::Inf(x), _) | (_, Half::Inf(x)) => inf(x),
        (Half::Finite(x, p), Half::Finite(y, q)) => {
            finite_result(signed(x, p) + signed(y, q << 24), 48, x && y)
        }
        (Half::Nan, _) => unreachable!(),
    }
}

/// `min` (`max` with `larger`): a NaN operand gives the other, two NaNs the
/// canonical NaN, and -0 is below +0.
fn host_hmin_max(a: u16, b: u16, larger: bool) -> u16 {
    match (half(a), half(b)) {
        (Half::Nan, Half::Nan) => HALF_NAN,
        (Half::Nan, _) => b,
        (_, Half::Nan) => a,
        _ => {
            let key = |bits: u16| match half(bits) {
                Half::Inf(negative) => signed(negative, 1 << 60),
                Half::Finite(negative, units) => 2 * signed(negative, units) - i128::from(negative),
                Half::Nan => unreachable!(),
            };
            if (key(a) < key(b)) != larger {
                a
            } else {
                b
            }
        }
    }
}

/// The twelve comparisons of half_arith, as its bits: eq ne lt le gt ge,
/// then their unordered forms (true when either is NaN).
fn host_compare(a: u16, b: u16) -> u16 {
    let value = |bits: u16| match half(bits) {
        Half::Inf(negative) => Some(signed(negative, 1 << 60)),
        Half::Finite(negative, units) => Some(signed(negative, units)),
        Half::Nan => None,
    };
    let (Some(x), Some(y)) = (value(a), value(b)) else {
        return 0b1111_1100_0000;
    };
    let ordered = [x == y, x != y, x < y, x <= y, x > y, x >= y];
    let bits = ordered
        .iter()
        .enumerate()
        .fold(0, |bits, (k, &holds)| bits | u16::from(holds) << k);
    bits | bits << 6
}

/// `neg` (`sign` 0x8000) or `abs` (`sign` 0): the sign bit, flipped or
/// cleared; a NaN gives the canonical NaN, as the H100 does.
fn host_hneg_habs(a: u16, sign: u16) -> u16 {
    match half(a) {
        Half::Nan => HALF_NAN,
        _ if sign == 0 => a & 0x7fff,
        _ => a ^ sign,
    }
}

/// The eight results of half_arith for one (a, b, c), in its order.
fn host_half_ops(a: u16, b: u16, c: u16) -> [u16; 8] {
    [
        host_hadd(a, b),
        host_hadd(a, b ^ 0x8000),
        host_hmul(a, b),
        host_hfma(a, b, c),
        host_hneg_habs(a, 0x8000),
        host_hneg_habs(a, 0),
        host_hmin_max(a, b, false),
        host_hmin_max(a, b, true),
    ]
}

/// The exact rounding itself, on values worked out by hand.
#[test]
fn half_rounding_helper_rounds_to_nearest_even() {
    // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to 1 (even).
    assert_eq!(host_hadd(0x3c00, 0x1000), 0x3c00);
    // 1 + 2^-10 + 2^-11 is halfway to 1 + 2^-9: ties up to the even 0x3c02.
    assert_eq!(host_hadd(0x3c01, 0x1000), 0x3c02);
    // 2048 + 1: the step is 2 there, a tie, to 2048 (even).
    assert_eq!(host_hadd(0x6800, 0x3c00), 0x6800);
    // 65504 + 8 rounds back to 65504; 65504 + 16 = 65520 is a tie between
    // 0x7bff and 0x7c00, and goes to the even one: infinity.
    assert_eq!(host_hadd(0x7bff, 0x4800), 0x7bff);
    assert_eq!(host_hadd(0x7bff, 0x4c00), 0x7c00);
    assert_eq!(host_hadd(0xfbff, 0xcc00), 0xfc00);
    // Subnormals: 2^-24 + 2^-24 is exact, 2^-24 * 0.5 is a tie to +0 (even),
    // 2^-24 * 0.75 rounds up to 2^-24, and the largest subnormal plus
    // 2^-24 is the smallest normal.
    assert_eq!(host_hadd(0x0001, 0x0001), 0x0002);
    assert_eq!(host_hmul(0x0001, 0x3800), 0x0000);
    assert_eq!(host_hmul(0x8001, 0x3800), 0x8000);
    assert_eq!(host_hmul(0x0001, 0x3a00), 0x0001);
    assert_eq!(host_hadd(0x03ff, 0x0001), 0x0400);
    // 1/3 * 3 is 1 - 2^-12 exactly before rounding; as a tie it goes to 1.
    assert_eq!(host_hmul(0x3555, 0x4200), 0x3c00);
    // fma keeps what mul rounds away: (1 + 2^-10)^2 - (1 + 2^-9) = 2^-20.
    assert_eq!(host_hmul(0x3c01, 0x3c01), 0x3c02);
    assert_eq!(host_hfma(0x3c01, 0x3c01, 0xbc02), 0x0010);
    // Signed zeros.
    assert_eq!(host_hadd(0x8000, 0x8000), 0x8000);
    assert_eq!(host_hadd(0x8000, 0x0000), 0x0000);
    assert_eq!(host_hadd(0x3c00, 0xbc00), 0x0000);
    assert_eq!(host_hmul(0x8000, 0x3c00), 0x8000);
    assert_eq!(host_hfma(0x8000, 0x3c00, 0x8000), 0x8000);
    assert_eq!(host_hfma(0x8000, 0x3c00, 0x0000), 0x0000);
    // Infinities and NaNs.
    assert_eq!(host_hadd(0x7c00, 0xfc00), HALF_NAN);
    assert_eq!(host_hmul(0x7c00, 0x8000), HALF_NAN);
    assert_eq!(host_hmul(0x7c00, 0x8001), 0xfc00);
    assert_eq!(host_hfma(0x7c00, 0x0000, 0x3c00), HALF_NAN);
    assert_eq!(host_hfma(0x7bff, 0x7bff, 0xfc00), 0xfc00);
    assert_eq!(host_hmin_max(0x7e00, 0x3c00, false), 0x3c00);
    assert_eq!(host_hmin_max(0x0000, 0x8000, false), 0x8000);
    assert_eq!(host_hmin_max(0x8000, 0x0000, true), 0x0000);
    // +0 and -0 are equal: eq, le, ge, and their unordered forms.
    assert_eq!(host_compare(0x0000, 0x8000), 0b1010_0110_1001);
    assert_eq!(host_compare(0x7e00, 0x3c00), 0b1111_1100_0000);
}

/// half_arith: every output bit against the host's exact arithmetic. The
/// GPU's half instructions return the canonical NaN 0x7fff for every NaN
/// result, `neg` and `abs` of a NaN included. The same PTX run on an H100
/// (driver 580.159, through the CUDA driver API) wrote outputs with these
/// FNV-1a digests, the simulator's bit for bit.
#[test]
fn half_arith() {
    let run = run("half_arith");
    let input = u16s(&run.initial("in"));
    let (a, rest) = input.split_at(4096);
    let (b, c) = rest.split_at(4096);
    let out = u16s(&run.buffer("out"));
    let cmp = u16s(&run.buffer("cmp"));
    let out2 = u32s(&run.buffer("out2"));
    let names = ["add", "sub", "mul", "fma", "neg", "abs", "min", "max"];
    let h100 = [
        ("out", 0xe181_5101_6f12_a0d3),
        ("cmp", 0xa061_b094_67b3_2e33),
        ("out2", 0x2cf5_5faf_e62c_97af),
    ];
    for (buffer, expected) in h100 {
        assert_eq!(support::digest(&run.buffer(buffer)), expected, "{buffer}");
    }
    for i in 0..4096 {
        let expected = host_half_ops(a[i], b[i], c[i]);
        for (k, name) in names.iter().enumerate() {
            assert_eq!(
                out[8 * i + k],
                expected[k],
                "{name} of a={:#06x} b={:#06x} c={:#06x}: {:#06x}, expected {:#06x}",
                a[i],
                b[i],
                c[i],
                out[8 * i + k],
                expected[k]
            );
        }
        assert_eq!(
            cmp[i],
            host_compare(a[i], b[i]),
            "comparisons of {:#06x}, {:#06x}",
            a[i],
            b[i]
        );
    }
    // __half2: element 0 (low 16 bits) from element i, element 1 from i + 1.
    for j in 0..2048 {
        let low = host_half_ops(a[2 * j], b[2 * j], c[2 * j]);
        let high = host_half_ops(a[2 * j + 1], b[2 * j + 1], c[2 * j + 1]);
        for (k, name) in names.iter().enumerate() {
            let expected = u32::from(low[k]) | u32::from(high[k]) << 16;
            assert_eq!(
                out2[8 * j + k],
                expected,
                "{name}.f16x2 of pair {j}: {:#010x}, expected {expected:#010x}",
                out2[8 * j + k]
            );
        }
    }
}

/// half-arith.bin has what half_arith.toml says: a and b every pair of 64
/// halves with both zeros, subnormals, infinities and NaNs; sums and
/// products that round, overflow and underflow; fma cases that keep the
/// product's rounding error.
#[test]
fn half_arith_inputs_cover_the_special_cases() {
    let bytes = std::fs::read(repo_root().join("programs/corpus/half-arith.bin")).unwrap();
    let input = u16s(&bytes);
    assert_eq!(input.len(), 3 * 4096);
    let (a, rest) = input.split_at(4096);
    let (b, c) = rest.split_at(4096);
    let values: Vec<u16> = (0..64).map(|k| a[64 * k]).collect();
    for i in 0..4096 {
        assert_eq!((a[i], b[i]), (values[i / 64], values[i % 64]));
    }
    let has = |test: &dyn Fn(u16) -> bool| values.iter().any(|&v| test(v));
    for bits in [0x0000, 0x8000, 0x7c00, 0xfc00, 0x7bff, 0xfbff] {
        assert!(has(&|v| v == bits), "{bits:#06x}");
    }
    assert!(has(&|v| v & 0x7c00 == 0
        && v & 0x3ff != 0
        && v & 0x8000 == 0));
    assert!(has(&|v| v & 0x7c00 == 0
        && v & 0x3ff != 0
        && v & 0x8000 != 0));
    assert!(has(&|v| v & 0x7c00 == 0x7c00
        && v & 0x3ff != 0
        && v & 0x8000 != 0));
    assert!(has(&|v| v & 0x7e00 == 0x7c00 && v & 0x1ff != 0)); // signalling NaN
                                                               // Results that are not exact: the rounding is exercised, both ways.
    let exact_sum = |i: usize| match (half(a[i]), half(b[i])) {
        (Half::Finite(x, p), Half::Finite(y, q)) => Some(signed(x, p) + signed(y, q)),
        _ => None,
    };
    let inexact = (0..4096)
        .filter(|&i| match (exact_sum(i), half(host_hadd(a[i], b[i]))) {
            (Some(sum), Half::Finite(x, r)) => sum != signed(x, r),
            _ => false,
        })
        .count();
    assert!(inexact > 100, "{inexact} inexact sums");
    let fma_differs = (0..4096)
        .filter(|&i| {
            let fused = host_hfma(a[i], b[i], c[i]);
            let twice = host_hadd(host_hmul(a[i], b[i]), c[i]);
            fused != twice && fused & 0x7c00 != 0x7c00
        })
        .count();
    assert!(
        fma_differs > 100,
        "{fma_differs} fma results differ from mul then add"
    );
    let underflow = (0..4096)
        .filter(|&i| matches!(half(a[i]), Half::Finite(_, u) if u != 0))
        .filter(|&i| matches!(half(b[i]), Half::Finite(_, u) if u != 0))
        .filter(|&i| host_hmul(a[i], b[i]) & 0x7fff == 0)
        .count();
    assert!(
        underflow > 10,
        "{underflow} products that underflow to zero"
    );
    let overflow = (0..4096)
        .filter(|&i| a[i] & 0x7c00 != 0x7c00 && b[i] & 0x7c00 != 0x7c00)
        .filter(|&i| host_hadd(a[i], b[i]) & 0x7fff == 0x7c00)
        .count();
    assert!(overflow > 0, "no sum overflows");
    assert!(c.iter().any(|&v| v & 0x7c00 == 0x7c00 && v & 0x3ff != 0));
}

// ---------------------------------------------------------------------------
// PTX forms beyond the core set: `.sat`, vector packing, funnel shifts, lop3

/// `.sat` on a host-computed f32 result: [+0, 1], NaN and -0 to +0.
fn host_saturate(value: f32) -> u32 {
    if value.is_nan() || value <= 0.0 {
        0
    } else if value >= 1.0 {
        1.0f32.to_bits()
    } else {
        value.to_bits()
    }
}

/// saturating_arith: the integer `.sat` forms against the exact result in
/// i128 clamped to i32, the float ones against the host's f32 arithmetic
/// clamped to [+0, 1]. No shared memory: no conflicts.
#[test]
fn saturating_arith_clamps_like_the_ptx_isa() {
    let run = run("saturating_arith");
    let a = i32s(&run.initial("a"));
    let b = i32s(&run.initial("b"));
    let u = f32s(&run.initial("u"));
    let iout = i32s(&run.buffer("iout"));
    let fout = u32s(&run.buffer("fout"));
    let n = 1024;
    let clamp = |v: i128| v.clamp(i128::from(i32::MIN), i128::from(i32::MAX)) as i32;
    let mut clamped = 0;
    for i in 0..n {
        let (x, y, z) = (
            i128::from(a[i]),
            i128::from(b[i]),
            i128::from(a[(i + 1) % n]),
        );
        let sums = [x + y, x - y, (x * y).div_euclid(1 << 32) + z];
        for (k, exact) in sums.into_iter().enumerate() {
            assert_eq!(iout[3 * i + k], clamp(exact), "iout[{}]", 3 * i + k);
            clamped += usize::from(clamp(exact) as i128 != exact);
        }
        let mut p = 4.0f32.mul_add(u[i], -1.5);
        let mut q = 3.0f32.mul_add(u[(i + 7) % n], -1.0);
        let mut w = 2.0f32.mul_add(u[(i + 13) % n], -1.0);
        if i % 32 == 31 {
            p = f32::NAN;
        }
        if i % 32 == 30 {
            q = f32::INFINITY;
        }
        if i % 32 == 29 {
            w = f32::NEG_INFINITY;
        }
        let expected = [p + q, p - q, p * q, p.mul_add(q, w), p - w].map(host_saturate);
        assert_eq!(&fout[5 * i..5 * i + 5], &expected, "fout[{}..]", 5 * i);
    }
    // Random ints overflow in about a quarter of the sums and differences.
    assert!(clamped > 400, "{clamped} results clamped");
    assert!(run
        .report
        .instructions
        .iter()
        .all(|i| i.counts.bank_conflicts == 0));
}

/// warp_sum_wide: 64-bit shuffles go as two 32-bit shuffles between a
/// mov.b64 unpack and a mov.b64 pack. The double sum follows the
/// __shfl_down_sync tree (lane l adds lane l + offset, or itself past lane
/// 31), so it is exact to the bit against the same order on the host; the
/// long long butterfly gives every lane the wrapping sum of its warp.
#[test]
fn warp_sum_wide_packs_and_unpacks_64_bit_shuffles() {
    let run = run("warp_sum_wide");
    let words64 = |bytes: &[u8]| -> Vec<u64> {
        bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    let x: Vec<f64> = words64(&run.initial("x"))
        .into_iter()
        .map(f64::from_bits)
        .collect();
    let y = words64(&run.initial("y"));
    let h = u16s(&run.initial("h"));
    let dsum = words64(&run.buffer("dsum"));
    let lsum = words64(&run.buffer("lsum"));
    let pairs = u32s(&run.buffer("pairs"));
    let words = u32s(&run.buffer("words"));
    for warp in 0..32 {
        let mut v: Vec<f64> = x[32 * warp..32 * warp + 32].to_vec();
        let mut offset = 16;
        while offset > 0 {
            let before = v.clone();
            for (lane, value) in v.iter_mut().enumerate() {
                let source = if lane + offset < 32 {
                    lane + offset
                } else {
                    lane
                };
                *value += before[source];
            }
            offset /= 2;
        }
        assert_eq!(dsum[warp], v[0].to_bits(), "dsum[{warp}]");
        let sum = y[32 * warp..32 * warp + 32]
            .iter()
            .fold(0u64, |sum, &value| sum.wrapping_add(value));
        for lane in 0..32 {
            assert_eq!(lsum[32 * warp + lane], sum, "lsum[{}]", 32 * warp + lane);
        }
    }
    for i in 0..1024 {
        let expected = u32::from(h[i]) | u32::from(h[(i + 1) % 1024]) << 16;
        assert_eq!(pairs[i], expected, "pairs[{i}]");
        let bits = x[i].to_bits();
        assert_eq!(
            [words[2 * i], words[2 * i + 1]],
            [(bits >> 32) as u32, bits as u32],
            "words of x[{i}]"
        );
    }
    assert!(run
        .report
        .instructions
        .iter()
        .all(|i| i.counts.bank_conflicts == 0));
}

/// funnel_lop3: __funnelshift_l/_r wrap the shift amount at 32,
/// __funnelshift_lc/_rc clamp it at 32 (CUDA's documented behaviour, taken
/// here through u64 shifts on the host); lop3 against the boolean formula
/// of each truth table; the 64-bit rotate (shl.b64/shr.b64) against
/// `rotate_left`.
#[test]
fn funnel_lop3_matches_the_cuda_intrinsics() {
    let run = run("funnel_lop3");
    let lo = u32s(&run.initial("lo"));
    let hi = u32s(&run.initial("hi"));
    let c = u32s(&run.initial("c"));
    let out = u32s(&run.buffer("out"));
    let rotated: Vec<u64> = run
        .buffer("rotated")
        .chunks_exact(8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    for i in 0..1024 {
        let (a, b, s) = (lo[i], hi[i], c[i] & 63);
        let joined = u64::from(b) << 32 | u64::from(a);
        let left = |n: u32| ((u128::from(joined) << n) >> 32) as u32;
        let right = |n: u32| (joined >> n) as u32;
        let expected = [
            left(s & 31),
            right(s & 31),
            left(s.min(32)),
            right(s.min(32)),
            (a & b) | (a & c[i]) | (b & c[i]),
            a ^ b ^ c[i],
            (a & b) | (!a & c[i]),
            (a & !b) | (b ^ c[i]),
        ];
        assert_eq!(&out[8 * i..8 * i + 8], &expected, "out[{}..]", 8 * i);
        assert_eq!(rotated[i], joined.rotate_left(s), "rotated[{i}]");
    }
    assert!(run
        .report
        .instructions
        .iter()
        .all(|i| i.counts.bank_conflicts == 0));
}

/// warp_reduce_match: every warp's reductions and matches computed on the
/// host over the threads it holds (blocks of 48: the second warp has 16, and
/// the full mask's other 16 lanes hold no thread), the divergent arms over
/// the odd and the even values of the warp; __mul24, mul24.hi and __sad by
/// their definitions in i64; the float classes by Rust's; copysignf by
/// `f32::copysign`.
#[test]
fn warp_reduce_match_matches_the_host() {
    let run = run("warp_reduce_match");
    let input = u32s(&run.initial("in"));
    let xbits = u32s(&run.initial("xbits"));
    let out = u32s(&run.buffer("out"));
    let fout = f32s(&run.buffer("fout"));
    let (threads, block) = (192, 48);
    for i in 0..threads {
        let start = i / block * block + (i % block) / 32 * 32;
        let end = (start + 32).min(i / block * block + block);
        let warp = &input[start..end];
        let members = (0..warp.len()).fold(0u32, |mask, lane| mask | 1 << lane);
        let v = input[i];
        let s = v as i32;
        let same = |f: &dyn Fn(u32) -> u32| {
            (0..warp.len()).fold(0u32, |mask, lane| {
                mask | u32::from(f(warp[lane]) == f(v)) << lane
            })
        };
        let key = |x: u32| x & 3;
        let arm = |x: u32| x & 1;
        let all_equal = warp.iter().all(|&x| key(x) | 4 == key(warp[0]) | 4);
        let arm_sum = warp
            .iter()
            .filter(|&&x| arm(x) == arm(v))
            .fold(0u32, |sum, &x| {
                sum.wrapping_add(if arm(x) == 1 { x >> 16 } else { x >> 20 })
            });
        let low24 = |x: i32| i64::from((x << 8) >> 8);
        let (ua, ub) = (i64::from(v & 0xff_ffff), i64::from((v >> 5) & 0xff_ffff));
        let mut bits = xbits[i];
        if v & 7 == 0 {
            bits |= 0x7f80_0000;
        }
        if v & 7 == 1 {
            bits &= 0x807f_ffff;
        }
        let f = f32::from_bits(bits);
        let classes = u32::from(f.is_nan())
            | u32::from(f.is_subnormal()) << 1
            // PTX's testp.normal counts zeros as normal.
            | u32::from(f.is_normal() || f == 0.0) << 2;
        let expected = [
            warp.iter()
                .fold(0u32, |sum, &x| sum.wrapping_add(x & 0xffff)),
            warp.iter().map(|&x| x as i32).min().unwrap() as u32,
            warp.iter().fold(0, |acc, &x| acc | (x & 0xff00_ff00)),
            same(&key),
            if all_equal { members } else { 0 },
            u32::from(all_equal),
            arm_sum,
            (low24(s) * low24(s >> 7)) as u32,
            ((ua * ub) >> 16) as u32,
            ((i64::from(s) - i64::from(s >> 3)).unsigned_abs() as u32).wrapping_add(11),
            classes,
            (u32::from(f.is_finite()) * 8) | (u32::from(f.is_nan()) * 16),
        ];
        assert_eq!(
            &out[12 * i..12 * i + 12],
            &expected,
            "out[{}..] (v = {v:#x})",
            12 * i
        );
        let magnitude = 1.5 + (v & 7) as f32;
        assert_eq!(
            fout[i].to_bits(),
            magnitude.copysign(f).to_bits(),
            "fout[{i}] (x = {bits:#x})"
        );
    }
    // The random inputs reach the cases worth checking.
    let classes: Vec<u32> = (0..threads).map(|i| out[12 * i + 10]).collect();
    assert!(classes.contains(&1) && classes.contains(&2) && classes.contains(&4));
    assert!(run
        .report
        .instructions
        .iter()
        .all(|i| i.counts.bank_conflicts == 0));
}

/// `warp_reduce_match` and `redux_arms` (`programs/corpus/hardware/`) give
/// exactly what an H100 gave (`h100-*.bin`, recorded with
/// `programs/corpus/hardware/run.sh` on the same inputs): among others,
/// `redux.sync` and `match.any.sync` with the full mask in both arms of a
/// branch combine the lanes of both arms.
#[test]
fn warp_reduce_and_match_equal_the_h100() {
    let hardware = |name: &str| {
        std::fs::read(repo_root().join("programs/corpus/hardware").join(name))
            .unwrap_or_else(|error| panic!("{name}: {error}"))
    };
    let run = run("warp_reduce_match");
    // The H100 ran on the inputs this launch file generates.
    assert_eq!(run.initial("in"), hardware("wrm-in.bin"));
    assert_eq!(run.initial("xbits"), hardware("wrm-xbits.bin"));
    assert_eq!(run.buffer("out"), hardware("h100-wrm-out.bin"));
    assert_eq!(run.buffer("fout"), hardware("h100-wrm-fout.bin"));
    let arms = run_program("corpus/hardware/redux_arms", None, 2);
    assert!(arms.failure.is_none(), "{:?}", arms.failure);
    assert_eq!(arms.buffer("out"), hardware("h100-redux-arms-out.bin"));
}
