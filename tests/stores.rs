//! The store path, fences and the L2's rate by lines against the H200
//! (`programs/timing/hardware/h200-stores.txt`): every launch of
//! programs/timing that the file measured lands within its tolerance of block
//! 0's clock64 cycles under Nsight Compute, with `programs/h200.toml`; and
//! where the model is known to miss, the miss keeps its documented direction
//! (docs/timing.md, "Stores and fences").

mod support;

use support::{assert_hardware_comparison, repo_root, run_timing_launch_on_h200};

/// One measured launch: its name and the H200's block-0 cycles under ncu.
fn measurements() -> Vec<(String, f64)> {
    let path = repo_root().join("programs/timing/hardware/h200-stores.txt");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(fields.len(), 5, "{line}");
            (fields[0].to_string(), fields[3].parse().unwrap())
        })
        .collect()
}

/// What the model must do for a launch.
enum Expectation {
    /// Land within this many percent of the hardware.
    Within(f64),
    /// Take longer than the hardware: the H200 merged these stores, a run
    /// of 4-byte words filling each lane's 16 or 24 bytes (and partly a
    /// pair in 32), which the model does not (a run of 2-byte halves, or of
    /// 8 words in 32 bytes, is not merged and is modelled).
    SlowerMerged,
    /// Take fewer cycles: on 132 SMs the H200's L2 took about 66 sectors a
    /// cycle, where the model has the H100's measured write bandwidth (75
    /// sectors a cycle of whole lines), and the short launches' fixed part
    /// is longer on the H200.
    FasterOnAllSms,
}

fn expectation(launch: &str) -> Expectation {
    match launch {
        "run_stores4_stride16_run4" | "run_stores4_stride24_run6" | "run_stores4_stride32_run2" => {
            Expectation::SlowerMerged
        }
        "stores4_stride4_grid132" | "stores4_stride32_grid132" | "stores16_stride16_grid132" => {
            Expectation::FasterOnAllSms
        }
        // Short launches, where a few hundred cycles of start and fence
        // are most of the time: the model's are 100-200 cycles short.
        "stores2_stride2_grid1" | "stores2_stride8_grid1" | "stores4_stride4_grid1" => {
            Expectation::Within(16.0)
        }
        // 64 requests: the warps hand them over sooner than the model's
        // queue lets them (but the SM's active cycles agree, 3,077 against
        // the H200's 2,949: sm__cycles_active.max).
        "unfenced_stores4_stride32_stores8_grid1" => Expectation::Within(30.0),
        _ => Expectation::Within(10.0),
    }
}

#[test]
fn stores_fences_and_strided_loads_land_near_the_h200() {
    let scratch = std::env::temp_dir().join(format!("warpsim-stores-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let rows = measurements();
    assert!(rows.len() >= 30, "only {} measurements", rows.len());
    let mut report = Vec::new();
    let mut misses = Vec::new();
    for (name, hardware) in rows {
        let cycles = scratch.join(format!("{name}.bin"));
        run_timing_launch_on_h200(
            &name,
            &["--dump".to_string(), format!("cycles={}", cycles.display())],
        );
        let bytes = std::fs::read(&cycles).unwrap();
        let simulated = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as f64;
        let error = (simulated - hardware) / hardware * 100.0;
        let line = format!("{name:45} {hardware:>8.0} {simulated:>8.0} {error:>+7.1}%");
        let met = match expectation(&name) {
            Expectation::Within(tolerance) => error.abs() <= tolerance,
            Expectation::SlowerMerged => error > 10.0,
            Expectation::FasterOnAllSms => error < -10.0,
        };
        if !met {
            misses.push(line.clone());
        }
        report.push(line);
    }
    std::fs::remove_dir_all(&scratch).ok();
    assert_hardware_comparison(&misses, &report);
}
