// L2 bandwidth on the H100 (h100-l2-bandwidth.txt): all SMs read (or write)
// a 16 MiB buffer that stays in the L2, bypassing the L1 (ld/st.global.cg).
#include <cstdio>
#include <cuda_runtime.h>
__global__ void l2read(const float4* __restrict__ p, size_t n, int reps, float* out) {
  float acc = 0.f;
  for (int r = 0; r < reps; r++)
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
      float4 v = __ldcg(&p[i]);
      acc += v.x + v.y + v.z + v.w;
    }
  if (acc == 1234.5f) out[0] = acc;
}
__global__ void l2write(float4* p, size_t n, int reps) {
  for (int r = 0; r < reps; r++)
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
      __stcg(&p[i], make_float4(r, i, 0, 0));
}
int main() {
  size_t bytes = 16u << 20, n = bytes / 16;
  int reps = 50;
  float4* p; float* out;
  cudaMalloc(&p, bytes); cudaMalloc(&out, 4); cudaMemset(p, 0, bytes);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  int grid = 132 * 8, block = 256;
  for (int kind = 0; kind < 2; kind++) {
    float best = 1e9;
    for (int t = 0; t < 5; t++) {
      cudaEventRecord(a);
      if (kind == 0) l2read<<<grid, block>>>(p, n, reps, out); else l2write<<<grid, block>>>(p, n, reps);
      cudaEventRecord(b); cudaEventSynchronize(b);
      float ms; cudaEventElapsedTime(&ms, a, b); if (ms < best) best = ms;
    }
    double total = (double)bytes * reps;
    printf("%s: %.3f ms, %.1f GB/s\n", kind == 0 ? "l2 read" : "l2 write", best, total / (best * 1e6));
  }
  return 0;
}
