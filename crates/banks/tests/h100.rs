//! The arbiter against an H100: 5,232 single-warp shared-memory instructions
//! measured with Nsight Compute (`tests/data/h100/joined.tsv`, made by
//! `hardware/join.py` from the raw source-page exports and the SASS of the
//! kernels that ran; `hardware/README.md` says how they were run).
//!
//! Every row is one instruction: an access (load, store, atomic add, or
//! population-count increment), its size, its active mask, the byte offset of
//! each lane, and the wavefronts and ideal wavefronts the H100 counted.
//! The rules for stores, atomics, population-count increments and loads of 4
//! bytes or less reproduce every row. For 8- and 16-byte loads the measured
//! counts follow rules this crate implements in part (its documentation,
//! "Where the model goes beyond the measurements"); the tests pin down what
//! holds exactly and how often the rest agrees.

use std::collections::HashMap;
use std::fs;
use std::path::Path;

use warpsim_banks::{AccessKind, BankArbiter, BankConfig, Wavefronts};

/// One measured instruction.
#[derive(Clone, Debug)]
struct Row {
    run: String,
    kernel: String,
    case: u32,
    op: String,
    size: u32,
    mask: u32,
    offsets: [u32; 32],
    threads: u32,
    measured: Wavefronts,
}

impl Row {
    fn kind(&self) -> AccessKind {
        match self.op.as_str() {
            "ld" => AccessKind::Load,
            "st" => AccessKind::Store,
            "atom" => AccessKind::Atomic,
            "popc" => AccessKind::PopcIncrement,
            other => panic!("unknown operation {other}"),
        }
    }

    fn model(&self, arbiter: &mut BankArbiter) -> Wavefronts {
        arbiter.request(self.kind(), self.size, self.mask, &self.offsets)
    }

    /// Whether some pair of lanes (2i, 2i + 1) has both lanes active at
    /// different addresses.
    fn has_differing_pair(&self) -> bool {
        (0..16).any(|pair| {
            let (even, odd) = (2 * pair, 2 * pair + 1);
            self.mask >> even & 1 == 1
                && self.mask >> odd & 1 == 1
                && self.offsets[even] != self.offsets[odd]
        })
    }
}

fn rows() -> Vec<Row> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/h100/joined.tsv");
    let text = fs::read_to_string(&path).expect("joined.tsv is committed");
    let mut rows = Vec::new();
    for line in text.lines().filter(|line| !line.starts_with('#')) {
        let fields: Vec<&str> = line.split('\t').collect();
        assert_eq!(fields.len(), 11, "a row has 11 fields: {line}");
        let offsets: Vec<u32> = fields[6]
            .split(',')
            .map(|offset| offset.parse().expect("a byte offset"))
            .collect();
        rows.push(Row {
            run: fields[0].to_string(),
            kernel: fields[1].to_string(),
            case: fields[2].parse().expect("a case number"),
            op: fields[3].to_string(),
            size: fields[4].parse().expect("a size"),
            mask: u32::from_str_radix(fields[5], 16).expect("a hexadecimal mask"),
            offsets: offsets.try_into().expect("32 offsets"),
            threads: fields[8].parse().expect("a thread count"),
            measured: Wavefronts {
                wavefronts: fields[9].parse().expect("wavefronts"),
                ideal: fields[10].parse().expect("ideal wavefronts"),
            },
        });
    }
    rows
}

fn hopper() -> BankArbiter {
    BankArbiter::new(BankConfig::HOPPER)
}

#[test]
fn the_data_holds_every_run_and_each_instruction_ran_its_mask() {
    let rows = rows();
    assert_eq!(rows.len(), 5232);
    for row in &rows {
        assert_eq!(
            row.threads,
            row.mask.count_ones(),
            "{} {} case {}: the instruction ran for other lanes than its mask",
            row.run,
            row.kernel,
            row.case
        );
    }
}

#[test]
fn the_hardware_is_deterministic_and_ignores_inactive_lanes() {
    // The second run repeated the first run's 8- and 16-byte loads, then ran them again with
    // every address computed in every lane ("same"), and with each inactive lane's address
    // set to the lowest active lane's ("neutral"). All four agree instruction by instruction.
    let rows = rows();
    let mut by_case: HashMap<(u32, u32), Vec<&Row>> = HashMap::new();
    for row in &rows {
        let family = match row.kernel.as_str() {
            "cases_ld64" | "probe_ld64_same" | "probe_ld64_neutral" => 8,
            "cases_ld128" | "probe_ld128_same" | "probe_ld128_neutral" => 16,
            _ => continue,
        };
        by_case.entry((family, row.case)).or_default().push(row);
    }
    assert_eq!(by_case.len(), 640 + 320);
    for ((size, case), versions) in by_case {
        assert_eq!(versions.len(), 4, "{size}-byte case {case}");
        for version in &versions[1..] {
            assert_eq!(
                version.measured, versions[0].measured,
                "{size}-byte case {case}: {} {} and {} {} differ",
                versions[0].run, versions[0].kernel, version.run, version.kernel
            );
        }
    }
}

