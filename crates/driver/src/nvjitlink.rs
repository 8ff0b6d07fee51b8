//! A kernel's registers per thread, spills, stack and memory, as NVIDIA's
//! compiler gives them: the PTX is compiled for the target (`-arch=sm_90`)
//! by nvJitLink, NVIDIA's JIT linker (ptxas inside it), loaded at run time
//! like NVRTC. PTX does not say how many registers a thread uses, and
//! occupancy depends on it. nvJitLink needs no GPU: `pip install
//! nvidia-nvjitlink-cu12` puts `libnvJitLink.so.12` under
//! `site-packages/nvidia/nvjitlink/lib/`; the library is looked for in
//! `WARPSIM_NVJITLINK` (a path to the library), in that pip package and in
//! a CUDA toolkit, as NVRTC is (`nvidia_libraries.rs`).
//!
//! The interface used is the C API of `nvJitLink.h` (CUDA 12): create a
//! linker with options (`-arch=sm_90 -verbose`), add the PTX, complete the
//! link, and read the info and error logs. With `-verbose` the info log
//! has ptxas's lines for each function it compiles:
//!
//! ```text
//! ptxas info    : Compiling entry function 'transposeSmemF' for 'sm_90'
//! ptxas info    : Function properties for transposeSmemF
//! ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//! ptxas info    : Used 14 registers, used 1 barriers, 4096 bytes smem
//! ```
//!
//! and then the linker's own, one per kernel, counting the functions the
//! kernel calls that were not inlined:
//!
//! ```text
//! info    : Function properties for 'transposeSmemF':
//! info    : used 14 registers, used 1 barriers, 0 stack, 5120 bytes smem, 548 bytes cmem[0], 0 bytes lmem
//! ```
//!
//! Links are kept per PTX text and architecture for the life of the
//! process, so the launches of one PTX module compile it once, and their
//! logs on disk between runs (`jit_cache.rs`), so a module run again is not
//! compiled again.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use crate::{jit_cache, nvidia_libraries};

/// What nvJitLink reports of one kernel compiled for one architecture.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelResources {
    /// Registers per thread: the linker's count, which covers the
    /// functions the kernel calls, or ptxas's count for the kernel alone
    /// where the log has no linker's line.
    pub registers: u32,
    /// Named barriers the kernel uses (`bar.sync 0` is one).
    pub barriers: u32,
    /// Bytes per thread that ptxas spilled to local memory when it ran out
    /// of registers in the kernel itself (functions the kernel calls
    /// report their own spills in the log, which are not counted here).
    pub spill_store_bytes: u32,
    pub spill_load_bytes: u32,
    /// Bytes of stack per thread: the linker's figure, which covers the
    /// calls the kernel makes, or ptxas's stack frame of the kernel alone.
    pub stack_frame_bytes: u32,
    /// Static shared memory of a block, as ptxas reports it for the kernel.
    pub shared_bytes: u32,
    /// Shared memory of a block as the linker reports it: the kernel's and
    /// its callees' static shared memory, plus what the CUDA runtime
    /// reserves per block on the target (1 KiB on `sm_90`, none on
    /// `sm_70`). `None` where the log has no linker's line.
    pub linked_shared_bytes: Option<u32>,
    /// Bytes of constant bank 0 (`cmem[0]`: the parameters and the
    /// driver's own constants).
    pub constant_bytes: u32,
    /// Bytes of local memory per thread (`lmem`).
    pub local_bytes: u32,
}

/// Why nvJitLink gave no resources for a kernel.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    /// No nvJitLink library was found or it could not be used.
    #[error("{0}")]
    NotFound(String),
    /// nvJitLink ran and rejected the PTX; `log` is its error log, then
    /// its info log.
    #[error("nvJitLink could not compile the PTX for {architecture}: {log}")]
    Failed { architecture: String, log: String },
    /// The link succeeded but its log says nothing of the kernel.
    #[error("nvJitLink's log for {architecture} does not report kernel `{kernel}`")]
    KernelNotReported {
        kernel: String,
        architecture: String,
    },
}

