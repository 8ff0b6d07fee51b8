#!/usr/bin/env python3
"""Prepares the hardware validation launches for a GPU, and tabulates what the GPU did.

    python3 programs/timing/validation/validate.py export WORK [--launches FILE]
    (on the GPU machine: bash WORK/bundle/device.sh WORK/bundle RESULTS)
    python3 programs/timing/validation/validate.py table WORK RESULTS [--launches FILE] [--table CSV]

`export` runs, for each launch of launches.txt, `warpsim export` into
WORK/exports/NAME (NAME the launch file's name without `.toml`) and `warpsim
run --json --dump` for warpsim's own counters and final buffers
(WORK/warpsim/NAME.report.json and WORK/warpsim/NAME/), then packs what the
GPU machine needs into WORK/bundle: the exports as one xz-compressed tar
(identical buffer images stored once), launch.py, device.sh, and the SHA-256
of each of warpsim's final buffers, so that the GPU brings back only the
buffers that differ.

`table` reads what device.sh left in RESULTS (Nsight Compute's CSV, the
launches' summary, the hashes of the final buffers and those that differ
from warpsim's) and
writes programs/timing/hardware/h100-validation.csv: one row per launch with
its shape, the hardware's counters, warpsim's counters beside them, and
whether the outputs agree.

`--launches` names another list of launch files than launches.txt (as
holdout.txt lists the launches kept out of the calibration), and `--table`
another CSV to write.

Run from the repository's root, with target/release/warpsim built.
"""

import argparse
import array
import csv
import hashlib
import json
import lzma
import math
import os
import shutil
import statistics
import subprocess
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
WARPSIM = os.path.join(ROOT, "target", "release", "warpsim")
TABLE = os.path.join(ROOT, "programs", "timing", "hardware", "h100-validation.csv")

# The Nsight Compute metrics device.sh records, in the table's order, with
# the column each becomes.
METRICS = [
    ("gpc__cycles_elapsed.max", "gpc_cycles_elapsed_max"),
    ("sm__cycles_elapsed.max", "sm_cycles_elapsed_max"),
    ("sm__cycles_active.max", "sm_cycles_active_max"),
    ("sm__cycles_active.avg", "sm_cycles_active_avg"),
    ("smsp__inst_executed.sum", "warp_instructions"),
    ("launch__registers_per_thread", "registers"),
    ("launch__occupancy_limit_registers", "occupancy_limit_registers"),
    ("launch__occupancy_limit_shared_mem", "occupancy_limit_shared_mem"),
    ("launch__occupancy_limit_warps", "occupancy_limit_warps"),
    ("launch__occupancy_limit_blocks", "occupancy_limit_blocks"),
    ("launch__waves_per_multiprocessor", "waves_per_sm"),
    ("sm__warps_active.avg.pct_of_peak_sustained_active", "achieved_occupancy_pct"),
    ("dram__bytes_read.sum", "dram_bytes_read"),
    ("dram__bytes_write.sum", "dram_bytes_write"),
    ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "shared_load_wavefronts"),
    ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "shared_store_wavefronts"),
    ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum", "shared_atomic_wavefronts"),
    ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "global_load_sectors"),
    ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "global_store_sectors"),
    ("l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum", "global_atomic_sectors"),
    ("l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum", "global_reduction_sectors"),
    ("gpu__time_duration.sum", "duration_ns"),
    ("sm__cycles_elapsed.avg.per_second", "sm_hz"),
    ("dram__cycles_elapsed.avg.per_second", "dram_hz"),
]


# The metrics whose smallest and largest values over the repeats get
# columns of their own.
SPREAD = ("gpc__cycles_elapsed.max", "sm__cycles_active.max")


LAUNCHES = os.path.join(HERE, "launches.txt")


def launches():
    """The launch files of the list (launches.txt unless `--launches`),
    relative to the repository's root."""
    with open(LAUNCHES) as file:
        paths = [line.strip() for line in file if line.strip() and not line.startswith("#")]
    names = [os.path.splitext(os.path.basename(path))[0] for path in paths]
    if len(set(names)) != len(names):
        sys.exit(f"{LAUNCHES}: two launch files have the same name")
    return list(zip(names, paths))


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for piece in iter(lambda: file.read(1 << 20), b""):
            digest.update(piece)
    return digest.hexdigest()