#[test]
fn stores_atomics_increments_and_narrow_loads_match_every_measurement() {
    let mut arbiter = hopper();
    let mut checked = 0;
    for row in rows() {
        if row.op == "ld" && row.size >= 8 {
            continue;
        }
        assert_eq!(
            row.model(&mut arbiter),
            row.measured,
            "{} {} case {} ({} {} bytes, mask {:08x})",
            row.run,
            row.kernel,
            row.case,
            row.op,
            row.size,
            row.mask
        );
        checked += 1;
    }
    assert_eq!(checked, 96 + 160 + 96 + 192 + 64);
}

#[test]
fn ideal_wavefronts_are_the_bytes_in_rows_but_never_more_than_the_wavefronts() {
    // A rule about the hardware: over every measured instruction, the ideal is
    // ceil(active bytes / 128) capped by the measured wavefronts (a uniform 16-byte load:
    // 2 wavefronts, 2 ideal, not 4). The model states it with its own wavefronts, so
    // wherever those agree, its ideal must agree too.
    let mut arbiter = hopper();
    for row in rows() {
        let bytes = row.mask.count_ones() * row.size;
        let rule = bytes.div_ceil(128).min(row.measured.wavefronts).max(1);
        assert_eq!(
            rule, row.measured.ideal,
            "{} {} case {}",
            row.run, row.kernel, row.case
        );
        let model = row.model(&mut arbiter);
        if model.wavefronts == row.measured.wavefronts {
            assert_eq!(model.ideal, row.measured.ideal);
        }
    }
}

#[test]
fn the_issue_cases_uniform_sixteen_bytes_and_a_partial_eight_byte_mask() {
    let rows = rows();
    let mut arbiter = hopper();
    // A 16-byte load that every lane makes from one address: 2 wavefronts, 2 ideal.
    let uniform = rows
        .iter()
        .find(|row| row.kernel == "cases_ld128" && row.mask == u32::MAX && row.offsets == [0; 32])
        .expect("the uniform 16-byte case was measured");
    assert_eq!(
        uniform.measured,
        Wavefronts {
            wavefronts: 2,
            ideal: 2
        }
    );
    assert_eq!(uniform.model(&mut arbiter), uniform.measured);
    // 8-byte loads with a partial mask that the old rule (half-warps unless every pair of
    // the whole warp shares) charged 2 wavefronts and the H100 served in 1: all of them are
    // now counted 1.
    let mut partial = 0;
    for row in rows
        .iter()
        .filter(|row| row.op == "ld" && row.size == 8 && row.mask != u32::MAX)
    {
        let both_halves = row.mask & 0xFFFF != 0 && row.mask >> 16 != 0;
        if both_halves && row.measured.wavefronts == 1 && !row.has_differing_pair() {
            assert_eq!(row.model(&mut arbiter).wavefronts, 1, "case {}", row.case);
            partial += 1;
        }
    }
    assert!(partial >= 100, "only {partial} such cases");
}

#[test]
fn eight_byte_loads_are_exact_without_a_differing_pair_and_never_undercounted() {
    let mut arbiter = hopper();
    let (mut total, mut agree) = (0, 0);
    for row in rows()
        .into_iter()
        .filter(|row| row.op == "ld" && row.size == 8)
    {
        let model = row.model(&mut arbiter);
        total += 1;
        if model == row.measured {
            agree += 1;
        }
        if !row.has_differing_pair() {
            assert_eq!(
                model, row.measured,
                "{} {} case {}",
                row.run, row.kernel, row.case
            );
        }
        // Where a pair of active lanes differs, the H100 sometimes still serves the warp in
        // one wavefront; the model then charges the two half-warps. It never charges less.
        assert!(
            model.wavefronts >= row.measured.wavefronts,
            "{} {} case {}: model {model:?}, measured {:?}",
            row.run,
            row.kernel,
            row.case,
            row.measured
        );
    }
    eprintln!("8-byte loads: {agree} of {total} agree");
    assert_eq!(total, 640 * 4 + 416);
    assert!(agree * 100 >= total * 97, "{agree} of {total}");
}

#[test]
fn sixteen_byte_loads_are_exact_with_every_lane_active_and_mostly_otherwise() {
    let mut arbiter = hopper();
    let (mut total, mut agree) = (0, 0);
    for row in rows()
        .into_iter()
        .filter(|row| row.op == "ld" && row.size == 16)
    {
        let model = row.model(&mut arbiter);
        total += 1;
        if model == row.measured {
            agree += 1;
        }
        if row.mask == u32::MAX {
            assert_eq!(
                model, row.measured,
                "{} {} case {}",
                row.run, row.kernel, row.case
            );
        }
    }
    eprintln!("16-byte loads: {agree} of {total} agree");
    assert_eq!(total, 320 * 4 + 368);
    assert!(agree * 100 >= total * 88, "{agree} of {total}");
}
