// The kernels of the scalar-instruction hardware harness (driver.cu runs
// them on an H100; tests/scalar_hardware.rs runs the NVRTC PTX of this file
// in warpsim and compares every output bit). Every instruction under test is
// written as inline PTX so that the hardware runs exactly that instruction.

// f32 -> tf32, the six roundings sm_90 has: rna, rna.satfinite, rn, rn.relu,
// rz, rz.relu (PTX ISA 9.7.9.21, cvt). out[6 i + k].
extern "C" __global__ void tf32_from_f32(const float *in, unsigned *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = in[i];
    unsigned r0, r1, r2, r3, r4, r5;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r0) : "f"(x));
    asm("cvt.rna.satfinite.tf32.f32 %0, %1;" : "=r"(r1) : "f"(x));
    asm("cvt.rn.tf32.f32 %0, %1;" : "=r"(r2) : "f"(x));
    asm("cvt.rn.relu.tf32.f32 %0, %1;" : "=r"(r3) : "f"(x));
    asm("cvt.rz.tf32.f32 %0, %1;" : "=r"(r4) : "f"(x));
    asm("cvt.rz.relu.tf32.f32 %0, %1;" : "=r"(r5) : "f"(x));
    out[6 * i + 0] = r0;
    out[6 * i + 1] = r1;
    out[6 * i + 2] = r2;
    out[6 * i + 3] = r3;
    out[6 * i + 4] = r4;
    out[6 * i + 5] = r5;
}

// Two f32 -> e4m3x2 / e5m2x2, with and without .relu; in[2 i] is `a` (the
// upper byte), in[2 i + 1] is `b`. Also f32 -> bf16 with .relu (rn, rz).
// fp8[4 i + k]: e4m3, e4m3.relu, e5m2, e5m2.relu; bf16[4 i + k]: rn.relu
// and rz.relu of in[2 i], then of in[2 i + 1].
extern "C" __global__ void fp8_from_f32(const float *in, unsigned short *fp8,
                                        unsigned short *bf16, int pairs)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= pairs) return;
    float a = in[2 * i], b = in[2 * i + 1];
    unsigned short r0, r1, r2, r3, h0, h1, h2, h3;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r0) : "f"(a), "f"(b));
    asm("cvt.rn.satfinite.relu.e4m3x2.f32 %0, %1, %2;" : "=h"(r1) : "f"(a), "f"(b));
    asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(r2) : "f"(a), "f"(b));
    asm("cvt.rn.satfinite.relu.e5m2x2.f32 %0, %1, %2;" : "=h"(r3) : "f"(a), "f"(b));
    asm("cvt.rn.relu.bf16.f32 %0, %1;" : "=h"(h0) : "f"(a));
    asm("cvt.rz.relu.bf16.f32 %0, %1;" : "=h"(h1) : "f"(a));
    asm("cvt.rn.relu.bf16.f32 %0, %1;" : "=h"(h2) : "f"(b));
    asm("cvt.rz.relu.bf16.f32 %0, %1;" : "=h"(h3) : "f"(b));
    fp8[4 * i + 0] = r0;
    fp8[4 * i + 1] = r1;
    fp8[4 * i + 2] = r2;
    fp8[4 * i + 3] = r3;
    bf16[4 * i + 0] = h0;
    bf16[4 * i + 1] = h1;
    bf16[4 * i + 2] = h2;
    bf16[4 * i + 3] = h3;
}

// Every f16 bit pattern through f16x2 -> e4m3x2 / e5m2x2: thread i converts
// the pair (2 i low, 2 i + 1 high). out[4 i + k] as in fp8_from_f32.
extern "C" __global__ void fp8_from_f16x2(unsigned short *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 32768) return;
    unsigned pair = (2 * i) | ((2 * i + 1) << 16);
    unsigned short r0, r1, r2, r3;
    asm("cvt.rn.satfinite.e4m3x2.f16x2 %0, %1;" : "=h"(r0) : "r"(pair));
    asm("cvt.rn.satfinite.relu.e4m3x2.f16x2 %0, %1;" : "=h"(r1) : "r"(pair));
    asm("cvt.rn.satfinite.e5m2x2.f16x2 %0, %1;" : "=h"(r2) : "r"(pair));
    asm("cvt.rn.satfinite.relu.e5m2x2.f16x2 %0, %1;" : "=h"(r3) : "r"(pair));
    out[4 * i + 0] = r0;
    out[4 * i + 1] = r1;
    out[4 * i + 2] = r2;
    out[4 * i + 3] = r3;
}

