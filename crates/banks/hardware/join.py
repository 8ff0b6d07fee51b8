#!/usr/bin/env python3
"""Joins the measured instructions of the H100 runs to the cases that ran them.

    python3 join.py > ../tests/data/h100/joined.tsv

Inputs, all committed: the case tables (`../tests/data/h100/cases.tsv`,
`probe.tsv`), the trimmed Nsight Compute source pages of every kernel
(`../tests/data/h100/run*-KERNEL.csv`, trimmed by trim.py) and the SASS of the
two cubins that ran (`cases.sass.gz`, `probe.sass.gz`: `cuobjdump -sass`).

ptxas may reorder the loads of a kernel, so the k-th load of the SASS is not
always case k. Each shared-memory instruction is traced back through the SASS
instead: its address register comes from the load of the address table at
byte offset 128 * case (32 lanes of 4 bytes), and, where the instruction is
predicated, its predicate from the load of the mask table at offset 4 * case.
Both must name the same case, every case must be found once, and the
instruction's executed thread count must equal the number of lanes of the
case's mask; otherwise the script stops.

Output: one line an instruction: run, kernel, case, op, size, mask, offsets,
SASS offset, threads, wavefronts, ideal wavefronts.
"""
import csv
import gzip
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data", "h100")

# (run, kernel, cubin SASS, case table, table kernel name, SASS opcode)
MEASURED = [
    ("run1", "cases_ld32", "cases", "cases.tsv", "cases_ld32", "LDS"),
    ("run1", "cases_ld64", "cases", "cases.tsv", "cases_ld64", "LDS.64"),
    ("run1", "cases_ld128", "cases", "cases.tsv", "cases_ld128", "LDS.128"),
    ("run1", "cases_st64", "cases", "cases.tsv", "cases_st64", "STS.64"),
    ("run1", "cases_st128", "cases", "cases.tsv", "cases_st128", "STS.128"),
    ("run1", "cases_popc", "cases", "cases.tsv", "cases_popc", "ATOMS.POPC.INC.32"),
    ("run1", "cases_atom", "cases", "cases.tsv", "cases_atom", "ATOMS.ADD"),
    ("run2", "probe_ld64_same", "probe", "probe.tsv", "probe_ld64_same", "LDS.64"),
    ("run2", "probe_ld128_same", "probe", "probe.tsv", "probe_ld128_same", "LDS.128"),
    ("run2", "probe_ld64_neutral", "probe", "probe.tsv", "probe_ld64_neutral", "LDS.64"),
    ("run2", "probe_ld128_neutral", "probe", "probe.tsv", "probe_ld128_neutral", "LDS.128"),
    ("run2", "probe_ld64_targeted", "probe", "probe.tsv", "probe_ld64_targeted", "LDS.64"),
    ("run2", "probe_ld128_targeted", "probe", "probe.tsv", "probe_ld128_targeted", "LDS.128"),
    ("run2-repeat", "cases_ld64", "cases", "cases.tsv", "cases_ld64", "LDS.64"),
    ("run2-repeat", "cases_ld128", "cases", "cases.tsv", "cases_ld128", "LDS.128"),
]

INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?P\d\s+)?(.*?)\s*;")
REGISTER = re.compile(r"\bR(\d+)\b")


def read_sass(name):
    """Function name -> [(offset, guard, text)]."""
    functions = {}
    current = None
    with gzip.open(os.path.join(HERE, name + ".sass.gz"), "rt") as sass:
        for line in sass:
            match = re.search(r"Function : (\w+)", line)
            if match:
                current = functions.setdefault(match.group(1), [])
                continue
            match = INSTRUCTION.search(line)
            if match and current is not None:
                current.append((int(match.group(1), 16), (match.group(2) or "").strip(), match.group(3)))
    return functions


def split_operands(text):
    opcode, _, rest = text.partition(" ")
    return opcode, [operand.strip() for operand in rest.split(",")] if rest else []


def writes(text):
    """The registers (or predicate) an instruction writes: its first operand,
    except for stores and branches, which write none. A 64-bit destination
    (`.64`, `.WIDE`) also writes the next register."""
    opcode, operands = split_operands(text)
    if not operands or opcode.startswith(("STS", "STG", "BAR", "BRA", "EXIT", "RED", "BSSY", "BSYNC")):
        return []
    first = operands[0].split(".")[0]
    out = [first]
    match = re.match(r"R(\d+)$", first)
    if match and (".64" in opcode or "WIDE" in opcode):
        out.append(f"R{int(match.group(1)) + 1}")
    return out


