#!/usr/bin/env python3
"""Compares warpsim's cycles with the H100's for the hardware validation launches.

    python3 programs/timing/validation/compare.py [--markdown docs/timing.md] [--only NAME ...]

For every launch of programs/timing/hardware/h100-validation.csv (the 53
launches of launches.txt, measured with Nsight Compute), runs

    target/release/warpsim run LAUNCH --json - --threads 2

from the repository's root (each with a time limit; failures are reported
and left out of the statistics) and sets warpsim's figures beside the
hardware's:

- hardware: `sm_cycles_active_max` (`sm__cycles_active.max`, the busiest
  SM's cycles with a block resident: the kernel's cycles for the
  comparison, without the launch overhead) and, for reference,
  `gpc_cycles_elapsed_max` (`gpc__cycles_elapsed.max`, which includes about
  3,000 cycles of launch overhead before the first block);
- warpsim: `cycles` (first block launch to last block end) and
  `busiest_sm_cycles` (the busiest SM's active cycles);
- the signed error of `busiest_sm_cycles` against `sm_cycles_active_max`,
  in percent;
- warp instructions on both sides (warpsim's PTX, `totals.warp_instructions`;
  the hardware's SASS, `smsp__inst_executed.sum`) and their ratio PTX/SASS.

Launches are classed by their number of blocks (the CSV's `blocks`):
single-SM if the grid is one block, full-GPU if it has at least 132 blocks
(the H100's SMs), small-grid otherwise (2 to 16 blocks here, one block per
SM). Per class and overall: the mean absolute percentage error (MAPE), the
median and largest absolute error, the mean signed error, and Pearson's
correlation of warpsim's `busiest_sm_cycles` with `sm_cycles_active_max`,
on the raw cycles and on their natural logarithms. The same statistics are
given for warpsim's cycles normalised by the instruction-count ratio,
`busiest_sm_cycles × SASS instructions / PTX instructions`: a diagnostic
only, showing how much of the error comes from the PTX that warpsim issues
having more or fewer instructions than the SASS the GPU ran.

Notes follow the tables where warpsim's run does not match the CSV's
launch: blocks per SM other than the hardware's occupancy limit (the least
of the CSV's `occupancy_limit_*`), or warp instructions other than the
`warpsim_warp_instructions` recorded when the hardware was measured.

Prints plain-text tables to stdout. `--markdown PATH` also rewrites the
part of PATH between the lines `<!-- validation table start -->`
and `<!-- validation table end -->` with the tables in Markdown (PATH must
already hold both markers). Python 3 standard library only.
"""

import argparse
import csv
import json
import math
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
TABLE = os.path.join(ROOT, "programs", "timing", "hardware", "h100-validation.csv")
WARPSIM = os.path.join("target", "release", "warpsim")
START = "<!-- validation table start -->"
END = "<!-- validation table end -->"
SMS = 132

# The targets of issue 9.
TARGET_MAPE = {"single-SM": 15.0, "full-GPU": 25.0}
TARGET_CORRELATION = 0.95

CLASSES = ("single-SM", "small-grid", "full-GPU")


def classify(blocks):
    """The launch's class from its number of blocks (the rule of the docstring)."""
    if blocks <= 1:
        return "single-SM"
    if blocks >= SMS:
        return "full-GPU"
    return "small-grid"


def read_table(path):
    with open(path, newline="") as file:
        return list(csv.DictReader(file))


def run_warpsim(warpsim, launch, threads, timeout, wait, config=None):
    """warpsim's JSON report of one launch, or (None, why it failed)."""
    binary = os.path.join(ROOT, warpsim)
    # The binary may be in the middle of being rebuilt: wait for it a while.
    waited = 0
    while not os.path.exists(binary) and waited < wait:
        time.sleep(10)
        waited += 10
    command = [warpsim, "run", launch, "--json", "-", "--threads", str(threads)]
    if config:
        command += ["--config", config]
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s"
    except OSError as error:
        return None, f"could not run {warpsim}: {error}"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        return None, f"exit status {done.returncode}: {last}"
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError as error:
        return None, f"unreadable JSON: {error}"
    if report.get("status") != "ok":
        return None, f"status {report.get('status')}: {report.get('error')}"
    return report, None