// Every fp8 bit pattern back to f16: thread i converts the pair
// (i low, 255 - i high). out[4 i + k]: e4m3, e4m3.relu, e5m2, e5m2.relu.
extern "C" __global__ void f16x2_from_fp8(unsigned *out)
{
    unsigned i = threadIdx.x;
    unsigned short pair = (unsigned short)(i | ((255 - i) << 8));
    unsigned r0, r1, r2, r3;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(r0) : "h"(pair));
    asm("cvt.rn.relu.f16x2.e4m3x2 %0, %1;" : "=r"(r1) : "h"(pair));
    asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(r2) : "h"(pair));
    asm("cvt.rn.relu.f16x2.e5m2x2 %0, %1;" : "=r"(r3) : "h"(pair));
    out[4 * i + 0] = r0;
    out[4 * i + 1] = r1;
    out[4 * i + 2] = r2;
    out[4 * i + 3] = r3;
}

// dp4a, dp2a and mad24 on words[4 i .. 4 i + 3] = a, b, c, d (PTX ISA
// 9.7.1.23/24, 9.7.1.9). out[16 i + k].
extern "C" __global__ void dot_products(const unsigned *words, unsigned *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned a = words[4 * i], b = words[4 * i + 1], c = words[4 * i + 2];
    unsigned r[16];
    asm("dp4a.u32.u32 %0, %1, %2, %3;" : "=r"(r[0]) : "r"(a), "r"(b), "r"(c));
    asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(r[1]) : "r"(a), "r"(b), "r"(c));
    asm("dp4a.s32.u32 %0, %1, %2, %3;" : "=r"(r[2]) : "r"(a), "r"(b), "r"(c));
    asm("dp4a.s32.s32 %0, %1, %2, %3;" : "=r"(r[3]) : "r"(a), "r"(b), "r"(c));
    asm("dp2a.lo.u32.u32 %0, %1, %2, %3;" : "=r"(r[4]) : "r"(a), "r"(b), "r"(c));
    asm("dp2a.lo.u32.s32 %0, %1, %2, %3;" : "=r"(r[5]) : "r"(a), "r"(b), "r"(c));
    asm("dp2a.lo.s32.u32 %0, %1, %2, %3;" : "=r"(r[6]) : "r"(a), "r"(b), "r"(c));
    asm("dp2a.lo.s32.s32 %0, %1, %2, %3;" : "=r"(r[7]) : "r"(a), "r"(b), "r"(c));
    asm("dp2a.hi.u32.u32 %0, %1, %2, %3;" : "=r"(r[8]) : "r"(a), "r"(b), "r"(c));
    asm("dp2a.hi.s32.s32 %0, %1, %2, %3;" : "=r"(r[9]) : "r"(a), "r"(b), "r"(c));
    asm("mad24.lo.u32 %0, %1, %2, %3;" : "=r"(r[10]) : "r"(a), "r"(b), "r"(c));
    asm("mad24.hi.u32 %0, %1, %2, %3;" : "=r"(r[11]) : "r"(a), "r"(b), "r"(c));
    asm("mad24.lo.s32 %0, %1, %2, %3;" : "=r"(r[12]) : "r"(a), "r"(b), "r"(c));
    asm("mad24.hi.s32 %0, %1, %2, %3;" : "=r"(r[13]) : "r"(a), "r"(b), "r"(c));
    asm("mad24.hi.sat.s32 %0, %1, %2, %3;" : "=r"(r[14]) : "r"(a), "r"(b), "r"(c));
    asm("dp2a.hi.u32.s32 %0, %1, %2, %3;" : "=r"(r[15]) : "r"(a), "r"(b), "r"(c));
    for (int k = 0; k < 16; k++) out[16 * i + k] = r[k];
}

