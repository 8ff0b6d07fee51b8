//! nvJitLink's info logs kept on disk between runs, so that a PTX module
//! launched again is not compiled again: finding the library (a `python3`
//! started to ask pip where it is), loading it and compiling take 0.1 to
//! 0.3 s per run, often more than a small launch itself.
//!
//! What is kept is the log nvJitLink wrote (`nvjitlink.rs` reads the
//! kernels' resources from it, cached or not), in a file named by a hash
//! of the PTX text, the architecture and `WARPSIM_NVJITLINK`; the file's
//! first line repeats a second, independent hash of the same things and
//! the PTX's length, so a file for another module is never taken for this
//! one. Only successful links are kept. The directory is
//! `WARPSIM_CACHE_DIR`, else `$XDG_CACHE_HOME/warpsim`, else
//! `$HOME/.cache/warpsim`; `WARPSIM_CACHE_DIR=` (empty) turns the cache
//! off. A cache that cannot be read or written is skipped, never an error:
//! the link runs as if there were none. (The CUDA driver keeps its own JIT
//! results the same way, in `~/.nv/ComputeCache`.) The key cannot name the
//! library a search would find without searching for it (the slow part),
//! so a log outlives an upgrade of the pip package: emptying the directory
//! (or `WARPSIM_CACHE_DIR=`) makes the new library count again.

use std::path::{Path, PathBuf};

/// Changes whenever what is kept, or how it is named, changes.
const FORMAT: &str = "warpsim nvJitLink log 1";

/// The cache's directory, or `None` when it is turned off or no home is known.
pub fn directory() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("WARPSIM_CACHE_DIR") {
        return (!path.is_empty()).then(|| PathBuf::from(path));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|path| !path.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|path| !path.is_empty())
                .map(|home| PathBuf::from(home).join(".cache"))
        })?;
    Some(base.join("warpsim"))
}

/// What names one link: the PTX, the architecture, and the library asked
/// for by `WARPSIM_NVJITLINK` (another library may count differently).
struct Key {
    file_name: String,
    check: String,
}

impl Key {
    fn new(ptx: &str, architecture: &str) -> Key {
        let library = std::env::var("WARPSIM_NVJITLINK").unwrap_or_default();
        let parts = [FORMAT, architecture, &library, ptx];
        Key {
            file_name: format!(
                "nvjitlink-{:016x}.log",
                fnv1a(&parts, 0xcbf2_9ce4_8422_2325)
            ),
            check: format!(
                "// {FORMAT}: {architecture}, {} bytes of PTX, check {:016x}",
                ptx.len(),
                fnv1a(&parts, 0x8422_2325_cbf2_9ce4)
            ),
        }
    }
}

/// FNV-1a, 64 bits, over `parts` with a separator between them, from
/// `basis`: stable from build to build, unlike the standard library's
/// hasher.
fn fnv1a(parts: &[&str], basis: u64) -> u64 {
    let mut hash = basis;
    for part in parts {
        for &byte in part.as_bytes().iter().chain(&[0xff]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

/// The info log kept in `directory` for `ptx` compiled for `architecture`.
pub fn read(directory: &Path, ptx: &str, architecture: &str) -> Option<String> {
    let key = Key::new(ptx, architecture);
    let text = std::fs::read_to_string(directory.join(&key.file_name)).ok()?;
    let (first, log) = text.split_once('\n')?;
    (first == key.check).then(|| log.to_string())
}

/// Keeps `log` in `directory` for `ptx` compiled for `architecture`. The
/// file is written under a temporary name and renamed, so that a run
/// reading it at the same time sees all of it or none.
pub fn write(directory: &Path, ptx: &str, architecture: &str, log: &str) {
    let key = Key::new(ptx, architecture);
    let temporary = directory.join(format!("{}.{}.tmp", key.file_name, std::process::id()));
    let written = std::fs::create_dir_all(directory)
        .and_then(|()| std::fs::write(&temporary, format!("{}\n{log}", key.check)))
        .and_then(|()| std::fs::rename(&temporary, directory.join(&key.file_name)));
    if let Err(error) = written {
        let _ = std::fs::remove_file(&temporary);
        tracing::debug!(%error, directory = %directory.display(), "nvJitLink's log not cached");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_log_is_found_for_its_ptx_and_architecture_only() {
        let directory =
            std::env::temp_dir().join(format!("warpsim-jit-cache-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&directory);
        assert_eq!(read(&directory, "ptx a", "sm_90"), None);
        write(
            &directory,
            "ptx a",
            "sm_90",
            "info    : used 14 registers\n",
        );
        assert_eq!(
            read(&directory, "ptx a", "sm_90").as_deref(),
            Some("info    : used 14 registers\n")
        );
        assert_eq!(read(&directory, "ptx a", "sm_80"), None);
        assert_eq!(read(&directory, "ptx b", "sm_90"), None);
        // A file whose check line does not match is not taken.
        let key = Key::new("ptx a", "sm_90");
        std::fs::write(directory.join(&key.file_name), "// other\nlog").unwrap();
        assert_eq!(read(&directory, "ptx a", "sm_90"), None);
        std::fs::remove_dir_all(&directory).unwrap();
    }
}
