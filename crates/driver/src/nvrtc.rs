//! CUDA source to PTX through NVRTC, NVIDIA's run-time compiler, loaded when
//! a launch names a `.cu` file. NVRTC needs no GPU: `pip install
//! nvidia-cuda-nvrtc-cu12` puts `libnvrtc.so.12` under
//! `site-packages/nvidia/cuda_nvrtc/lib/`. The library is looked for in
//! `WARPSIM_NVRTC` (a path to the library), in that pip package for the
//! `python3` on the PATH, and in a CUDA toolkit (`CUDA_HOME`, `/usr/local/cuda`),
//! by the search every library of NVIDIA's shares (`nvidia_libraries.rs`).
//! CUDA's own headers (`cuda_fp16.h`, `cooperative_groups.h`, ...) are
//! found the same way, in the pip packages `nvidia-cuda-runtime-cu12` and
//! `nvidia-cuda-cccl-cu12` or a toolkit's `include`; the C library headers
//! CUDA code includes for `printf` and `assert` are given to NVRTC as
//! empty shims, since NVRTC declares both itself.
//!
//! The interface used is the stable C API of `nvrtc.h`: create a program
//! (with headers), add name expressions (the C++ names of kernels, to learn
//! their mangled PTX names), compile it with options, read the log, the PTX
//! and the lowered names.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};

use crate::nvidia_libraries::{self, pip_package, toolkit_homes, PipPackage};

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
type AddNameExpression = unsafe extern "C" fn(*mut c_void, *const c_char) -> c_int;
type GetLoweredName = unsafe extern "C" fn(*mut c_void, *const c_char, *mut *const c_char) -> c_int;

/// The directories of CUDA's own headers (`cuda_fp16.h`, `cuda_bf16.h`,
/// `cooperative_groups.h`, `nv/target`): the pip packages
/// `nvidia-cuda-runtime-cu12` and `nvidia-cuda-cccl-cu12`, and a toolkit's
/// `include`. NVRTC builds in only some of them.
pub fn header_dirs() -> Vec<PathBuf> {
    [PipPackage::CudaRuntime, PipPackage::CudaCccl]
        .into_iter()
        .filter_map(pip_package)
        .map(|package| package.join("include"))
        .chain(toolkit_homes().into_iter().map(|home| home.join("include")))
        .filter(|dir| dir.is_dir())
        .collect()
}

/// Headers of the C library that CUDA code includes and NVRTC lacks:
/// NVRTC declares `printf` and `assert` itself, so they need only exist.
const SHIM_HEADERS: [&str; 4] = ["cstdio", "stdio.h", "cassert", "assert.h"];
const SHIM_TEXT: &str = "/* provided by warpsim: NVRTC declares printf and assert itself */\n";

/// One compilation: the source, its name in `.loc` lines, the
/// architecture (`compute_90`), further options (`-DN=64`, `-I...`), and
/// the C++ names of kernels whose PTX names are wanted (`transpose<float>`).
pub struct CompileRequest<'a> {
    pub name: &'a str,
    pub source: &'a str,
    pub architecture: &'a str,
    pub options: &'a [String],
    pub name_expressions: &'a [String],
}

/// What a compilation gave: the PTX, and the PTX name of each name
/// expression, in order (`None` where NVRTC gave none).
pub struct Compiled {
    pub ptx: String,
    pub lowered_names: Vec<Option<String>>,
}

