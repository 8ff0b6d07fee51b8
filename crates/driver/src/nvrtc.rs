//! CUDA source to PTX through NVRTC, NVIDIA's run-time compiler, loaded when
//! a launch names a `.cu` file. NVRTC needs no GPU: `pip install
//! nvidia-cuda-nvrtc-cu12` puts `libnvrtc.so.12` under
//! `site-packages/nvidia/cuda_nvrtc/lib/`. The library is looked for in
//! `WARPSIM_NVRTC` (a path to the library), in that pip package for the
//! `python3` on the PATH, and in a CUDA toolkit (`CUDA_HOME`, `/usr/local/cuda`).
//!
//! The interface used is the stable C API of `nvrtc.h`: create a program,
//! compile it with options, read the log and the PTX.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Why a `.cu` file could not be turned into PTX.
#[derive(Debug)]
pub enum CompileError {
    /// No NVRTC library was found or it could not be loaded.
    NotFound(String),
    /// NVRTC ran and rejected the source; the log names file and line.
    Rejected { log: String },
}

type CreateProgram = unsafe extern "C" fn(
    *mut *mut c_void,
    *const c_char,
    *const c_char,
    c_int,
    *const *const c_char,
    *const *const c_char,
) -> c_int;
type CompileProgram = unsafe extern "C" fn(*mut c_void, c_int, *const *const c_char) -> c_int;
type GetSize = unsafe extern "C" fn(*mut c_void, *mut usize) -> c_int;
type GetText = unsafe extern "C" fn(*mut c_void, *mut c_char) -> c_int;
type DestroyProgram = unsafe extern "C" fn(*mut *mut c_void) -> c_int;

/// Where an NVRTC library may be, most specific first.
fn candidates() -> Vec<PathBuf> {
    let mut paths = Vec::new();
    if let Some(named) = std::env::var_os("WARPSIM_NVRTC") {
        paths.push(PathBuf::from(named));
    }
    // The pip package's location, as the Python on the PATH sees it.
    let query = "import nvidia.cuda_nvrtc as m; print(list(m.__path__)[0])";
    if let Ok(output) = Command::new("python3").args(["-c", query]).output() {
        if output.status.success() {
            let dir = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim()).join("lib");
            if let Ok(entries) = std::fs::read_dir(&dir) {
                let mut found: Vec<PathBuf> = entries
                    .filter_map(|entry| entry.ok().map(|entry| entry.path()))
                    .filter(|path| {
                        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                        name.starts_with("libnvrtc.so") && !name.contains("alt")
                    })
                    .collect();
                found.sort();
                paths.extend(found);
            }
        }
    }
    for home in [
        std::env::var_os("CUDA_HOME").map(PathBuf::from),
        Some(PathBuf::from("/usr/local/cuda")),
    ]
    .into_iter()
    .flatten()
    {
        paths.push(home.join("lib64/libnvrtc.so"));
    }
    paths
}

