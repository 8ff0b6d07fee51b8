//! The scalar instructions of recent GPUs as CUDA code reaches them: the
//! sm_61 integer dot products (__dp4a, __dp2a_lo, __dp2a_hi), 128-bit integer
//! arithmetic that the compiler lowers to carry chains (add.cc/addc,
//! sub.cc/subc) next to the multi-word multiply that big-integer libraries
//! write with mad.lo.cc/madc in inline PTX, the 8-bit float conversions of
//! cuda_fp8.h, and the tf32 rounding of mma.h's wmma::__float_to_tf32 (the
//! same cvt.rna.tf32.f32, in inline PTX: mma.h needs the compiler's internal
//! headers). tests/modern_scalar.rs checks every output on the host.

#include <cuda_fp8.h>

// dot_products<<<..>>>(a, b, c, out, n): for each i, six words:
// __dp4a and __dp2a_lo/__dp2a_hi of a[i], b[i], c[i], each signed and
// unsigned.
extern "C" __global__ void dot_products(const unsigned* a, const unsigned* b, const unsigned* c,
                                        unsigned* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned x = a[i], y = b[i], z = c[i];
    out[6 * i + 0] = (unsigned)__dp4a((int)x, (int)y, (int)z);
    out[6 * i + 1] = __dp4a(x, y, z);
    out[6 * i + 2] = (unsigned)__dp2a_lo((int)x, (int)y, (int)z);
    out[6 * i + 3] = __dp2a_lo(x, y, z);
    out[6 * i + 4] = (unsigned)__dp2a_hi((int)x, (int)y, (int)z);
    out[6 * i + 5] = __dp2a_hi(x, y, z);
}

// The 128-bit product of two 64-bit numbers from 32-bit limbs, the
// schoolbook way multi-precision code writes it: each partial product's low
// half is added into one limb with mad.lo.cc and its high half, with the
// carry, into the next with madc.hi.
__device__ void multiply_64x64(unsigned long long a, unsigned long long b, unsigned limbs[4])
{
    unsigned a0 = (unsigned)a, a1 = (unsigned)(a >> 32);
    unsigned b0 = (unsigned)b, b1 = (unsigned)(b >> 32);
    unsigned r0, r1, r2, r3;
    asm("{\n\t"
        "mul.lo.u32 %0, %4, %6;\n\t"
        "mul.hi.u32 %1, %4, %6;\n\t"
        "mad.lo.cc.u32 %1, %5, %6, %1;\n\t"
        "madc.hi.u32 %2, %5, %6, 0;\n\t"
        "mad.lo.cc.u32 %1, %4, %7, %1;\n\t"
        "madc.hi.cc.u32 %2, %4, %7, %2;\n\t"
        "addc.u32 %3, 0, 0;\n\t"
        "mad.lo.cc.u32 %2, %5, %7, %2;\n\t"
        "madc.hi.u32 %3, %5, %7, %3;\n\t"
        "}"
        : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
        : "r"(a0), "r"(a1), "r"(b0), "r"(b1));
    limbs[0] = r0;
    limbs[1] = r1;
    limbs[2] = r2;
    limbs[3] = r3;
}

// wide_arithmetic<<<..>>>(a, b, out, n): for each i, with x = a[i] and
// y = b[i] (64-bit), twelve 32-bit words: the 128-bit x * y + (y:x) and
// (x:y) - (y:x) in unsigned __int128, low word first, then x * y from the
// inline-PTX multiply.
extern "C" __global__ void wide_arithmetic(const unsigned long long* a,
                                           const unsigned long long* b, unsigned* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long x = a[i], y = b[i];
    unsigned __int128 concatenated_yx = ((unsigned __int128)y << 64) | x;
    unsigned __int128 concatenated_xy = ((unsigned __int128)x << 64) | y;
    unsigned __int128 product_sum = (unsigned __int128)x * y + concatenated_yx;
    unsigned __int128 difference = concatenated_xy - concatenated_yx;
    unsigned* row = out + 12 * i;
    for (int word = 0; word < 4; ++word) {
        row[word] = (unsigned)(product_sum >> (32 * word));
        row[4 + word] = (unsigned)(difference >> (32 * word));
    }
    unsigned limbs[4];
    multiply_64x64(x, y, limbs);
    for (int word = 0; word < 4; ++word) {
        row[8 + word] = limbs[word];
    }
}