/// One completed link: the resources of every kernel of the PTX, by its
/// PTX name, and the info log they were read from.
#[derive(Debug)]
pub struct Linked {
    pub kernels: HashMap<String, KernelResources>,
    pub info_log: String,
}

/// The architecture nvJitLink compiles for on a machine of
/// `compute_capability`, `sm_90` for 90 (the capability is the one NVRTC
/// compiles for: [`nvidia_libraries::target_capability`]).
pub fn architecture(compute_capability: u32) -> String {
    format!(
        "sm_{}",
        nvidia_libraries::target_capability(compute_capability)
    )
}

/// The resources of `kernel` (its PTX name) in `ptx` compiled for
/// `architecture` (`sm_90`).
pub fn kernel_resources(
    ptx: &str,
    kernel: &str,
    architecture: &str,
) -> Result<KernelResources, LinkError> {
    let linked = link(ptx, architecture)?;
    linked
        .kernels
        .get(kernel)
        .copied()
        .ok_or_else(|| LinkError::KernelNotReported {
            kernel: kernel.to_string(),
            architecture: architecture.to_string(),
        })
}

/// Links kept for the life of the process, by the PTX text's hash and the
/// architecture. A failed link is kept too; a missing library is not (it
/// is looked for once anyway).
type Cache = HashMap<(u64, String), Result<Arc<Linked>, LinkError>>;

/// `ptx` compiled for `architecture` (`sm_90`), once per process.
pub fn link(ptx: &str, architecture: &str) -> Result<Arc<Linked>, LinkError> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    let mut hasher = DefaultHasher::new();
    ptx.hash(&mut hasher);
    let key = (hasher.finish(), architecture.to_string());
    // The lock is held through the link, so that launches of one PTX on
    // several threads compile it once; a thread that panicked while
    // holding it left the cache whole (entries are inserted complete).
    let mut cache = CACHE
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(linked) = cache.get(&key) {
        return linked.clone();
    }
    let disk = jit_cache::directory();
    if let Some(info_log) = disk
        .as_deref()
        .and_then(|directory| jit_cache::read(directory, ptx, architecture))
    {
        tracing::debug!(%architecture, "nvJitLink's log from the cache");
        let linked = Arc::new(Linked {
            kernels: parse_info_log(&info_log),
            info_log,
        });
        cache.insert(key, Ok(linked.clone()));
        return Ok(linked);
    }
    let api = library()?;
    let result = api.link(ptx, architecture).map(Arc::new);
    if let (Ok(linked), Some(directory)) = (&result, &disk) {
        jit_cache::write(directory, ptx, architecture, &linked.info_log);
    }
    cache.insert(key, result.clone());
    result
}

/// The version of the nvJitLink library found, `(12, 9)`.
pub fn version() -> Result<(u32, u32), LinkError> {
    let api = library()?;
    let (mut major, mut minor) = (0u32, 0u32);
    // SAFETY: `nvJitLinkVersion` writes two unsigned integers through the
    // pointers, which are valid for the call.
    let status = unsafe { (api.version)(&mut major, &mut minor) };
    if status != 0 {
        return Err(LinkError::NotFound(format!(
            "nvJitLinkVersion failed with status {status}"
        )));
    }
    Ok((major, minor))
}

/// The path of the nvJitLink library found.
pub fn library_path() -> Result<PathBuf, LinkError> {
    Ok(library()?.path.clone())
}

type Create = unsafe extern "C" fn(*mut *mut c_void, u32, *const *const c_char) -> c_int;
type Destroy = unsafe extern "C" fn(*mut *mut c_void) -> c_int;
type AddData =
    unsafe extern "C" fn(*mut c_void, c_int, *const c_void, usize, *const c_char) -> c_int;
