//! Criterion benchmarks of the three kernels of `../shared/bench/oclgrind/`
//! at the same sizes (programs/bench): `translate` parses, verifies and
//! lowers each kernel; `execute` runs it on one host thread, two, and
//! every core.
//! Throughput is in warp instructions, so criterion prints warp
//! instructions per second.

use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

/// The allocator the `warpsim` binary ships with (`crates/warpsim/src/main.rs`
/// says why), so that in-process launches allocate and fault in their
/// register files as the command's do.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const KERNELS: [&str; 3] = ["transposeSmem", "reduceSequential", "fmaLoop"];

fn launch_path(kernel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../programs/bench")
        .join(format!("{kernel}.toml"))
}

fn translate(c: &mut Criterion) {
    let mut group = c.benchmark_group("translate");
    for kernel in KERNELS {
        let launch = launch_path(kernel);
        let source = launch.with_extension("kir");
        let text = std::fs::read_to_string(&source).expect("the benchmark source exists");
        group.bench_function(kernel, |b| {
            b.iter(|| {
                let module = warpsim_ir::parse_and_verify("bench.kir", &text).expect("it parses");
                let kernel = module.kernel(kernel).expect("the kernel exists");
                warpsim_machine::Program::lower(&module, kernel).expect("it lowers")
            })
        });
    }
    // Issue 3: parsing and lowering a 10,000-line PTX file must not dominate.
    // The corpus's reductions: the header once, the kernels repeated with
    // every kernel name prefixed by its copy, the debug sections once.
    let reductions = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../programs/corpus/reductions.ptx"),
    )
    .expect("the reductions PTX exists");
    let kernels_start = reductions.find(".visible .entry").expect("a kernel");
    let kernels_end = reductions
        .find("\t.file")
        .or_else(|| reductions.find("\t.section"))
        .unwrap_or(reductions.len());
    let (header, kernels, trailer) = (
        &reductions[..kernels_start],
        &reductions[kernels_start..kernels_end],
        &reductions[kernels_end..],
    );
    let names: Vec<&str> = kernels
        .split(".visible .entry ")
        .skip(1)
        .filter_map(|rest| rest.split('(').next())
        .collect();
    let mut renamed = header.to_string();
    let mut copy = 0;
    while renamed.lines().count() < 10_000 {
        let mut kernels = kernels.to_string();
        for name in &names {
            kernels = kernels.replace(name, &format!("copy{copy}_{name}"));
        }
        renamed.push_str(&kernels);
        copy += 1;
    }
    renamed.push_str(trailer);
    let lines = renamed.lines().count();
    group.bench_function(format!("ptx_{lines}_lines"), |b| {
        b.iter(|| {
            let module = warpsim_ir::parse_ptx("large.ptx", &renamed).expect("it parses");
            warpsim_ir::verify_module(&module).expect("it verifies");
            for index in 0..module.kernels.len() {
                warpsim_machine::Program::lower(&module, warpsim_ir::KernelId(index as u32))
                    .expect("it lowers");
            }
            module
        })
    });
    group.finish();
}

fn execute(c: &mut Criterion) {
    let mut group = c.benchmark_group("execute");
    group.sample_size(20);
    for kernel in KERNELS {
        let config = warpsim_driver::load_config(None).expect("the built-in machine");
        let prepared = warpsim_driver::prepare(&launch_path(kernel), config).expect("it prepares");
        let warp_instructions = prepared
            .execute(1)
            .expect("it runs")
            .report
            .totals
            .warp_instructions;
        group.throughput(Throughput::Elements(warp_instructions));
        for threads in host_thread_counts() {
            group.bench_with_input(
                BenchmarkId::new(kernel, threads),
                &threads,
                |b, &threads| b.iter(|| prepared.execute(threads).expect("it runs")),
            );
        }
    }
    group.finish();
}

/// One host thread, two, and every core the host has (issue 9 asks for
/// 12 times one thread's speed on 16 cores).
fn host_thread_counts() -> Vec<usize> {
    let cores = std::thread::available_parallelism().map_or(1, |cores| cores.get());
    let mut counts = vec![1, 2, cores];
    counts.sort_unstable();
    counts.dedup();
    counts
}

/// `run` against `check` (the static analysis, the run with the barrier,
/// initialization and race checkers' findings gathered, and their
/// rendering), side by side on one host thread: issue 4 asked that checking
/// cost at most twice running, and issue 10 that race checking cost at most
/// three times.
fn check(c: &mut Criterion) {
    let mut group = c.benchmark_group("check");
    group.sample_size(20);
    for kernel in KERNELS {
        let config = warpsim_driver::load_config(None).expect("the built-in machine");
        let prepared = warpsim_driver::prepare(&launch_path(kernel), config).expect("it prepares");
        group.bench_function(BenchmarkId::new(kernel, "run"), |b| {
            b.iter(|| prepared.execute(1).expect("it runs"))
        });
        group.bench_function(BenchmarkId::new(kernel, "check"), |b| {
            b.iter(|| prepared.check(1).expect("it runs"))
        });
    }
    group.finish();
}

criterion_group!(benches, translate, execute, check);
criterion_main!(benches);
