#!/usr/bin/env python3
"""Runs the microbenchmarks of programs/timing/ on a GPU, from the same launch
files and PTX that warpsim runs, and turns what they measure into
h100-micro.csv.

On the GPU machine (CuPy and ncu there; README.md gives the whole sequence):

    python3 micro.py timed --cubins DIR --clock-cubin clock-rate.cubin --out timed.csv
    ncu --csv --print-units base --metrics ... --kernel-name regex:... \\
        python3 micro.py ncu --cubins DIR --out ncu-clocks.csv

and then, anywhere:

    python3 micro.py merge --timed timed.csv --ncu ncu.csv --ncu-clocks ncu-clocks.csv \\
        --sass sass-loops.csv --out h100-micro.csv

DIR holds NAME.cubin for every NAME.ptx of programs/timing/, compiled by
ptxas for sm_90, so that the GPU runs the very PTX that warpsim runs. The
`timed` pass launches every benchmark once to warm up and then REPEAT times
(the median of the kernel's own cycles is kept), then BURST times back to
back to time it with CUDA events, and measures the SM clock after each with
clock-rate.cubin; the `ncu` pass launches every benchmark exactly once, for
Nsight Compute to profile, and records the kernel's own clocks under ncu's
clock control. Benchmarks named NAME@VARIANT are hardware-only variants of
the launch file NAME.toml with other arguments or buffer sizes (a larger
working set than warpsim should allocate).
"""
import argparse
import csv
import os
import re
import statistics
import sys
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
TIMING = os.path.dirname(HERE)

# What one iteration of each kernel's timed loop does, per warp: the number of
# units and their name. `chain` units count along one dependent chain (the
# per-unit figure is a latency); `warp` units count warp instructions of all
# warps of the block (the per-unit figure is SM-wide cycles per warp
# instruction); `step` units are the global chase's loads; `byte` units are
# bytes copied (read and written).
UNITS = {
    "fmaDependent": (16, "chain", "dependent FFMA"),
    "fmaIndependent4": (32, "warp", "warp FFMA"),
    "fmaIndependent8": (32, "warp", "warp FFMA"),
    "ex2Dependent": (16, "chain", "dependent MUFU.EX2"),
    "ex2Independent": (32, "warp", "warp MUFU.EX2"),
    "rsqrtDependent": (16, "chain", "dependent MUFU.RSQ"),
    "rsqrtIndependent": (32, "warp", "warp MUFU.RSQ"),
    "dfmaDependent": (16, "chain", "dependent DFMA"),
    "dfmaIndependent": (32, "warp", "warp DFMA"),
    "imadDependent": (16, "chain", "dependent IMAD"),
    "shiftDependent": (16, "chain", "dependent SHF"),
    "logicDependent": (16, "chain", "dependent LOP3"),
    "mixDependent": (16, "chain", "dependent integer op"),
    "mixIndependent": (32, "warp", "warp integer op"),
    "sharedChase": (8, "chain", "dependent LDS"),
    "sharedLoads": (8, "warp", "warp LDS"),
    "syncthreadsLoop": (8, "chain", "barrier"),
    "globalChase": (1, "step", "dependent LDG"),
    "copyFloat4": (1, "byte", "byte copied"),
}

# The units that one pass through the timed SASS loop body does (ptxas or
# the source may unroll it further than one iteration): the global chase's
# loop is unrolled 4 times, and one pass of the copy's loop moves 1,024 bytes
# per warp (a float4 read and written by each of 32 threads).
LOOP_UNITS = {"globalChase": 4, "copyFloat4": 1024}

MIB = 1 << 20
WORDS_PER_MIB = MIB // 4

