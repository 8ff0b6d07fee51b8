//! The driver: everything between files and the machine. It reads `sim.toml`
//! and launch files, parses and verifies the kernel source, lowers it, builds
//! the buffers and parameters, runs the machine, and turns the counters and
//! faults into a report and diagnostics. The command-line tool is a thin layer
//! over [`prepare`] and [`PreparedLaunch::execute`].

pub mod annotate;
pub mod buffers;
pub mod check;
pub mod cuda;
pub mod cuda_source;
pub mod diagnostics;
pub mod dump;
pub mod error;
pub mod export;
pub mod jit_cache;
pub mod launch_file;
pub mod launch_template;
pub mod litmus;
pub mod locations;
pub mod long_lines;
pub mod npy;
pub mod nvidia_libraries;
pub mod nvjitlink;
pub mod nvrtc;
pub mod registers;
pub mod report;
pub mod timeline;
pub mod toml_file;

use std::path::{Path, PathBuf};

use warpsim_ir::{KernelId, Module, SourceLoc, StateSpace};
use warpsim_machine::{GlobalMemory, Launch, Program};

pub use error::InputError;
pub use launch_file::LaunchFile;
pub use locations::{Locations, Place};
pub use nvjitlink::KernelResources;
pub use registers::{RegisterSource, Registers};
pub use report::Report;
use toml_file::FileError;
pub use toml_file::TomlFile;
pub use warpsim_machine::{MachineConfig, MemoryModel, RunControl, RunOptions};

/// Reads a machine configuration, or the built-in Hopper preset (the same
/// machine as the repository's `sim.toml`) when no path is given.
pub fn load_config(path: Option<&Path>) -> Result<MachineConfig, InputError> {
    Ok(read_config(path)?.0)
}

/// [`load_config`], also giving the file read, for [`prepare_with`] to point
/// at when the configuration is why a launch cannot run.
pub fn read_config(path: Option<&Path>) -> Result<(MachineConfig, Option<TomlFile>), InputError> {
    let Some(path) = path else {
        return Ok((MachineConfig::hopper(), None));
    };
    let file = TomlFile::read(path)?;
    let config: MachineConfig = file.parse()?;
    config
        .validate()
        .map_err(|error| config_error(&file, error.keys, error.message))?;
    Ok((config, Some(file)))
}

/// A configuration value that makes no sense, at the `section.key`s it names.
fn config_error(file: &TomlFile, keys: &[&str], message: String) -> InputError {
    let mut error = file.error(message);
    for (index, key) in keys.iter().enumerate() {
        let path: Vec<&str> = key.split('.').collect();
        error = if index == 0 {
            error.at(&path, "")
        } else {
            error.also_at(&path, "")
        };
    }
    error.into_error()
}

/// A launch the machine refuses (`validate_launch`), at the launch-file key
/// that asks for it, or the configuration key that forbids it.
fn launch_error(
    launch: &TomlFile,
    config_file: Option<&TomlFile>,
    source: &KernelSource,
    program: &Program,
    refusal: warpsim_machine::LaunchError,
) -> InputError {
    use warpsim_machine::LaunchCause;
    let message = refusal.message;
    if let (LaunchCause::Config(keys), Some(config_file)) = (refusal.cause, config_file) {
        return config_error(config_file, keys, message);
    }
    let static_shared = format!(
        "declares {} bytes of static shared memory",
        program.static_shared_bytes
    );
    let error = launch.error(message);
    let error = match refusal.cause {
        LaunchCause::GridDimension(index) => error.at(&["grid", &index.to_string()], ""),
        LaunchCause::BlockDimension(index) => error.at(&["block", &index.to_string()], ""),
        LaunchCause::ThreadsPerBlock => error.at(&["block"], ""),
        LaunchCause::DynamicSharedMemory => {
            let error = error.at(&["shared_bytes"], "");
            if program.static_shared_bytes > 0 {
                error.also_at(&["kernel"], static_shared)
            } else {
                error
            }
        }
        LaunchCause::StaticSharedMemory => {
            source.largest(error.at(&["kernel"], ""), StateSpace::Shared)
        }
        LaunchCause::Residency(_) => error.at(&["block"], "").also_at(&["kernel"], ""),
        LaunchCause::BlockState => source.largest(
            error.at(&["block"], "").also_at(&["kernel"], ""),
            StateSpace::Local,
        ),
        LaunchCause::LocalMemory => source.largest(error.at(&["kernel"], ""), StateSpace::Local),
        LaunchCause::Parameters if launch.key_span(&["args"]).is_some() => error.at(&["args"], ""),
        LaunchCause::Parameters | LaunchCause::Config(_) | LaunchCause::Host => {
            error.at(&["kernel"], "")
        }
    };
    error.into_error()
}

