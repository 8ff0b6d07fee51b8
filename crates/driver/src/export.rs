//! `warpsim export`: a launch written out for a real GPU to replay, so that
//! what warpsim reports can be set beside what the hardware does
//! (`programs/timing/hardware/launch.py` is the replayer, on the CUDA driver
//! API).
//!
//! The launch is prepared exactly as `warpsim run` prepares it ([`crate::prepare`]):
//! the same PTX, the same parameter buffer, the same initial buffers. The
//! export directory then holds:
//!
//! - `module.ptx`: the PTX warpsim parsed: a `.ptx` source as it is, or for
//!   a `.cu` source the PTX that NVRTC produced. A `.kir` source has no PTX
//!   and is refused ([`ExportError::NoPtx`]).
//! - `NAME.bin`, one per buffer: its initial contents, raw little-endian
//!   bytes. The module's `.global` variables that the kernel uses are
//!   buffers too, with the initial contents the launch file or the module
//!   gives them. A name that is not a plain file name (letters, digits,
//!   `_`, `-` and `.`, not starting with `.`) or that two buffers would
//!   share is written `bufferINDEX.bin` instead.
//! - `launch.json`, an object with these keys:
//!   - `format`: `"warpsim-export-1"`, this layout.
//!   - `launch`: the launch file's path, as given to warpsim.
//!   - `kernel`: the kernel's PTX entry name (mangled, for a C++ kernel);
//!     `kernel_name`: its name as the launch file gives it.
//!   - `ptx`: `"module.ptx"`.
//!   - `grid`, `block`: three numbers each; `dynamic_shared_bytes`.
//!   - `parameters`: the parameter buffer, as lowercase hexadecimal, laid
//!     out as the PTX entry's parameters are (what the CUDA driver takes
//!     with `CU_LAUNCH_PARAM_BUFFER_POINTER`), holding warpsim's addresses.
//!   - `pointers`: each slot of the parameter buffer that holds the address
//!     of a buffer: `offset` (bytes into the parameter buffer; the slot is 8
//!     bytes), `buffer` (its name) and `buffer_offset` (bytes into the
//!     buffer). A replayer writes its own address of the buffer, plus
//!     `buffer_offset`, there.
//!   - `buffers`: in warpsim's order, each with `name`, `element` (the
//!     launch file's type name, `f32`), `bytes`, `file` (its initial image)
//!     and `global` (true for a module `.global` variable, whose memory the
//!     module owns: a replayer finds it by name, `cuModuleGetGlobal`, and
//!     copies the image into it).
//!
//! Nothing here depends on a GPU, and nothing in the files depends on the
//! host: two exports of the same launch are byte-identical.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::dump::{write_buffer, DumpFormat};
use crate::error::InputError;
use crate::PreparedLaunch;

/// The value of `launch.json`'s `format` key.
pub const FORMAT: &str = "warpsim-export-1";

/// The name of the PTX file in an export directory.
pub const PTX_FILE: &str = "module.ptx";

/// The name of the description in an export directory.
pub const LAUNCH_FILE: &str = "launch.json";

/// Why a launch could not be exported.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The launch itself could not be prepared, or its buffers built.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The kernel's source is warpsim's own IR, which no GPU runs.
    #[error("{launch}: a .kir program has no PTX to export")]
    NoPtx { launch: PathBuf },
    /// A file of the export could not be written.
    #[error("cannot write {}: {message}", path.display())]
    Write { path: PathBuf, message: String },
}

/// What an export wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exported {
    /// The PTX entry name of the kernel.
    pub kernel: String,
    /// Every file written, in the directory, in the order written.
    pub files: Vec<PathBuf>,
}

/// `launch.json`, in the order its keys are written.
#[derive(Serialize)]
struct LaunchJson<'a> {
    format: &'a str,
    launch: String,
    kernel: &'a str,
    kernel_name: &'a str,
    ptx: &'a str,
    grid: [u32; 3],
    block: [u32; 3],
    dynamic_shared_bytes: u32,
    parameters: String,
    pointers: Vec<PointerJson<'a>>,
    buffers: Vec<BufferJson<'a>>,
}

#[derive(Serialize)]
struct PointerJson<'a> {
    offset: u32,
    buffer: &'a str,
    buffer_offset: u64,
}

#[derive(Serialize)]
struct BufferJson<'a> {
    name: &'a str,
    element: String,
    bytes: u64,
    file: String,
    global: bool,
}