type Complete = unsafe extern "C" fn(*mut c_void) -> c_int;
type GetLogSize = unsafe extern "C" fn(*mut c_void, *mut usize) -> c_int;
type GetLog = unsafe extern "C" fn(*mut c_void, *mut c_char) -> c_int;
type Version = unsafe extern "C" fn(*mut u32, *mut u32) -> c_int;

/// `NVJITLINK_INPUT_PTX` of `nvJitLinkInputType`.
const INPUT_PTX: c_int = 2;

/// The loaded library and the functions of its C API that warpsim calls.
struct Api {
    path: PathBuf,
    create: Create,
    destroy: Destroy,
    add_data: AddData,
    complete: Complete,
    info_log_size: GetLogSize,
    info_log: GetLog,
    error_log_size: GetLogSize,
    error_log: GetLog,
    version: Version,
    /// Kept loaded for as long as the function pointers above are used:
    /// the life of the process.
    _library: libloading::Library,
}

/// The nvJitLink library, loaded once per process.
fn library() -> Result<&'static Api, LinkError> {
    static API: OnceLock<Result<Api, LinkError>> = OnceLock::new();
    API.get_or_init(load).as_ref().map_err(Clone::clone)
}

fn load() -> Result<Api, LinkError> {
    let (library, path) = nvidia_libraries::NVJITLINK.load().map_err(|tried| {
        LinkError::NotFound(format!(
            "nvJitLink, NVIDIA's JIT linker, which counts a kernel's registers, is not \
             installed (no GPU needed: `pip install nvidia-nvjitlink-cu12`, or set \
             WARPSIM_NVJITLINK to libnvJitLink.so; looked in: {tried})"
        ))
    })?;
    let missing = |error: libloading::Error| {
        LinkError::NotFound(format!(
            "nvJitLink at {} lacks a function: {error}",
            path.display()
        ))
    };
    // SAFETY: the signatures are those of nvJitLink.h in CUDA 12, whose
    // library exports every function below under these names; the function
    // pointers are used only while `library`, kept in the `Api`, is loaded.
    unsafe {
        Ok(Api {
            create: *library.get(b"nvJitLinkCreate\0").map_err(missing)?,
            destroy: *library.get(b"nvJitLinkDestroy\0").map_err(missing)?,
            add_data: *library.get(b"nvJitLinkAddData\0").map_err(missing)?,
            complete: *library.get(b"nvJitLinkComplete\0").map_err(missing)?,
            info_log_size: *library.get(b"nvJitLinkGetInfoLogSize\0").map_err(missing)?,
            info_log: *library.get(b"nvJitLinkGetInfoLog\0").map_err(missing)?,
            error_log_size: *library
                .get(b"nvJitLinkGetErrorLogSize\0")
                .map_err(missing)?,
            error_log: *library.get(b"nvJitLinkGetErrorLog\0").map_err(missing)?,
            version: *library.get(b"nvJitLinkVersion\0").map_err(missing)?,
            path,
            _library: library,
        })
    }
}