/// A launch ready to run: source parsed, verified and lowered, buffers built.
/// It can be executed any number of times (benchmarks do).
pub struct PreparedLaunch {
    pub launch_path: PathBuf,
    /// The source's path as shown in messages.
    pub source_name: String,
    pub source_text: String,
    pub module: Module,
    /// Which of the module's files are the user's, for reporting lines.
    pub locations: Locations,
    pub kernel: KernelId,
    /// The kernel's name as the launch gives it: its CUDA name for a C++
    /// kernel (`transpose<float>`), whose PTX name is mangled.
    pub kernel_name: String,
    pub program: Program,
    pub launch: Launch,
    /// The buffers, checked, in launch-file order (their indices in global
    /// memory). Each execution builds them afresh.
    pub buffers: Vec<buffers::BufferPlan>,
    /// The slots of the parameter buffer (`launch.params`) that hold
    /// addresses of buffers, for replaying the launch elsewhere.
    pub pointers: Vec<buffers::PointerSlot>,
    /// Which buffers are the module's `.global` variables: the index in
    /// `buffers` of each of `program.global_variables`, in order.
    pub global_variable_buffers: Vec<usize>,
    pub config: MachineConfig,
    /// Registers per thread and where they come from: the launch file,
    /// nvJitLink, or the default ([`registers::resolve`]).
    pub registers_per_thread: Registers,
    /// What nvJitLink reported of the kernel (spills, stack, shared and
    /// local memory), when it compiled the kernel's PTX: not when the
    /// launch file gives the registers, nor for `.kir` programs.
    pub kernel_resources: Option<KernelResources>,
}

/// What a run produced.
pub struct RunResult {
    pub report: Report,
    /// The rendered fault when the kernel failed (exit code 1).
    pub failure: Option<String>,
    /// Whether the fault is a barrier problem (a deadlock, a livelock, an
    /// invalid barrier) that `findings` already describes.
    pub failure_is_finding: bool,
    /// The dynamic checker's findings: the barrier checker's, and the
    /// initialization checker's when it ran.
    pub findings: Vec<check::FindingReport>,
    /// The launch's global memory as the kernel left it: the buffers, in
    /// launch-file order. It is the memory the kernel ran on, kept rather
    /// than copied, so that large buffers are not held twice.
    pub memory: GlobalMemory,
    /// The element type of each buffer of `memory`, by index.
    pub buffer_types: Vec<launch_file::ElementType>,
    /// What the kernel's `printf` calls printed, byte for byte (the report
    /// holds it as text).
    pub printed: Vec<u8>,
    /// What the timing model measured, when it ran (the report shows it).
    pub timing: Option<warpsim_machine::timing::LaunchTiming>,
    /// What each SM held over time, when [`RunOptions::timeline`] asked for
    /// it and the machine recorded it ([`PreparedLaunch::trace`] writes it
    /// out).
    pub timeline: Option<warpsim_machine::timing::Timeline>,
}

impl RunResult {
    /// A copy of the final contents of the buffer named `name`.
    pub fn buffer(&self, name: &str) -> Option<Vec<u8>> {
        let index = self.memory.buffer_index(name)?;
        Some(self.memory.contents(index))
    }

    /// Copies of every buffer's final contents, by name, in order.
    pub fn buffers(&self) -> Vec<(String, Vec<u8>)> {
        (0..self.memory.buffer_count())
            .map(|index| {
                (
                    self.memory.buffer_name(index).to_string(),
                    self.memory.contents(index),
                )
            })
            .collect()
    }

