// A mixed-precision dot product: __half inputs (as a network's weights and
// activations), products accumulated in float, each warp by shuffles and
// the warps' sums by atomicAdd on a float per block.
// cuda_fp16.h is not one of NVRTC's built-in headers: compile with the CUDA
// runtime's include directory, see programs/corpus/README.md.
#include <cuda_fp16.h>

extern "C" __global__ void half_dot(const __half* a, const __half* b, float* out) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  float p = __half2float(a[i]) * __half2float(b[i]);
  for (int o = 16; o > 0; o /= 2) p += __shfl_down_sync(0xffffffff, p, o);
  if (threadIdx.x % 32 == 0) atomicAdd(&out[blockIdx.x], p);
}