impl Api {
    /// Compiles `ptx` for `architecture` and reads the resources of its
    /// kernels from the info log.
    fn link(&self, ptx: &str, architecture: &str) -> Result<Linked, LinkError> {
        let failed = |log: String| LinkError::Failed {
            architecture: architecture.to_string(),
            log,
        };
        let text = CString::new(ptx).map_err(|_| failed("the PTX contains a NUL byte".into()))?;
        let options: Vec<CString> = [format!("-arch={architecture}"), "-verbose".to_string()]
            .into_iter()
            .map(CString::new)
            .collect::<Result<_, _>>()
            .map_err(|_| failed(format!("bad architecture `{architecture}`")))?;
        let option_pointers: Vec<*const c_char> =
            options.iter().map(|option| option.as_ptr()).collect();
        let input_name = c"kernel.ptx";
        // SAFETY: every call follows nvJitLink.h: the handle comes from
        // `nvJitLinkCreate` and is destroyed once, below; the options, the
        // PTX (NUL-terminated, its size counting the NUL as NVRTC's PTX
        // size does) and the input name outlive the calls; log buffers
        // have the size nvJitLink asked for, plus one zero byte.
        unsafe {
            let mut handle: *mut c_void = std::ptr::null_mut();
            let status = (self.create)(
                &mut handle,
                option_pointers.len() as u32,
                option_pointers.as_ptr(),
            );
            if status != 0 || handle.is_null() {
                return Err(failed(format!(
                    "nvJitLinkCreate failed with status {status} ({})",
                    status_name(status)
                )));
            }
            let bytes = text.as_bytes_with_nul();
            let mut status = (self.add_data)(
                handle,
                INPUT_PTX,
                bytes.as_ptr().cast(),
                bytes.len(),
                input_name.as_ptr(),
            );
            if status == 0 {
                status = (self.complete)(handle);
            }
            let read = |size: GetLogSize, text: GetLog| -> String {
                let mut length = 0usize;
                if size(handle, &mut length) != 0 || length == 0 {
                    return String::new();
                }
                let mut buffer = vec![0 as c_char; length + 1];
                if text(handle, buffer.as_mut_ptr()) != 0 {
                    return String::new();
                }
                CStr::from_ptr(buffer.as_ptr())
                    .to_string_lossy()
                    .into_owned()
            };
            let info_log = read(self.info_log_size, self.info_log);
            let error_log = read(self.error_log_size, self.error_log);
            (self.destroy)(&mut handle);
            if status != 0 {
                let mut log = format!("status {status} ({})", status_name(status));
                for part in [error_log.trim(), info_log.trim()] {
                    if !part.is_empty() {
                        log.push('\n');
                        log.push_str(part);
                    }
                }
                return Err(failed(log));
            }
            Ok(Linked {
                kernels: parse_info_log(&info_log),
                info_log,
            })
        }
    }
}

/// The name of an `nvJitLinkResult`, for messages.
fn status_name(status: c_int) -> &'static str {
    match status {
        0 => "NVJITLINK_SUCCESS",
        1 => "NVJITLINK_ERROR_UNRECOGNIZED_OPTION",
        2 => "NVJITLINK_ERROR_MISSING_ARCH",
        3 => "NVJITLINK_ERROR_INVALID_INPUT",
        4 => "NVJITLINK_ERROR_PTX_COMPILE",
        5 => "NVJITLINK_ERROR_NVVM_COMPILE",
        6 => "NVJITLINK_ERROR_INTERNAL",
        7 => "NVJITLINK_ERROR_THREADPOOL",
        8 => "NVJITLINK_ERROR_UNRECOGNIZED_INPUT",
        9 => "NVJITLINK_ERROR_FINALIZE",
        _ => "an error this version of warpsim does not know",
    }
}

/// Which part of the info log a line belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// `ptxas info    : ...`: ptxas compiling one function.
    Ptxas,
    /// `info    : ...`: the linker, after every function is compiled.
    Linker,
}

/// What one part of the log said of one function; `None` where it said
/// nothing.
#[derive(Clone, Copy, Default)]
struct Reported {
    registers: Option<u32>,
    barriers: Option<u32>,
    stack_bytes: Option<u32>,
    spill_store_bytes: Option<u32>,
    spill_load_bytes: Option<u32>,
    shared_bytes: Option<u32>,
    constant_bytes: Option<u32>,
    local_bytes: Option<u32>,
}