    /// Writes buffer `index`'s final contents to `out` in `format`, a
    /// piece at a time.
    pub fn write_buffer(
        &self,
        index: usize,
        format: dump::DumpFormat,
        out: &mut impl std::io::Write,
    ) -> std::io::Result<()> {
        dump::write_buffer(&self.memory, index, self.buffer_types[index], format, out)
    }
}

/// The kernel a launch runs, with its source, to show its declarations.
struct KernelSource<'a> {
    module: &'a Module,
    kernel: KernelId,
    name: &'a str,
    text: &'a str,
}

impl KernelSource<'_> {
    /// Marks the declaration of variable `name` at `loc`, when it is in
    /// the kernel's own source.
    fn declaration<'f>(&self, error: FileError<'f>, loc: SourceLoc, name: &str) -> FileError<'f> {
        if self.module.file_name(loc.file) == self.name {
            error.also_at_line(
                self.name,
                self.text,
                loc.line,
                format!("`{name}` is declared here"),
            )
        } else {
            error
        }
    }

    /// Marks the largest variable the kernel declares in `space` (the one
    /// to make smaller when the kernel declares too much memory).
    fn largest<'f>(&self, error: FileError<'f>, space: StateSpace) -> FileError<'f> {
        let kernel = &self.module.kernels[self.kernel.index()];
        let largest = kernel
            .symbols
            .iter()
            .filter(|symbol| symbol.space == space)
            .filter_map(|symbol| Some((symbol, symbol.size_bytes()?)))
            .max_by_key(|&(_, bytes)| bytes);
        match largest {
            Some((symbol, bytes)) if self.module.file_name(symbol.loc.file) == self.name => {
                let per_thread = if space == StateSpace::Local {
                    " per thread"
                } else {
                    ""
                };
                error.also_at_line(
                    self.name,
                    self.text,
                    symbol.loc.line,
                    format!("`{}` takes {bytes} bytes{per_thread}", symbol.name),
                )
            }
            _ => error,
        }
    }
}

/// A launch described on the command line rather than in a file: the
/// source, the kernel (or the source's only one), the shape, and one
/// `--arg` per parameter ([`launch_template::from_command_line`]).
pub struct CommandLineLaunch<'a> {
    pub source: &'a Path,
    pub kernel: Option<&'a str>,
    pub grid: &'a [u32],
    pub block: &'a [u32],
    pub shared_bytes: u32,
    pub args: &'a [String],
}

/// Prepares a launch from the command line: it is written as a launch file
/// (shown in messages as `<command line>`) and read as one.
pub fn prepare_command_line(
    launch: &CommandLineLaunch,
    config: MachineConfig,
    config_file: Option<&TomlFile>,
) -> Result<PreparedLaunch, InputError> {
    let source_name = locations::display_path(launch.source);
    let text = std::fs::read_to_string(launch.source).map_err(|error| InputError::Io {
        path: launch.source.to_path_buf(),
        message: error.to_string(),
    })?;
    let refuse = |message: String| InputError::Launch {
        path: PathBuf::from(COMMAND_LINE),
        message,
    };
    let is_cuda = source_name.ends_with(".cu");
    // The kernels and their parameters: from the CUDA declarations, or
    // from the PTX or IR itself.
    let (names, signatures, structs, param_names) = if is_cuda {
        let signatures = cuda_source::kernels(&text);
        let names: Vec<String> = signatures
            .iter()
            .map(|kernel| match (&kernel.template, &kernel.instantiation) {
                (Some(_), Some(arguments)) => format!("{}<{arguments}>", kernel.name),
                _ => kernel.name.clone(),
            })
            .collect();
        (names, signatures, cuda_source::structs(&text), Vec::new())
    } else {
        let base_dir = launch.source.parent().unwrap_or(Path::new("."));
        let module = parse_source(&source_name, &text, base_dir)?;
        let names = module
            .kernels
            .iter()
            .map(|kernel| kernel.name.clone())
            .collect();
        let params: Vec<Vec<String>> = module
            .kernels
            .iter()
            .map(|kernel| {
                kernel
                    .params()
                    .map(|(_, param)| param.name.clone())
                    .collect()
            })
            .collect();
        (names, Vec::new(), Vec::new(), params)
    };
    let position = match launch.kernel {
        Some(wanted) => cuda::kernel_position(names.iter().map(String::as_str), wanted)
            .ok_or_else(|| {
                refuse(format!(
                    "no kernel `{wanted}` in {source_name}; it has: {}",
                    names.join(", ")
                ))
            })?,
        None if names.len() == 1 => 0,
        None => {
            return Err(refuse(format!(
                "{source_name} has {} kernels ({}): choose one with --kernel",
                names.len(),
                names.join(", ")
            )))
        }
    };
    let kernel = launch.kernel.unwrap_or(&names[position]);
    let toml_text = launch_template::from_command_line(&launch_template::CommandLineLaunch {
        source: &source_name,
        kernel,
        grid: launch.grid,
        block: launch.block,
        shared_bytes: launch.shared_bytes,
        params: signatures
            .get(position)
            .map(|signature| (signature, structs.as_slice())),
        param_names: param_names.get(position).map_or(&[][..], Vec::as_slice),
        args: launch.args,
    })
    .map_err(refuse)?;
    tracing::debug!(launch = %toml_text, "launch from the command line");
    let path = Path::new(COMMAND_LINE);
    prepare_file(TomlFile::new(path, toml_text), path, config, config_file)
}

