//! The `warpsim` command: a thin layer over the driver that parses arguments,
//! prints, and chooses the exit code (0 success, 1 the kernel failed, 2 bad
//! input). A closed pipe on stdout is not an error.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};

/// mimalloc, not the C library's malloc: a launch keeps the register files
/// of every resident block at once (tens of megabytes in thousands of
/// allocations), and with glibc's malloc a quarter of a small launch's time
/// went to the kernel faulting those pages in one by one (`docs/timing.md`,
/// "Simulation speed and host threads").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "warpsim",
    version,
    about = "A cycle-approximate SIMT warp simulator for CUDA-style kernels"
)]
struct Cli {
    /// More log output on stderr (-v info, -vv debug); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a kernel and report what each memory instruction did: the kernel
    /// of a launch file, or of a `.cu`, `.ptx` or `.kir` source with the
    /// launch given by --kernel, --grid, --block and --arg.
    Run(RunArgs),
    /// Check a kernel for barrier, warp-sync and uninitialized-memory
    /// problems: statically, then by running it (a launch file), or
    /// statically only (a `.cu`, `.kir` or `.ptx` file).
    Check(CheckArgs),
    /// Write a commented launch file for each kernel of a `.cu` source, with
    /// its parameters and buffers for them.
    Init(InitArgs),
    /// Run a kernel and print its source files with each line's counts in a
    /// margin (executions, shared wavefronts, ideal, conflicts, global sectors).
    Annotate(AnnotateArgs),
    /// Write a launch out for a GPU to replay: the PTX warpsim runs, the
    /// launch's shape and parameter buffer, and each buffer's initial
    /// contents (`programs/timing/hardware/launch.py` replays it).
    Export(ExportArgs),
    /// Run litmus tests (`programs/litmus/*.litmus`) many times in the
    /// explore memory model and print each test's outcomes, each marked
    /// allowed or forbidden by the PTX memory model, as herd7 and litmus7
    /// print theirs. Exits with 1 when an outcome the model forbids came.
    Litmus(LitmusArgs),
    /// Parse and verify a `.kir` file, then print it in canonical form.
    Print {
        /// The `.kir` file.
        source: PathBuf,
    },
}

#[derive(clap::Args)]
struct ExportArgs {
    /// The launch file (TOML) of a `.ptx` or `.cu` source.
    launch: PathBuf,
    /// The directory to write `module.ptx`, `launch.json` and one
    /// `NAME.bin` per buffer to (made if missing).
    out_dir: PathBuf,
    #[command(flatten)]
    machine: MachineArgs,
}

#[derive(clap::Args)]
struct InitArgs {
    /// The `.cu` source.
    source: PathBuf,
    /// Where to write the launch files (default: beside the source).
    #[arg(long)]
    out_dir: Option<PathBuf>,
    /// Replace launch files that exist.
    #[arg(long)]
    force: bool,
}

/// The launch of a source given on the command line.
#[derive(clap::Args)]
struct LaunchArgs {
    /// The kernel (default: the source's only kernel); a template by its
    /// instantiation, `transpose<float>`.
    #[arg(long)]
    kernel: Option<String>,
    /// Blocks: `X`, `X,Y` or `X,Y,Z` (default 1).
    #[arg(long, value_name = "X[,Y[,Z]]", value_parser = parse_dims)]
    grid: Option<Dims>,
    /// Threads per block: `X`, `X,Y` or `X,Y,Z` (default 32).
    #[arg(long, value_name = "X[,Y[,Z]]", value_parser = parse_dims)]
    block: Option<Dims>,
    /// Dynamic shared memory per block, in bytes.
    #[arg(long, default_value_t = 0)]
    shared_bytes: u32,
    /// A parameter's value: a number, a buffer `TYPE[LEN]` or
    /// `TYPE[LEN]=INIT` (INIT: zero, iota, random, random:SEED, a number,
    /// file:PATH, npy:PATH), or a struct's fields `[{ f32 = 1.5 }]`;
    /// `NAME=VALUE` names the parameter, the others go in order (for a `.cu`
    /// kernel, buffers to its pointers in order, numbers and structs to its
    /// other parameters in order). A `.cu` kernel's pointers may be left
    /// out: each gets a buffer named after its parameter, one element per
    /// thread.
    #[arg(long = "arg", value_name = "VALUE", allow_hyphen_values = true)]
    args: Vec<String>,
}

/// A grid's or a block's dimensions as given: 1 to 3 numbers.
#[derive(Clone, Debug)]
struct Dims(Vec<u32>);

/// `4`, `4,2`, `4x2`, `4,2,1`.
fn parse_dims(text: &str) -> Result<Dims, String> {
    let dims: Result<Vec<u32>, _> = text
        .split([',', 'x'])
        .map(|part| part.trim().parse::<u32>())
        .collect();
    match dims {
        Ok(dims) if (1..=3).contains(&dims.len()) => Ok(Dims(dims)),
        _ => Err(format!(
            "`{text}` is not 1 to 3 numbers, such as 256 or 16,16"
        )),
    }
}

