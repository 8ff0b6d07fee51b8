// Warp reductions of 64-bit values: __shfl_down_sync on a double and
// __shfl_xor_sync on a long long shuffle the two 32-bit halves separately,
// which NVRTC writes as mov.b64 {lo, hi} unpacking and mov.b64 {lo, hi}
// packing; __halves2half2 packs two halves with mov.b32 {a, b}, and
// __double2hiint / __double2loint unpack a double.
#include <cuda_fp16.h>

extern "C" __global__ void warp_sum_wide(const double* x, const long long* y, const __half* h,
                                         double* dsum, long long* lsum, __half2* pairs,
                                         int* words, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double v = x[i];
    long long w = y[i];
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_down_sync(0xffffffff, v, offset);
        w += __shfl_xor_sync(0xffffffff, w, offset);
    }
    if ((threadIdx.x & 31) == 0) dsum[i / 32] = v;
    lsum[i] = w;
    pairs[i] = __halves2half2(h[i], h[(i + 1) % n]);
    words[2 * i] = __double2hiint(x[i]);
    words[2 * i + 1] = __double2loint(x[i]);
}
