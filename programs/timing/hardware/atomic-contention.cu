// Global atomics piling onto one 32-byte sector, and spread apart, on the GPU
// (programs/timing/hardware/h100-atomic-contention.txt has the figures):
// 132 or 528 blocks of 256 threads, each warp 16 atomicAdds.
// Built with `nvcc -O3 -arch=sm_90 -o contend atomic-contention.cu`, run under
// `ncu --metrics gpc__cycles_elapsed.max,sm__cycles_active.max,smsp__inst_executed.sum`.
#include <cstdio>
#define K 16
// A: one lane per warp, same address, old value used.
__global__ void a_one_lane_same(int* c, int* out) {
  int v = 0;
  for (int k = 0; k < K; k++) if (threadIdx.x % 32 == 0) v += atomicAdd(&c[0], 1);
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
// B: every lane, same address, old value used.
__global__ void b_all_lanes_same(int* c, int* out) {
  int v = 0;
  for (int k = 0; k < K; k++) v += atomicAdd(&c[0], 1);
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
// C: one lane per warp, an address per warp (its own sector), old value used.
__global__ void c_one_lane_apart(int* c, int* out) {
  int v = 0;
  int w = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  for (int k = 0; k < K; k++) if (threadIdx.x % 32 == 0) v += atomicAdd(&c[w * 8], 1);
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
// D: one lane per warp, same address, old value unused (RED).
__global__ void d_one_lane_same_red(int* c, int* out) {
  for (int k = 0; k < K; k++) if (threadIdx.x % 32 == 0) atomicAdd(&c[0], 1);
}
// E: every lane, same address, unused (RED).
__global__ void e_all_lanes_same_red(int* c, int* out) {
  for (int k = 0; k < K; k++) atomicAdd(&c[0], 1);
}
// F: one lane per warp, 8 addresses in one sector (warp % 8), used.
__global__ void f_one_lane_sector(int* c, int* out) {
  int v = 0;
  int w = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  for (int k = 0; k < K; k++) if (threadIdx.x % 32 == 0) v += atomicAdd(&c[w % 8], 1);
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
int main() {
  int *c, *out;
  cudaMalloc(&c, 1 << 24); cudaMalloc(&out, 1 << 24);
  for (int blocks : {132, 528}) {
    cudaMemset(c, 0, 1 << 24);
    a_one_lane_same<<<blocks, 256>>>(c, out);
    b_all_lanes_same<<<blocks, 256>>>(c, out);
    c_one_lane_apart<<<blocks, 256>>>(c, out);
    d_one_lane_same_red<<<blocks, 256>>>(c, out);
    e_all_lanes_same_red<<<blocks, 256>>>(c, out);
    f_one_lane_sector<<<blocks, 256>>>(c, out);
  }
  cudaDeviceSynchronize();
  printf("done %s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
