//! `warpsim export`: launches written out for a GPU to replay
//! (`programs/timing/hardware/launch.py`). Each test exports a launch of
//! `programs/` with the real binary and checks `launch.json` field by field
//! and every buffer image byte for byte, the images computed here from the
//! launch file's own `init` rules; and the hardware validation launches of
//! `programs/timing/validation/launches.txt` all prepare.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};
use support::repo_root;
use warpsim_driver::launch_file::{ElementType, Init, NamedInit, TableInit};
use warpsim_driver::{LaunchFile, TomlFile};
use warpsim_machine::memory::buffer_base;

/// Runs `warpsim ARGS` in the repository root.
fn warpsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warpsim"))
        .current_dir(repo_root())
        .env_remove("RUST_LOG")
        .args(args)
        .output()
        .expect("warpsim starts")
}

/// A fresh, absent directory for one test's export.
fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("export")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.parent().unwrap()).expect("the scratch directory can be made");
    dir
}

/// Exports `launch` (relative to the repository root) to `out`, and reads
/// back its `launch.json`.
fn export(launch: &str, out: &Path) -> Value {
    let output = warpsim(&["export", launch, out.to_str().unwrap()]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{launch}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = std::fs::read_to_string(out.join("launch.json")).expect("launch.json is written");
    serde_json::from_str(&text).expect("launch.json is JSON")
}

/// SplitMix64, as the launch file's `{ random = SEED }` rule defines it.
fn splitmix64(seed: u64, count: usize) -> Vec<u64> {
    let mut state = seed;
    (0..count)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
        .collect()
}

/// The initial bytes of buffer `name` of the launch file at `launch`,
/// computed from its `init` rule, for the rules and types these tests use.
fn initial_image(launch: &str, name: &str) -> Vec<u8> {
    let file = TomlFile::read(&repo_root().join(launch)).expect("the launch file reads");
    let parsed: LaunchFile = file.parse().expect("the launch file parses");
    let spec = &parsed.buffers[name];
    let len = spec.len.expect("the buffer gives its length") as usize;
    match (&spec.init, spec.element) {
        (Init::Zero | Init::Named(NamedInit::Zero), element) => {
            vec![0; len * element.size() as usize]
        }
        (Init::Named(NamedInit::Iota), ElementType::I32) => {
            (0..len as i32).flat_map(i32::to_le_bytes).collect()
        }
        // A float in [0, 1) from the top 53 bits, rounded to f32.
        (Init::Table(TableInit::Random(seed)), ElementType::F32) => splitmix64(*seed, len)
            .into_iter()
            .flat_map(|bits| (((bits >> 11) as f64 / (1u64 << 53) as f64) as f32).to_le_bytes())
            .collect(),
        (init, element) => {
            panic!("{launch}: buffer `{name}`: no rule here for {init:?} of {element}")
        }
    }
}

fn hex_bytes(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(&text[at..at + 2], 16).expect("hexadecimal"))
        .collect()
}

fn read(dir: &Path, file: &str) -> Vec<u8> {
    std::fs::read(dir.join(file)).unwrap_or_else(|error| panic!("{file}: {error}"))
}

#[test]
fn a_corpus_launch_exports_its_ptx_parameters_and_buffers() {
    let launch = "programs/corpus/saxpy_float4.toml";
    let out = scratch("saxpy");
    let description = export(launch, &out);
    // saxpy_float4(int n, float a, const float* x, float* y) with
    // args = [1024, 2.5, "x", "y"]: the PTX lays the pointers at 8 and 16.
    assert_eq!(description["format"], "warpsim-export-1");
    assert_eq!(description["launch"], launch);
    assert_eq!(description["kernel"], "saxpy_float4");
    assert_eq!(description["kernel_name"], "saxpy_float4");
    assert_eq!(description["ptx"], "module.ptx");
    assert_eq!(description["grid"], json!([1, 1, 1]));
    assert_eq!(description["block"], json!([128, 1, 1]));
    assert_eq!(description["dynamic_shared_bytes"], 0);
    let parameters = hex_bytes(description["parameters"].as_str().unwrap());
    let mut expected = Vec::new();
    expected.extend_from_slice(&1024i32.to_le_bytes());
    expected.extend_from_slice(&2.5f32.to_le_bytes());
    expected.extend_from_slice(&buffer_base(0).to_le_bytes());
    expected.extend_from_slice(&buffer_base(1).to_le_bytes());
    assert_eq!(parameters, expected);
    assert_eq!(
        description["pointers"],
        json!([
            { "offset": 8, "buffer": "x", "buffer_offset": 0 },
            { "offset": 16, "buffer": "y", "buffer_offset": 0 },
        ])
    );
    assert_eq!(
        description["buffers"],
        json!([
            { "name": "x", "element": "f32", "bytes": 4096, "file": "x.bin", "global": false },
            { "name": "y", "element": "f32", "bytes": 4096, "file": "y.bin", "global": false },
        ])
    );
    // The PTX is the file the launch names, as it is.
    assert_eq!(
        read(&out, "module.ptx"),
        read(&repo_root(), "programs/corpus/saxpy-float4.ptx")
    );
    for name in ["x", "y"] {
        assert_eq!(
            read(&out, &format!("{name}.bin")),
            initial_image(launch, name),
            "buffer {name}"
        );
    }
    let mut files: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["launch.json", "module.ptx", "x.bin", "y.bin"]);
}