/// The machine a kernel runs on.
#[derive(clap::Args)]
struct MachineArgs {
    /// Machine configuration (default: the built-in Hopper machine, as in sim.toml).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Merge shared-memory accesses of NVRTC's and nvcc's PTX as ptxas
    /// does (default: the machine file's `compiler.merge_accesses`, on).
    #[arg(long, value_name = "on|off", value_parser = parse_on_off)]
    merge_accesses: Option<bool>,
    /// Move global loads early in their basic blocks as ptxas schedules
    /// them, and parameter loads to where ptxas reads the parameters
    /// (default: the machine file's `compiler.schedule_loads`, on).
    #[arg(long, value_name = "on|off", value_parser = parse_on_off)]
    schedule_loads: Option<bool>,
    /// How global memory orders what threads see: `machine` (the simulated
    /// GPU's own, deterministic order) or `explore` (any order the PTX
    /// memory model allows, chosen from --seed) (default: the machine
    /// file's `memory.model`, machine).
    #[arg(long, value_enum, value_name = "machine|explore")]
    memory: Option<MemoryModelArg>,
    /// The seed of the explore model's choices (default: the machine
    /// file's `memory.seed`, 0): the same seed, the same run.
    #[arg(long)]
    seed: Option<u64>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum MemoryModelArg {
    Machine,
    Explore,
}

fn parse_on_off(text: &str) -> Result<bool, String> {
    match text {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("`{text}`: expected on or off")),
    }
}

impl MachineArgs {
    /// The configuration read, with the command line's overrides, and the
    /// file it came from.
    fn read(
        &self,
    ) -> anyhow::Result<(
        warpsim_driver::MachineConfig,
        Option<warpsim_driver::TomlFile>,
    )> {
        let (mut config, file) = warpsim_driver::read_config(self.config.as_deref())?;
        if let Some(merge) = self.merge_accesses {
            config.compiler.merge_accesses = merge;
        }
        if let Some(schedule) = self.schedule_loads {
            config.compiler.schedule_loads = schedule;
        }
        if let Some(model) = self.memory {
            config.memory.model = match model {
                MemoryModelArg::Machine => warpsim_driver::MemoryModel::Machine,
                MemoryModelArg::Explore => warpsim_driver::MemoryModel::Explore,
            };
        }
        if let Some(seed) = self.seed {
            config.memory.seed = seed;
        }
        Ok((config, file))
    }
}

#[derive(clap::Args)]
struct RunArgs {
    /// The launch file (TOML), or a `.cu`, `.ptx` or `.kir` source.
    launch: PathBuf,
    #[command(flatten)]
    source_launch: LaunchArgs,
    #[command(flatten)]
    machine: MachineArgs,
    /// Also write the report as JSON to PATH, or to stdout with `-` (then no table).
    #[arg(long, value_name = "PATH|-")]
    json: Option<String>,
    /// Write a buffer's final contents to a file: raw little-endian bytes, or
    /// a NumPy array when PATH ends in `.npy`.
    #[arg(long, value_name = "BUFFER=PATH")]
    dump: Vec<String>,
    /// Host threads for running blocks (0: all cores; at most the host's
    /// parallelism). Results do not depend on it.
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Also run the barrier and initialization checkers (as `warpsim check`) and print their findings.
    #[arg(long)]
    check: bool,
    /// Run every block even after one faults (a GPU ends the kernel at the
    /// first fault, and so does warpsim by default).
    #[arg(long)]
    keep_going: bool,
    /// The table's rows: per source line and access (default for `.cu` and
    /// `.ptx` sources) or per instruction (default for `.kir`).
    #[arg(long, value_enum, value_name = "line|instruction")]
    by: Option<TableBy>,
    #[command(flatten)]
    timeline: TimelineArgs,
}

/// `--timeline`, for the commands that run a kernel.
#[derive(clap::Args)]
struct TimelineArgs {
    /// Write what each SM held over time (its blocks, and its warps' long
    /// waits) to PATH as a Chrome trace, for Perfetto or chrome://tracing.
    #[arg(long = "timeline", value_name = "PATH")]
    path: Option<PathBuf>,
    /// Simulate only the first K waves of blocks (a wave: as many blocks as
    /// the GPU holds at once) and extrapolate the launch's cycles from
    /// them; the counters and outputs are those of the blocks simulated.
    #[arg(long = "sample-waves", value_name = "K")]
    sample_waves: Option<u32>,
}

impl TimelineArgs {
    /// Opens the timeline's file before the run, like every output.
    fn open(&self, created: &mut CreatedFiles) -> anyhow::Result<Option<TimelineOutput>> {
        let Some(path) = &self.path else {
            return Ok(None);
        };
        let file = created
            .create(path)
            .with_context(|| format!("cannot write the timeline to {}", path.display()))?;
        Ok(Some(TimelineOutput {
            path: path.clone(),
            file,
        }))
    }

