#!/usr/bin/env python3
"""Writes the single-warp shared-memory cases that `cases.cu` runs on a GPU.

    python3 gen_cases.py OUTDIR

Every case is one warp-level shared-memory instruction: an operation (`ld`,
`st`, `popc` for `red.shared.add.u32 [a], 1`, which ptxas turns into
ATOMS.POPC.INC, or `atom` for `atom.shared.add.u32` with its result used), an
access size, an active mask and the byte offset of every lane. The cases are
drawn from a fixed seed, so the table is the same on every machine:
`OUTDIR/cases.tsv` (one line a case, read by the tests of crates/banks) and,
for each kernel of `cases.cu`, `OUTDIR/<kernel>.addr` (32 little-endian u32
offsets a case) and `OUTDIR/<kernel>.mask` (one u32 a case).
"""
import os
import random
import struct
import sys

# kernel name in cases.cu -> (operation, bytes per lane, number of cases)
KERNELS = [
    ("cases_ld32", "ld", 4, 96),
    ("cases_ld64", "ld", 8, 640),
    ("cases_ld128", "ld", 16, 320),
    ("cases_st64", "st", 8, 160),
    ("cases_st128", "st", 16, 96),
    ("cases_popc", "popc", 4, 192),
    ("cases_atom", "atom", 4, 64),
]

# Shared bytes the cases may touch; cases.cu declares this much.
SHARED_BYTES = 8192


def fixed_cases(size):
    """Patterns of bank-rules.md and the two questions of the issue, all lanes
    active and then with some masks: uniform (broadcast), lane pairs sharing
    an element, linear."""
    full = 0xFFFFFFFF
    cases = []
    for mask in [full, 0x0000FFFF, 0xFFFF0000, 0x000000FF, 0x00000003, 0x00000001,
                 0x55555555, 0xAAAAAAAA, 0x0F0F0F0F, 0x80000001, 0x00010001]:
        cases.append((mask, [0] * 32))                         # uniform
        cases.append((mask, [size * (l // 2) for l in range(32)]))  # pairs share
        cases.append((mask, [size * l for l in range(32)]))   # linear
    cases.append((full, [size * (l % 4) for l in range(32)]))
    cases.append((full, [size * (l % 16) for l in range(32)]))
    cases.append((full, [size * (l % 8) for l in range(32)]))
    cases.append((full, [128 * l % SHARED_BYTES for l in range(32)]))
    cases.append((full, [32 * l for l in range(32)]))
    return cases


def random_mask(rng):
    family = rng.randrange(9)
    if family == 0:
        return 0xFFFFFFFF
    if family == 1:
        return rng.getrandbits(32)
    if family == 2:  # sparse
        return sum(1 << l for l in range(32) if rng.random() < 0.2)
    if family == 3:  # dense
        return sum(1 << l for l in range(32) if rng.random() < 0.8)
    if family == 4:  # one half-warp, random lanes
        return rng.getrandbits(16) << (16 * rng.randrange(2))
    if family == 5:  # whole pairs of lanes
        return sum(3 << (2 * p) for p in range(16) if rng.random() < 0.5)
    if family == 6:  # one or two lanes
        return (1 << rng.randrange(32)) | ((1 << rng.randrange(32)) if rng.random() < 0.5 else 0)
    if family == 7:  # a run of lanes
        start = rng.randrange(32)
        end = rng.randrange(start, 32)
        return sum(1 << l for l in range(start, end + 1))
    # one quarter-warp or a few lanes in each quarter
    return sum(1 << l for l in range(32) if rng.random() < (0.9 if l // 8 == rng.randrange(4) else 0.1))


def random_addresses(rng, size):
    """Byte offsets, each aligned to the access size."""
    slots = SHARED_BYTES // size
    family = rng.randrange(10)
    if family == 0:  # anywhere in the first 512 bytes: some conflicts, some sharing
        return [size * rng.randrange(512 // size) for _ in range(32)]
    if family == 1:  # a few distinct addresses
        choices = [size * rng.randrange(slots) for _ in range(rng.randrange(1, 5))]
        return [rng.choice(choices) for _ in range(32)]
    if family == 2:  # lane pairs share a random element
        pairs = [size * rng.randrange(slots // 4) for _ in range(16)]
        return [pairs[l // 2] for l in range(32)]
    if family == 3:  # a permutation of the linear pattern
        lanes = list(range(32))
        rng.shuffle(lanes)
        return [size * l for l in lanes]
    if family == 4:  # linear, each lane moved by a random number of 128-byte rows
        return [(size * l + 128 * rng.randrange(4)) % SHARED_BYTES for l in range(32)]
    if family == 5:  # a stride of 1 to 8 elements from a random start
        stride = rng.randrange(1, 9)
        start = rng.randrange(slots // 2)
        return [size * ((start + stride * l) % slots) for l in range(32)]
    if family == 6:  # uniform
        return [size * rng.randrange(slots)] * 32
    if family == 7:  # anywhere
        return [size * rng.randrange(slots) for _ in range(32)]
    if family == 8:  # one row of banks per half-warp, shuffled inside it
        row = [size * l for l in range(128 // size)]
        out = []
        for lane in range(32):
            out.append(rng.choice(row) + 128 * rng.randrange(2))
        return out
    # two lanes share with random neighbours: element of lane l is l or a random earlier lane's
    base = [size * l for l in range(32)]
    for lane in range(1, 32):
        if rng.random() < 0.4:
            base[lane] = base[rng.randrange(lane)]
    return base


def main():
    main_into(sys.argv[1])


def main_into(out):
    os.makedirs(out, exist_ok=True)
    rng = random.Random(20261124)
    with open(os.path.join(out, "cases.tsv"), "w") as table:
        table.write("# kernel\tcase\top\tsize\tmask\toffsets (lane 0..31, bytes)\n")
        for kernel, op, size, count in KERNELS:
            cases = fixed_cases(size) if op in ("ld", "st") else fixed_cases(4)
            while len(cases) < count:
                mask = random_mask(rng)
                if mask == 0:
                    continue
                cases.append((mask, random_addresses(rng, size)))
            cases = cases[:count]
            with open(os.path.join(out, kernel + ".addr"), "wb") as addr, open(
                os.path.join(out, kernel + ".mask"), "wb"
            ) as masks:
                for index, (mask, offsets) in enumerate(cases):
                    assert all(o % size == 0 and 0 <= o < SHARED_BYTES for o in offsets)
                    addr.write(struct.pack("<32I", *offsets))
                    masks.write(struct.pack("<I", mask))
                    table.write(
                        f"{kernel}\t{index}\t{op}\t{size}\t{mask:08x}\t{','.join(map(str, offsets))}\n"
                    )


if __name__ == "__main__":
    main()
