// Row-wise softmax, as attention and classifier layers use it: one block of
// 256 threads per row of 256 floats; the row's maximum and the sum of
// exponentials are block reductions (warp shuffles, then shared memory).
#define ROW 256

__device__ __forceinline__ float warpMax(float v) {
  for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
  return v;
}

__device__ __forceinline__ float warpSum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffff, v, o);
  return v;
}

extern "C" __global__ void softmax_rows(const float* in, float* out) {
  __shared__ float red[32];
  unsigned int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const float* row = in + blockIdx.x * ROW;
  float x = row[tid];
  float m = warpMax(x);
  if (lane == 0) red[warp] = m;
  __syncthreads();
  m = red[0];
  for (int w = 1; w < ROW / 32; w++) m = fmaxf(m, red[w]);
  __syncthreads();
  float e = expf(x - m);
  float s = warpSum(e);
  if (lane == 0) red[warp] = s;
  __syncthreads();
  s = 0.0f;
  for (int w = 0; w < ROW / 32; w++) s += red[w];
  out[blockIdx.x * ROW + tid] = e / s;
}
