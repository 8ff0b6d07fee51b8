//! Global loads scheduled as ptxas schedules them
//! (`warpsim_ir::schedule`), end to end: the eight load/store pairs of
//! `programs/schedule/load_store_pairs.toml` take about one memory round trip
//! as on an H200 (within 10% of its cold-L2 cycles,
//! `programs/timing/hardware/h200-load-schedule.txt`), against about eight
//! with the PTX's own order, and the schedule changes no output.

mod support;

use support::repo_root;

/// The kernel's clock64 cycles and its output buffer, with the schedule
/// on or off.
fn run(schedule_loads: bool) -> (u64, Vec<u8>) {
    let mut config = warpsim_driver::load_config(None).unwrap();
    config.compiler.schedule_loads = schedule_loads;
    let launch = repo_root().join("programs/schedule/load_store_pairs.toml");
    let prepared = warpsim_driver::prepare(&launch, config).unwrap();
    let result = prepared.execute(1).unwrap();
    assert!(result.failure.is_none(), "{:?}", result.failure);
    let buffers = result.buffers();
    let find = |name: &str| {
        buffers
            .iter()
            .find(|(buffer, _)| buffer.as_str() == name)
            .map(|(_, bytes)| bytes.to_vec())
            .unwrap_or_else(|| panic!("no buffer {name}"))
    };
    let cycles = u64::from_le_bytes(find("cycles")[..8].try_into().unwrap());
    (cycles, find("out"))
}

#[test]
fn eight_independent_load_store_pairs_take_one_round_trip_as_on_an_h200() {
    let measured = std::fs::read_to_string(
        repo_root().join("programs/timing/hardware/h200-load-schedule.txt"),
    )
    .unwrap();
    let hardware: f64 = measured
        .lines()
        .find_map(|line| line.strip_prefix("cold_l2_cycles "))
        .expect("the H200's cold-L2 cycles")
        .trim()
        .parse()
        .unwrap();
    let (scheduled, scheduled_out) = run(true);
    let (in_order, in_order_out) = run(false);
    let error = (scheduled as f64 - hardware) / hardware;
    assert!(
        error.abs() <= 0.10,
        "{scheduled} cycles against the H200's {hardware}"
    );
    assert!(
        in_order > 6 * scheduled,
        "in the PTX's order {in_order} cycles, scheduled {scheduled}"
    );
    assert_eq!(scheduled_out, in_order_out);
}
