// A global atomic's latency as the number of warps with one in flight
// grows: lane 0 of every warp runs a chain of 16 dependent atomicAdds on its
// own sector (each address from the last old value, masked to nothing at
// run time), or 16 independent ones whose results are summed after
// (programs/timing/hardware/h100-atomic-chains.txt has the figures). Built
// with `nvcc -O3 -arch=sm_90 -o load atomic-chain-load.cu`, run under
// `ncu --metrics gpc__cycles_elapsed.max,sm__cycles_active.max,smsp__inst_executed.sum`.
#include <cstdio>
#define K 16
#define W ((blockIdx.x * blockDim.x + threadIdx.x) / 32)
__global__ void chain(int* c, int* out, int mask) {
  int v = 0;
  if (threadIdx.x % 32 == 0)
    for (int k = 0; k < K; k++) v = atomicAdd(&c[W * 8 + (v & mask)], 1);
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
__global__ void independent(int* c, int* out, int mask) {
  int r[K];
  if (threadIdx.x % 32 == 0) {
#pragma unroll
    for (int k = 0; k < K; k++) r[k] = atomicAdd(&c[W * 8], 1);
    int v = 0;
#pragma unroll
    for (int k = 0; k < K; k++) v ^= r[k] * (k + 1);
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
  }
}
__global__ void nothing(int* c, int* out, int mask) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = mask;
}
int main() {
  int *c, *out;
  cudaMalloc(&c, 1 << 26); cudaMalloc(&out, 1 << 24);
  cudaMemset(c, 0, 1 << 26);
  int shapes[][2] = {{1, 32}, {132, 32}, {132, 128}, {132, 256}, {528, 256}, {1056, 256}};
  for (auto& s : shapes) {
    nothing<<<s[0], s[1]>>>(c, out, 0);
    chain<<<s[0], s[1]>>>(c, out, 0);
    independent<<<s[0], s[1]>>>(c, out, 0);
  }
  cudaDeviceSynchronize();
  printf("done %s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
