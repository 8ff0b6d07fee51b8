//! The tensor-core programs of `programs/tensor/` against a host reference
//! and against the H100: the `mma.sync` and WMMA GEMMs compute A * B within a bound
//! the fitted numerics prove, and each `ldmatrix`, `stmatrix` and shared
//! store costs, per execution, the wavefronts Nsight Compute counted on an
//! H100 for its `LDSM`/`STS` (`programs/tensor/hardware/ncu/*.sass.csv`).

mod support;

use support::repo_root;
use warpsim_driver::report::Report;

/// Runs a launch file of `programs/tensor` and returns its report and the
/// final contents of buffer `C`.
fn run(name: &str) -> (Report, Vec<u8>, Vec<u8>, Vec<u8>) {
    let launch = repo_root().join(format!("programs/tensor/{name}.toml"));
    let config = warpsim_driver::load_config(None).unwrap();
    let prepared = warpsim_driver::prepare(&launch, config).unwrap();
    let result = prepared.execute(2).unwrap();
    assert!(result.failure.is_none(), "{:?}", result.failure);
    let a = result.buffer("A").unwrap();
    let b = result.buffer("B").unwrap();
    let c = result.buffer("C").unwrap();
    (result.report, a, b, c)
}

fn half_to_f64(bits: u16) -> f64 {
    let sign = if bits >> 15 != 0 { -1.0 } else { 1.0 };
    let exponent = i32::from(bits >> 10 & 0x1f);
    let mantissa = f64::from(bits & 0x3ff);
    match exponent {
        0 => sign * mantissa * 2f64.powi(-24),
        _ => sign * (1.0 + mantissa / 1024.0) * 2f64.powi(exponent - 15),
    }
}

/// Checks C = A * B (n x n halves, row-major, n at most 128) against the
/// exact product. The inputs are multiples of 2^-11 in [0, 1), so the exact
/// sums are multiples of 2^-22 below 128, held exactly by an f64. Each
/// element is the result of at most 8 `mma` in turn (K = n, 16 per `mma`,
/// a `wmma.mma` being two side by side); the fitted
/// model truncates each of an `mma`'s 17 terms and its result once, each
/// by less than 2^(emax - 25) with emax <= 6 (every product and every
/// partial sum is below 2^7), so the error is below 8 * 18 * 2^-19 < 2^-11.
fn check_product(n: usize, a: &[u8], b: &[u8], c: &[u8]) {
    let half = |bytes: &[u8], index: usize| {
        half_to_f64(u16::from_le_bytes([bytes[2 * index], bytes[2 * index + 1]]))
    };
    let mut largest_error = 0f64;
    for row in 0..n {
        for column in 0..n {
            let exact: f64 = (0..n)
                .map(|k| half(a, row * n + k) * half(b, k * n + column))
                .sum();
            let index = 4 * (row * n + column);
            let got = f32::from_le_bytes(c[index..index + 4].try_into().unwrap());
            largest_error = largest_error.max((f64::from(got) - exact).abs());
        }
    }
    assert!(
        largest_error < 2f64.powi(-11),
        "largest error {largest_error}"
    );
}

/// The per-execution wavefronts of each `LDSM` and `STS`/`STSM` instruction
/// of a kernel as the H100 measured them: (opcode class, wavefronts per
/// execution) for every such SASS line, and the totals per class.
fn hardware_wavefronts(kernel: &str) -> Vec<(&'static str, u64, u64)> {
    let path = repo_root().join(format!("programs/tensor/hardware/ncu/{kernel}.sass.csv"));
    let text = std::fs::read_to_string(path).unwrap();
    let mut header: Vec<String> = Vec::new();
    let mut rows = Vec::new();
    for line in text.lines() {
        let fields: Vec<String> = line
            .trim_end_matches(',')
            .split("\",\"")
            .map(|field| field.trim_matches('"').to_string())
            .collect();
        if fields.first().is_some_and(|field| field == "Address") {
            header = fields;
            continue;
        }
        let column = |name: &str| header.iter().position(|field| field == name);
        let (Some(source), Some(executed), Some(wavefronts)) = (
            column("Source"),
            column("Instructions Executed"),
            column("L1 Wavefronts Shared"),
        ) else {
            continue;
        };
        let Some(text) = fields.get(source) else {
            continue;
        };
        let class = if text.contains("LDSM") {
            "ldmatrix"
        } else if text.contains("STSM") {
            "stmatrix"
        } else if text.contains(" STS") {
            "st.shared"
        } else {
            continue;
        };
        let number = |index: usize| fields[index].replace(',', "").parse::<u64>().unwrap();
        rows.push((class, number(executed), number(wavefronts)));
    }
    rows
}

