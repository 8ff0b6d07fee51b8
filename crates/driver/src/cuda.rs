//! CUDA sources compiled to PTX for the rest of warpsim: through NVRTC
//! ([`crate::nvrtc`]), with the source's own directory and CUDA's headers
//! on the include path, and C++ kernels (mangled in PTX) found by their
//! CUDA names through NVRTC name expressions. Launch files, `check
//! FILE.cu` and quick runs from the command line all compile this way.

use std::path::Path;

use crate::cuda_source::KernelSignature;
use crate::error::{line_column, InputError};
use crate::nvrtc;

/// One `.cu` file to compile.
pub struct CudaRequest<'a> {
    pub path: &'a Path,
    /// Its path as shown in messages.
    pub name: &'a str,
    pub text: &'a str,
    /// `-D`, `-I` and other NVRTC options, before CUDA's header directories.
    pub options: Vec<String>,
    pub architecture: String,
}

/// A compiled `.cu` file.
pub struct CudaModule {
    /// The PTX's name as shown in messages (`kernel.cu.ptx`; it names the
    /// `.cu` in its `.loc` lines).
    pub ptx_name: String,
    pub ptx: String,
    /// For each CUDA name asked for, its name in the PTX.
    pub ptx_names: Vec<(String, String)>,
}

/// Why a `.cu` file gave no PTX.
pub enum CudaError {
    /// No NVRTC library: the message says how to get one.
    NotFound(String),
    /// A NUL byte, which NVRTC's C string interface cannot take, at this
    /// line and column.
    NulByte { line: u32, column: usize },
    /// NVRTC rejected the source: its log, rendered.
    Rejected(InputError),
}

/// Compiles `request`, asking NVRTC for the PTX names of the kernels named
/// in `wanted` (`transpose<float>`, `ns::k`).
pub fn compile(request: &CudaRequest, wanted: &[String]) -> Result<CudaModule, CudaError> {
    if let Some(offset) = request.text.find('\0') {
        let (line, column) = line_column(request.text, offset);
        return Err(CudaError::NulByte {
            line: line as u32,
            column,
        });
    }
    // `-I` with nothing after it would take the next option as its
    // directory: the working directory is `.`.
    let source_dir = match request.path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut options = request.options.clone();
    options.push(format!("-I{}", source_dir.display()));
    let program_name = nvrtc::program_name(request.path);
    let compiled = nvrtc::compile(&nvrtc::CompileRequest {
        name: &program_name,
        source: request.text,
        architecture: &request.architecture,
        options: &options,
        name_expressions: wanted,
    })
    .map_err(|error| match error {
        nvrtc::CompileError::NotFound(message) => CudaError::NotFound(message),
        nvrtc::CompileError::Rejected { log } => CudaError::Rejected(InputError::Located {
            summary: format!("{}: NVRTC rejected the source", request.name),
            rendered: format!(
                "{}error: NVRTC could not compile {}\n",
                log_with_paths(&log, &program_name, request.name),
                request.name
            ),
        }),
    })?;
    // NVRTC writes the working directory before the name in `.file`;
    // relative names are found beside the source.
    let cwd = std::env::current_dir()
        .map(|dir| format!("\"{}/", dir.display()))
        .unwrap_or_default();
    let ptx = if cwd.is_empty() {
        compiled.ptx
    } else {
        compiled.ptx.replace(&cwd, "\"")
    };
    let ptx_names = wanted
        .iter()
        .zip(compiled.lowered_names)
        .filter_map(|(name, lowered)| Some((name.clone(), lowered?)))
        .collect();
    Ok(CudaModule {
        ptx_name: format!("{}.ptx", request.name),
        ptx,
        ptx_names,
    })
}

/// The kernel of `kernels` that the launch's name `wanted` means: by its
/// name, with template arguments or a namespace left off.
pub fn find_kernel<'k>(
    kernels: &'k [KernelSignature],
    wanted: &str,
) -> Option<&'k KernelSignature> {
    let position = kernel_position(kernels.iter().map(|kernel| kernel.name.as_str()), wanted)?;
    kernels.get(position)
}

/// Which of the kernel names `candidates` (qualified, perhaps with template
/// arguments) the user's `wanted` means: the same name, else the same
/// without template arguments (`transpose<double>` is `transpose<float>`'s
/// template), else, when `wanted` names no namespace, the one kernel whose
/// unqualified name it is (`scale` for `fx::scale`).
pub fn kernel_position<'n>(
    candidates: impl Iterator<Item = &'n str> + Clone,
    wanted: &str,
) -> Option<usize> {
    let base = |name: &'n str| name.split('<').next().unwrap_or(name).trim();
    let wanted_base = wanted.split('<').next().unwrap_or(wanted).trim();
    let mut names = candidates.clone();
    if let Some(position) = names.position(|name| name == wanted) {
        return Some(position);
    }
    let mut names = candidates.clone();
    if let Some(position) = names.position(|name| base(name) == wanted_base) {
        return Some(position);
    }
    if wanted_base.contains("::") {
        return None;
    }
    let unqualified: Vec<usize> = candidates
        .enumerate()
        .filter(|(_, name)| crate::cuda_source::unqualified(base(name)) == wanted_base)
        .map(|(position, _)| position)
        .collect();
    match unqualified[..] {
        [position] => Some(position),
        _ => None,
    }
}

