//! Where NVIDIA's run-time libraries and CUDA's headers are found, for
//! every library warpsim loads at run time (NVRTC in `nvrtc.rs`, nvJitLink
//! in `nvjitlink.rs`): a path in an environment variable of warpsim's, the
//! pip package that ships the library for the `python3` on the PATH, and a
//! CUDA toolkit (`CUDA_HOME`, `/usr/local/cuda`). None of them needs a GPU.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// A pip package of NVIDIA's that warpsim takes a library or headers from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PipPackage {
    /// `nvidia-cuda-nvrtc-cu12`: NVRTC.
    CudaNvrtc,
    /// `nvidia-cuda-runtime-cu12`: CUDA's runtime headers.
    CudaRuntime,
    /// `nvidia-cuda-cccl-cu12`: CUDA's C++ core library headers.
    CudaCccl,
    /// `nvidia-nvjitlink-cu12`: the JIT linker, with ptxas inside.
    NvJitLink,
}

impl PipPackage {
    const ALL: [PipPackage; 4] = [
        PipPackage::CudaNvrtc,
        PipPackage::CudaRuntime,
        PipPackage::CudaCccl,
        PipPackage::NvJitLink,
    ];

    /// The Python module the package installs.
    fn module(self) -> &'static str {
        match self {
            PipPackage::CudaNvrtc => "nvidia.cuda_nvrtc",
            PipPackage::CudaRuntime => "nvidia.cuda_runtime",
            PipPackage::CudaCccl => "nvidia.cuda_cccl",
            PipPackage::NvJitLink => "nvidia.nvjitlink",
        }
    }
}

/// The directory of `package` as the Python on the PATH knows it, if that
/// Python has it installed. Python is asked once per process, for every
/// package at once.
pub fn pip_package(package: PipPackage) -> Option<&'static Path> {
    static PACKAGES: OnceLock<Vec<Option<PathBuf>>> = OnceLock::new();
    let packages = PACKAGES.get_or_init(|| {
        let modules: Vec<String> = PipPackage::ALL
            .iter()
            .map(|package| format!("'{}'", package.module()))
            .collect();
        let query = format!(
            "import importlib.util\n\
             for name in ({},):\n\
             \x20   try:\n\
             \x20       spec = importlib.util.find_spec(name)\n\
             \x20       print(list(spec.submodule_search_locations)[0] if spec else '')\n\
             \x20   except Exception:\n\
             \x20       print('')\n",
            modules.join(", ")
        );
        let mut found = vec![None; PipPackage::ALL.len()];
        if let Ok(output) = Command::new("python3").args(["-c", &query]).output() {
            if output.status.success() {
                let text = String::from_utf8_lossy(&output.stdout);
                for (slot, line) in found.iter_mut().zip(text.lines()) {
                    let line = line.trim();
                    if !line.is_empty() {
                        *slot = Some(PathBuf::from(line));
                    }
                }
            }
        }
        found
    });
    let position = PipPackage::ALL.iter().position(|known| *known == package)?;
    packages.get(position)?.as_deref()
}

