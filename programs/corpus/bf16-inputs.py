#!/usr/bin/env python3
"""Writes the inputs of bf16-arith.cu's two kernels (see bf16_arith.toml and
bf16_convert.toml), with Python's random seeded with 3:

    python3 programs/corpus/bf16-inputs.py

bf16-arith.bin: three rows of 4096 bfloat16 bit patterns, a, b and c. a and
b are every pair of 64 values (40 chosen: signed zeros, subnormals, the
smallest normals, 1 and its neighbours, 256 where the step is 2, the largest
finite values, half steps, 2^-100 and other far-apart powers of two,
infinities, quiet, signalling and negative NaNs; then 24 random bit
patterns). c is by turns one of the 64, a random bit pattern, minus a * b
rounded to bfloat16 (so that fma leaves the product's rounding error), and
a tiny value of random sign (2^-100 to 2^-90 in magnitude, so that fma must
round a product and a far smaller addend once). Three pairs get a chosen c:
1.0625 * 1.0625 and 1.75 * (37/64) are midpoints between bfloat16 values,
and 2^-100 or -2^-100 added must move them off the midpoint, which a sum
rounded to f64 before bfloat16 would lose.

bf16-convert-f32.bin, -f64.bin, -s64.bin, -bf16.bin: 1024 values each, the
inputs of bf16_convert: floats at and beside the midpoints between
bfloat16 values, at the largest finite value and in the subnormals, with
infinities and NaNs; doubles with bits beyond a float's (one rounding, not
two); 64-bit integers at midpoints beyond 2^53; bfloat16 values at halves
(ties of the integer roundings) and at the ends of the integer ranges. The
rest are random.
"""
import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
N = 4096
M = 1024


def f32_bits(value):
    return struct.unpack("<I", struct.pack("<f", value))[0]


def bf16_of_f32_bits(bits):
    """A float's bits rounded to the nearest bfloat16, ties to even (the
    float is finite or infinite here)."""
    upper, lower = bits >> 16, bits & 0xFFFF
    if lower > 0x8000 or (lower == 0x8000 and upper & 1):
        upper += 1
    return upper


def bf16_value(bits):
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def arith_inputs(rng):
    chosen = [
        0x0000, 0x8000, 0x0001, 0x8001, 0x0002, 0x007F, 0x807F, 0x0080, 0x8080, 0x0081,
        0x3F80, 0xBF80, 0x3F81, 0x3F7F, 0x3F88, 0x3FE0, 0x3F14, 0x3F00, 0x4000, 0x4040,
        0x4380, 0x4381, 0xC380, 0x7F7F, 0xFF7F, 0x7F7E, 0x7B00, 0x0D80, 0x8D80, 0x1F80,
        0x5F80, 0x3C80, 0x4B80, 0x2F80, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7F81, 0x7FFF,
    ]
    values = chosen + [rng.getrandbits(16) for _ in range(64 - len(chosen))]
    a = [values[i // 64] for i in range(N)]
    b = [values[i % 64] for i in range(N)]
    c = []
    for i in range(N):
        turn = i % 4
        if turn == 0:
            c.append(values[(7 * i + 3) % 64])
        elif turn == 1:
            c.append(rng.getrandbits(16))
        elif turn == 2:
            product = bf16_value(a[i]) * bf16_value(b[i])
            try:
                bits = f32_bits(product)
            except OverflowError:
                bits = 0x7F800000 if product > 0 else 0xFF800000
            c.append(bf16_of_f32_bits(bits) ^ 0x8000)
        else:
            # Exponent field 27 to 37: 2^-100 to 2^-90, any mantissa and sign.
            c.append(rng.getrandbits(1) << 15 | rng.randint(27, 37) << 7 | rng.getrandbits(7))
    index = {v: k for k, v in enumerate(values)}
    for x, y, addend in [(0x3F88, 0x3F88, 0x0D80), (0x3FE0, 0x3F14, 0x8D80), (0x3F14, 0x3FE0, 0x0D80)]:
        c[64 * index[x] + index[y]] = addend
    return a + b + c


def convert_inputs(rng):
    floats = [
        0x3F808000, 0x3F818000, 0x3F808001, 0x3F807FFF, 0xBF808000, 0xBF818000, 0x7F7F8000,
        0x7F7F7FFF, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001,
        0xFFC00001, 0x00000000, 0x80000000, 0x00000001, 0x00008000, 0x00018000, 0x00010000,
        0x007FFFFF, 0x00800000, 0x80008001, 0x3DCCCCCD, 0x3EAAAAAB, 0xC0490FDB, 0x4B800001,
    ]
    floats += [rng.getrandbits(32) for _ in range(M - len(floats))]
    doubles = [
        1 + 2**-8 + 2**-40, 1 + 2**-8, 1 + 2**-8 - 2**-40, -(1 + 2**-8 + 2**-40), 2.0**-134,
        2.0**-134 + 2.0**-200, -(2.0**-134 + 2.0**-200), 1e300, -1e300, 5e-324,
        float("nan"), float("inf"), -float("inf"), (2 - 2**-7) * 2.0**127,
        (2 - 2**-8) * 2.0**127, (2 - 2**-8) * 2.0**127 * (1 - 2**-40), 0.0, -0.0,
    ]
    double_bits = [struct.unpack("<Q", struct.pack("<d", x))[0] for x in doubles]
    for _ in range(M - len(doubles)):
        # Exponents from 2^-140 to 2^130, and every mantissa bit random.
        exponent = rng.randint(-140, 130) + 1023
        double_bits.append(rng.getrandbits(1) << 63 | exponent << 52 | rng.getrandbits(52))
    integers = [
        0, 1, -1, 255, 256, 257, 258, 259, -257, 511, 65535, 65536 + 128, 2**31 - 1, -2**31,
        2**24 + 1, 2**60 + 2**52, 2**60 + 2**52 + 1, -(2**60 + 2**52 + 1), 2**63 - 1, -2**63,
        0x8000, 0x8080, 0xFFFF, 0x1FF00,
    ]
    for _ in range(M - len(integers)):
        width = rng.choice([8, 16, 32, 40, 64])
        integers.append(rng.getrandbits(width) - (1 << (width - 1)))
    halves = [
        0x0000, 0x8000, 0x3F00, 0xBF00, 0x3FC0, 0xBFC0, 0x4020, 0xC020, 0x4060, 0xC060,
        0x3F7F, 0x3F81, 0xBF81, 0x4380, 0x4F00, 0xCF00, 0xCF01, 0x4EFF, 0x7F7F, 0xFF7F,
        0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x0001, 0x8001, 0x3E80, 0xBF40, 0x5F00, 0xDF00,
        0x5EFF, 0x5F80, 0x4780, 0x477F, 0xC780,
    ]
    halves += [rng.getrandbits(16) for _ in range(M - len(halves))]
    return floats, double_bits, integers, halves


def write(name, fmt, values):
    with open(os.path.join(HERE, name), "wb") as out:
        out.write(struct.pack("<%d%s" % (len(values), fmt), *values))


def main():
    rng = random.Random(3)
    write("bf16-arith.bin", "H", arith_inputs(rng))
    floats, doubles, integers, halves = convert_inputs(rng)
    write("bf16-convert-f32.bin", "I", floats)
    write("bf16-convert-f64.bin", "Q", doubles)
    write("bf16-convert-s64.bin", "q", integers)
    write("bf16-convert-bf16.bin", "H", halves)


if __name__ == "__main__":
    main()