    /// How the machine runs: on `host_threads`, recording the timeline
    /// when one is asked for.
    fn run_options(&self, host_threads: usize) -> warpsim_driver::RunOptions {
        warpsim_driver::RunOptions {
            host_threads,
            timeline: self.path.is_some(),
            sample_waves: self.sample_waves.unwrap_or(0),
            ..Default::default()
        }
    }
}

/// The timeline's file, opened before the run.
struct TimelineOutput {
    path: PathBuf,
    file: std::fs::File,
}

impl TimelineOutput {
    /// Writes the run's timeline (a trace without events, saying why, when
    /// the machine recorded none).
    fn write(
        self,
        prepared: &warpsim_driver::PreparedLaunch,
        result: &warpsim_driver::RunResult,
    ) -> anyhow::Result<()> {
        prepared.trace(result).write(self.file, &self.path)?;
        Ok(())
    }
}

#[derive(clap::Args)]
struct AnnotateArgs {
    /// The launch file (TOML).
    launch: PathBuf,
    #[command(flatten)]
    machine: MachineArgs,
    /// Host threads for running blocks (0: all cores; at most the host's
    /// parallelism). Results do not depend on it.
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Only this source file (its name as the report gives it, or the end of that path).
    #[arg(long, value_name = "NAME")]
    file: Option<String>,
    /// Screen width: longer source lines are cut, ending in `…`.
    #[arg(long, default_value_t = warpsim_driver::annotate::DEFAULT_WIDTH)]
    width: usize,
}

/// `--by`: how the report table lists the memory instructions.
#[derive(Clone, Copy, clap::ValueEnum)]
enum TableBy {
    Line,
    Instruction,
}

impl TableBy {
    fn view(self) -> warpsim_driver::report::TableView {
        match self {
            TableBy::Line => warpsim_driver::report::TableView::Lines,
            TableBy::Instruction => warpsim_driver::report::TableView::Instructions,
        }
    }
}

#[derive(clap::Args)]
struct LitmusArgs {
    /// Litmus files; each runs every variant and placement it expands to.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Run only the expanded tests whose names contain this text
    /// (`MP+relaxed.gpu@grid`).
    #[arg(long, value_name = "TEXT")]
    only: Option<String>,
    /// Launches per test, each of 64 instances with its own seed (the
    /// first is --seed).
    #[arg(long, default_value_t = 8)]
    launches: u32,
    /// Enumerate every run the explore model can make of one instance
    /// (its weak memory's choices, and a few start times per block),
    /// instead of running random ones.
    #[arg(long)]
    exhaustive: bool,
    /// The most runs the exhaustive mode makes of one test before it gives
    /// up with an error.
    #[arg(long, default_value_t = 20_000)]
    bound: u64,
    /// The most candidate executions the model checker looks at per test.
    #[arg(long, default_value_t = 10_000_000)]
    model_bound: u64,
    #[command(flatten)]
    machine: MachineArgs,
}

#[derive(clap::Args)]
struct CheckArgs {
    /// A launch file (TOML), or a `.cu`/`.kir`/`.ptx` source for the static check alone.
    input: PathBuf,
    #[command(flatten)]
    machine: MachineArgs,
    /// Write the JSON report with its `findings` to PATH, or to stdout with `-`.
    #[arg(long, value_name = "PATH|-")]
    json: Option<String>,
    /// Host threads for running blocks (0: all cores; at most the host's
    /// parallelism). Findings do not depend on it.
    #[arg(long, default_value_t = 0)]
    threads: usize,
    #[command(flatten)]
    timeline: TimelineArgs,
}

/// How the command ended.
enum Outcome {
    Success,
    KernelFailed,
    /// Stopped by Ctrl-C, the report so far printed (exit code 130, as a
    /// shell gives a process ended by SIGINT).
    Interrupted,
}