/// The CUDA toolkit directories: `CUDA_HOME`, and the usual install place.
pub fn toolkit_homes() -> Vec<PathBuf> {
    [
        std::env::var_os("CUDA_HOME").map(PathBuf::from),
        Some(PathBuf::from("/usr/local/cuda")),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// How to look for one of NVIDIA's shared libraries.
pub struct LibrarySearch {
    /// The environment variable that names the library's file, looked at
    /// first (`WARPSIM_NVRTC`).
    pub environment_variable: &'static str,
    /// The pip package whose `lib` directory holds the library.
    pub package: PipPackage,
    /// How the library's file names begin (`libnvrtc.so`, to find
    /// `libnvrtc.so.12`); files with `alt` in their names (NVRTC's
    /// alternative builds) are passed over.
    pub file_prefix: &'static str,
    /// The library's path inside a CUDA toolkit (`lib64/libnvrtc.so`).
    pub toolkit_path: &'static str,
}

/// NVRTC, NVIDIA's run-time CUDA compiler.
pub const NVRTC: LibrarySearch = LibrarySearch {
    environment_variable: "WARPSIM_NVRTC",
    package: PipPackage::CudaNvrtc,
    file_prefix: "libnvrtc.so",
    toolkit_path: "lib64/libnvrtc.so",
};

/// nvJitLink, NVIDIA's JIT linker, which compiles PTX with ptxas.
pub const NVJITLINK: LibrarySearch = LibrarySearch {
    environment_variable: "WARPSIM_NVJITLINK",
    package: PipPackage::NvJitLink,
    file_prefix: "libnvJitLink.so",
    toolkit_path: "lib64/libnvJitLink.so",
};

impl LibrarySearch {
    /// Where the library may be, most specific first: the environment
    /// variable's path, the pip package's `lib` directory, the toolkits.
    pub fn candidates(&self) -> Vec<PathBuf> {
        let mut paths = Vec::new();
        if let Some(named) = std::env::var_os(self.environment_variable) {
            paths.push(PathBuf::from(named));
        }
        if let Some(package) = pip_package(self.package) {
            if let Ok(entries) = std::fs::read_dir(package.join("lib")) {
                let mut found: Vec<PathBuf> = entries
                    .filter_map(|entry| entry.ok().map(|entry| entry.path()))
                    .filter(|path| {
                        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                        name.starts_with(self.file_prefix) && !name.contains("alt")
                    })
                    .collect();
                found.sort();
                paths.extend(found);
            }
        }
        for home in toolkit_homes() {
            paths.push(home.join(self.toolkit_path));
        }
        paths
    }

    /// Loads the first candidate that exists and loads. When none does,
    /// the error lists every path tried, comma-separated, for a message.
    pub fn load(&self) -> Result<(libloading::Library, PathBuf), String> {
        let tried = self.candidates();
        tried
            .iter()
            .filter(|path| path.exists())
            .find_map(|path| {
                // SAFETY: loading one of NVIDIA's libraries runs its
                // initialisers, which have no preconditions; the library is
                // then used only through its documented C API.
                unsafe { libloading::Library::new(path) }
                    .ok()
                    .map(|library| (library, path.clone()))
            })
            .ok_or_else(|| {
                tried
                    .iter()
                    .map(|path| path.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            })
    }
}

/// The compute capability warpsim compiles for on a machine of
/// `compute_capability`: itself from 7.0 to 9.0, the range warpsim's
/// semantics and NVIDIA's compilers have in common, and 9.0 outside it, so
/// that a machine file made to change the banks (Kepler's eight-byte mode)
/// still compiles every `.cu` and PTX.
pub fn target_capability(compute_capability: u32) -> u32 {
    if (70..=90).contains(&compute_capability) {
        compute_capability
    } else {
        90
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machines_outside_seven_to_nine_are_compiled_for_nine() {
        assert_eq!(target_capability(90), 90);
        assert_eq!(target_capability(80), 80);
        assert_eq!(target_capability(70), 70);
        assert_eq!(target_capability(35), 90);
        assert_eq!(target_capability(100), 90);
    }

    #[test]
    fn the_environment_variable_is_the_first_candidate() {
        // A variable no other test sets, so that setting it cannot race.
        let search = LibrarySearch {
            environment_variable: "WARPSIM_TEST_LIBRARY_SEARCH",
            package: PipPackage::NvJitLink,
            file_prefix: "libnothing.so",
            toolkit_path: "lib64/libnothing.so",
        };
        std::env::set_var("WARPSIM_TEST_LIBRARY_SEARCH", "/nowhere/libnothing.so.1");
        let candidates = search.candidates();
        assert_eq!(candidates[0], PathBuf::from("/nowhere/libnothing.so.1"));
        assert!(candidates
            .last()
            .is_some_and(|path| path.ends_with("lib64/libnothing.so")));
        let Err(tried) = search.load() else {
            panic!("a library that does not exist was loaded");
        };
        assert!(tried.starts_with("/nowhere/libnothing.so.1, "), "{tried}");
    }
}
