//! bfloat16 (cuda_bf16.h) arithmetic and conversions, checked bit for bit
//! against the host by tests/corpus.rs.
//
// bf16_arith: one pair of operands per thread, the __nv_bfloat16 intrinsics
// (add.bf16, sub.bf16, mul.bf16, fma.rn.bf16, neg.bf16, abs.bf16, min.bf16,
// max.bf16, their .NaN forms, fma.rn.relu.bf16, __hfma_sat's inline PTX of
// fma, max and min, setp.*.bf16, set.nan.bf16.bf16) and the __nv_bfloat162
// ones (the same on two values packed in 32 bits, and set.lt.bf16x2.bf16x2).
// `in` holds three rows of N values, a, b and c (bf16-arith.bin, see
// bf16_arith.toml), chosen to have signed zeros, subnormals, infinities,
// NaNs, and sums and products that round.
//
// bf16_convert: conversions to bfloat16 from float, double and the integer
// types with each rounding, from bfloat16 to float and the integer types,
// bfloat16 rounded to integral values, and two floats into a
// __nv_bfloat162 and a __half2 (bf16-convert-*.bin, see bf16_convert.toml).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#define N 4096

extern "C" __global__ void bf16_arith(const __nv_bfloat16* in, __nv_bfloat16* out,
                                      unsigned short* cmp, __nv_bfloat162* out2) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  const __nv_bfloat16* x = in;
  const __nv_bfloat16* y = in + N;
  const __nv_bfloat16* z = in + 2 * N;
  __nv_bfloat16 a = x[i], b = y[i], c = z[i];
  __nv_bfloat16* o = out + 12 * i;
  o[0] = __hadd(a, b);
  o[1] = __hsub(a, b);
  o[2] = __hmul(a, b);
  o[3] = __hfma(a, b, c);
  o[4] = __hneg(a);
  o[5] = __habs(a);
  o[6] = __hmin(a, b);
  o[7] = __hmax(a, b);
  o[8] = __hmin_nan(a, b);
  o[9] = __hmax_nan(a, b);
  o[10] = __hfma_relu(a, b, c);
  o[11] = __hfma_sat(a, b, c);
  // Bit k: the k-th comparison of a with b (the last six are true on NaN),
  // then whether a is a NaN.
  cmp[i] = __heq(a, b) | __hne(a, b) << 1 | __hlt(a, b) << 2 | __hle(a, b) << 3 |
           __hgt(a, b) << 4 | __hge(a, b) << 5 | __hequ(a, b) << 6 | __hneu(a, b) << 7 |
           __hltu(a, b) << 8 | __hleu(a, b) << 9 | __hgtu(a, b) << 10 | __hgeu(a, b) << 11 |
           __hisnan(a) << 12;
  // The even threads: elements i and i + 1 of each row as one __nv_bfloat162.
  if (i % 2 == 0) {
    unsigned int j = i / 2;
    __nv_bfloat162 u = reinterpret_cast<const __nv_bfloat162*>(x)[j];
    __nv_bfloat162 v = reinterpret_cast<const __nv_bfloat162*>(y)[j];
    __nv_bfloat162 w = reinterpret_cast<const __nv_bfloat162*>(z)[j];
    __nv_bfloat162* o2 = out2 + 12 * j;
    o2[0] = __hadd2(u, v);
    o2[1] = __hsub2(u, v);
    o2[2] = __hmul2(u, v);
    o2[3] = __hfma2(u, v, w);
    o2[4] = __hneg2(u);
    o2[5] = __habs2(u);
    o2[6] = __hmin2(u, v);
    o2[7] = __hmax2(u, v);
    o2[8] = __hmin2_nan(u, v);
    o2[9] = __hmax2_nan(u, v);
    o2[10] = __hfma2_relu(u, v, w);
    o2[11] = __hlt2(u, v);
  }
}

extern "C" __global__ void bf16_convert(const float* f, const double* d, const long long* n,
                                        const __nv_bfloat16* h, __nv_bfloat16* out, int* ints,
                                        long long* longs, unsigned int* words, float* floats,
                                        __nv_bfloat162* pairs, __half2* half_pairs) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  float x = f[i];
  long long k = n[i];
  __nv_bfloat16 v = h[i];
  __nv_bfloat16* o = out + 16 * i;
  o[0] = __float2bfloat16(x);
  o[1] = __float2bfloat16_rz(x);
  o[2] = __float2bfloat16_rd(x);
  o[3] = __float2bfloat16_ru(x);
  o[4] = __double2bfloat16(d[i]);
  o[5] = __int2bfloat16_rn((int)k);
  o[6] = __int2bfloat16_rz((int)k);
  o[7] = __ll2bfloat16_rn(k);
  o[8] = __ull2bfloat16_rd((unsigned long long)k);
  o[9] = __uint2bfloat16_ru((unsigned int)k);
  o[10] = __short2bfloat16_rn((short)k);
  o[11] = __ushort2bfloat16_rz((unsigned short)k);
  o[12] = htrunc(v);
  o[13] = hceil(v);
  o[14] = hfloor(v);
  o[15] = hrint(v);
  ints[4 * i] = __bfloat162int_rn(v);
  ints[4 * i + 1] = __bfloat162int_rz(v);
  ints[4 * i + 2] = __bfloat162int_rd(v);
  ints[4 * i + 3] = __bfloat162int_ru(v);
  longs[2 * i] = __bfloat162ll_rz(v);
  longs[2 * i + 1] = (long long)__bfloat162ull_rn(v);
  words[2 * i] = __bfloat162uint_rn(v);
  words[2 * i + 1] = __bfloat162ushort_rz(v);
  floats[i] = __bfloat162float(v);
  // x goes to the low element (.x), its neighbour to the high one (.y).
  float neighbour = f[i ^ 1];
  pairs[i] = __floats2bfloat162_rn(x, neighbour);
  half_pairs[i] = __floats2half2_rn(x, neighbour);
}