# Hardware-only variants: NAME@VARIANT -> (launch file, argument overrides
# by position, buffer lengths by name).
VARIANTS = {
    "global-chase_l2@16MiB": ("global-chase_l2", {3: 16 * WORDS_PER_MIB - 1, 6: 131072, 7: 131072}, {"buffer": 16 * WORDS_PER_MIB}),
    "global-chase_l2@32MiB": ("global-chase_l2", {3: 32 * WORDS_PER_MIB - 1, 6: 262144, 7: 262144}, {"buffer": 32 * WORDS_PER_MIB}),
    "global-chase_dram@256MiB": ("global-chase_dram", {3: 256 * WORDS_PER_MIB - 1, 4: 65536}, {"buffer": 256 * WORDS_PER_MIB}),
    "global-chase_dram@1GiB": ("global-chase_dram", {3: 1024 * WORDS_PER_MIB - 1, 4: 262144}, {"buffer": 1024 * WORDS_PER_MIB}),
    "copy_64mib@256MiB": ("copy_64mib", {3: 16 * MIB}, {"destination": 64 * MIB, "source": 64 * MIB}),
}

# Launches whose timed lines must come from DRAM: the L2 is flushed (a
# 256 MiB buffer written) before every launch of these.
FLUSH_L2 = ("global-chase_dram",)


def benchmarks():
    """Every benchmark, in the order they run: the launch files, then the variants."""
    names = sorted(f[:-5] for f in os.listdir(TIMING) if f.endswith(".toml"))
    return names + list(VARIANTS)


def load(name):
    """The launch of a benchmark: its TOML with the variant's overrides applied."""
    launch, arg_overrides, buffer_overrides = VARIANTS.get(name, (name, {}, {}))
    with open(os.path.join(TIMING, launch + ".toml"), "rb") as file:
        spec = tomllib.load(file)
    for position, value in arg_overrides.items():
        spec["args"][position] = value
    for buffer, length in buffer_overrides.items():
        spec["buffers"][buffer]["len"] = length
    spec["launch"] = launch
    spec["overrides"] = "; ".join(
        [f"arg {position} = {value}" for position, value in arg_overrides.items()]
        + [f"{buffer}.len = {length}" for buffer, length in buffer_overrides.items()]
    )
    return spec


def parameter_types(ptx_path, kernel):
    """The PTX types of a kernel's parameters, in order (`u64`, `f32`, ...)."""
    text = open(ptx_path).read()
    match = re.search(r"\.entry\s+" + re.escape(kernel) + r"\s*\((.*?)\)", text, re.S)
    if not match:
        sys.exit(f"{ptx_path}: no kernel {kernel}")
    return re.findall(r"\.param\s+\.(\w+)", match.group(1))


def dims(value):
    """A launch file's grid or block as a 3-tuple."""
    value = list(value) + [1] * (3 - len(value))
    return tuple(value)


