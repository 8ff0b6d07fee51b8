// Half-precision arithmetic, one pair of operands per thread: the __half
// intrinsics (add.f16, sub.f16, mul.f16, fma.rn.f16, neg.f16, abs.f16,
// min.f16, max.f16, setp.*.f16) and the __half2 ones (add.f16x2 ... on two
// halves packed in 32 bits). `in` holds three rows of N halves, a, b and c
// (half-arith.bin, see half_arith.toml), chosen to have signed zeros,
// subnormals, infinities, NaNs and sums and products that round.
#include <cuda_fp16.h>

#define N 4096

extern "C" __global__ void half_arith(const __half* in, __half* out, unsigned short* cmp,
                                      __half2* out2) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  const __half* x = in;
  const __half* y = in + N;
  const __half* z = in + 2 * N;
  __half a = x[i], b = y[i], c = z[i];
  __half* o = out + 8 * i;
  o[0] = __hadd(a, b);
  o[1] = __hsub(a, b);
  o[2] = __hmul(a, b);
  o[3] = __hfma(a, b, c);
  o[4] = __hneg(a);
  o[5] = __habs(a);
  o[6] = __hmin(a, b);
  o[7] = __hmax(a, b);
  // Bit k: the k-th comparison of a with b (the last six are true on NaN).
  cmp[i] = __heq(a, b) | __hne(a, b) << 1 | __hlt(a, b) << 2 | __hle(a, b) << 3 |
           __hgt(a, b) << 4 | __hge(a, b) << 5 | __hequ(a, b) << 6 | __hneu(a, b) << 7 |
           __hltu(a, b) << 8 | __hleu(a, b) << 9 | __hgtu(a, b) << 10 | __hgeu(a, b) << 11;
  // The even threads: elements i and i + 1 of each row as one __half2.
  if (i % 2 == 0) {
    unsigned int j = i / 2;
    __half2 u = reinterpret_cast<const __half2*>(x)[j];
    __half2 v = reinterpret_cast<const __half2*>(y)[j];
    __half2 w = reinterpret_cast<const __half2*>(z)[j];
    __half2* o2 = out2 + 8 * j;
    o2[0] = __hadd2(u, v);
    o2[1] = __hsub2(u, v);
    o2[2] = __hmul2(u, v);
    o2[3] = __hfma2(u, v, w);
    o2[4] = __hneg2(u);
    o2[5] = __habs2(u);
    o2[6] = __hmin2(u, v);
    o2[7] = __hmax2(u, v);
  }
}
