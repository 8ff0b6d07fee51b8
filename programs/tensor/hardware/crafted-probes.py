#!/usr/bin/env python3
"""Writes the crafted operands of mma-probe.cu: crafted-<variant>.bin (the A, B
and C registers of each fragment, lane by lane, little-endian words) and
crafted-<variant>.txt (one line per fragment saying what it probes).

Every row of A holds the same K values a[k] and every column of B the same
b[k], every element of C is c, so every element of D is the same dot product
c + sum a[k] b[k]: each fragment asks one question of the tensor core, as in
Fasi, Higham, Mikaitis and Pranesh, "Numerical behavior of NVIDIA tensor
cores" (PeerJ Computer Science, 2021).

    python3 crafted-probes.py
"""
import itertools
import struct

import numpy as np


def f16_bits(x):
    return int(np.array(x, dtype=np.float16).view(np.uint16))


def bf16_bits(x):
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    assert bits & 0xFFFF == 0, f"{x} is not a bf16"
    return bits >> 16


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


# Element positions of the PTX ISA's fragment layouts (section 9.7.14.5.x):
# for lane l, group = l // 4, thread = l % 4.
def layout_16x8x16_a_k(lane, element):  # element 0..7 of A, its column (k)
    return (lane % 4) * 2 + (element & 1) + (8 if element >= 4 else 0)


def layout_16x8x16_b_k(lane, element):  # element 0..3 of B, its row (k)
    return (lane % 4) * 2 + (element & 1) + (8 if element >= 2 else 0)


def layout_16x8x8_tf32_a_k(lane, element):  # a0..a3: col tig, tig, tig+4, tig+4
    return lane % 4 + (4 if element >= 2 else 0)


def layout_16x8x8_tf32_b_k(lane, element):  # b0, b1: row tig, tig+4
    return lane % 4 + (4 if element >= 1 else 0)


def fragment_16bit(a, b, c, encode, c_encode, c_half):
    """Registers of one m16n8k16 fragment with 16-bit inputs."""
    words = []
    for lane in range(32):
        a_elements = [encode(a[layout_16x8x16_a_k(lane, e)]) for e in range(8)]
        b_elements = [encode(b[layout_16x8x16_b_k(lane, e)]) for e in range(4)]
        words += [a_elements[2 * r] | a_elements[2 * r + 1] << 16 for r in range(4)]
        words += [b_elements[2 * r] | b_elements[2 * r + 1] << 16 for r in range(2)]
        if c_half:
            words += [c_encode(c) | c_encode(c) << 16] * 2
        else:
            words += [c_encode(c)] * 4
    return words


def fragment_tf32(a, b, c):
    words = []
    for lane in range(32):
        words += [f32_bits(a[layout_16x8x8_tf32_a_k(lane, e)]) for e in range(4)]
        words += [f32_bits(b[layout_16x8x8_tf32_b_k(lane, e)]) for e in range(2)]
        words += [f32_bits(c)] * 4
    return words


def probes(k, big_exponent, tiny_exponents):
    """(description, a, b, c) for a K of `k`."""
    out = []
    one = [1.0] + [0.0] * (k - 1)
    # Products exact? (1 + 2^-m)^2 = 1 + 2^(1-m) + 2^-2m.
    for m in (7, 10):
        x = 1 + 2.0**-m
        for position in (0, k - 1):
            a = [0.0] * k
            a[position] = x
            b = [0.0] * k
            b[position] = x
            out.append((f"exact-product m={m} at {position}", a, b, 0.0))
    # One small product added to c: extra bits kept, truncation or rounding.
    for c in (1.0, -1.0, 2.0**10, 0.75):
        for e in tiny_exponents:
            for mantissa in (1.0, 1.5, 1.25, 1.75):
                for position in (0, k - 1):
                    a = [0.0] * k
                    a[position] = mantissa * 2.0**-e
                    b = [0.0] * k
                    b[position] = 1.0
                    out.append((f"c={c} plus {mantissa}*2^-{e} at {position}", a, b, c))
                    a2 = list(a)
                    a2[position] = -a[position]
                    out.append((f"c={c} minus {mantissa}*2^-{e} at {position}", a2, b, c))
    # Cancellation: +2^s at i, -2^s at j, 1 at m (products; c = 0), and
    # c = 2^s with -2^s at j and 1 at m: which positions are added together.
    s = big_exponent
    positions = sorted(set([0, 1, 2, 3, 4, 5, 7, 8, 11, 12, k - 1]) & set(range(k)))
    for i, j, m in itertools.permutations(positions, 3):
        if i > j:
            continue
        a = [0.0] * k
        b = [0.0] * k
        a[i], b[i] = 2.0**s, 2.0**s
        a[j], b[j] = -(2.0**s), 2.0**s
        a[m], b[m] = 1.0, 1.0
        out.append((f"cancel +2^{2*s} at {i} -2^{2*s} at {j} one at {m}", a, b, 0.0))
    for j, m in itertools.permutations(positions, 2):
        a = [0.0] * k
        b = [0.0] * k
        a[j], b[j] = -(2.0**s), 2.0**s
        a[m], b[m] = 1.0, 1.0
        out.append((f"cancel c=2^{2*s} -2^{2*s} at {j} one at {m}", a, b, 2.0 ** (2 * s)))
    # Many small products under a large one: do their sum's bits survive?
    for e in tiny_exponents:
        a = [2.0**-e] * k
        b = [1.0] * k
        out.append((f"c=1 plus {k} times 2^-{e}", a, b, 1.0))
        a = [1.0] + [2.0**-e] * (k - 1)
        out.append((f"c=0 one plus {k - 1} times 2^-{e}", a, b, 0.0))
    # Subnormal products and inputs.
    out.append(("subnormal product", [2.0**-14] + [0.0] * (k - 1), [2.0**-14] + [0.0] * (k - 1), 0.0))
    _ = one
    return out


def write(name, fragments, descriptions):
    with open(f"crafted-{name}.bin", "wb") as f:
        for words in fragments:
            f.write(struct.pack(f"<{len(words)}I", *words))
    with open(f"crafted-{name}.txt", "w") as f:
        f.write("\n".join(descriptions) + "\n")


def main():
    tiny = list(range(18, 36, 1))
    for name, encode, s, c_half in (
        ("f16_f32_m16n8k16", f16_bits, 15, False),
        ("bf16_f32_m16n8k16", bf16_bits, 15, False),
        ("f16_f16_m16n8k16", f16_bits, 7, True),
    ):
        chosen = probes(16, s, tiny if not c_half else list(range(8, 16)))
        c_encode = f16_bits if c_half else f32_bits
        safe = []
        for d, a, b, c in chosen:
            try:
                safe.append((d, fragment_16bit(a, b, c, encode, c_encode, c_half)))
            except (AssertionError, OverflowError):
                pass
        write(name, [w for _, w in safe], [d for d, _ in safe])
    chosen = probes(8, 15, tiny)
    write("tf32_f32_m16n8k8", [fragment_tf32(a, b, c) for _, a, b, c in chosen], [d for d, _, _, _ in chosen])


if __name__ == "__main__":
    main()