def definition(code, before, register):
    for index in range(before - 1, -1, -1):
        if register in writes(code[index][2]):
            return index
    return None


def table_loads(code, before, register, depth):
    """Immediate offsets of the global loads (LDG) that feed `register`."""
    if depth == 0:
        return []
    index = definition(code, before, register)
    if index is None:
        return []
    text = code[index][2]
    if text.startswith("LDG"):
        match = re.search(r"\[R\d+\.64(?:\+0x([0-9a-f]+))?\]", text)
        return [int(match.group(1) or "0", 16)]
    found = []
    for operand in split_operands(text)[1][1:]:
        for number in REGISTER.findall(operand):
            found += table_loads(code, index, f"R{number}", depth - 1)
    return found


def case_of(code, index):
    """The case an instruction runs: from its address (and predicate) registers."""
    _, guard, text = code[index]
    memory = [operand for operand in split_operands(text)[1] if operand.startswith("[")][0]
    address = table_loads(code, index, "R" + REGISTER.findall(memory)[0], 5)
    if len(address) != 1 or address[0] % 128:
        sys.exit(f"cannot trace the address of {text} at {code[index][0]:#x}")
    case = address[0] // 128
    if guard:
        predicate = guard.lstrip("@!")
        for back in range(index - 1, -1, -1):
            if writes(code[back][2])[:1] == [predicate]:
                break
        else:
            sys.exit(f"no definition of {predicate} before {code[index][0]:#x}")
        masks = []
        for operand in split_operands(code[back][2])[1][1:]:
            for number in REGISTER.findall(operand):
                masks += table_loads(code, back, f"R{number}", 2)
        if masks != [4 * case]:
            sys.exit(f"{text} at {code[index][0]:#x}: address of case {case}, mask loads {masks}")
    return case


def read_cases(name):
    cases = {}
    for line in open(os.path.join(DATA, name)):
        if line.startswith("#"):
            continue
        kernel, number, op, size, mask, offsets = line.rstrip("\n").split("\t")
        cases.setdefault(kernel, []).append((op, size, mask, offsets))
    return cases


def read_measured(path):
    rows = list(csv.reader(open(path)))
    header = rows[1]
    column = {name: header.index(name) for name in header}
    base = int(rows[2][column["Address"]], 16)
    return {int(row[column["Address"]], 16) - base: row for row in rows[2:]}, column


def main():
    sass = {name: read_sass(name) for name in ("cases", "probe")}
    tables = {name: read_cases(name) for name in ("cases.tsv", "probe.tsv")}
    out = csv.writer(sys.stdout, delimiter="\t", lineterminator="\n")
    out.writerow(["# run", "kernel", "case", "op", "size", "mask", "offsets", "sass_offset",
                  "threads", "wavefronts", "ideal"])
    for run, kernel, cubin, table, table_kernel, opcode in MEASURED:
        code = sass[cubin][kernel]
        cases = tables[table][table_kernel]
        measured, column = read_measured(os.path.join(DATA, f"{run}-{kernel}.csv"))
        found = {}
        for index, (offset, guard, text) in enumerate(code):
            if split_operands(text)[0] != opcode:
                continue
            case = case_of(code, index)
            if case in found:
                sys.exit(f"{kernel}: case {case} traced twice")
            found[case] = offset
        if sorted(found) != list(range(len(cases))):
            sys.exit(f"{kernel}: traced {len(found)} of {len(cases)} cases")
        for case, offset in sorted(found.items()):
            op, size, mask, offsets = cases[case]
            row = measured[offset]
            threads = int(row[column["Predicated-On Thread Instructions Executed"]])
            if threads != bin(int(mask, 16)).count("1"):
                sys.exit(f"{kernel} case {case}: {threads} threads ran, mask {mask}")
            out.writerow([run, kernel, case, op, size, mask, offsets, f"{offset:#x}", threads,
                          row[column["L1 Wavefronts Shared"]], row[column["L1 Wavefronts Shared Ideal"]]])


if __name__ == "__main__":
    main()