/// Compiles a request with line information, CUDA's header directories on
/// the include path (after the request's own options) and the shim headers.
pub fn compile(request: &CompileRequest) -> Result<Compiled, CompileError> {
    let (library, _) = nvidia_libraries::NVRTC.load().map_err(|tried| {
        CompileError::NotFound(format!(
            "CUDA sources need NVRTC, NVIDIA's run-time compiler (no GPU needed): \
             `pip install nvidia-cuda-nvrtc-cu12`, or set WARPSIM_NVRTC to libnvrtc.so \
             (looked in: {tried})"
        ))
    })?;
    let missing = |error: libloading::Error| {
        CompileError::NotFound(format!("NVRTC lacks a function: {error}"))
    };
    let rejected = |log: String| CompileError::Rejected { log };
    let source = CString::new(request.source)
        .map_err(|_| rejected(format!("{}: the source contains a NUL byte", request.name)))?;
    let program_name = CString::new(request.name).unwrap_or_default();
    let header_names: Vec<CString> = SHIM_HEADERS
        .iter()
        .filter_map(|name| CString::new(*name).ok())
        .collect();
    let header_text = CString::new(SHIM_TEXT).unwrap_or_default();
    let header_names_pointers: Vec<*const c_char> =
        header_names.iter().map(|name| name.as_ptr()).collect();
    let header_text_pointers: Vec<*const c_char> =
        header_names.iter().map(|_| header_text.as_ptr()).collect();
    let mut all_options = vec![
        format!("--gpu-architecture={}", request.architecture),
        "-lineinfo".to_string(),
    ];
    all_options.extend(request.options.iter().cloned());
    all_options.extend(
        header_dirs()
            .iter()
            .map(|dir| format!("-I{}", dir.display())),
    );
    let owned_options: Vec<CString> = all_options
        .iter()
        .filter_map(|option| CString::new(option.as_str()).ok())
        .collect();
    let option_pointers: Vec<*const c_char> =
        owned_options.iter().map(|option| option.as_ptr()).collect();
    let expressions: Vec<CString> = request
        .name_expressions
        .iter()
        .map(|expression| CString::new(expression.as_str()))
        .collect::<Result<_, _>>()
        .map_err(|_| rejected("a kernel name contains a NUL byte".to_string()))?;
    // SAFETY: the signatures are those of nvrtc.h (CUDA 11 to 13), and every
    // pointer passed below is valid for the duration of the call: the
    // CStrings and pointer vectors above outlive the program.
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
        let add_name: libloading::Symbol<AddNameExpression> =
            library.get(b"nvrtcAddNameExpression\0").map_err(missing)?;
        let lowered_name: libloading::Symbol<GetLoweredName> =
            library.get(b"nvrtcGetLoweredName\0").map_err(missing)?;

        let mut program: *mut c_void = std::ptr::null_mut();
        if create(
            &mut program,
            source.as_ptr(),
            program_name.as_ptr(),
            header_names.len() as c_int,
            header_text_pointers.as_ptr(),
            header_names_pointers.as_ptr(),
        ) != 0
        {
            return Err(CompileError::NotFound(
                "nvrtcCreateProgram failed".to_string(),
            ));
        }
        for expression in &expressions {
            add_name(program, expression.as_ptr());
        }
        let status = compile(
            program,
            option_pointers.len() as c_int,
            option_pointers.as_ptr(),
        );
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
            let lowered_names = expressions
                .iter()
                .map(|expression| {
                    let mut name: *const c_char = std::ptr::null();
                    (lowered_name(program, expression.as_ptr(), &mut name) == 0 && !name.is_null())
                        .then(|| CStr::from_ptr(name).to_string_lossy().into_owned())
                })
                .collect();
            Ok(Compiled {
                ptx: read(&ptx_size, &ptx_text),
                lowered_names,
            })
        } else {
            Err(CompileError::Rejected { log })
        };
        destroy(&mut program);
        result
    }
}

/// The architecture NVRTC compiles for, `compute_90` for compute
/// capability 90. A machine file's compute capability outside what
/// warpsim's semantics and NVRTC have in common (7.0 to 9.0) does not
/// change it: `compute_90` is used, so that a machine file made to change
/// the banks (Kepler's eight-byte mode) still compiles every `.cu`.
pub fn architecture(compute_capability: u32) -> String {
    format!(
        "compute_{}",
        nvidia_libraries::target_capability(compute_capability)
    )
}

/// The name NVRTC gives a source in `.loc` lines: its file name (the
/// source's own directory is on the include path).
pub fn program_name(source: &Path) -> String {
    source
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Whether `path` is a header of a CUDA toolkit (the pip packages' include
/// directories, `CUDA_HOME`, `/usr/local/cuda`) rather than the user's own.
pub fn is_toolkit_header(path: &Path) -> bool {
    toolkit_include(path).is_some()
}

/// The include directory of CUDA's headers that `path` lies in, if any.
pub fn toolkit_include(path: &Path) -> Option<PathBuf> {
    let path = path.canonicalize().ok()?;
    // Every header directory is an `include`: a path outside any needs no
    // search (which asks `python3` where pip put NVIDIA's packages, tens of
    // milliseconds, for every source file a PTX module's `.loc` lines name).
    if !path.components().any(|part| part.as_os_str() == "include") {
        return None;
    }
    header_dirs()
        .into_iter()
        .filter_map(|dir| dir.canonicalize().ok())
        .find(|dir| path.starts_with(dir))
        .or_else(|| {
            // A pip package of NVIDIA's that the Python on the PATH does
            // not see: `.../site-packages/nvidia/<package>/include/...`.
            let parts: Vec<_> = path.components().collect();
            let position = parts.windows(2).position(|pair| {
                pair[0].as_os_str() == "site-packages" && pair[1].as_os_str() == "nvidia"
            })?;
            let include = parts[position..]
                .iter()
                .position(|part| part.as_os_str() == "include")?;
            Some(parts[..position + include + 1].iter().collect())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_files_outside_seven_to_nine_compile_for_compute_90() {
        assert_eq!(architecture(90), "compute_90");
        assert_eq!(architecture(80), "compute_80");
        assert_eq!(architecture(70), "compute_70");
        assert_eq!(architecture(35), "compute_90");
        assert_eq!(architecture(100), "compute_90");
    }
}
