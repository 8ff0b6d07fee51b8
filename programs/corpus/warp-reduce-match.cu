// Warp-level reductions and matches, and the small integer and float
// intrinsics: __reduce_add/min/or_sync (redux.sync, sm_80+),
// __match_any/all_sync (match.sync), __sad (sad.s32), copysignf (copysign),
// __mul24 (NVRTC: mul.lo of the 24-bit operands) and mul24.hi and testp
// through inline PTX (NVRTC compiles isfinite/isnan to setp on fabsf).
// Blocks of 48 threads: the second warp of each block holds 16, and the full
// mask names 16 lanes without a thread. Odd and even values reduce apart
// in the two arms of a branch, each with its own mask.
extern "C" __global__ void warp_reduce_match(const unsigned* in, const unsigned* xbits,
                                             unsigned* out, float* fout, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const unsigned full = 0xffffffffu;
    unsigned v = in[i];
    int s = (int)v;
    unsigned key = v & 3;
    unsigned* o = out + 12 * i;
    o[0] = __reduce_add_sync(full, v & 0xffff);
    o[1] = (unsigned)__reduce_min_sync(full, s);
    o[2] = __reduce_or_sync(full, v & 0xff00ff00u);
    o[3] = __match_any_sync(full, key);
    int all;
    o[4] = __match_all_sync(full, key | 4, &all);
    o[5] = all;
    unsigned odd = __ballot_sync(full, v & 1);
    if (v & 1) {
        o[6] = __reduce_add_sync(odd, v >> 16);
    } else {
        o[6] = __reduce_add_sync(~odd, v >> 20);
    }
    o[7] = __mul24(s, s >> 7);
    unsigned hi;
    asm("mul24.hi.u32 %0, %1, %2;" : "=r"(hi) : "r"(v), "r"(v >> 5));
    o[8] = hi;
    o[9] = __sad(s, s >> 3, 11u);
    // Specials: an all-ones exponent (infinity or NaN) for v % 8 == 0, a
    // zero exponent (zero or subnormal) for v % 8 == 1.
    unsigned b = xbits[i];
    if ((v & 7) == 0) b |= 0x7f800000u;
    if ((v & 7) == 1) b &= 0x807fffffu;
    float f = __uint_as_float(b);
    unsigned classes;
    asm("{\n\t.reg .pred p, q, r;\n\t"
        "testp.notanumber.f32 p, %1;\n\t"
        "testp.subnormal.f32 q, %1;\n\t"
        "testp.normal.f32 r, %1;\n\t"
        "selp.u32 %0, 1, 0, p;\n\t"
        "@q or.b32 %0, %0, 2;\n\t"
        "@r or.b32 %0, %0, 4;\n\t"
        "}"
        : "=r"(classes) : "f"(f));
    o[10] = classes;
    o[11] = (isfinite(f) ? 8u : 0u) | (isnan(f) ? 16u : 0u);
    fout[i] = copysignf(1.5f + (float)(v & 7), f);
}
