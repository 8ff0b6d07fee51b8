//! Where a kernel's instructions are, as the user should read it: file
//! names that open from where the command was run, and, for code the
//! compiler inlined, the line in the user's own files that called it.
//!
//! A `.loc` names a file as the compiler saw it (`kernel.cu` beside the PTX,
//! `cuda_fp16.h` from an include directory, a header built into NVRTC) and
//! may say where its code was inlined (PTX ISA, "Debugging Directives",
//! `.loc ... inlined_at`). A file that exists beside the source is named by
//! its path from the working directory (or absolute when the source was
//! given so); the user's own files are those that exist and are not part of
//! a CUDA toolkit. A location inside an inlined device function or a header
//! is reported at the outermost place of its inline chain that is in the
//! user's files (the call in the kernel), with the inner places as
//! `inlined_from`, innermost first.

use std::path::{Component, Path, PathBuf};

use serde::Serialize;
use warpsim_ir::{Module, SourceLoc};

/// A place a location was inlined from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct InlinedFrom {
    pub file: String,
    pub line: u32,
}

/// Where a location is reported: the user's file and line, and the places
/// inside it that the code came from (innermost first; empty when the code
/// was not inlined, or was inlined from the user's files only up to here).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    pub file: String,
    pub line: u32,
    pub inlined_from: Vec<InlinedFrom>,
}

impl Place {
    /// `a.cu:12`, then ` (inlined from cuda_fp16.h:73, ...)` when it was.
    pub fn inlined_note(&self) -> Option<String> {
        if self.inlined_from.is_empty() {
            return None;
        }
        let places: Vec<String> = self
            .inlined_from
            .iter()
            .map(|place| format!("{}:{}", place.file, place.line))
            .collect();
        Some(format!("inlined from {}", places.join(", called from ")))
    }
}

/// Which files of a module are the user's, once its names are made
/// readable.
#[derive(Clone, Debug, Default)]
pub struct Locations {
    user_file: Vec<bool>,
}

impl Locations {
    /// Renames the files of `module` that exist beside `source_dir` to
    /// their paths from the working directory, and notes which are the
    /// user's own.
    pub fn resolve(module: &mut Module, source_dir: &Path) -> Locations {
        let mut user_file = Vec::with_capacity(module.files.len());
        for name in &mut module.files {
            let path = source_dir.join(name.as_str());
            let exists = !name.is_empty() && path.is_file();
            if exists {
                *name = display_path(&path);
            }
            user_file.push(exists && !crate::nvrtc::is_toolkit_header(&path));
        }
        Locations { user_file }
    }

    /// Where `loc` is reported (see the module documentation).
    pub fn place(&self, module: &Module, loc: SourceLoc) -> Place {
        let chain = module.inline_chain(loc);
        let primary = chain
            .iter()
            .rposition(|(file, _)| self.user_file.get(file.index()).copied().unwrap_or(false))
            .unwrap_or(0);
        let (file, line) = chain[primary];
        Place {
            file: module.file_name(file).to_string(),
            line,
            inlined_from: chain[..primary]
                .iter()
                .map(|&(file, line)| InlinedFrom {
                    file: module.file_name(file).to_string(),
                    line,
                })
                .collect(),
        }
    }
}

/// `path` as the user should read it: relative paths (relative to the
/// working directory already) without `.` and `..` steps that can be
/// dropped, absolute paths relative to the working directory when inside
/// it.
pub fn display_path(path: &Path) -> String {
    let normal = normalize(path);
    if normal.is_absolute() {
        if let Ok(cwd) = std::env::current_dir() {
            if let Ok(inside) = normal.strip_prefix(normalize(&cwd)) {
                return inside.display().to_string();
            }
        }
    }
    normal.display().to_string()
}

/// `a/./b/../c` as `a/c`, by the text alone; leading `..` of a relative
/// path stay.
fn normalize(path: &Path) -> PathBuf {
    let mut parts: Vec<Component> = Vec::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => match parts.last() {
                Some(Component::Normal(_)) => {
                    parts.pop();
                }
                Some(Component::RootDir) => {}
                _ => parts.push(component),
            },
            other => parts.push(other),
        }
    }
    if parts.is_empty() {
        return PathBuf::from(".");
    }
    parts.iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_lose_steps_that_go_nowhere() {
        assert_eq!(normalize(Path::new("a/./b/../c.cu")), Path::new("a/c.cu"));
        assert_eq!(
            normalize(Path::new("tests/fail/../../programs/x.cu")),
            Path::new("programs/x.cu")
        );
        assert_eq!(normalize(Path::new("../../x.cu")), Path::new("../../x.cu"));
        assert_eq!(normalize(Path::new("/a/../../b")), Path::new("/b"));
        assert_eq!(normalize(Path::new("./")), Path::new("."));
    }

    #[test]
    fn absolute_paths_inside_the_working_directory_become_relative() {
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(display_path(&cwd.join("src/lib.rs")), "src/lib.rs");
        assert_eq!(display_path(Path::new("/nowhere/x.cu")), "/nowhere/x.cu");
    }

    #[test]
    fn inlined_code_is_reported_at_the_outermost_user_line() {
        let text = ".version 8.8\n.target sm_90\n.address_size 64\n\
            .visible .entry k()\n{\n\
            .loc 1 9 3\n\
            .loc 2 110 3, function_name $L__info_string0, inlined_at 1 9 3\n\
            bar.warp.sync -1;\n\
            .loc 1 10 3\n\
            ret;\n}\n\
            .file 1 \"user.cu\"\n.file 2 \"sm_30_intrinsics.hpp\"\n";
        let module = warpsim_ir::parse_ptx("k.ptx", text).unwrap();
        let locations = Locations {
            // k.ptx, user.cu, the header.
            user_file: vec![true, true, false],
        };
        let sync = module.kernels[0].instrs[0].loc;
        assert_eq!(
            locations.place(&module, sync),
            Place {
                file: "user.cu".to_string(),
                line: 9,
                inlined_from: vec![InlinedFrom {
                    file: "sm_30_intrinsics.hpp".to_string(),
                    line: 110
                }],
            }
        );
        let ret = module.kernels[0].instrs[1].loc;
        assert_eq!(locations.place(&module, ret).inlined_from, []);
        // Without a user file in the chain, the innermost place stands.
        let nobody = Locations {
            user_file: vec![false; 3],
        };
        assert_eq!(nobody.place(&module, sync).line, 110);
    }
}