impl Reported {
    /// Takes what one comma-separated item says (`Used 14 registers`,
    /// `8 bytes spill stores`, `0 stack`, `548 bytes cmem[0]`), if it is
    /// an item this knows.
    fn take(&mut self, item: &str) {
        let words: Vec<&str> = item.split_whitespace().collect();
        let number = |word: &str| word.parse::<u32>().ok();
        match words.as_slice() {
            [used, count, "registers"] if used.eq_ignore_ascii_case("used") => {
                self.registers = number(count)
            }
            [used, count, "barriers"] if used.eq_ignore_ascii_case("used") => {
                self.barriers = number(count)
            }
            [count, "bytes", "stack", "frame"] | [count, "stack"] => {
                self.stack_bytes = number(count)
            }
            [count, "bytes", "spill", "stores"] => self.spill_store_bytes = number(count),
            [count, "bytes", "spill", "loads"] => self.spill_load_bytes = number(count),
            [count, "bytes", "smem"] => self.shared_bytes = number(count),
            [count, "bytes", "cmem[0]"] => self.constant_bytes = number(count),
            [count, "bytes", "lmem"] => self.local_bytes = number(count),
            _ => {}
        }
    }
}

/// The resources of every kernel (entry function) an nvJitLink info log
/// reports, by name: ptxas's lines for the kernel itself, the linker's
/// where it has them (registers, stack, shared memory of the call graph).
/// Lines it does not know are passed over; it never fails.
pub fn parse_info_log(log: &str) -> HashMap<String, KernelResources> {
    let mut ptxas: HashMap<String, Reported> = HashMap::new();
    let mut linker: HashMap<String, Reported> = HashMap::new();
    let mut entries: Vec<String> = Vec::new();
    // The function each part of the log speaks of now.
    let mut current_ptxas: Option<String> = None;
    let mut current_linker: Option<String> = None;
    for line in log.lines() {
        let line = line.trim();
        let (origin, rest) = if let Some(rest) = line.strip_prefix("ptxas") {
            (Origin::Ptxas, rest)
        } else if let Some(rest) = line.strip_prefix("info") {
            (Origin::Linker, rest)
        } else {
            continue;
        };
        // `info    : text` and `ptxas         .     text`: what follows
        // the first colon or dot.
        let rest = rest.trim_start();
        let Some(content) = rest
            .strip_prefix("info")
            .map(str::trim_start)
            .unwrap_or(rest)
            .strip_prefix([':', '.'])
            .map(str::trim)
        else {
            continue;
        };
        let current = match origin {
            Origin::Ptxas => &mut current_ptxas,
            Origin::Linker => &mut current_linker,
        };
        if let Some(named) = content.strip_prefix("Compiling entry function ") {
            let name = quoted(named);
            entries.push(name.clone());
            *current = Some(name);
            continue;
        }
        if let Some(named) = content.strip_prefix("Function properties for ") {
            let name = quoted(named.trim_end_matches(':'));
            if origin == Origin::Linker && !entries.contains(&name) {
                entries.push(name.clone());
            }
            *current = Some(name);
            continue;
        }
        let Some(function) = current.clone() else {
            continue;
        };
        let reported = match origin {
            Origin::Ptxas => ptxas.entry(function).or_default(),
            Origin::Linker => linker.entry(function).or_default(),
        };
        for item in content.split(',') {
            reported.take(item.trim());
        }
    }
    entries
        .into_iter()
        .filter_map(|name| {
            let own = ptxas.get(&name).copied().unwrap_or_default();
            let linked = linker.get(&name).copied();
            let from_linker = |field: fn(&Reported) -> Option<u32>| linked.as_ref().and_then(field);
            let registers = from_linker(|reported| reported.registers).or(own.registers)?;
            let resources = KernelResources {
                registers,
                barriers: from_linker(|reported| reported.barriers)
                    .or(own.barriers)
                    .unwrap_or(0),
                spill_store_bytes: own.spill_store_bytes.unwrap_or(0),
                spill_load_bytes: own.spill_load_bytes.unwrap_or(0),
                stack_frame_bytes: from_linker(|reported| reported.stack_bytes)
                    .or(own.stack_bytes)
                    .unwrap_or(0),
                shared_bytes: own.shared_bytes.unwrap_or(0),
                linked_shared_bytes: linked.map(|reported| reported.shared_bytes.unwrap_or(0)),
                constant_bytes: from_linker(|reported| reported.constant_bytes)
                    .or(own.constant_bytes)
                    .unwrap_or(0),
                local_bytes: from_linker(|reported| reported.local_bytes)
                    .or(own.local_bytes)
                    .unwrap_or(0),
            };
            Some((name, resources))
        })
        .collect()
}

