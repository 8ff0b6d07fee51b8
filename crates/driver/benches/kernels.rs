//! Criterion benchmarks of the three kernels of `../shared/bench/oclgrind/`
//! at the same sizes (programs/bench): `translate` parses, verifies and
//! lowers each kernel; `execute` runs it on one and on two host threads.
//! Throughput is in warp instructions, so criterion prints warp
//! instructions per second.

use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

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
        for threads in [1, 2] {
            group.bench_with_input(
                BenchmarkId::new(kernel, threads),
                &threads,
                |b, &threads| b.iter(|| prepared.execute(threads).expect("it runs")),
            );
        }
    }
    group.finish();
}

criterion_group!(benches, translate, execute);
criterion_main!(benches);