/// The kernels' CUDA names for messages: `transpose<...>` for a template.
pub fn display_names(kernels: &[KernelSignature]) -> Vec<String> {
    kernels
        .iter()
        .map(|kernel| match kernel.template {
            Some(_) => format!("{}<...>", kernel.name),
            None => kernel.name.clone(),
        })
        .collect()
}

/// The name to ask NVRTC for to get a kernel's PTX: its own for a plain
/// C++ kernel, its first explicit instantiation for a template; `None`
/// for a kernel with C linkage (its PTX name is its name) or a template
/// never instantiated (NVRTC emits no code for it).
pub fn name_expression(kernel: &KernelSignature) -> Option<String> {
    if kernel.extern_c {
        return None;
    }
    match (&kernel.template, &kernel.instantiation) {
        (None, _) => Some(kernel.name.clone()),
        (Some(_), Some(arguments)) => Some(format!("{}<{arguments}>", kernel.name)),
        (Some(_), None) => None,
    }
}

/// NVRTC's log names the source by its program name: name it as the user
/// does (its path from the working directory).
fn log_with_paths(log: &str, program_name: &str, source_name: &str) -> String {
    log.lines()
        .map(|line| match line.strip_prefix(program_name) {
            Some(rest) if rest.starts_with('(') => format!("{source_name}{rest}\n"),
            _ => format!("{line}\n"),
        })
        .collect()
}

/// Every kernel of a `.cu` file compiled on its own (no launch file): the
/// PTX, and the CUDA name of each kernel whose PTX name differs from it.
/// Templates are compiled for their first explicit instantiation; a
/// template never instantiated has no code to check.
pub fn compile_file(
    path: &Path,
    architecture: String,
) -> Result<(CudaModule, Vec<String>), InputError> {
    let name = crate::locations::display_path(path);
    let text = std::fs::read_to_string(path).map_err(|error| InputError::Io {
        path: path.to_path_buf(),
        message: error.to_string(),
    })?;
    let kernels = crate::cuda_source::kernels(&text);
    let wanted: Vec<String> = kernels.iter().filter_map(name_expression).collect();
    let request = CudaRequest {
        path,
        name: &name,
        text: &text,
        options: Vec::new(),
        architecture,
    };
    let module = compile(&request, &wanted).map_err(|error| match error {
        CudaError::NotFound(message) => InputError::Launch {
            path: path.to_path_buf(),
            message,
        },
        CudaError::NulByte { line, column } => InputError::Launch {
            path: path.to_path_buf(),
            message: format!(
                "line {line}, column {column}: the source contains a NUL byte, which NVRTC cannot compile"
            ),
        },
        CudaError::Rejected(error) => error,
    })?;
    Ok((module, display_names(&kernels)))
}

/// The CUDA file and line that line `line` of PTX generated from CUDA
/// stands for: the `.loc` in effect there (PTX ISA, "Debugging
/// Directives"), with the file as `.file` names it. `None` before the
/// first `.loc`.
pub fn cuda_line_of_ptx(ptx: &str, line: u32) -> Option<(String, u32)> {
    let mut files = std::collections::HashMap::new();
    let mut current = None;
    for (index, text) in ptx.lines().enumerate() {
        let mut words = text.split_whitespace();
        match words.next() {
            Some(".file") => {
                let number = words.next().and_then(|word| word.parse::<u64>().ok());
                let name = text.split('"').nth(1);
                if let (Some(number), Some(name)) = (number, name) {
                    files.insert(number, name.to_string());
                }
            }
            Some(".loc") if index + 1 < line as usize => {
                let number = words.next().and_then(|word| word.parse::<u64>().ok());
                let at = words
                    .next()
                    .and_then(|word| word.trim_end_matches(',').parse::<u32>().ok());
                if let (Some(number), Some(at)) = (number, at) {
                    current = Some((number, at));
                }
            }
            _ => {}
        }
    }
    let (number, at) = current?;
    Some((files.get(&number)?.clone(), at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ptx_line_maps_to_the_loc_in_effect() {
        let ptx =
            "\t.loc\t1 3 3\n\tmov.u32 %r1, 1;\n\t.loc\t1 4 3\n\tbrkpt;\n\t.file\t1 \"k.cu\"\n";
        assert_eq!(cuda_line_of_ptx(ptx, 2), Some(("k.cu".to_string(), 3)));
        assert_eq!(cuda_line_of_ptx(ptx, 4), Some(("k.cu".to_string(), 4)));
        assert_eq!(cuda_line_of_ptx(ptx, 1), None);
        assert_eq!(cuda_line_of_ptx("brkpt;", 1), None);
    }
}