/// Writes `prepared` to the directory `out_dir` (made if missing; files of
/// the same names in it are replaced).
pub fn export(prepared: &PreparedLaunch, out_dir: &Path) -> Result<Exported, ExportError> {
    // A `.cu` source's PTX is named `NAME.cu.ptx`; a `.kir` source keeps
    // its own name.
    if !prepared.source_name.ends_with(".ptx") {
        return Err(ExportError::NoPtx {
            launch: prepared.launch_path.clone(),
        });
    }
    let write_error = |path: &Path, error: std::io::Error| ExportError::Write {
        path: path.to_path_buf(),
        message: error.to_string(),
    };
    std::fs::create_dir_all(out_dir).map_err(|error| write_error(out_dir, error))?;
    let kernel = &prepared.module.kernels[prepared.kernel.index()].name;
    let mut files = Vec::new();

    let ptx_path = out_dir.join(PTX_FILE);
    std::fs::write(&ptx_path, &prepared.source_text)
        .map_err(|error| write_error(&ptx_path, error))?;
    files.push(ptx_path);

    let file_names = buffer_file_names(prepared.buffers.iter().map(|plan| plan.name.as_str()));
    let memory = prepared.memory()?;
    for (index, (plan, file_name)) in prepared.buffers.iter().zip(&file_names).enumerate() {
        let path = out_dir.join(file_name);
        let file = File::create(&path).map_err(|error| write_error(&path, error))?;
        let mut out = BufWriter::new(file);
        write_buffer(&memory, index, plan.element, DumpFormat::Raw, &mut out)
            .map_err(|error| write_error(&path, error))?;
        files.push(path);
    }

    let description = LaunchJson {
        format: FORMAT,
        launch: prepared.launch_path.display().to_string(),
        kernel,
        kernel_name: &prepared.kernel_name,
        ptx: PTX_FILE,
        grid: prepared.launch.grid,
        block: prepared.launch.block,
        dynamic_shared_bytes: prepared.launch.dynamic_shared_bytes,
        parameters: hex(&prepared.launch.params),
        pointers: prepared
            .pointers
            .iter()
            .map(|pointer| PointerJson {
                offset: pointer.offset,
                buffer: &prepared.buffers[pointer.buffer].name,
                buffer_offset: pointer.buffer_offset,
            })
            .collect(),
        buffers: prepared
            .buffers
            .iter()
            .zip(file_names)
            .enumerate()
            .map(|(index, (plan, file))| BufferJson {
                name: &plan.name,
                element: plan.element.to_string(),
                bytes: plan.bytes(),
                file,
                global: prepared.global_variable_buffers.contains(&index),
            })
            .collect(),
    };
    let json_path = out_dir.join(LAUNCH_FILE);
    let mut text = serde_json::to_string_pretty(&description)
        .map_err(|error| write_error(&json_path, std::io::Error::other(error.to_string())))?;
    text.push('\n');
    let mut file = File::create(&json_path).map_err(|error| write_error(&json_path, error))?;
    file.write_all(text.as_bytes())
        .map_err(|error| write_error(&json_path, error))?;
    files.push(json_path);
    Ok(Exported {
        kernel: kernel.clone(),
        files,
    })
}

/// Lowercase hexadecimal, two digits a byte.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The file name of each buffer's image: `NAME.bin`, or `bufferINDEX.bin`
/// where the name is not a plain file name or another buffer's file has it.
fn buffer_file_names<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let plain = |name: &str| {
        !name.is_empty()
            && !name.starts_with('.')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    };
    let names: Vec<&str> = names.collect();
    // Compared without case, for file systems that ignore it; the PTX and
    // the description are taken too.
    let mut taken: HashSet<String> = [PTX_FILE, LAUNCH_FILE]
        .iter()
        .map(|name| name.to_ascii_lowercase())
        .collect();
    let mut files = Vec::with_capacity(names.len());
    for (index, name) in names.iter().enumerate() {
        let wanted = format!("{name}.bin");
        let file = if plain(name) && !taken.contains(&wanted.to_ascii_lowercase()) {
            wanted
        } else {
            // A buffer named `bufferN` may have taken this form already;
            // then a further suffix keeps the names apart.
            let mut candidate = format!("buffer{index}.bin");
            let mut suffix = 0;
            while taken.contains(&candidate.to_ascii_lowercase()) {
                suffix += 1;
                candidate = format!("buffer{index}-{suffix}.bin");
            }
            candidate
        };
        taken.insert(file.to_ascii_lowercase());
        files.push(file);
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffer_files_are_plain_and_unique() {
        let names = ["A", "$str", "a", "x.y", ".hidden", "buffer5", "", "B"];
        assert_eq!(
            buffer_file_names(names.into_iter()),
            [
                "A.bin",
                "buffer1.bin",
                "buffer2.bin",
                "x.y.bin",
                "buffer4.bin",
                "buffer5.bin",
                "buffer6.bin",
                "B.bin"
            ]
        );
        // A buffer named like another's replacement file still gets its own.
        assert_eq!(
            buffer_file_names(["$", "buffer0"].into_iter()),
            ["buffer0.bin", "buffer1.bin"]
        );
        assert_eq!(
            buffer_file_names(["module.ptx", "launch.json"].into_iter()),
            ["module.ptx.bin", "launch.json.bin"]
        );
    }

    #[test]
    fn hex_is_two_lowercase_digits_a_byte() {
        assert_eq!(hex(&[0, 1, 0xab, 0xff]), "0001abff");
        assert_eq!(hex(&[]), "");
    }
}