/// A name as the log writes it, without its quotes and what follows them
/// (`'transposeSmemF' for 'sm_90'` is `transposeSmemF`).
fn quoted(text: &str) -> String {
    let text = text.trim();
    match text.strip_prefix('\'') {
        Some(inside) => inside.split('\'').next().unwrap_or("").to_string(),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// nvJitLink 12.9's info log for a kernel that calls functions it did
    /// not inline (`programs/corpus/noinline-shared.ptx`), one of which
    /// spills: the linker counts the calls' registers, stack and shared
    /// memory; ptxas's lines are the kernel's own.
    const CALLS: &str = "\
ptxas info    : 0 bytes gmem
ptxas info    : Function properties for _Z16strided_exchangej
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compile time = 2.785 ms
ptxas info    : Function properties for _Z9mix_twicejj
ptxas         .     8 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads
ptxas info    : Compile time = 1.325 ms
ptxas info    : Compiling entry function 'noinline_shared_calls' for 'sm_90'
ptxas info    : Function properties for noinline_shared_calls
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 24 registers, used 0 barriers
ptxas info    : Compile time = 2.388 ms
info    : 0 bytes gmem
info    : Function properties for 'noinline_shared_calls':
info    : used 35 registers, used 1 barriers, 8 stack, 2048 bytes smem, 544 bytes cmem[0], 0 bytes lmem
";

    #[test]
    fn the_linker_counts_the_calls_and_ptxas_the_kernel_itself() {
        let kernels = parse_info_log(CALLS);
        assert_eq!(kernels.len(), 1, "device functions are not kernels");
        assert_eq!(
            kernels["noinline_shared_calls"],
            KernelResources {
                registers: 35,
                barriers: 1,
                spill_store_bytes: 0,
                spill_load_bytes: 0,
                stack_frame_bytes: 8,
                shared_bytes: 0,
                linked_shared_bytes: Some(2048),
                constant_bytes: 544,
                local_bytes: 0,
            }
        );
    }

    #[test]
    fn ptxas_lines_alone_give_the_kernel_its_own_counts() {
        let log = "\
ptxas info    : Compiling entry function 'spills' for 'sm_80'
ptxas info    : Function properties for spills
ptxas         .     40 bytes stack frame, 36 bytes spill stores, 32 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 4096 bytes smem, 380 bytes cmem[0], 16 bytes lmem
ptxas info    : Compiling entry function 'plain' for 'sm_80'
ptxas info    : Function properties for plain
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers
";
        let kernels = parse_info_log(log);
        assert_eq!(
            kernels["spills"],
            KernelResources {
                registers: 255,
                barriers: 1,
                spill_store_bytes: 36,
                spill_load_bytes: 32,
                stack_frame_bytes: 40,
                shared_bytes: 4096,
                linked_shared_bytes: None,
                constant_bytes: 380,
                local_bytes: 16,
            }
        );
        assert_eq!(kernels["plain"].registers, 8);
        assert_eq!(kernels["plain"].shared_bytes, 0);
    }

    #[test]
    fn logs_that_say_nothing_known_give_nothing_and_do_not_fail() {
        for log in [
            "",
            "ptxas",
            "info",
            "ptxas info    : Used many registers",
            "info    : Function properties for 'k':\ninfo    : used x registers",
            "ptxas info    : Compiling entry function '",
            "ptxas fatal   : Unresolved extern function 'f'",
            "\u{0}\u{ffff} ptxas . , , ,",
        ] {
            assert!(parse_info_log(log).is_empty(), "{log:?}");
        }
    }

    #[test]
    fn architectures_follow_the_compute_capability() {
        assert_eq!(architecture(90), "sm_90");
        assert_eq!(architecture(80), "sm_80");
        assert_eq!(architecture(35), "sm_90");
    }
}