class Runner:
    """Launches benchmarks with CuPy, from cubins compiled from the committed PTX."""

    def __init__(self, cubins, clock_cubin=None):
        import cupy
        import numpy

        self.cupy = cupy
        self.numpy = numpy
        self.cubins = cubins
        self.modules = {}
        self.clock = None
        if clock_cubin:
            self.clock = cupy.RawModule(path=clock_cubin).get_function("clockRate")
            self.clock_out = cupy.zeros(2, dtype=cupy.uint64)
        self.flush_buffer = None

    def function(self, source, kernel):
        stem = source[:-4]
        if stem not in self.modules:
            self.modules[stem] = self.cupy.RawModule(path=os.path.join(self.cubins, stem + ".cubin"))
        return self.modules[stem].get_function(kernel)

    def buffers(self, spec):
        cupy = self.cupy
        types = {"u8": cupy.uint8, "u16": cupy.uint16, "u32": cupy.uint32, "u64": cupy.uint64,
                 "i8": cupy.int8, "i16": cupy.int16, "i32": cupy.int32, "i64": cupy.int64,
                 "f32": cupy.float32, "f64": cupy.float64}
        made = {}
        for name, buffer in spec["buffers"].items():
            dtype = types[buffer["type"]]
            init = buffer.get("init", "zero")
            length = buffer["len"]
            if init == "zero":
                array = cupy.zeros(length, dtype=dtype)
            elif init == "iota":
                array = cupy.arange(length, dtype=dtype)
            elif isinstance(init, dict) and "fill" in init:
                array = cupy.full(length, init["fill"], dtype=dtype)
            elif isinstance(init, dict) and "random" in init:
                # Random values of another generator than warpsim's: only
                # their time matters here, not their values.
                cupy.random.seed(init["random"])
                array = cupy.random.random(length, dtype=cupy.float32).astype(dtype)
            else:
                sys.exit(f"{name}: unsupported init {init!r}")
            made[name] = array
        return made

    def arguments(self, spec, buffers):
        numpy = self.numpy
        types = parameter_types(os.path.join(TIMING, spec["source"]), spec["kernel"])
        scalar = {"u32": numpy.uint32, "s32": numpy.int32, "u64": numpy.uint64, "s64": numpy.int64,
                  "f32": numpy.float32, "f64": numpy.float64}
        values = []
        for value, ptx_type in zip(spec["args"], types):
            if isinstance(value, str):
                values.append(buffers[value])
            else:
                values.append(scalar[ptx_type](value))
        return tuple(values)

    def flush_l2(self):
        """Writes 256 MiB, five times the L2, so that nothing chased before stays in it."""
        if self.flush_buffer is None:
            self.flush_buffer = self.cupy.zeros(64 * MIB, dtype=self.cupy.uint32)
        self.flush_buffer.fill(1)
        self.cupy.cuda.Device().synchronize()

    def launch(self, name, spec, buffers):
        """One launch, waited for."""
        cupy = self.cupy
        if spec["launch"] in FLUSH_L2:
            self.flush_l2()
        buffers["clocks"].fill(0)
        function = self.function(spec["source"], spec["kernel"])
        function(dims(spec["grid"]), dims(spec["block"]), self.arguments(spec, buffers),
                 shared_mem=spec.get("shared_bytes", 0))
        cupy.cuda.Device().synchronize()

    def burst(self, spec, buffers, count):
        """The mean duration of `count` launches queued back to back, in
        microseconds by CUDA events: unlike one launch timed alone, this
        leaves out the host's time to launch (tens of microseconds from
        Python), as long as a launch lasts longer than it takes to queue one.
        The L2 is not flushed between them."""
        cupy = self.cupy
        function = self.function(spec["source"], spec["kernel"])
        arguments = self.arguments(spec, buffers)
        start = cupy.cuda.Event()
        stop = cupy.cuda.Event()
        start.record()
        for _ in range(count):
            function(dims(spec["grid"]), dims(spec["block"]), arguments, shared_mem=spec.get("shared_bytes", 0))
        stop.record()
        stop.synchronize()
        return cupy.cuda.get_elapsed_time(start, stop) * 1000.0 / count

    def sm_mhz(self):
        """The SM clock now, by clock64() cycles over %globaltimer nanoseconds."""
        self.clock((1,), (1,), (self.clock_out, self.numpy.int64(20_000_000)))
        self.cupy.cuda.Device().synchronize()
        cycles, nanoseconds = (int(x) for x in self.clock_out.get())
        return cycles / nanoseconds * 1000.0