// Carry chains on words[4 i .. 4 i + 3] = a, b, c, d (PTX ISA 9.7.2): each
// result, then the carry flag it left read with `addc.u32 f, 0, 0`.
// out[24 i + k].
extern "C" __global__ void carry_chains(const unsigned *words, unsigned *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned a = words[4 * i], b = words[4 * i + 1], c = words[4 * i + 2], d = words[4 * i + 3];
    unsigned long long wa = ((unsigned long long)b << 32) | a;
    unsigned long long wb = ((unsigned long long)d << 32) | c;
    unsigned *o = out + 24 * i;
    unsigned r, f, r1, r2;
    unsigned long long w0, w1;
    // add.cc, sub.cc on 32 bits, and the flag they leave.
    asm("add.cc.u32 %0, %2, %3;\n\taddc.u32 %1, 0, 0;" : "=r"(r), "=r"(f) : "r"(a), "r"(b));
    o[0] = r; o[1] = f;
    asm("sub.cc.u32 %0, %2, %3;\n\taddc.u32 %1, 0, 0;" : "=r"(r), "=r"(f) : "r"(a), "r"(b));
    o[2] = r; o[3] = f;
    // addc.cc and subc.cc with the flag set by c + d.
    asm("add.cc.u32 %0, %3, %4;\n\taddc.cc.u32 %0, %5, %6;\n\taddc.u32 %1, 0, 0;\n\tmov.u32 %2, %0;"
        : "=&r"(r), "=&r"(f), "=&r"(r1) : "r"(c), "r"(d), "r"(a), "r"(b));
    o[4] = r1; o[5] = f;
    asm("add.cc.u32 %0, %3, %4;\n\tsubc.cc.u32 %0, %5, %6;\n\taddc.u32 %1, 0, 0;\n\tmov.u32 %2, %0;"
        : "=&r"(r), "=&r"(f), "=&r"(r1) : "r"(c), "r"(d), "r"(a), "r"(b));
    o[6] = r1; o[7] = f;
    // A 96-bit subtraction: (a, b, c) - (d, c, a), least significant first.
    asm("sub.cc.s32 %0, %3, %6;\n\tsubc.cc.s32 %1, %4, %5;\n\tsubc.s32 %2, %5, %3;"
        : "=&r"(r), "=&r"(r1), "=&r"(r2) : "r"(a), "r"(b), "r"(c), "r"(d));
    o[8] = r; o[9] = r1; o[10] = r2;
    // mad.lo.cc / madc.hi: the 64-bit product a * b plus c in two words,
    // and madc.lo.cc / madc.hi.cc with the flag set by c + d.
    asm("mad.lo.cc.u32 %0, %2, %3, %4;\n\tmadc.hi.u32 %1, %2, %3, 0;"
        : "=&r"(r), "=&r"(r1) : "r"(a), "r"(b), "r"(c));
    o[11] = r; o[12] = r1;
    asm("add.cc.u32 %0, %3, %4;\n\tmadc.lo.cc.u32 %0, %5, %6, %3;\n\tmadc.hi.cc.u32 %1, %5, %6, %4;\n\taddc.u32 %2, 0, 0;"
        : "=&r"(r), "=&r"(r1), "=&r"(f) : "r"(c), "r"(d), "r"(a), "r"(b));
    o[13] = r; o[14] = r1; o[15] = f;
    // mad.hi.cc.s32 then madc.lo.s32.
    asm("mad.hi.cc.s32 %0, %2, %3, %4;\n\tmadc.lo.s32 %1, %2, %4, %3;"
        : "=&r"(r), "=&r"(r1) : "r"(a), "r"(b), "r"(c));
    o[16] = r; o[17] = r1;
    // 64-bit: add.cc.u64 / addc.u64, sub.cc.u64 / subc.u64,
    // mad.lo.cc.u64 / madc.hi.u64.
    asm("add.cc.u64 %0, %2, %3;\n\taddc.u64 %1, %2, %3;" : "=&l"(w0), "=&l"(w1) : "l"(wa), "l"(wb));
    o[18] = (unsigned)w0; o[19] = (unsigned)w1;
    asm("sub.cc.u64 %0, %2, %3;\n\tsubc.u64 %1, %3, %2;" : "=&l"(w0), "=&l"(w1) : "l"(wa), "l"(wb));
    o[20] = (unsigned)(w0 >> 32); o[21] = (unsigned)w1;
    asm("mad.lo.cc.u64 %0, %2, %3, %2;\n\tmadc.hi.u64 %1, %2, %3, %3;" : "=&l"(w0), "=&l"(w1) : "l"(wa), "l"(wb));
    o[22] = (unsigned)(w0 ^ (w0 >> 32)); o[23] = (unsigned)(w1 ^ (w1 >> 32));
}