def pearson(xs, ys):
    if len(xs) < 3:
        return None
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def statistics_of(rows, key):
    """Error statistics of warpsim's figure `key` of each row against the hardware's cycles."""
    hw = [row["hw_active"] for row in rows]
    ws = [row[key] for row in rows]
    errors = [100.0 * (w - h) / h for w, h in zip(ws, hw)]
    absolute = [abs(e) for e in errors]
    return {
        "n": len(rows),
        "mape": statistics.fmean(absolute) if rows else None,
        "median": statistics.median(absolute) if rows else None,
        "max": max(absolute) if rows else None,
        "bias": statistics.fmean(errors) if rows else None,
        "r": pearson(ws, hw),
        "r_log": pearson([math.log(w) for w in ws], [math.log(h) for h in hw]),
    }


def groups(rows):
    """(label, rows) for each class, the single-SM and small-grid classes together, and all."""
    out = [(c, [row for row in rows if row["class"] == c]) for c in CLASSES]
    out.append(("single-SM + small-grid", [row for row in rows if row["class"] != "full-GPU"]))
    out.append(("all", rows))
    return out


def fmt(value, digits=1, signed=False):
    if value is None:
        return "-"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def grouped(n):
    return f"{n:,}"


def launch_table(rows):
    header = ["launch", "class", "blocks", "hw gpc elapsed", "hw SM active", "warpsim cycles",
              "warpsim busiest SM", "error %", "SASS instr", "PTX instr", "PTX/SASS", "normalised error %"]
    body = []
    for row in rows:
        body.append([
            row["name"], row["class"], grouped(row["blocks"]), grouped(row["hw_gpc"]),
            grouped(row["hw_active"]), grouped(row["ws_cycles"]), grouped(row["ws_busiest"]),
            fmt(row["error"], 1, True), grouped(row["hw_instructions"]), grouped(row["ws_instructions"]),
            f"{row['ratio']:.2f}", fmt(row["normalised_error"], 1, True),
        ])
    return header, body


def stats_table(rows):
    header = ["class", "launches", "MAPE %", "median abs. error %", "max abs. error %", "mean error %",
              "Pearson r", "Pearson r (log)", "normalised MAPE %", "normalised r", "normalised r (log)"]
    body = []
    for label, members in groups(rows):
        if not members:
            continue
        s = statistics_of(members, "ws_busiest")
        t = statistics_of(members, "normalised")
        body.append([label, str(s["n"]), fmt(s["mape"]), fmt(s["median"]), fmt(s["max"]),
                     fmt(s["bias"], 1, True), fmt(s["r"], 3), fmt(s["r_log"], 3),
                     fmt(t["mape"]), fmt(t["r"], 3), fmt(t["r_log"], 3)])
    return header, body


def targets_table(rows):
    header = ["target (issue 9)", "measured", "met"]
    body = []
    for label, limit in TARGET_MAPE.items():
        members = [row for row in rows if row["class"] == label]
        if members:
            mape = statistics_of(members, "ws_busiest")["mape"]
            body.append([f"MAPE <= {limit:.0f}% on {label} launches", f"{mape:.1f}% ({len(members)} launch{'es' if len(members) != 1 else ''})",
                         "yes" if mape <= limit else "no"])
    for label, members in groups(rows):
        if label == "single-SM + small-grid" or len(members) < 3:
            continue
        s = statistics_of(members, "ws_busiest")
        for name, key in (("raw", "r"), ("log", "r_log")):
            if s[key] is not None:
                body.append([f"correlation >= {TARGET_CORRELATION} ({label}, {name} cycles)", f"{s[key]:.3f}",
                             "yes" if s[key] >= TARGET_CORRELATION else "no"])
    return header, body