/// Whether a source is PTX that NVRTC or nvcc wrote (NVVM's header says
/// so), or CUDA that NVRTC compiles: code that ptxas will compile.
fn is_from_nvvm(extension: &str, text: &str) -> bool {
    extension == "cu" || (extension == "ptx" && text.contains("Generated by NVIDIA NVVM Compiler"))
}

/// The name a launch from the command line has in messages.
pub const COMMAND_LINE: &str = "<command line>";

/// [`parse_source`], then the module's files named as the user reads them
/// ([`Locations::resolve`], from the source's own directory): what every
/// command that reports lines works on.
pub fn parse_and_locate(
    source_name: &str,
    text: &str,
    base_dir: &Path,
) -> Result<(Module, Locations), InputError> {
    let mut module = parse_source(source_name, text, base_dir)?;
    let source_dir = Path::new(source_name).parent().unwrap_or(Path::new(""));
    let locations = Locations::resolve(&mut module, source_dir);
    Ok((module, locations))
}

/// Parses the kernel text of `source_name` into a verified module, rendering
/// errors with their source lines.
/// The dialect is chosen by the file's extension: `.ptx` is PTX, anything
/// else `.kir`.
pub fn parse_source(source_name: &str, text: &str, base_dir: &Path) -> Result<Module, InputError> {
    let parse = if source_name.ends_with(".ptx") {
        warpsim_ir::parse_ptx
    } else {
        warpsim_ir::parse_module
    };
    let module = parse(source_name, text).map_err(|error| {
        // PTX that NVRTC generated exists only in memory: its errors are
        // shown at the CUDA line they come from, the PTX in a note.
        let generated = source_name.ends_with(".cu.ptx") && !Path::new(source_name).exists();
        let cuda = generated
            .then(|| cuda::cuda_line_of_ptx(text, error.line))
            .flatten();
        match cuda {
            Some((file, line)) => {
                let mut sources = diagnostics::Sources::new(base_dir);
                let ptx_line = text
                    .lines()
                    .nth(error.line as usize - 1)
                    .unwrap_or("")
                    .trim();
                let message = format!(
                    "{} (in the PTX NVRTC generated for this line: `{ptx_line}`)",
                    error.message
                );
                let file = Path::new(source_name).with_file_name(&file);
                let file = locations::display_path(&file);
                InputError::Located {
                    summary: format!("{file}:{line}: {message}"),
                    rendered: diagnostics::render_at_line(&mut sources, &message, &file, line),
                }
            }
            None => InputError::Located {
                summary: error.to_string(),
                rendered: diagnostics::render_parse_error(&error, text),
            },
        }
    })?;
    warpsim_ir::verify_module(&module).map_err(|error| {
        let mut sources = diagnostics::Sources::new(base_dir);
        sources.add(source_name, text.to_string());
        let summary = error.to_string();
        let first = summary.lines().next().unwrap_or("").to_string();
        let more = error.problems.len().saturating_sub(1);
        InputError::Located {
            summary: match more {
                0 => first,
                1 => format!("{first} (and 1 more problem)"),
                _ => format!("{first} (and {more} more problems)"),
            },
            rendered: diagnostics::render_verify_error(&error, &mut sources),
        }
    })?;
    Ok(module)
}