def export(work):
    exports = os.path.join(work, "exports")
    expected = os.path.join(work, "warpsim")
    bundle = os.path.join(work, "bundle")
    for directory in (exports, expected, bundle):
        shutil.rmtree(directory, ignore_errors=True)
        os.makedirs(directory)
    hashes = {}
    for name, path in launches():
        out = os.path.join(exports, name)
        subprocess.run([WARPSIM, "export", path, out], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
        with open(os.path.join(out, "launch.json")) as file:
            description = json.load(file)
        dumps = os.path.join(expected, name)
        os.makedirs(dumps)
        command = [WARPSIM, "run", path, "--json", os.path.join(expected, name + ".report.json")]
        for buffer in description["buffers"]:
            command += ["--dump", f"{buffer['name']}={os.path.join(dumps, buffer['file'])}"]
        subprocess.run(command, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
        hashes[name] = {buffer["file"]: sha256(os.path.join(dumps, buffer["file"])) for buffer in description["buffers"]}
        print(f"exported {name}", file=sys.stderr)
    with open(os.path.join(bundle, "expected-hashes.json"), "w") as file:
        json.dump(hashes, file, indent=1)
    # Identical images (the same input in several launches) become hard
    # links, which tar stores once.
    seen = {}
    for name, _ in launches():
        directory = os.path.join(exports, name)
        for file_name in sorted(os.listdir(directory)):
            path = os.path.join(directory, file_name)
            key = (os.path.getsize(path), sha256(path))
            if key in seen:
                os.remove(path)
                os.link(seen[key], path)
            else:
                seen[key] = path
    with lzma.open(os.path.join(bundle, "exports.tar.xz"), "wb", preset=6) as compressed:
        with tarfile.open(fileobj=compressed, mode="w") as tar:
            tar.add(exports, arcname="exports")
    shutil.copy(os.path.join(ROOT, "programs", "timing", "hardware", "launch.py"), bundle)
    shutil.copy(os.path.join(HERE, "device.sh"), bundle)
    with open(os.path.join(bundle, "names.txt"), "w") as file:
        file.write("".join(name + "\n" for name, _ in launches()))
    with open(os.path.join(bundle, "metrics.txt"), "w") as file:
        file.write(",".join(metric for metric, _ in METRICS) + "\n")
    size = sum(os.path.getsize(os.path.join(bundle, f)) for f in os.listdir(bundle))
    print(f"bundle: {bundle}, {size / 2**20:.1f} MiB", file=sys.stderr)


def read_ncu(path):
    """Nsight Compute's raw page: one dict per profiled kernel, in launch order."""
    with open(path, newline="") as file:
        rows = [row for row in csv.reader(line for line in file if line.startswith('"'))]
    header, body = rows[0], rows[1:]
    # The row after the header gives units; kernels follow.
    kernels = [dict(zip(header, row)) for row in body if row and row[0] != ""]
    return sorted(kernels, key=lambda kernel: int(kernel["ID"]))


def number(text):
    """A metric's value as Nsight Compute prints it (thousands separators allowed)."""
    text = text.replace(",", "").strip()
    if text in ("", "n/a"):
        return None
    value = float(text)
    return int(value) if value.is_integer() else value


ELEMENT_FORMATS = {"f32": "f", "f64": "d", "i32": "i", "u32": "I", "i64": "q", "u64": "Q",
                   "i16": "h", "u16": "H", "i8": "b", "u8": "B"}


def compare(element, expected, actual):
    """How two buffers of `element` that are not bit-identical differ, in words."""
    code = ELEMENT_FORMATS.get(element)
    if code is None or len(expected) != len(actual):
        return f"differs ({len(expected)} and {len(actual)} bytes)"
    a, b = array.array(code, expected), array.array(code, actual)
    different = [(x, y) for x, y in zip(a, b) if x != y and not (x != x and y != y)]
    if element in ("f32", "f64"):
        # Units in the last place: the distance between the two values'
        # bit patterns, for values of one sign.
        bits = array.array("i" if element == "f32" else "q")
        differing_bits = array.array(code, [value for pair in different for value in pair]).tobytes()
        bits.frombytes(differing_bits)
        ulps = max((abs(bits[2 * k] - bits[2 * k + 1]) for k in range(len(different))), default=0)
        worst = max(
            (abs(x - y) / max(abs(x), 1e-30) for x, y in different if math.isfinite(x) and math.isfinite(y)),
            default=0.0,
        )
        return (f"{len(different)} of {len(a)} elements differ, by at most {ulps} units in the last place "
                f"(relative error at most {worst:.2e})")
    return f"{len(different)} of {len(a)} elements differ"


def outputs_agree(work, name, description, results):
    """Whether the GPU's final buffers are warpsim's, in words."""
    with open(os.path.join(work, "bundle", "expected-hashes.json")) as file:
        expected = json.load(file)[name]
    with open(os.path.join(results, "hashes.json")) as file:
        actual = json.load(file).get(name)
    if actual is None:
        return "no output from the GPU"
    differences = []
    for buffer in description["buffers"]:
        file_name = buffer["file"]
        if expected[file_name] == actual.get(file_name):
            continue
        returned = os.path.join(results, "dumps", name, file_name)
        if not os.path.exists(returned):
            differences.append(f"{buffer['name']}: differs (by its hash; too large to bring back)")
            continue
        with open(os.path.join(work, "warpsim", name, file_name), "rb") as file:
            ours = file.read()
        with open(returned, "rb") as file:
            theirs = file.read()
        differences.append(f"{buffer['name']}: {compare(buffer['element'], ours, theirs)}")
    return "identical" if not differences else "; ".join(differences)


def table(work, results):
    if not os.path.isdir(os.path.join(results, "dumps")) and os.path.exists(os.path.join(results, "dumps.tar.xz")):
        with tarfile.open(os.path.join(results, "dumps.tar.xz")) as tar:
            tar.extractall(results, filter="data")
    kernels = read_ncu(os.path.join(results, "ncu.csv"))
    with open(os.path.join(results, "summary.json")) as file:
        summary = json.load(file)
    names = launches()
    # Each launch was profiled `repeats` times in a row (launch.py --repeat).
    repeats = len(kernels) // len(names)
    if repeats == 0 or len(kernels) != repeats * len(names):
        sys.exit(f"{len(kernels)} kernels profiled, {len(names)} launches")
    rows = []
    for index, ((name, path), launch) in enumerate(zip(names, summary["launches"])):
        profiled = kernels[index * repeats : (index + 1) * repeats]
        with open(os.path.join(work, "exports", name, "launch.json")) as file:
            description = json.load(file)
        for kernel in profiled:
            # Nsight Compute names C++ kernels demangled, with their signature.
            if description["kernel_name"].split("<")[0] not in kernel["Kernel Name"]:
                sys.exit(f"{name}: profiled kernel {kernel['Kernel Name']!r} is not {description['kernel_name']!r}")
        with open(os.path.join(work, "warpsim", name + ".report.json")) as file:
            report = json.load(file)
        totals = report["totals"]
        row = {
            "name": name,
            "launch": path,
            "kernel": description["kernel_name"],
            "grid": "x".join(str(d) for d in description["grid"]),
            "block": "x".join(str(d) for d in description["block"]),
            "blocks": math.prod(description["grid"]),
            "threads_per_block": math.prod(description["block"]),
            "dynamic_shared_bytes": description["dynamic_shared_bytes"],
            "static_shared_bytes": launch.get("static_shared_bytes"),
            "local_bytes": launch.get("local_bytes"),
            # What the JIT says the kernel uses; `registers` below is what a
            # launch allocates per thread.
            "ptxas_registers": launch.get("registers"),
        }
        row["repeats"] = repeats
        # Each metric's median over the repeats; the spread of the cycles.
        for metric, column in METRICS:
            values = [number(kernel[metric]) for kernel in profiled]
            row[column] = statistics.median(values) if None not in values else None
            if metric in SPREAD:
                row[column + "_min"] = min(values)
                row[column + "_max"] = max(values)
        row["warpsim_warp_instructions"] = totals["warp_instructions"]
        for kind in ("load", "store", "atomic"):
            row[f"warpsim_shared_{kind}_wavefronts"] = totals[f"shared_{kind}"]["wavefronts"]
        for kind in ("load", "store", "atomic"):
            row[f"warpsim_global_{kind}_sectors"] = totals[f"global_{kind}"]["sectors"]
        row["outputs"] = outputs_agree(work, name, description, results)
        rows.append(row)
    with open(TABLE, "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {TABLE}: {len(rows)} launches on {summary['device']['name']}", file=sys.stderr)


def main():
    global LAUNCHES, TABLE
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["export", "table"])
    parser.add_argument("work")
    parser.add_argument("results", nargs="?")
    parser.add_argument("--launches", default=LAUNCHES, help="the list of launch files (default: %(default)s)")
    parser.add_argument("--table", default=TABLE, help="the CSV that `table` writes (default: %(default)s)")
    args = parser.parse_args()
    LAUNCHES, TABLE = os.path.abspath(args.launches), os.path.abspath(args.table)
    if args.command == "export" and args.results is None:
        export(os.path.abspath(args.work))
    elif args.command == "table" and args.results is not None:
        table(os.path.abspath(args.work), os.path.abspath(args.results))
    else:
        parser.error("export WORK, or table WORK RESULTS")


if __name__ == "__main__":
    main()
