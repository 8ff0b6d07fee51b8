#!/usr/bin/env python3
"""Writes the tables of the second H100 run (probe.cu): the 64- and 128-bit load
cases of gen_cases.py again, and targeted cases for the rule of partial masks.

    python3 gen_probe.py OUTDIR

probe.cu computes every lane's address whether or not the lane takes part, so
the address registers of inactive lanes hold table values. Tables:

- `probe_ld64_same`, `probe_ld128_same`: the cases of gen_cases.py unchanged
  (inactive lanes keep the table's offsets);
- `probe_ld64_neutral`, `probe_ld128_neutral`: the same cases with every
  inactive lane's offset set to the offset of the lowest active lane;
- `probe_ld64_targeted`, `probe_ld128_targeted`: two active lanes at distinct
  conflict-free offsets; pair-shared patterns with one pair that differs;
  k active lanes at distinct conflict-free offsets (inactive lanes: offset of
  the lowest active lane).

Writes OUTDIR/probe.tsv (same columns as cases.tsv) and OUTDIR/<kernel>.addr/.mask.
"""
import os
import random
import struct
import sys

import gen_cases


def neutral(mask, offsets):
    first = offsets[(mask & -mask).bit_length() - 1]
    return [o if mask >> l & 1 else first for l, o in enumerate(offsets)]


def conflict_free(rng, size, count):
    """`count` offsets whose words fall in distinct banks (4-byte banks, 32 of them)."""
    groups = 128 // size  # distinct bank groups an aligned access can occupy
    chosen = rng.sample(range(groups), count)
    return [size * g + 128 * rng.randrange(16) for g in chosen]


def targeted(rng, size):
    cases = []
    # Two active lanes with distinct, conflict-free offsets.
    pairs = [(0, l) for l in range(1, 32)] + [(2 * p, 2 * p + 1) for p in range(16)]
    while len(pairs) < 160:
        a, b = sorted(rng.sample(range(32), 2))
        pairs.append((a, b))
    for a, b in pairs:
        x, y = conflict_free(rng, size, 2)
        offsets = [x] * 32
        offsets[b] = y
        cases.append(((1 << a) | (1 << b), offsets))
    # Every pair shares a conflict-free offset, except one pair that differs.
    groups = min(16, 128 // size)
    for _ in range(96 if size == 8 else 48):
        mask = 0xFFFFFFFF if rng.random() < 0.5 else gen_cases.random_mask(rng) | 0
        if mask == 0:
            continue
        base = conflict_free(rng, size, groups)
        offsets = [base[(l // 2) % groups] for l in range(32)]
        p = rng.randrange(16)
        spare = [size * g + 128 * rng.randrange(16) for g in range(128 // size)]
        offsets[2 * p + 1] = rng.choice(spare)
        mask |= 3 << (2 * p)
        cases.append((mask, neutral(mask, offsets)))
    # k active lanes at distinct conflict-free offsets.
    for _ in range(160):
        k = rng.randrange(3, min(16, 128 // size) + 1)
        lanes = rng.sample(range(32), k)
        offs = conflict_free(rng, size, k)
        offsets = [offs[0]] * 32
        mask = 0
        for lane, off in zip(lanes, offs):
            offsets[lane] = off
            mask |= 1 << lane
        cases.append((mask, neutral(mask, offsets)))
    return cases


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = random.Random(20261125)
    # The cases of gen_cases.py, regenerated from its seed.
    scratch = os.path.join(out, "first")
    gen_cases.main_into(scratch)
    first = {}
    for line in open(os.path.join(scratch, "cases.tsv")):
        if line.startswith("#"):
            continue
        kernel, _, op, size, mask, offsets = line.rstrip("\n").split("\t")
        first.setdefault(kernel, []).append((int(mask, 16), list(map(int, offsets.split(",")))))
    tables = {
        "probe_ld64_same": (8, first["cases_ld64"]),
        "probe_ld128_same": (16, first["cases_ld128"]),
        "probe_ld64_neutral": (8, [(m, neutral(m, o)) for m, o in first["cases_ld64"]]),
        "probe_ld128_neutral": (16, [(m, neutral(m, o)) for m, o in first["cases_ld128"]]),
        "probe_ld64_targeted": (8, targeted(rng, 8)),
        "probe_ld128_targeted": (16, targeted(rng, 16)),
    }
    with open(os.path.join(out, "probe.tsv"), "w") as table:
        table.write("# kernel\tcase\top\tsize\tmask\toffsets (lane 0..31, bytes)\n")
        for kernel, (size, cases) in tables.items():
            with open(os.path.join(out, kernel + ".addr"), "wb") as addr, open(
                os.path.join(out, kernel + ".mask"), "wb"
            ) as masks:
                for index, (mask, offsets) in enumerate(cases):
                    assert all(o % size == 0 and 0 <= o < gen_cases.SHARED_BYTES for o in offsets)
                    addr.write(struct.pack("<32I", *offsets))
                    masks.write(struct.pack("<I", mask))
                    table.write(f"{kernel}\t{index}\tld\t{size}\t{mask:08x}\t{','.join(map(str, offsets))}\n")
            print(kernel, len(cases))


if __name__ == "__main__":
    main()