/// Reads a launch file and everything it names.
pub fn prepare(launch_path: &Path, config: MachineConfig) -> Result<PreparedLaunch, InputError> {
    prepare_with(launch_path, config, None)
}

/// [`prepare`] with the file `config` was read from ([`read_config`]), so
/// that a launch the configuration forbids points at the key that does.
pub fn prepare_with(
    launch_path: &Path,
    config: MachineConfig,
    config_file: Option<&TomlFile>,
) -> Result<PreparedLaunch, InputError> {
    prepare_file(
        TomlFile::read(launch_path)?,
        launch_path,
        config,
        config_file,
    )
}

/// [`prepare_with`] for a launch file already in memory (one built from the
/// command line, see [`launch_template`]): `launch_path` names it in
/// messages, and its directory is where relative paths start.
pub fn prepare_file(
    launch_file: TomlFile,
    launch_path: &Path,
    config: MachineConfig,
    config_file: Option<&TomlFile>,
) -> Result<PreparedLaunch, InputError> {
    let file: LaunchFile = launch_file.parse()?;
    let base_dir = LaunchFile::base_dir(launch_path);
    let source_path = base_dir.join(&file.source);
    let source_name = locations::display_path(&source_path);
    let extension = source_path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("");
    if !matches!(extension, "kir" | "ptx" | "cu") {
        return Err(launch_file
            .error(format!(
                "source `{}`: warpsim runs `.kir`, `.ptx` and `.cu` sources",
                file.source.display()
            ))
            .at(&["source"], "")
            .into_error());
    }
    let source_text = std::fs::read_to_string(&source_path).map_err(|error| {
        launch_file
            .error(format!("cannot read {source_name}: {error}"))
            .at(&["source"], "")
            .into_error()
    })?;
    // CUDA goes through NVRTC to PTX first; the PTX's `.loc` lines keep the
    // CUDA file and lines, so reports speak of the `.cu` source.
    let mut signature = None;
    let mut ptx_kernel = None;
    let mut cuda_kernel_names = None;
    // The kernel as reports name it: as the launch says, or for CUDA by its
    // qualified name with the launch's template arguments.
    let mut kernel_name = file.kernel.clone();
    let (source_name, source_text) = if extension == "cu" {
        let kernels = cuda_source::kernels(&source_text);
        let found = cuda::find_kernel(&kernels, &file.kernel);
        if let Some(kernel) = found {
            if kernel.template.is_some() && !file.kernel.contains('<') {
                let example = kernel.instantiation.as_deref().unwrap_or("float");
                return Err(launch_file
                    .error(format!(
                        "`{}` is a template: name the instantiation to run, e.g. `{}<{example}>`",
                        kernel.name, kernel.name
                    ))
                    .at(&["kernel"], "")
                    .into_error());
            }
        }
        // Kernels with C linkage keep their names; others are asked for.
        let wanted: Vec<String> = match found {
            // The qualified name, with the template arguments the user
            // gave (`--kernel scale` means `fx::scale`).
            Some(kernel) if !kernel.extern_c => {
                let arguments = file.kernel.find('<').map_or("", |at| &file.kernel[at..]);
                kernel_name = format!("{}{arguments}", kernel.name);
                vec![kernel_name.clone()]
            }
            _ => Vec::new(),
        };
        let mut options: Vec<String> = file
            .defines
            .iter()
            .map(|define| format!("-D{define}"))
            .collect();
        options.extend(
            file.include
                .iter()
                .map(|dir| format!("-I{}", base_dir.join(dir).display())),
        );
        options.extend(file.nvrtc_options.iter().cloned());
        let request = cuda::CudaRequest {
            path: &source_path,
            name: &source_name,
            text: &source_text,
            options,
            architecture: nvrtc::architecture(config.device.compute_capability),
        };
        let compiled = cuda::compile(&request, &wanted).map_err(|error| match error {
            cuda::CudaError::NotFound(message) => {
                launch_file.error(message).at(&["source"], "").into_error()
            }
            cuda::CudaError::NulByte { line, column } => launch_file
                .error("the source contains a NUL byte, which NVRTC cannot compile")
                .also_at_line(
                    &source_name,
                    &source_text,
                    line,
                    format!("a NUL byte in column {column}"),
                )
                .also_at(&["source"], "")
                .into_error(),
            cuda::CudaError::Rejected(error) => error,
        })?;
        signature = found.cloned();
        ptx_kernel = compiled.ptx_names.first().map(|(_, ptx)| ptx.clone());
        cuda_kernel_names = Some(cuda::display_names(&kernels));
        (compiled.ptx_name, compiled.ptx)
    } else {
        (source_name, source_text)
    };
    let (mut module, locations) = parse_and_locate(&source_name, &source_text, &base_dir)?;
    let kernel = module
        .kernel(ptx_kernel.as_deref().unwrap_or(&file.kernel))
        .ok_or_else(|| {
            // A CUDA source's kernels by their CUDA names, not their PTX ones.
            let names: Vec<&str> = match &cuda_kernel_names {
                Some(names) => names.iter().map(String::as_str).collect(),
                None => module.kernels.iter().map(|k| k.name.as_str()).collect(),
            };
            let message = if names.is_empty() {
                format!(
                    "no kernel `{}` in {source_name}: the file defines no kernel",
                    file.kernel
                )
            } else {
                format!(
                    "no kernel `{}` in {source_name}; it has: {}",
                    file.kernel,
                    names.join(", ")
                )
            };
            launch_file.error(message).at(&["kernel"], "").into_error()
        })?;
    // What ptxas does to the shared-memory accesses of NVVM's PTX, before
    // the counts are made: they are the SASS's counts on a GPU.
    let merged = (config.compiler.merge_accesses && is_from_nvvm(extension, &source_text))
        .then(|| warpsim_ir::merge::merge_kernel(&mut module.kernels[kernel.index()]));
    if let Some(summary) = &merged {
        tracing::info!(?summary, "shared-memory accesses merged as ptxas does");
    }
    // What ptxas's scheduler does to any PTX: parameters are read where
    // they are used, and independent global loads issue together rather
    // than each next to its use.
    if config.compiler.schedule_loads {
        let moved = warpsim_ir::parameter_placement::place_parameter_loads(
            &mut module.kernels[kernel.index()],
        );
        tracing::info!(moved, "parameter loads placed as ptxas reads them");
        let summary = warpsim_ir::schedule::schedule_kernel(&mut module.kernels[kernel.index()]);
        tracing::info!(?summary, "global loads scheduled as ptxas does");
    }
    let mut program = Program::lower(&module, kernel).map_err(|error| {
        let mut sources = diagnostics::Sources::new(&base_dir);
        sources.add(&source_name, source_text.clone());
        InputError::Located {
            summary: error.to_string(),
            rendered: diagnostics::render_at_line(
                &mut sources,
                &error.message,
                &error.file,
                error.line,
            ),
        }
    })?;
    // Messages name parameters as the CUDA source does (`n`, not
    // `_Z1kPii_param_2`).
    if let Some(signature) = &signature {
        if signature.params.len() == program.params.len() {
            for (slot, param) in program.params.iter_mut().zip(&signature.params) {
                if !param.name.is_empty() {
                    slot.name = param.name.clone();
                }
            }
        }
    }
    let dims = |values: &[u32], what: &str| {
        LaunchFile::dims(values, what)
            .map_err(|message| launch_file.error(message).at(&[what], "").into_error())
    };
    let grid = dims(&file.grid, "grid")?;
    let block = dims(&file.block, "block")?;
    let mut buffers = Vec::with_capacity(file.buffers.len());
    for (name, spec) in &file.buffers {
        buffers.push(buffers::plan_buffer(name, spec, &base_dir, &launch_file)?);
    }
    // The module's `.global` variables are buffers too: one the launch file
    // declares under the variable's name gives its initial contents, the
    // others start as the module says; each can be dumped by its name.
    let mut global_variable_buffers = Vec::with_capacity(program.global_variables.len());
    for variable in &program.global_variables {
        let index = match buffers.iter().position(|plan| plan.name == variable.name) {
            Some(index) => {
                let given = buffers[index].bytes();
                if given != variable.size {
                    let source = KernelSource {
                        module: &module,
                        kernel,
                        name: &source_name,
                        text: &source_text,
                    };
                    let error = launch_file
                        .error(format!(
                            "buffer `{}` initialises the global variable of that name, which has {} bytes, but the buffer has {given}",
                            variable.name, variable.size
                        ))
                        .at(&["buffers", &variable.name], format!("{given} bytes"));
                    return Err(source
                        .declaration(error, variable.loc, &variable.name)
                        .into_error());
                }
                index
            }
            None => {
                buffers.push(buffers::BufferPlan::from_bytes(
                    &variable.name,
                    variable.ty,
                    variable.initial.clone(),
                ));
                buffers.len() - 1
            }
        };
        global_variable_buffers.push(index);
    }
    buffers::check_host_memory(&buffers, &launch_file, buffers::host_memory().as_ref())?;
    let params = buffers::parameter_buffer(
        &program.params,
        program.param_bytes,
        &file.args,
        &file.buffers,
        &launch_file,
    )?;
    // PTX (a `.ptx` file, or what NVRTC made of a `.cu`) is compiled for
    // the target to learn its registers, unless the launch file says them.
    let kernel_ptx = matches!(extension, "ptx" | "cu").then(|| registers::KernelPtx {
        text: &source_text,
        kernel: &module.kernels[kernel.index()].name,
    });
    let (registers_per_thread, kernel_resources) = registers::resolve(
        file.registers,
        kernel_ptx,
        config.device.compute_capability,
        config.timing.default_registers_per_thread,
    );
    let launch = Launch {
        grid,
        block,
        dynamic_shared_bytes: file.shared_bytes,
        params: params.bytes,
        global_variable_addresses: global_variable_buffers
            .iter()
            .map(|&index| warpsim_machine::memory::buffer_base(index))
            .collect(),
        // Registers decide how many blocks an SM holds.
        registers_per_thread: Some(registers_per_thread.count),
    };
    warpsim_machine::validate_launch(&program, &launch, &config).map_err(|error| {
        let source = KernelSource {
            module: &module,
            kernel,
            name: &source_name,
            text: &source_text,
        };
        launch_error(&launch_file, config_file, &source, &program, error)
    })?;
    tracing::info!(kernel = %file.kernel, source = %source_name, "prepared launch");
    Ok(PreparedLaunch {
        launch_path: launch_path.to_path_buf(),
        source_name,
        source_text,
        module,
        locations,
        kernel,
        kernel_name,
        program,
        launch,
        buffers,
        pointers: params.pointers,
        global_variable_buffers,
        config,
        registers_per_thread,
        kernel_resources,
    })
}

