// Layer normalisation of rows of 256 floats (one block of 256 threads per
// row): mean and variance by block reductions, then (x - mean) * rsqrt(var + eps)
// scaled by gamma and shifted by beta.
#define ROW 256

__device__ __forceinline__ float blockSum(float v, float* red) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = v;
  __syncthreads();
  float s = 0.0f;
  for (int w = 0; w < ROW / 32; w++) s += red[w];
  __syncthreads();
  return s;
}

extern "C" __global__ void layernorm_rows(const float* in, const float* gamma, const float* beta,
                                          float* out, float eps) {
  __shared__ float red[32];
  unsigned int tid = threadIdx.x;
  float x = in[blockIdx.x * ROW + tid];
  float mean = blockSum(x, red) / ROW;
  float d = x - mean;
  float var = blockSum(d * d, red) / ROW;
  out[blockIdx.x * ROW + tid] = d * rsqrtf(var + eps) * gamma[tid] + beta[tid];
}