#[test]
fn struct_pointers_and_global_variables_are_exported() {
    let launch = "programs/runtime/structAndGlobals.toml";
    let out = scratch("struct-and-globals");
    let description = export(launch, &out);
    // args = [[{ f32 = 0.5 }, { i32 = 3 }, { f64 = 0.25 }, { ptr = "table" }], "out"]:
    // the struct's pointer at 16, the struct 24 bytes, `out` after it.
    assert_eq!(
        description["pointers"],
        json!([
            { "offset": 16, "buffer": "table", "buffer_offset": 0 },
            { "offset": 24, "buffer": "out", "buffer_offset": 0 },
        ])
    );
    let parameters = hex_bytes(description["parameters"].as_str().unwrap());
    assert_eq!(parameters.len(), 32);
    assert_eq!(parameters[0..4], 0.5f32.to_le_bytes());
    assert_eq!(parameters[4..8], 3i32.to_le_bytes());
    assert_eq!(parameters[8..16], 0.25f64.to_le_bytes());
    assert_eq!(parameters[16..24], buffer_base(0).to_le_bytes());
    assert_eq!(parameters[24..32], buffer_base(1).to_le_bytes());
    // The kernel's `__device__` variables follow the launch file's buffers,
    // marked as the module's own memory.
    assert_eq!(
        description["buffers"],
        json!([
            { "name": "table", "element": "i32", "bytes": 16, "file": "table.bin", "global": false },
            { "name": "out", "element": "f32", "bytes": 256, "file": "out.bin", "global": false },
            { "name": "d_CallValue", "element": "u8", "bytes": 256, "file": "d_CallValue.bin", "global": true },
            { "name": "d_launches", "element": "u32", "bytes": 4, "file": "d_launches.bin", "global": true },
        ])
    );
    assert_eq!(read(&out, "table.bin"), initial_image(launch, "table"));
    assert_eq!(read(&out, "out.bin"), initial_image(launch, "out"));
    // The module's initialisers: `d_CallValue` has none, `d_launches = 40`.
    assert_eq!(read(&out, "d_CallValue.bin"), vec![0; 256]);
    assert_eq!(read(&out, "d_launches.bin"), 40u32.to_le_bytes());
}

#[test]
fn an_integer_address_inside_a_buffer_is_a_pointer_with_its_offset() {
    let dir = scratch("integer-address");
    std::fs::create_dir_all(&dir).unwrap();
    let ptx = repo_root().join("programs/runtime/runtime.ptx");
    let address = buffer_base(0) + 12;
    let launch = dir.join("launch.toml");
    std::fs::write(
        &launch,
        format!(
            "source = {:?}\nkernel = \"structAndGlobals\"\ngrid = [1]\nblock = [1]\n\
             args = [[{{ f32 = 0.5 }}, {{ i32 = 3 }}, {{ f64 = 0.25 }}, {{ ptr = {address} }}], \"out\"]\n\
             [buffers.table]\ntype = \"i32\"\nlen = 8\n[buffers.out]\ntype = \"f32\"\nlen = 1\n",
            ptx.display().to_string()
        ),
    )
    .unwrap();
    let out = dir.join("export");
    let description = export(launch.to_str().unwrap(), &out);
    assert_eq!(
        description["pointers"],
        json!([
            { "offset": 16, "buffer": "table", "buffer_offset": 12 },
            { "offset": 24, "buffer": "out", "buffer_offset": 0 },
        ])
    );
}

#[test]
fn a_cuda_kernel_exports_nvrtc_ptx_under_its_mangled_name() {
    let out = scratch("cuda");
    let description = export("programs/cpp/scaleShift_float.toml", &out);
    assert_eq!(description["kernel"], "_Z10scaleShiftIfEvPT_ij");
    assert_eq!(description["kernel_name"], "scaleShift<float>");
    let ptx = String::from_utf8(read(&out, "module.ptx")).expect("PTX is text");
    assert!(ptx.contains("Generated by NVIDIA NVVM Compiler"));
    assert!(ptx.contains(".entry _Z10scaleShiftIfEvPT_ij("));
}

#[test]
fn a_kir_launch_is_refused_and_writes_nothing() {
    let out = scratch("kir");
    let output = warpsim(&[
        "export",
        "programs/seed/transposeSmemF.toml",
        out.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "error: programs/seed/transposeSmemF.toml: a .kir program has no PTX to export\n"
    );
    assert!(!out.exists());
}

#[test]
fn every_validation_launch_prepares_from_ptx() {
    let list = repo_root().join("programs/timing/validation/launches.txt");
    let text = std::fs::read_to_string(&list).expect("launches.txt reads");
    let launches: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .collect();
    assert!(launches.len() >= 30, "only {} launches", launches.len());
    for launch in launches {
        let config = warpsim_driver::load_config(None).unwrap();
        let prepared = warpsim_driver::prepare(&repo_root().join(launch), config)
            .unwrap_or_else(|error| panic!("{launch}: {error}"));
        assert!(
            prepared.source_name.ends_with(".ptx"),
            "{launch}: {} has no PTX",
            prepared.source_name
        );
    }
}