impl PreparedLaunch {
    /// Where instruction `pc` of the program is reported.
    pub fn place_of(&self, pc: u32) -> Place {
        self.locations
            .place(&self.module, self.program.locations[pc as usize])
    }

    /// The static barrier findings of the launched kernel (nothing runs).
    pub fn static_findings(&self) -> Vec<check::FindingReport> {
        // Lowering ran the analysis; its result is kept in the program.
        check::static_findings(
            &self.module,
            &self.locations,
            &self.module.kernels[self.kernel.index()],
            &self.program.divergent_barriers,
        )
    }

    /// Source texts for rendering diagnostics, the kernel's source included.
    pub fn sources(&self) -> diagnostics::Sources {
        let base_dir = LaunchFile::base_dir(&self.launch_path);
        let mut sources = diagnostics::Sources::new(&base_dir);
        sources.add(&self.source_name, self.source_text.clone());
        sources
    }

    /// The index of the buffer named `name` (in launch-file order).
    pub fn buffer_index(&self, name: &str) -> Option<usize> {
        self.buffers.iter().position(|buffer| buffer.name == name)
    }

    /// Fresh global memory holding the initial buffers. It fails when the
    /// host cannot give the memory, or an input file cannot be read now.
    pub fn memory(&self) -> Result<GlobalMemory, InputError> {
        let mut memory = GlobalMemory::new();
        for plan in &self.buffers {
            let words = plan.build().map_err(|error| InputError::Launch {
                path: self.launch_path.clone(),
                message: error.to_string(),
            })?;
            memory.add_words(&plan.name, words);
        }
        Ok(memory)
    }