// A float of the range where the 8-bit formats round, go subnormal and
// saturate, from a random word: a random sign and mantissa and an exponent
// from 2^-20 to 2^19; in some threads the mantissa is made a tie for e4m3,
// for e5m2 or for tf32, and one thread in eight takes a special value
// instead (NaN, infinities, -0, the largest finite fp8 values and the ties
// just above them, an f32 subnormal, half the smallest e4m3 subnormal).
__device__ float shaped_input(unsigned random, unsigned i)
{
    unsigned sign = random & 0x80000000u;
    unsigned exponent = 107u + ((random >> 23) & 0xffu) % 40u;
    unsigned mantissa = random & 0x7fffffu;
    switch (i % 8u) {
    case 1: mantissa = (mantissa & ~0xfffffu) | 0x80000u; break;
    case 2: mantissa = (mantissa & ~0x1fffffu) | 0x100000u; break;
    case 3: mantissa = (mantissa & ~0x1fffu) | 0x1000u; break;
    case 4: {
        const unsigned specials[16] = {
            0x7fc00000u, 0xffc00000u, 0x7f800000u, 0xff800000u,
            0x80000000u, 0x43e00000u, 0x43e80000u, 0x47600000u,
            0x47700000u, 0x00000001u, 0x3a800000u, 0xba800000u,
            0x477ff000u, 0x43f00000u, 0x3a800001u, 0x00000000u,
        };
        return __uint_as_float(specials[(random >> 8) % 16u]);
    }
    default: break;
    }
    return __uint_as_float(sign | exponent << 23 | mantissa);
}

// What mma.h's wmma::__float_to_tf32 compiles to.
__device__ float float_to_tf32(float in)
{
    float out;
    asm("{\n\t.reg .b32 __$1;\n\tcvt.rna.tf32.f32 __$1, %1;\n\tmov.b32 %0, __$1;\n}"
        : "=f"(out)
        : "f"(in));
    return out;
}

// narrow_floats<<<..>>>(random, inputs, fp8, halves, tf32, n): for each i,
// the floats x = shaped_input(random[2i]) and y = shaped_input(random[2i+1])
// into inputs[2i], inputs[2i+1]; the pair (x, y) to e4m3x2 and e5m2x2 with
// saturation (x in the low byte, y in the high one) into fp8[2i], fp8[2i+1];
// those pairs back to half2 (x's half low) into halves[2i], halves[2i+1];
// x and y rounded to tf32 into tf32[2i], tf32[2i+1].
extern "C" __global__ void narrow_floats(const unsigned* random, float* inputs,
                                         unsigned short* fp8, unsigned* halves, float* tf32,
                                         int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = shaped_input(random[2 * i], 2u * i);
    float y = shaped_input(random[2 * i + 1], 2u * i + 1u);
    inputs[2 * i] = x;
    inputs[2 * i + 1] = y;
    float2 pair = make_float2(x, y);
    __nv_fp8x2_storage_t e4m3 = __nv_cvt_float2_to_fp8x2(pair, __NV_SATFINITE, __NV_E4M3);
    __nv_fp8x2_storage_t e5m2 = __nv_cvt_float2_to_fp8x2(pair, __NV_SATFINITE, __NV_E5M2);
    fp8[2 * i] = e4m3;
    fp8[2 * i + 1] = e5m2;
    __half2_raw wide_e4m3 = __nv_cvt_fp8x2_to_halfraw2(e4m3, __NV_E4M3);
    __half2_raw wide_e5m2 = __nv_cvt_fp8x2_to_halfraw2(e5m2, __NV_E5M2);
    halves[2 * i] = (unsigned)wide_e4m3.x | (unsigned)wide_e4m3.y << 16;
    halves[2 * i + 1] = (unsigned)wide_e5m2.x | (unsigned)wide_e5m2.y << 16;
    tf32[2 * i] = float_to_tf32(x);
    tf32[2 * i + 1] = float_to_tf32(y);
}