impl Outcome {
    fn failed_if(failed: bool) -> Outcome {
        if failed {
            Outcome::KernelFailed
        } else {
            Outcome::Success
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    let result = match cli.command {
        Command::Run(args) => run(args),
        Command::Check(args) => check(args),
        Command::Init(args) => init(args),
        Command::Annotate(args) => annotate(args),
        Command::Export(args) => export(args),
        Command::Litmus(args) => litmus(args),
        Command::Print { source } => print(source),
    };
    match result {
        Ok(Outcome::Success) => ExitCode::SUCCESS,
        Ok(Outcome::KernelFailed) => ExitCode::from(1),
        Ok(Outcome::Interrupted) => ExitCode::from(130),
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            let text = match error.downcast_ref::<warpsim_driver::InputError>() {
                Some(input) => input.render(),
                // Other errors may quote a command-line value of any length.
                None => warpsim_driver::long_lines::clip_message(&format!("error: {error:#}\n")),
            };
            let _ = std::io::stderr().write_all(text.as_bytes());
            ExitCode::from(2)
        }
    }
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .init();
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error
        .chain()
        .filter_map(|cause| cause.downcast_ref::<std::io::Error>())
        .any(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
}

fn run(args: RunArgs) -> anyhow::Result<Outcome> {
    check_host_threads(args.threads)?;
    let mut dumps = Vec::new();
    for spec in &args.dump {
        let (buffer, path) = spec
            .split_once('=')
            .with_context(|| format!("--dump {spec}: expected BUFFER=PATH"))?;
        dumps.push((buffer.to_string(), PathBuf::from(path)));
    }
    let prepared = if is_source(&args.launch) {
        prepare_command_line(&args.launch, &args.source_launch, &args.machine)?
    } else {
        refuse_launch_flags(&args.source_launch)?;
        prepare(&args.launch, &args.machine)?
    };
    let mut dump_indices = Vec::with_capacity(dumps.len());
    for (buffer, _) in &dumps {
        let Some(index) = prepared.buffer_index(buffer) else {
            anyhow::bail!("--dump {buffer}: the launch file has no buffer `{buffer}`");
        };
        dump_indices.push(index);
    }
    // Every output is opened before the run, so that a path that cannot be
    // written is an error now, not after a long run.
    let mut created = CreatedFiles::default();
    let json = JsonOutput::open(args.json.as_deref(), "report", &mut created)?;
    let timeline = args.timeline.open(&mut created)?;
    let mut dump_files = Vec::with_capacity(dumps.len());
    for ((buffer, path), index) in dumps.iter().zip(dump_indices) {
        let file = created
            .create(path)
            .with_context(|| format!("cannot write buffer `{buffer}` to {}", path.display()))?;
        dump_files.push((buffer, path, index, file));
    }
    let watch = Watch::start(&prepared, args.threads, args.keep_going);
    let options = args.timeline.run_options(args.threads);
    let executed = if args.check {
        prepared
            .check_with(options, &watch.control)
            .map(|(result, checked)| (result, Some(checked)))
    } else {
        prepared
            .execute_with(options, &watch.control)
            .map(|result| (result, None))
    };
    let interrupted = watch.finish();
    let (result, checked) = executed?;
    created.keep();
    // Reports and dumps are written even when the kernel failed: partial
    // counters are still counters.
    let json_on_stdout = json.write(|| result.report.to_json())?;
    write_printf_output(&result, json_on_stdout)?;
    if !json_on_stdout {
        let mut stdout = std::io::stdout().lock();
        let view = args
            .by
            .map_or_else(|| result.report.default_view(), TableBy::view);
        stdout.write_all(result.report.to_table_by(view).as_bytes())?;
        stdout.flush()?;
    }
    for (buffer, path, index, file) in dump_files {
        let format = warpsim_driver::dump::DumpFormat::for_path(path);
        result
            .write_buffer(index, format, &mut std::io::BufWriter::new(file))
            .with_context(|| format!("cannot write buffer `{buffer}` to {}", path.display()))?;
    }
    if let Some(timeline) = timeline {
        timeline.write(&prepared, &result)?;
    }
    if let Some(checked) = checked {
        std::io::stderr().write_all(checked.text.as_bytes())?;
        return Ok(interrupted_or(
            interrupted,
            Outcome::failed_if(checked.failed),
        ));
    }
    if let Some(failure) = &result.failure {
        std::io::stderr().write_all(failure.as_bytes())?;
    }
    Ok(interrupted_or(
        interrupted,
        Outcome::failed_if(result.failure.is_some()),
    ))
}

fn interrupted_or(interrupted: bool, outcome: Outcome) -> Outcome {
    if interrupted {
        Outcome::Interrupted
    } else {
        outcome
    }
}

/// Watches a launch while it runs: Ctrl-C stops it (the report so far is
/// still printed); on a terminal, stderr shows how many blocks have run;
/// and a launch that will take more than a minute says so, from the time
/// the first blocks to finish took.
struct Watch {
    control: std::sync::Arc<warpsim_driver::RunControl>,
    /// Dropped when the launch ends, which wakes the display at once.
    done: Option<std::sync::mpsc::Sender<()>>,
    display: Option<std::thread::JoinHandle<()>>,
}

/// How often the progress line is redrawn.
const PROGRESS_INTERVAL: std::time::Duration = std::time::Duration::from_millis(250);

/// A launch expected to take longer than this says so before it goes on.
const LONG_LAUNCH: std::time::Duration = std::time::Duration::from_secs(60);

impl Watch {
    fn start(
        prepared: &warpsim_driver::PreparedLaunch,
        host_threads: usize,
        keep_going: bool,
    ) -> Watch {
        use std::sync::atomic::Ordering;
        use std::sync::Arc;
        let control = Arc::new(warpsim_driver::RunControl {
            keep_going,
            ..Default::default()
        });
        let on_interrupt = Arc::clone(&control);
        // A second Ctrl-C ends the process at once. The handler can only be
        // set once per process, which is once per command.
        let _ = ctrlc::set_handler(move || {
            if on_interrupt.stop.swap(true, Ordering::Relaxed) {
                std::process::exit(130);
            }
        });
        let blocks: u64 = prepared
            .launch
            .grid
            .iter()
            .map(|&dim| u64::from(dim))
            .product();
        let threads = if host_threads == 0 {
            std::thread::available_parallelism().map_or(1, |count| count.get())
        } else {
            host_threads
        };
        let (done, finished) = std::sync::mpsc::channel::<()>();
        let watched = Arc::clone(&control);
        let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
        let display = std::thread::spawn(move || {
            let start = std::time::Instant::now();
            let mut estimated = false;
            let mut first_retired: Option<std::time::Duration> = None;
            let mut drawn = false;
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                finished.recv_timeout(PROGRESS_INTERVAL)
            {
                let run = watched.blocks_done.load(Ordering::Relaxed);
                let elapsed = start.elapsed();
                // Blocks run side by side, a wave of them retiring at about
                // the same time, so the first retirement says how long a
                // wave takes, not a block: the rate is read once as much
                // time again has passed, over a wave or more.
                if blocks > 1 && run >= 1 && first_retired.is_none() {
                    first_retired = Some(elapsed);
                }
                if !estimated && first_retired.is_some_and(|first| elapsed >= 2 * first) {
                    estimated = true;
                    let total = elapsed.as_secs_f64() * blocks as f64 / run as f64;
                    if total > LONG_LAUNCH.as_secs_f64() {
                        let _ = writeln!(
                            std::io::stderr(),
                            "{}warpsim: {run} of {blocks} blocks in {} on {threads} host thread{}: this launch will take about {} (Ctrl-C stops it and prints the report so far)",
                            if drawn { "\r\x1b[K" } else { "" },
                            duration_text(elapsed.as_secs_f64()),
                            if threads == 1 { "" } else { "s" },
                            duration_text(total)
                        );
                    }
                }
                if terminal && elapsed > std::time::Duration::from_secs(1) {
                    let percent = run as f64 * 100.0 / blocks as f64;
                    let cycles = watched.cycles.load(Ordering::Relaxed);
                    let rate = watched.warp_instructions.load(Ordering::Relaxed) as f64
                        / elapsed.as_secs_f64()
                        / 1e6;
                    let _ = write!(
                        std::io::stderr(),
                        "\r\x1b[Kwarpsim: {run} of {blocks} blocks ({percent:.1}%), {cycles} cycles, {rate:.1}M warp instructions/s"
                    );
                    drawn = true;
                }
            }
            if drawn {
                let _ = write!(std::io::stderr(), "\r\x1b[K");
            }
        });
        Watch {
            control,
            done: Some(done),
            display: Some(display),
        }
    }

    /// Stops the display; says whether the launch was interrupted.
    fn finish(mut self) -> bool {
        self.done.take();
        if let Some(display) = self.display.take() {
            let _ = display.join();
        }
        self.control.stop.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// A duration in the largest unit that reads well: `40 µs`, `850 ms`, `12 s`,
/// `3.5 min`, `2.0 h`, `41 days`.
fn duration_text(seconds: f64) -> String {
    if seconds < 1e-3 {
        format!("{:.0} µs", seconds * 1e6)
    } else if seconds < 1.0 {
        format!("{:.0} ms", seconds * 1e3)
    } else if seconds < 120.0 {
        format!("{seconds:.0} s")
    } else if seconds < 7200.0 {
        format!("{:.1} min", seconds / 60.0)
    } else if seconds < 3.0 * 86400.0 {
        format!("{:.1} h", seconds / 3600.0)
    } else {
        format!("{:.0} days", seconds / 86400.0)
    }
}

/// What the kernel printed, as the CUDA runtime prints it after the kernel:
/// on stdout before the report, or on stderr when the JSON report takes stdout.
fn write_printf_output(
    result: &warpsim_driver::RunResult,
    json_on_stdout: bool,
) -> anyhow::Result<()> {
    let text = &result.printed;
    if json_on_stdout {
        std::io::stderr().write_all(text)?;
    } else {
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(text)?;
        stdout.flush()?;
    }
    if result.report.printf_dropped_bytes > 0 {
        writeln!(
            std::io::stderr(),
            "warning: {} bytes of printf output did not fit the printf buffer (limits.printf_buffer_bytes) and were dropped",
            result.report.printf_dropped_bytes
        )?;
    }
    Ok(())
}

/// Refuses `--threads` above the number of threads the host can run at
/// once: more would only take turns on the same cores, and such a number is
/// more likely a mistake than a wish. 0 means all of them.
fn check_host_threads(threads: usize) -> anyhow::Result<()> {
    // Where the host cannot say, any number is taken.
    let Ok(available) = std::thread::available_parallelism() else {
        return Ok(());
    };
    if threads > available.get() {
        anyhow::bail!(
            "--threads {threads}: this host runs at most {available} threads at once (0 uses them all)"
        );
    }
    Ok(())
}

/// The output files this command created before running. Unless kept,
/// they are removed again when it drops (the launch could not run, or
/// another output could not be opened), so that a refused command leaves no
/// empty files behind.
#[derive(Default)]
struct CreatedFiles {
    paths: Vec<PathBuf>,
}

impl CreatedFiles {
    /// Creates (or truncates) the file at `path` for writing.
    fn create(&mut self, path: &Path) -> std::io::Result<std::fs::File> {
        let existed = path.exists();
        let file = std::fs::File::create(path)?;
        if !existed {
            self.paths.push(path.to_path_buf());
        }
        Ok(file)
    }

    /// The run has happened: the files stay, to be written.
    fn keep(mut self) {
        self.paths.clear();
    }
}

impl Drop for CreatedFiles {
    fn drop(&mut self) {
        for path in &self.paths {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Reads the machine configuration and prepares the launch.
fn prepare(launch: &Path, machine: &MachineArgs) -> anyhow::Result<warpsim_driver::PreparedLaunch> {
    let (config, config_file) = machine.read()?;
    Ok(warpsim_driver::prepare_with(
        launch,
        config,
        config_file.as_ref(),
    )?)
}

/// Where `--json` goes: nowhere, stdout (`-`), or a file opened before the
/// run.
enum JsonOutput {
    None,
    Stdout,
    File {
        path: String,
        file: std::fs::File,
        /// What the JSON is, for messages: "report", "findings".
        what: &'static str,
    },
}

impl JsonOutput {
    /// Opens the output `--json` (`json`) names; `what` names the JSON in errors.
    fn open(
        json: Option<&str>,
        what: &'static str,
        created: &mut CreatedFiles,
    ) -> anyhow::Result<JsonOutput> {
        Ok(match json {
            None => JsonOutput::None,
            Some("-") => JsonOutput::Stdout,
            Some(path) => JsonOutput::File {
                file: created
                    .create(Path::new(path))
                    .with_context(|| format!("cannot write the JSON {what} to {path}"))?,
                path: path.to_string(),
                what,
            },
        })
    }

    /// Writes the JSON `text`; returns whether it took stdout.
    fn write(self, text: impl FnOnce() -> String) -> anyhow::Result<bool> {
        match self {
            JsonOutput::None => Ok(false),
            JsonOutput::Stdout => {
                let mut stdout = std::io::stdout().lock();
                stdout.write_all(text().as_bytes())?;
                stdout.flush()?;
                Ok(true)
            }
            JsonOutput::File {
                path,
                mut file,
                what,
            } => {
                file.write_all(text().as_bytes())
                    .with_context(|| format!("cannot write the JSON {what} to {path}"))?;
                Ok(false)
            }
        }
    }
}

/// Writes the JSON (`json`) and then the diagnostics `text`: to stdout, or
/// to stderr when the JSON took stdout.
fn write_checked(
    json: JsonOutput,
    json_text: impl FnOnce() -> String,
    text: &str,
) -> anyhow::Result<()> {
    if json.write(json_text)? {
        std::io::stderr().write_all(text.as_bytes())?;
    } else {
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(text.as_bytes())?;
        stdout.flush()?;
    }
    Ok(())
}

/// Whether `path` is a kernel source rather than a launch file.
fn is_source(path: &Path) -> bool {
    path.extension()
        .is_some_and(|extension| extension == "kir" || extension == "ptx" || extension == "cu")
}

/// The launch flags belong to a source given on the command line.
fn refuse_launch_flags(flags: &LaunchArgs) -> anyhow::Result<()> {
    let given = flags.kernel.is_some()
        || flags.grid.is_some()
        || flags.block.is_some()
        || flags.shared_bytes != 0
        || !flags.args.is_empty();
    if given {
        anyhow::bail!(
            "--kernel, --grid, --block, --shared-bytes and --arg describe the launch of a source (`warpsim run FILE.cu --kernel K ...`); a launch file says all of that itself"
        );
    }
    Ok(())
}

/// Prepares the launch of a source given on the command line.
fn prepare_command_line(
    source: &Path,
    flags: &LaunchArgs,
    machine: &MachineArgs,
) -> anyhow::Result<warpsim_driver::PreparedLaunch> {
    let (config, config_file) = machine.read()?;
    let launch = warpsim_driver::CommandLineLaunch {
        source,
        kernel: flags.kernel.as_deref(),
        grid: flags.grid.as_ref().map_or(&[1][..], |dims| &dims.0),
        block: flags.block.as_ref().map_or(&[32][..], |dims| &dims.0),
        shared_bytes: flags.shared_bytes,
        args: &flags.args,
    };
    Ok(warpsim_driver::prepare_command_line(
        &launch,
        config,
        config_file.as_ref(),
    )?)
}

fn check(args: CheckArgs) -> anyhow::Result<Outcome> {
    if is_source(&args.input) {
        if args.timeline.path.is_some() {
            anyhow::bail!(
                "--timeline records a run: it needs a launch file, and a source alone is only checked statically"
            );
        }
        return check_source(&args.input, args.json.as_deref(), &args.machine);
    }
    check_host_threads(args.threads)?;
    let prepared = prepare(&args.input, &args.machine)?;
    let mut created = CreatedFiles::default();
    let json = JsonOutput::open(args.json.as_deref(), "report", &mut created)?;
    let timeline = args.timeline.open(&mut created)?;
    // A checker runs every block, past faults: the findings of all of them
    // are what it is for.
    let watch = Watch::start(&prepared, args.threads, true);
    let checked = prepared.check_with(args.timeline.run_options(args.threads), &watch.control);
    let interrupted = watch.finish();
    let (result, checked) = checked?;
    created.keep();
    write_checked(json, || result.report.to_json(), &checked.text)?;
    if let Some(timeline) = timeline {
        timeline.write(&prepared, &result)?;
    }
    Ok(interrupted_or(
        interrupted,
        Outcome::failed_if(checked.failed),
    ))
}

/// Reads a `.kir` or `.ptx` file: its name as shown, text and directory.
fn read_source(source: &Path) -> anyhow::Result<(String, String, PathBuf)> {
    let text = std::fs::read_to_string(source)
        .with_context(|| format!("cannot read {}", source.display()))?;
    let base_dir = source.parent().map(PathBuf::from).unwrap_or_default();
    let name = warpsim_driver::locations::display_path(source);
    Ok((name, text, base_dir))
}

/// The static check of every kernel of a source file, without running. A
/// `.cu` file is compiled first (for the machine's compute capability);
/// kernels are named as the source names them.
fn check_source(
    source: &Path,
    json: Option<&str>,
    machine: &MachineArgs,
) -> anyhow::Result<Outcome> {
    let (mut name, mut text, base_dir) = read_source(source)?;
    let mut cuda_names = Vec::new();
    if source
        .extension()
        .is_some_and(|extension| extension == "cu")
    {
        let (config, _) = machine.read()?;
        let architecture = warpsim_driver::nvrtc::architecture(config.device.compute_capability);
        let (module, _) = warpsim_driver::cuda::compile_file(source, architecture)?;
        cuda_names = module.ptx_names;
        name = module.ptx_name;
        text = module.ptx;
    }
    let (module, locations) = warpsim_driver::parse_and_locate(&name, &text, &base_dir)?;
    let mut sources = warpsim_driver::diagnostics::Sources::new(&base_dir);
    sources.add(&name, text);
    let mut out = String::new();
    let mut all = Vec::new();
    for kernel in &module.kernels {
        let divergent = warpsim_ir::uniformity::divergent_barriers(kernel);
        let findings =
            warpsim_driver::check::static_findings(&module, &locations, kernel, &divergent);
        for finding in &findings {
            out.push_str(&warpsim_driver::check::render_finding(
                finding,
                &mut sources,
            ));
        }
        let shown = cuda_names
            .iter()
            .find(|(_, ptx)| *ptx == kernel.name)
            .map_or(kernel.name.as_str(), |(cuda, _)| cuda.as_str());
        out.push_str(&warpsim_driver::check::summary(shown, &findings));
        all.extend(findings);
    }
    let mut created = CreatedFiles::default();
    let json = JsonOutput::open(json, "findings", &mut created)?;
    created.keep();
    write_checked(json, || warpsim_driver::report::json_text(&all), &out)?;
    // Static findings are warnings: they say what may happen, not what did.
    Ok(Outcome::Success)
}

/// `warpsim init FILE.cu`: a launch file per kernel, `KERNEL.toml`.
fn init(args: InitArgs) -> anyhow::Result<Outcome> {
    if args
        .source
        .extension()
        .is_none_or(|extension| extension != "cu")
    {
        anyhow::bail!(
            "{}: `warpsim init` reads a CUDA source (`.cu`)",
            args.source.display()
        );
    }
    let text = std::fs::read_to_string(&args.source)
        .with_context(|| format!("cannot read {}", args.source.display()))?;
    let kernels = warpsim_driver::cuda_source::kernels(&text);
    if kernels.is_empty() {
        anyhow::bail!("{}: no `__global__` function found", args.source.display());
    }
    let structs = warpsim_driver::cuda_source::structs(&text);
    let out_dir = match &args.out_dir {
        Some(dir) => dir.clone(),
        None => args.source.parent().map(PathBuf::from).unwrap_or_default(),
    };
    // The source as the launch file names it: relative to the launch file.
    let source = match args
        .source
        .canonicalize()
        .ok()
        .zip(out_dir.canonicalize().ok())
    {
        Some((source, dir)) => relative_path(&source, &dir),
        None => args.source.display().to_string(),
    };
    let mut stdout = std::io::stdout().lock();
    for kernel in &kernels {
        let path = out_dir.join(format!("{}.toml", kernel.name.replace("::", "_")));
        if path.exists() && !args.force {
            anyhow::bail!(
                "{} exists; --force replaces it",
                warpsim_driver::locations::display_path(&path)
            );
        }
        let text = warpsim_driver::launch_template::template(&source, kernel, &structs);
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        writeln!(
            stdout,
            "wrote {} (kernel `{}`)",
            warpsim_driver::locations::display_path(&path),
            kernel.name
        )?;
    }
    Ok(Outcome::Success)
}

/// `path` relative to the directory `base` (both absolute), with `..` steps.
fn relative_path(path: &Path, base: &Path) -> String {
    let path_parts: Vec<_> = path.components().collect();
    let base_parts: Vec<_> = base.components().collect();
    let common = path_parts
        .iter()
        .zip(&base_parts)
        .take_while(|(a, b)| a == b)
        .count();
    let mut relative = PathBuf::new();
    for _ in common..base_parts.len() {
        relative.push("..");
    }
    for part in &path_parts[common..] {
        relative.push(part);
    }
    relative.display().to_string()
}

/// Runs the kernel and prints its annotated source files; notes on files
/// that could not be shown and the kernel's failure go to stderr.
fn annotate(args: AnnotateArgs) -> anyhow::Result<Outcome> {
    check_host_threads(args.threads)?;
    let prepared = prepare(&args.launch, &args.machine)?;
    let watch = Watch::start(&prepared, args.threads, false);
    let options = warpsim_driver::RunOptions {
        host_threads: args.threads,
        ..Default::default()
    };
    let result = prepared.execute_with(options, &watch.control);
    let interrupted = watch.finish();
    let result = result?;
    let options = warpsim_driver::annotate::AnnotateOptions {
        file: args.file,
        width: args.width,
    };
    let annotation = warpsim_driver::annotate::annotate(&result.report, &options)?;
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(annotation.text.as_bytes())?;
    stdout.flush()?;
    let mut stderr = std::io::stderr().lock();
    for note in &annotation.notes {
        writeln!(stderr, "note: {note}")?;
    }
    if let Some(failure) = &result.failure {
        stderr.write_all(failure.as_bytes())?;
    }
    Ok(interrupted_or(
        interrupted,
        Outcome::failed_if(result.failure.is_some()),
    ))
}

fn export(args: ExportArgs) -> anyhow::Result<Outcome> {
    let prepared = prepare(&args.launch, &args.machine)?;
    let exported =
        warpsim_driver::export::export(&prepared, &args.out_dir).map_err(|error| match error {
            // Rendered with its source line, as every other command does.
            warpsim_driver::export::ExportError::Input(input) => anyhow::Error::from(input),
            other => anyhow::Error::from(other),
        })?;
    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "exported `{}` to {}: {} files",
        exported.kernel,
        args.out_dir.display(),
        exported.files.len()
    )?;
    for file in &exported.files {
        writeln!(stdout, "  {}", file.display())?;
    }
    Ok(Outcome::Success)
}

fn litmus(args: LitmusArgs) -> anyhow::Result<Outcome> {
    use warpsim_driver::litmus;
    let (config, _) = args.machine.read()?;
    let mut stdout = std::io::stdout().lock();
    let mut wrong = false;
    for path in &args.files {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let file = warpsim_litmus::parse_file(path, &text)?;
        for test in file.expand()? {
            if args
                .only
                .as_ref()
                .is_some_and(|only| !test.name.contains(only.as_str()))
            {
                continue;
            }
            let allowed =
                warpsim_litmus::allowed_outcomes(&test, args.model_bound).with_context(|| {
                    format!(
                        "{} ({}): the PTX model's checker",
                        test.name,
                        path.display()
                    )
                })?;
            let kernel = litmus::LitmusKernel::new(&test)?;
            let (seen, label) = if args.exhaustive {
                let seen = litmus::exhaustive(&kernel, &config, args.bound)?;
                let runs: u64 = seen.values().sum();
                (seen, format!("exhaustive: {runs} runs"))
            } else {
                let seed = config.memory.seed;
                let seen = litmus::explore(&kernel, &config, args.launches, seed)?;
                let runs: u64 = seen.values().sum();
                (
                    seen,
                    format!(
                        "explore: {runs} instances, seeds {} to {}",
                        seed,
                        seed + u64::from(args.launches.max(1)) - 1
                    ),
                )
            };
            let verdict = litmus::Verdict { seen, allowed };
            wrong |= !verdict.forbidden_seen().is_empty();
            writeln!(stdout, "{}", verdict.render(&test, &label))?;
        }
    }
    Ok(Outcome::failed_if(wrong))
}

fn print(source: PathBuf) -> anyhow::Result<Outcome> {
    // The printed form keeps the file names as written: it may be saved
    // beside the source.
    let (name, text, base_dir) = read_source(&source)?;
    let module = warpsim_driver::parse_source(&name, &text, &base_dir)?;
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(warpsim_ir::print_module(&module).as_bytes())?;
    Ok(Outcome::Success)
}