/// Compiles `source` (named `name` in `.loc` lines) for `architecture`
/// (e.g. `compute_90`) with line information, plus `options` such as `-DN=64`.
pub fn compile(
    name: &str,
    source: &str,
    architecture: &str,
    options: &[String],
) -> Result<String, CompileError> {
    let tried = candidates();
    let library = tried
        .iter()
        .filter(|path| path.exists())
        // SAFETY: loading NVRTC runs its initialisers, which have no
        // preconditions; the library is NVIDIA's and is used through its C API.
        .find_map(|path| unsafe { libloading::Library::new(path) }.ok())
        .ok_or_else(|| {
            CompileError::NotFound(format!(
                "CUDA sources need NVRTC, NVIDIA's run-time compiler (no GPU needed): \
                 `pip install nvidia-cuda-nvrtc-cu12`, or set WARPSIM_NVRTC to libnvrtc.so \
                 (looked in: {})",
                tried
                    .iter()
                    .map(|path| path.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
    let missing = |error: libloading::Error| {
        CompileError::NotFound(format!("NVRTC lacks a function: {error}"))
    };
    // SAFETY: the signatures are those of nvrtc.h (CUDA 11 to 13), and every
    // pointer passed below is valid for the duration of the call.
    unsafe {
        let create: libloading::Symbol<CreateProgram> =
            library.get(b"nvrtcCreateProgram\0").map_err(missing)?;
        let compile: libloading::Symbol<CompileProgram> =
            library.get(b"nvrtcCompileProgram\0").map_err(missing)?;
        let log_size: libloading::Symbol<GetSize> =
            library.get(b"nvrtcGetProgramLogSize\0").map_err(missing)?;
        let log_text: libloading::Symbol<GetText> =
            library.get(b"nvrtcGetProgramLog\0").map_err(missing)?;
        let ptx_size: libloading::Symbol<GetSize> =
            library.get(b"nvrtcGetPTXSize\0").map_err(missing)?;
        let ptx_text: libloading::Symbol<GetText> =
            library.get(b"nvrtcGetPTX\0").map_err(missing)?;
        let destroy: libloading::Symbol<DestroyProgram> =
            library.get(b"nvrtcDestroyProgram\0").map_err(missing)?;

        let source = CString::new(source).map_err(|_| CompileError::Rejected {
            log: format!("{name}: the source contains a NUL byte"),
        })?;
        let program_name = CString::new(name).unwrap_or_default();
        let mut program: *mut c_void = std::ptr::null_mut();
        if create(
            &mut program,
            source.as_ptr(),
            program_name.as_ptr(),
            0,
            std::ptr::null(),
            std::ptr::null(),
        ) != 0
        {
            return Err(CompileError::NotFound(
                "nvrtcCreateProgram failed".to_string(),
            ));
        }
        let mut all_options = vec![
            format!("--gpu-architecture={architecture}"),
            "-lineinfo".to_string(),
        ];
        all_options.extend(options.iter().cloned());
        let owned: Vec<CString> = all_options
            .iter()
            .filter_map(|option| CString::new(option.as_str()).ok())
            .collect();
        let pointers: Vec<*const c_char> = owned.iter().map(|option| option.as_ptr()).collect();
        let status = compile(program, pointers.len() as c_int, pointers.as_ptr());
        let read = |size: &GetSize, text: &GetText| -> String {
            let mut length = 0usize;
            if size(program, &mut length) != 0 || length == 0 {
                return String::new();
            }
            let mut buffer = vec![0 as c_char; length];
            if text(program, buffer.as_mut_ptr()) != 0 {
                return String::new();
            }
            CStr::from_ptr(buffer.as_ptr())
                .to_string_lossy()
                .into_owned()
        };
        let log = read(&log_size, &log_text);
        let result = if status == 0 {
            Ok(read(&ptx_size, &ptx_text))
        } else {
            Err(CompileError::Rejected { log })
        };
        destroy(&mut program);
        result
    }
}

/// `compute_90` for compute capability 90.
pub fn architecture(compute_capability: u32) -> String {
    format!("compute_{compute_capability}")
}

/// The name NVRTC gives a source in `.loc` lines: its path relative to `base_dir`.
pub fn program_name(source: &Path, base_dir: &Path) -> String {
    source
        .strip_prefix(base_dir)
        .unwrap_or(source)
        .display()
        .to_string()
}

/// Whether `path` is a header of a CUDA toolkit (the pip packages' include
/// directories, `CUDA_HOME`, `/usr/local/cuda`) rather than the user's own.
pub fn is_toolkit_header(path: &Path) -> bool {
    let Ok(path) = path.canonicalize() else {
        return false;
    };
    if path
        .components()
        .collect::<Vec<_>>()
        .windows(2)
        .any(|pair| pair[0].as_os_str() == "site-packages" && pair[1].as_os_str() == "nvidia")
    {
        return true;
    }
    [
        std::env::var_os("CUDA_HOME").map(PathBuf::from),
        Some(PathBuf::from("/usr/local/cuda")),
    ]
    .into_iter()
    .flatten()
    .filter_map(|home| home.canonicalize().ok())
    .any(|home| path.starts_with(home))
}