/// warpsim's (class, executions, wavefronts) of the same instructions.
fn simulated_wavefronts(report: &Report) -> Vec<(&'static str, u64, u64)> {
    report
        .instructions
        .iter()
        .filter_map(|instruction| {
            // `wmma.load.a/.b` become `LDSM.x4` on an H100.
            let class = if instruction.text.starts_with("ldmatrix")
                || instruction.text.starts_with("wmma.load")
            {
                "ldmatrix"
            } else if instruction.text.starts_with("stmatrix") {
                "stmatrix"
            } else if instruction.text.starts_with("st.shared") {
                "st.shared"
            } else {
                return None;
            };
            Some((
                class,
                instruction.counts.executed,
                instruction.counts.wavefronts,
            ))
        })
        .collect()
}

/// Each class's set of wavefronts per execution and total wavefronts must
/// agree between warpsim and the H100.
fn compare_wavefronts(kernel: &str, report: &Report) -> Vec<(&'static str, Vec<u64>, u64)> {
    let summarize = |rows: Vec<(&'static str, u64, u64)>| {
        let mut classes: Vec<(&'static str, Vec<u64>, u64)> = Vec::new();
        for (class, executed, wavefronts) in rows {
            if executed == 0 {
                continue;
            }
            let per_execution = wavefronts / executed;
            assert_eq!(per_execution * executed, wavefronts, "{kernel} {class}");
            match classes.iter_mut().find(|entry| entry.0 == class) {
                Some(entry) => {
                    if !entry.1.contains(&per_execution) {
                        entry.1.push(per_execution);
                    }
                    entry.2 += wavefronts;
                }
                None => classes.push((class, vec![per_execution], wavefronts)),
            }
        }
        classes.sort();
        classes
    };
    let hardware = summarize(hardware_wavefronts(kernel));
    let simulated = summarize(simulated_wavefronts(report));
    assert_eq!(simulated, hardware, "{kernel}");
    simulated
}

#[test]
fn swizzled_mma_gemm_computes_the_product_with_the_h100s_wavefronts() {
    let (report, a, b, c) = run("gemm_mma_swizzled");
    check_product(128, &a, &b, &c);
    let classes = compare_wavefronts("gemm_mma_swizzled", &report);
    // The swizzle serves every ldmatrix.x4 in 4 wavefronts, one per matrix.
    assert_eq!(
        classes,
        vec![("ldmatrix", vec![4], 2048), ("st.shared", vec![4], 1024)]
    );
}

#[test]
fn plain_mma_gemm_computes_the_product_with_the_h100s_conflicts() {
    let (report, a, b, c) = run("gemm_mma_plain");
    check_product(128, &a, &b, &c);
    let classes = compare_wavefronts("gemm_mma_plain", &report);
    // Rows 128 bytes apart: every matrix's eight rows in the same banks.
    assert_eq!(
        classes,
        vec![("ldmatrix", vec![32], 16384), ("st.shared", vec![4], 1024)]
    );
}

#[test]
fn wmma_gemm_computes_the_product_with_the_h100s_wavefronts() {
    let (report, a, b, c) = run("wmma_gemm");
    check_product(64, &a, &b, &c);
    let classes = compare_wavefronts("wmma_gemm", &report);
    // A's rows 32 bytes apart (2 wavefronts per 8x8 block), B's 64 (4).
    assert_eq!(
        classes,
        vec![("ldmatrix", vec![8, 16], 1536), ("st.shared", vec![1], 512)]
    );
}

/// The H100's shared wavefronts of a kernel by SASS opcode (the first word
/// of the instruction): (executions, wavefronts).
fn hardware_by_opcode(kernel: &str, opcode: &str) -> (u64, u64) {
    let path = repo_root().join(format!("programs/tensor/hardware/ncu/{kernel}.sass.csv"));
    let text = std::fs::read_to_string(path).unwrap();
    let mut header: Vec<String> = Vec::new();
    let (mut executions, mut wavefronts) = (0, 0);
    for line in text.lines() {
        let fields: Vec<String> = line
            .trim_end_matches(',')
            .split("\",\"")
            .map(|field| field.trim_matches('"').to_string())
            .collect();
        if fields.first().is_some_and(|field| field == "Address") {
            header = fields;
            continue;
        }
        let column = |name: &str| header.iter().position(|field| field == name);
        let (Some(source), Some(executed), Some(shared)) = (
            column("Source"),
            column("Instructions Executed"),
            column("L1 Wavefronts Shared"),
        ) else {
            continue;
        };
        if fields
            .get(source)
            .and_then(|text| text.split_whitespace().next())
            != Some(opcode)
        {
            continue;
        }
        executions += fields[executed].replace(',', "").parse::<u64>().unwrap();
        wavefronts += fields[shared].replace(',', "").parse::<u64>().unwrap();
    }
    (executions, wavefronts)
}

/// warpsim's (executions, wavefronts) of the instructions whose text starts
/// with `prefix`.
fn simulated_by_prefix(report: &Report, prefix: &str) -> (u64, u64) {
    report
        .instructions
        .iter()
        .filter(|instruction| instruction.text.starts_with(prefix))
        .fold((0, 0), |(executions, wavefronts), instruction| {
            (
                executions + instruction.counts.executed,
                wavefronts + instruction.counts.wavefronts,
            )
        })
}

#[test]
fn attention_forward_computes_softmax_attention_with_the_h100s_wavefronts() {
    let launch = repo_root().join("programs/tensor/attention_forward.toml");
    let config = warpsim_driver::load_config(None).unwrap();
    let result = warpsim_driver::prepare(&launch, config)
        .unwrap()
        .execute(2)
        .unwrap();
    assert!(result.failure.is_none(), "{:?}", result.failure);
    let halves = |name: &str| -> Vec<f64> {
        result
            .buffer(name)
            .unwrap()
            .chunks_exact(2)
            .map(|pair| half_to_f64(u16::from_le_bytes([pair[0], pair[1]])))
            .collect()
    };
    let (q, k, v) = (halves("Q"), halves("K"), halves("V"));
    let out: Vec<f32> = result
        .buffer("O")
        .unwrap()
        .chunks_exact(4)
        .map(|word| f32::from_le_bytes(word.try_into().unwrap()))
        .collect();
    // O = softmax(Q K^T / sqrt(32)) V in f64. The kernel rounds P to half
    // (a relative error below 2^-11 per element, so below 2^-11 in O, as P
    // sums to 1 and V lies in [0, 1)); the truncations of the fitted mma
    // model, __expf and the division add far less (each below 2^-14).
    let (sequence, width) = (64, 32);
    let mut largest_error = 0f64;
    for row in 0..sequence {
        let scores: Vec<f64> = (0..sequence)
            .map(|key| {
                (0..width)
                    .map(|d| q[row * width + d] * k[key * width + d])
                    .sum::<f64>()
                    / (width as f64).sqrt()
            })
            .collect();
        let largest = scores.iter().cloned().fold(f64::MIN, f64::max);
        let exponentials: Vec<f64> = scores.iter().map(|s| (s - largest).exp()).collect();
        let sum: f64 = exponentials.iter().sum();
        for column in 0..width {
            let exact: f64 = (0..sequence)
                .map(|key| exponentials[key] / sum * v[key * width + column])
                .sum();
            let got = f64::from(out[row * width + column]);
            largest_error = largest_error.max((got - exact).abs());
        }
    }
    assert!(
        largest_error < 2f64.powi(-10),
        "largest error {largest_error}"
    );

    let report = &result.report;
    // wmma.load.a/.b are the LDSM.x4: 16 or 32 wavefronts per execution
    // (rows 64 or 128 bytes apart), on both. ptxas loads the P fragment
    // once per key block rather than once per column block, 16 loads of
    // 32 wavefronts fewer than the PTX asks for.
    let mut per_execution: Vec<u64> = report
        .instructions
        .iter()
        .filter(|instruction| {
            instruction.text.starts_with("wmma.load") && instruction.counts.executed > 0
        })
        .map(|instruction| instruction.counts.wavefronts / instruction.counts.executed)
        .collect();
    per_execution.sort();
    per_execution.dedup();
    assert_eq!(per_execution, vec![16, 32]);
    let (loads, load_wavefronts) = simulated_by_prefix(report, "wmma.load");
    let (ldsm, ldsm_wavefronts) = {
        let plain = hardware_by_opcode("attention_forward", "LDSM.16.M88.4");
        let transposed = hardware_by_opcode("attention_forward", "LDSM.16.MT88.4");
        (plain.0 + transposed.0, plain.1 + transposed.1)
    };
    assert_eq!(
        (loads, load_wavefronts),
        (ldsm + 16, ldsm_wavefronts + 16 * 32)
    );
    // wmma.store.d.shared.f32 is four STS.64 on the H100: the same total.
    let (_, store_wavefronts) =
        simulated_by_prefix(report, "wmma.store.d.sync.aligned.row.m16n16k16.shared");
    assert_eq!(
        store_wavefronts,
        hardware_by_opcode("attention_forward", "STS.64").1
    );
    // The staging stores and the score loads, one wavefront each.
    assert_eq!(
        simulated_by_prefix(report, "st.shared"),
        hardware_by_opcode("attention_forward", "STS.U16")
    );
    assert_eq!(
        simulated_by_prefix(report, "ld.shared"),
        hardware_by_opcode("attention_forward", "LDS")
    );
}