def block_cycles(spec, clocks):
    """The block's cycles: max end - max start over its warps (for the copy,
    the longest block's own span, since SMs' clocks differ).

    The latest start, not the earliest: each warp reads its start clock right
    after a __syncthreads(), but on an H100 that read does not wait for the
    barrier to open (BAR.SYNC.DEFER_BLOCKING), so a warp that reached the
    barrier early reads an early clock (the starts of a 32-warp FFMA block
    spread over 28,000 cycles). The last warp to arrive reads its clock as the
    barrier opens, which is when the timed run really starts."""
    pairs = [(int(clocks[2 * i]), int(clocks[2 * i + 1])) for i in range(len(clocks) // 2)]
    if spec["kernel"] == "copyFloat4":
        return max(end - start for start, end in pairs)
    return max(end for _, end in pairs) - max(start for start, _ in pairs)


def clock_spreads(clocks):
    """How far apart the warps' start clocks are, and their end clocks (max - min)."""
    starts = [int(clocks[2 * i]) for i in range(len(clocks) // 2)]
    ends = [int(clocks[2 * i + 1]) for i in range(len(clocks) // 2)]
    return max(starts) - min(starts), max(ends) - min(ends)


def units(spec):
    """How many of the kernel's units the timed region does, and their name."""
    per_iteration, kind, name = UNITS[spec["kernel"]]
    args = spec["args"]
    threads = 1
    for extent in dims(spec["block"]):
        threads *= extent
    warps = (threads + 31) // 32
    if kind == "chain":
        return args[2] * per_iteration, name
    if kind == "warp":
        return warps * args[2] * per_iteration, name
    if kind == "step":
        return args[7], name
    return 2 * 16 * args[3], name


def run_timed(options):
    runner = Runner(options.cubins, options.clock_cubin)
    # Bring the clock up before anything is measured.
    for _ in range(20):
        runner.sm_mhz()
    rows = []
    for name in benchmarks():
        spec = load(name)
        buffers = runner.buffers(spec)
        runner.launch(name, spec, buffers)
        cycles = []
        spreads = []
        for _ in range(options.repeat):
            runner.launch(name, spec, buffers)
            clocks = buffers["clocks"].get()
            cycles.append(block_cycles(spec, clocks))
            spreads.append(clock_spreads(clocks))
        time_us = runner.burst(spec, buffers, options.burst)
        mhz = runner.sm_mhz()
        count, unit = units(spec)
        median = statistics.median(cycles)
        if spec["kernel"] == "copyFloat4":
            # The copy's figure is the kernel's duration in SM cycles.
            median = round(time_us * mhz)
        rows.append({
            "name": name, "launch": spec["launch"], "overrides": spec["overrides"],
            "kernel": spec["kernel"], "grid": dims(spec["grid"])[0], "block": dims(spec["block"])[0],
            "clock_cycles": median, "clock_cycles_min": min(cycles), "clock_cycles_max": max(cycles),
            "units": count, "unit": unit, "cycles_per_unit": median / count,
            "time_us": round(time_us, 3), "sm_mhz": round(mhz, 1),
            "start_spread": statistics.median(spread[0] for spread in spreads),
            "end_spread": statistics.median(spread[1] for spread in spreads),
        })
        print(f"{name:34} {median:>12} cycles  {median / count:10.3f} per {unit:22} {time_us:10.1f} us  {mhz:6.0f} MHz", flush=True)
        del buffers
        runner.cupy.get_default_memory_pool().free_all_blocks()
    with open(options.out, "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def run_ncu(options):
    """One launch per benchmark, in order, for ncu; records the kernels' own clocks under ncu."""
    runner = Runner(options.cubins)
    rows = []
    for name in benchmarks():
        spec = load(name)
        buffers = runner.buffers(spec)
        runner.launch(name, spec, buffers)
        rows.append({"name": name, "kernel": spec["kernel"], "ncu_clock_cycles": block_cycles(spec, buffers["clocks"].get())})
        print(f"{name:34} {rows[-1]['ncu_clock_cycles']:>12} cycles under ncu", flush=True)
        del buffers
        runner.cupy.get_default_memory_pool().free_all_blocks()
    with open(options.out, "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


NCU_METRICS = {
    "sm__cycles_active.max": "ncu_sm_cycles_active_max",
    "sm__cycles_elapsed.max": "ncu_sm_cycles_elapsed_max",
    "gpc__cycles_elapsed.max": "ncu_gpc_cycles_elapsed_max",
    "smsp__inst_executed.sum": "ncu_inst_executed",
    "sm__cycles_elapsed.avg.per_second": "ncu_sm_hz",
    "dram__bytes_read.sum": "ncu_dram_bytes_read",
    "dram__bytes_write.sum": "ncu_dram_bytes_write",
    "gpu__time_duration.sum": "ncu_duration_ns",
}


def uncommented(path):
    """The lines of a file but those starting with `#` (each file's first line says what it is)."""
    return [line for line in open(path) if not line.startswith("#")]


def read_ncu(path):
    """ncu's --csv output: {launch index: {metric: value}} for the profiled kernels, in order."""
    lines = [line for line in open(path) if line.startswith('"')]
    launches = {}
    for record in csv.DictReader(lines):
        index = int(record["ID"])
        value = record["Metric Value"].replace(",", "")
        launches.setdefault(index, {"kernel": record["Kernel Name"]})[record["Metric Name"]] = value
    return [launches[index] for index in sorted(launches)]


def read_sass(path):
    """sass-loops.py's output: {function: (instructions in the timed loop, opcodes)}."""
    loops = {}
    for record in csv.DictReader(uncommented(path)):
        if record["timed"] == "yes":
            loops[record["function"]] = (int(record["instructions"]), record["opcodes"])
    return loops


def merge(options):
    timed = list(csv.DictReader(uncommented(options.timed)))
    ncu_clocks = list(csv.DictReader(uncommented(options.ncu_clocks)))
    profiled = read_ncu(options.ncu)
    sass = read_sass(options.sass)
    if len(profiled) != len(ncu_clocks):
        sys.exit(f"{len(profiled)} kernels profiled, {len(ncu_clocks)} launched")
    by_name = {row["name"]: (row, metrics) for row, metrics in zip(ncu_clocks, profiled)}
    fields = ["name", "launch", "overrides", "kernel", "grid", "block", "clock_cycles", "units", "unit",
              "cycles_per_unit", "clock_cycles_min", "clock_cycles_max", "start_spread", "end_spread", "time_us", "sm_mhz",
              "sass_loop_instructions", "units_per_sass_loop", "sass_loop_opcodes",
              "ncu_clock_cycles"] + list(NCU_METRICS.values())
    rows = []
    for row in timed:
        clocks, metrics = by_name[row["name"]]
        if metrics["kernel"] != row["kernel"]:
            sys.exit(f"{row['name']}: ncu profiled {metrics['kernel']}")
        out = {key: row[key] for key in fields if key in row}
        out["cycles_per_unit"] = f"{float(row['cycles_per_unit']):.6g}"
        instructions, opcodes = sass.get(row["kernel"], ("", ""))
        per_iteration, kind, _ = UNITS[row["kernel"]]
        out["sass_loop_instructions"] = instructions
        out["units_per_sass_loop"] = LOOP_UNITS.get(row["kernel"], per_iteration)
        out["sass_loop_opcodes"] = opcodes
        out["ncu_clock_cycles"] = clocks["ncu_clock_cycles"]
        for metric, column in NCU_METRICS.items():
            out[column] = metrics.get(metric, "")
        rows.append(out)
    with open(options.out, "w", newline="") as file:
        file.write("# The microbenchmarks of programs/timing/ measured on an H100 SXM by hardware/micro.py: the kernels' own clock64() cycles "
                   "(median of the timed launches at the running clock), per unit of work, the timed SASS loop, and Nsight Compute's counters "
                   "(at its base-clock lock); README.md explains every column.\n")
        writer = csv.DictWriter(file, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def kernels(options):
    """Prints the regular expression of ncu's --kernel-name that selects the benchmarks' kernels."""
    print("regex:^(" + "|".join(UNITS) + ")$")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    timed = commands.add_parser("timed", help="time every benchmark by its own clocks")
    timed.add_argument("--cubins", required=True)
    timed.add_argument("--clock-cubin", required=True)
    timed.add_argument("--repeat", type=int, default=5)
    timed.add_argument("--burst", type=int, default=10)
    timed.add_argument("--out", required=True)
    ncu = commands.add_parser("ncu", help="launch every benchmark once, under ncu")
    ncu.add_argument("--cubins", required=True)
    ncu.add_argument("--out", required=True)
    merged = commands.add_parser("merge", help="join the timed pass, ncu's counters and the SASS into one table")
    merged.add_argument("--timed", required=True)
    merged.add_argument("--ncu", required=True)
    merged.add_argument("--ncu-clocks", required=True)
    merged.add_argument("--sass", required=True)
    merged.add_argument("--out", required=True)
    commands.add_parser("kernels", help="print ncu's --kernel-name filter for the benchmarks' kernels")
    options = parser.parse_args()
    {"timed": run_timed, "ncu": run_ncu, "merge": merge, "kernels": kernels}[options.command](options)


if __name__ == "__main__":
    main()