def worst_table(rows, count):
    header = ["launch", "class", "hw SM active", "warpsim busiest SM", "error %", "PTX/SASS", "normalised error %"]
    ranked = sorted(rows, key=lambda row: -abs(row["error"]))[:count]
    body = [[row["name"], row["class"], grouped(row["hw_active"]), grouped(row["ws_busiest"]),
             fmt(row["error"], 1, True), f"{row['ratio']:.2f}", fmt(row["normalised_error"], 1, True)]
            for row in ranked]
    return header, body


def plain(header, body):
    widths = [max(len(cell) for cell in column) for column in zip(header, *body)]
    numeric = [all(cell[:1] in "+-0123456789" or cell == "-" for cell in column) for column in zip(*body)] \
        if body else [False] * len(header)
    def line(cells):
        return "  ".join(cell.rjust(w) if num else cell.ljust(w)
                         for cell, w, num in zip(cells, widths, numeric)).rstrip()
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(cells) for cells in body])


def markdown(header, body):
    numeric = [all(cell[:1] in "+-0123456789" or cell == "-" for cell in column) for column in zip(*body)] \
        if body else [False] * len(header)
    align = ["---:" if num else "---" for num in numeric]
    def row(cells):
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"
    lines = [row(header), "|" + "|".join(align) + "|"] + [row(cells) for cells in body]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--markdown", metavar="PATH",
                        help="also rewrite the validation table section of PATH (e.g. docs/timing.md)")
    parser.add_argument("--table", default=TABLE, help="the hardware CSV (default: %(default)s)")
    parser.add_argument("--warpsim", default=WARPSIM, help="warpsim, relative to the repository root (default: %(default)s)")
    parser.add_argument("--config", help="warpsim's machine file, relative to the repository root (default: sim.toml's H100)")
    parser.add_argument("--threads", type=int, default=2, help="warpsim's host threads (default: %(default)s)")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per launch (default: %(default)s)")
    parser.add_argument("--wait", type=int, default=120,
                        help="seconds to wait for a missing warpsim binary before each launch (default: %(default)s)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="compare only these launches (by the CSV's name)")
    parser.add_argument("--worst", type=int, default=8, help="how many of the largest errors to list (default: %(default)s)")
    args = parser.parse_args()

    table = read_table(args.table)
    if args.only:
        unknown = set(args.only) - {row["name"] for row in table}
        if unknown:
            sys.exit(f"not in {args.table}: {', '.join(sorted(unknown))}")
        table = [row for row in table if row["name"] in args.only]

    rows, failures, notes = [], [], []
    began = time.monotonic()
    for hw in table:
        name = hw["name"]
        started = time.monotonic()
        report, why = run_warpsim(args.warpsim, hw["launch"], args.threads, args.timeout, args.wait, args.config)
        seconds = time.monotonic() - started
        if report is None:
            failures.append((name, why))
            print(f"{name}: FAILED ({why})", file=sys.stderr)
            continue
        print(f"{name}: {seconds:.1f} s", file=sys.stderr)
        hw_active = float(hw["sm_cycles_active_max"])
        hw_instructions = int(float(hw["warp_instructions"]))
        ws_instructions = int(report["totals"]["warp_instructions"])
        ws_busiest = int(report["busiest_sm_cycles"])
        ratio = ws_instructions / hw_instructions
        normalised = ws_busiest / ratio
        blocks = int(hw["blocks"])
        if int(report["blocks_run"]) != blocks:
            notes.append(f"{name}: warpsim ran {report['blocks_run']} blocks, the CSV says {blocks}")
        limits = [hw.get(f"occupancy_limit_{what}") for what in ("registers", "shared_mem", "warps", "blocks")]
        if all(limits):
            hw_blocks_per_sm = min(int(float(limit)) for limit in limits)
            ws_blocks_per_sm = int(report["occupancy"]["blocks_per_sm"])
            if ws_blocks_per_sm != hw_blocks_per_sm:
                notes.append(f"{name}: warpsim fits {ws_blocks_per_sm} blocks per SM "
                             f"({report.get('registers_per_thread')} registers per thread, from "
                             f"{report.get('registers_source')}), the hardware {hw_blocks_per_sm} "
                             f"({hw.get('registers')} registers per thread allocated)")
        recorded = hw.get("warpsim_warp_instructions")
        if recorded and int(float(recorded)) != ws_instructions:
            notes.append(f"{name}: warpsim now executes {ws_instructions:,} warp instructions, "
                         f"the CSV recorded {int(float(recorded)):,}")
        rows.append({
            "name": name, "class": classify(blocks), "blocks": blocks,
            "hw_gpc": int(float(hw["gpc_cycles_elapsed_max"])), "hw_active": int(hw_active),
            "ws_cycles": int(report["cycles"]), "ws_busiest": ws_busiest,
            "error": 100.0 * (ws_busiest - hw_active) / hw_active,
            "hw_instructions": hw_instructions, "ws_instructions": ws_instructions, "ratio": ratio,
            "normalised": normalised, "normalised_error": 100.0 * (normalised - hw_active) / hw_active,
            "seconds": seconds,
        })
    elapsed = time.monotonic() - began

    sections = [
        ("Per launch", launch_table(rows)),
        ("Per class (error of warpsim's busiest_sm_cycles against sm_cycles_active_max; "
         "normalised: diagnostic, busiest_sm_cycles x SASS/PTX instructions)", stats_table(rows)),
        ("Against the targets", targets_table(rows)),
        (f"The {args.worst} largest errors", worst_table(rows, args.worst)),
    ]

    if args.markdown:
        path = args.markdown
        with open(path) as file:
            text = file.read()
        if START not in text or END not in text or text.index(START) > text.index(END):
            sys.exit(f"{path}: needs the lines {START} and {END}")
        parts = [
            "Generated by `python3 programs/timing/validation/compare.py --markdown docs/timing.md` "
            "from `programs/timing/hardware/h100-validation.csv`; do not edit by hand.",
            "",
            "Columns: `hw gpc elapsed` is `gpc_cycles_elapsed_max` (with the launch overhead), `hw SM active` "
            "`sm_cycles_active_max`, `warpsim cycles` and `warpsim busiest SM` warpsim's `cycles` and "
            "`busiest_sm_cycles`; `error %` is `(busiest_sm_cycles - sm_cycles_active_max) / "
            "sm_cycles_active_max`; `SASS instr` is `smsp__inst_executed.sum`, `PTX instr` warpsim's "
            "`totals.warp_instructions`; `normalised error %` is the error of `busiest_sm_cycles x SASS instr / "
            "PTX instr` (a diagnostic, not a prediction). Classes: single-SM is a grid of 1 block, full-GPU "
            f"at least {SMS} blocks, small-grid the rest. Pearson's r is over the launches' cycles, raw and "
            "of their natural logarithms.",
        ]
        for title, (header, body) in sections:
            parts += ["", f"**{title}.**", "", markdown(header, body)]
        if failures:
            parts += ["", "**Failed launches** (left out above):", ""]
            parts += [f"- `{name}`: {why}" for name, why in failures]
        if notes:
            parts += ["", "**Notes:**", ""]
            parts += [f"- {note}" for note in notes]
        section = "\n".join(parts)
        before = text[:text.index(START) + len(START)]
        after = text[text.index(END):]
        with open(path, "w") as file:
            file.write(before + "\n" + section + "\n" + after)
        print(f"wrote the validation tables of {path}", file=sys.stderr)
    for title, (header, body) in sections:
        print(f"{title}:\n")
        print(plain(header, body))
        print()
    for name, why in failures:
        print(f"FAILED {name}: {why}")
    for note in notes:
        print(f"note: {note}")
    print(f"{len(rows)} launches compared, {len(failures)} failed, in {elapsed:.0f} s", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
