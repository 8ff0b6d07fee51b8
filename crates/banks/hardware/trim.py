#!/usr/bin/env python3
"""Trims Nsight Compute source-page CSVs to what the tests read.

    python3 trim.py OUT.csv IN.csv

`ncu -i REPORT --page source --csv --print-source sass -k KERNEL` prints the
kernel's SASS twice, one row an instruction with some 60 columns. This keeps
the first copy, the kernel's first instruction (its address is the kernel's
base, to which the tests make every address relative) and every shared-memory
instruction (LDS, STS, ATOMS), and the columns below, unchanged.
"""
import csv
import sys

COLUMNS = [
    "Address",
    "Source",
    "Instructions Executed",
    "Predicated-On Thread Instructions Executed",
    "L1 Wavefronts Shared",
    "L1 Wavefronts Shared Ideal",
    "L1 Wavefronts Shared Excessive",
]


def main():
    out_path, in_path = sys.argv[1], sys.argv[2]
    rows = list(csv.reader(open(in_path)))
    kernel = rows[0][1]
    header = rows[1]
    body = []
    for row in rows[2:]:
        if row and row[0] == "Kernel Name":
            break  # the second copy
        body.append(row)
    index = [header.index(name) for name in COLUMNS]
    with open(out_path, "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["Kernel Name", kernel])
        writer.writerow(COLUMNS)
        for number, row in enumerate(body):
            opcode = row[1].split()
            opcode = [word for word in opcode if not word.startswith("@")]
            shared = opcode and opcode[0].split(".")[0] in ("LDS", "STS", "ATOMS")
            if number == 0 or shared:
                writer.writerow([row[i] for i in index])


if __name__ == "__main__":
    main()
