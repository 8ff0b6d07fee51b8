//! The driver: everything between files and the machine. It reads `sim.toml`
//! and launch files, parses and verifies the kernel source, lowers it, builds
//! the buffers and parameters, runs the machine, and turns the counters and
//! faults into a report and diagnostics. The command-line tool is a thin layer
//! over [`prepare`] and [`PreparedLaunch::execute`].

pub mod buffers;
pub mod diagnostics;
pub mod error;
pub mod launch_file;
pub mod report;

use std::path::{Path, PathBuf};

use warpsim_ir::{KernelId, Module};
use warpsim_machine::{GlobalMemory, Launch, MachineConfig, Program};

pub use error::InputError;
pub use launch_file::LaunchFile;
pub use report::Report;

/// Reads a machine configuration, or the built-in Hopper preset (the same
/// machine as the repository's `sim.toml`) when no path is given.
pub fn load_config(path: Option<&Path>) -> Result<MachineConfig, InputError> {
    let Some(path) = path else {
        return Ok(MachineConfig::hopper());
    };
    let text = std::fs::read_to_string(path).map_err(|error| InputError::Io {
        path: path.to_path_buf(),
        message: error.to_string(),
    })?;
    let config: MachineConfig = error::parse_toml(path, &text)?;
    config.validate().map_err(|message| InputError::Launch {
        path: path.to_path_buf(),
        message,
    })?;
    Ok(config)
}

/// A launch ready to run: source parsed, verified and lowered, buffers built.
/// It can be executed any number of times (benchmarks do).
pub struct PreparedLaunch {
    pub launch_path: PathBuf,
    /// The source's path as shown in messages.
    pub source_name: String,
    pub source_text: String,
    pub module: Module,
    pub kernel: KernelId,
    pub program: Program,
    pub launch: Launch,
    /// Buffer names and initial contents, in launch-file order.
    pub buffers: Vec<(String, Vec<u8>)>,
    pub config: MachineConfig,
}

/// What a run produced.
pub struct RunResult {
    pub report: Report,
    /// The rendered fault when the kernel failed (exit code 1).
    pub failure: Option<String>,
    /// Final buffer contents, by name.
    pub buffers: Vec<(String, Vec<u8>)>,
}

/// Parses the kernel text of `source_name` into a verified module, rendering
/// errors with their source lines.
pub fn parse_source(source_name: &str, text: &str, base_dir: &Path) -> Result<Module, InputError> {
    let module =
        warpsim_ir::parse_module(source_name, text).map_err(|error| InputError::Source {
            summary: error.to_string(),
            rendered: diagnostics::render_parse_error(&error, text),
        })?;
    warpsim_ir::verify_module(&module).map_err(|error| {
        let mut sources = diagnostics::Sources::new(base_dir);
        sources.add(source_name, text.to_string());
        InputError::Source {
            summary: error.to_string(),
            rendered: diagnostics::render_verify_error(&error, &mut sources),
        }
    })?;
    Ok(module)
}

/// Reads a launch file and everything it names.
pub fn prepare(launch_path: &Path, config: MachineConfig) -> Result<PreparedLaunch, InputError> {
    let file = LaunchFile::load(launch_path)?;
    let base_dir = LaunchFile::base_dir(launch_path);
    let source_path = base_dir.join(&file.source);
    let source_name = source_path.display().to_string();
    let extension = source_path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("");
    if extension != "kir" {
        return Err(InputError::Launch {
            path: launch_path.to_path_buf(),
            message: format!(
                "source `{}`: only `.kir` sources can be run yet (PTX and CUDA sources are planned)",
                file.source.display()
            ),
        });
    }
    let source_text = std::fs::read_to_string(&source_path).map_err(|error| InputError::Io {
        path: source_path.clone(),
        message: error.to_string(),
    })?;
    let module = parse_source(&source_name, &source_text, &base_dir)?;
    let kernel = module.kernel(&file.kernel).ok_or_else(|| {
        let names: Vec<&str> = module.kernels.iter().map(|k| k.name.as_str()).collect();
        InputError::Launch {
            path: launch_path.to_path_buf(),
            message: format!(
                "no kernel `{}` in {source_name}; it has: {}",
                file.kernel,
                names.join(", ")
            ),
        }
    })?;
    let program =
        Program::lower(&module, kernel).map_err(|error| InputError::Other(error.to_string()))?;
    let grid = LaunchFile::dims(&file.grid, "grid", launch_path)?;
    let block = LaunchFile::dims(&file.block, "block", launch_path)?;
    let mut buffers = Vec::with_capacity(file.buffers.len());
    for (name, spec) in &file.buffers {
        let bytes = buffers::initial_contents(name, spec, &base_dir, launch_path)?;
        buffers.push((name.clone(), bytes));
    }
    let params = buffers::parameter_buffer(
        &program.params,
        program.param_bytes,
        &file.args,
        |name| file.buffers.get_index_of(name),
        launch_path,
    )?;
    let launch = Launch {
        grid,
        block,
        dynamic_shared_bytes: file.shared_bytes,
        params,
    };
    warpsim_machine::validate_launch(&program, &launch, &config).map_err(|error| {
        InputError::Launch {
            path: launch_path.to_path_buf(),
            message: error.message,
        }
    })?;
    tracing::info!(kernel = %file.kernel, source = %source_name, "prepared launch");
    Ok(PreparedLaunch {
        launch_path: launch_path.to_path_buf(),
        source_name,
        source_text,
        module,
        kernel,
        program,
        launch,
        buffers,
        config,
    })
}

impl PreparedLaunch {
    /// Fresh global memory holding the initial buffers.
    pub fn memory(&self) -> GlobalMemory {
        let mut memory = GlobalMemory::new();
        for (name, bytes) in &self.buffers {
            memory.add_buffer(name, bytes);
        }
        memory
    }

    /// Runs the kernel on `host_threads` threads (0: all cores).
    pub fn execute(&self, host_threads: usize) -> Result<RunResult, InputError> {
        let memory = self.memory();
        let outcome = warpsim_machine::run(
            &self.program,
            &self.launch,
            &memory,
            &self.config,
            host_threads,
        )
        .map_err(|error| InputError::Launch {
            path: self.launch_path.clone(),
            message: error.message,
        })?;
        let kernel = &self.module.kernels[self.kernel.index()];
        let file_of = |pc: u32| {
            let loc = self.program.locations[pc as usize];
            (self.module.file_name(loc.file).to_string(), loc.line)
        };
        let (summary, failure) = match &outcome.error {
            Some(error) => {
                let base_dir = LaunchFile::base_dir(&self.launch_path);
                let mut sources = diagnostics::Sources::new(&base_dir);
                sources.add(&self.source_name, self.source_text.clone());
                (
                    Some(diagnostics::fault_summary(error, &file_of)),
                    Some(diagnostics::render_fault(error, &file_of, &mut sources)),
                )
            }
            None => (None, None),
        };
        let report = Report::build(report::ReportInput {
            module: &self.module,
            kernel,
            stats: &outcome.stats,
            source: self.source_name.clone(),
            device: self.config.device.name.clone(),
            grid: self.launch.grid,
            block: self.launch.block,
            shared_bytes: self.launch.dynamic_shared_bytes,
            error: summary,
            failed_blocks: outcome.failed_blocks,
        });
        let buffers = (0..memory.buffer_count())
            .map(|index| {
                (
                    memory.buffer_name(index).to_string(),
                    memory.contents(index),
                )
            })
            .collect();
        Ok(RunResult {
            report,
            failure,
            buffers,
        })
    }
}