    /// Runs the kernel on `host_threads` threads (0: all cores).
    pub fn execute(&self, host_threads: usize) -> Result<RunResult, InputError> {
        let options = RunOptions {
            host_threads,
            ..RunOptions::default()
        };
        self.execute_with(options, &RunControl::default())
    }

    /// [`PreparedLaunch::execute`] as `options` say (host threads, the
    /// initialization checker, the timeline), watched and stopped through
    /// `control` (a progress display, Ctrl-C, `--keep-going`).
    pub fn execute_with(
        &self,
        options: RunOptions,
        control: &RunControl,
    ) -> Result<RunResult, InputError> {
        self.run_machine(options, control)
    }

    /// The run's timeline as a Chrome trace ([`timeline`]), times at the
    /// launch's clock: the timing model's, or the machine file's when the
    /// model did not run. Without a timeline the trace has no events and
    /// says why.
    pub fn trace(&self, result: &RunResult) -> timeline::Trace {
        let clock_mhz = result
            .timing
            .as_ref()
            .map_or(self.config.timing.clock_mhz, |timing| timing.clock_mhz);
        timeline::Trace::new(&self.kernel_name, clock_mhz, result.timeline.as_ref())
    }

    /// Runs the kernel as `options` say (the initialization checker's
    /// findings join the barrier checker's in [`RunResult::findings`]),
    /// watched and stopped through `control`.
    fn run_machine(
        &self,
        options: RunOptions,
        control: &RunControl,
    ) -> Result<RunResult, InputError> {
        // The buffers are filled on as many host threads as the launch
        // runs on (a pool that cannot start leaves it to the launch's own
        // pool to report).
        let memory = match warpsim_machine::host_pool(options.host_threads) {
            Ok(pool) => pool.install(|| self.memory())?,
            Err(_) => self.memory()?,
        };
        let outcome = warpsim_machine::run_with(
            &self.program,
            &self.launch,
            &memory,
            &self.config,
            options,
            control,
        )
        .map_err(|error| InputError::Launch {
            path: self.launch_path.clone(),
            message: error.message,
        })?;
        let kernel = &self.module.kernels[self.kernel.index()];
        let file_of = |pc: u32| self.place_of(pc);
        let (summary, failure) = match &outcome.error {
            Some(error) => {
                let mut sources = self.sources();
                (
                    Some(diagnostics::fault_summary(error, &file_of)),
                    Some(diagnostics::render_fault(error, &file_of, &mut sources)),
                )
            }
            None => (None, None),
        };
        let report = Report::build(report::ReportInput {
            kernel_name: &self.kernel_name,
            module: &self.module,
            locations: &self.locations,
            kernel,
            stats: &outcome.stats,
            source: self.source_name.clone(),
            device: self.config.device.name.clone(),
            grid: self.launch.grid,
            block: self.launch.block,
            shared_bytes: self.launch.dynamic_shared_bytes,
            static_shared_bytes: self.program.static_shared_bytes,
            registers: self.registers_per_thread.clone(),
            error: summary,
            failed_blocks: outcome.failed_blocks,
            interrupted: outcome.interrupted,
            printf_output: String::from_utf8_lossy(&outcome.printed).into_owned(),
            printf_dropped_bytes: outcome.printed_dropped,
            timing: outcome.timing.as_ref(),
        });
        let findings = outcome
            .findings
            .iter()
            .map(|finding| check::FindingReport::from_machine(finding, &file_of))
            .collect();
        let failure_is_finding = outcome
            .error
            .as_ref()
            .is_some_and(|error| warpsim_machine::Finding::from_hang(error).is_some());
        Ok(RunResult {
            report,
            failure,
            failure_is_finding,
            findings,
            memory,
            buffer_types: self.buffers.iter().map(|plan| plan.element).collect(),
            printed: outcome.printed,
            timing: outcome.timing,
            timeline: outcome.timeline,
        })
    }
}
