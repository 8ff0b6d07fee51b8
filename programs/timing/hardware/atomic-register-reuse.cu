// Does a warp's returned atomic wait for its earlier ones? 132 blocks of 256
// threads, lane 0 of each warp (j: every lane) issues 16 atomicAdds
// (programs/timing/hardware/h100-atomic-chains.txt has the figures). Built
// with `nvcc -O3 -arch=sm_90 -o serial atomic-register-reuse.cu`, run under
// `ncu --metrics gpc__cycles_elapsed.max,sm__cycles_active.max,smsp__inst_executed.sum`.
#include <cstdio>
#define K 16
#define W ((blockIdx.x * blockDim.x + threadIdx.x) / 32)
__global__ void c_own_sector(int* c, int* out) {
  int v = 0;
  for (int k = 0; k < K; k++) if (threadIdx.x % 32 == 0) v += atomicAdd(&c[W * 8], 1);
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
__global__ void g_sixteen_sectors(int* c, int* out) {
  int v = 0;
  for (int k = 0; k < K; k++) if (threadIdx.x % 32 == 0) v += atomicAdd(&c[(W * K + k) * 8], 1);
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
__global__ void h_two_sectors(int* c, int* out) {
  int v = 0;
  for (int k = 0; k < K; k++) if (threadIdx.x % 32 == 0) v += atomicAdd(&c[(W * 2 + k % 2) * 8], 1);
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
__global__ void i_own_sector_red(int* c, int* out) {
  for (int k = 0; k < K; k++) if (threadIdx.x % 32 == 0) atomicAdd(&c[W * 8], 1);
}
__global__ void j_own_sector_all_lanes(int* c, int* out) {
  int v = 0;
  for (int k = 0; k < K; k++) v += atomicAdd(&c[W * 32 + threadIdx.x % 32], 1);
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
__global__ void k_own_sector_chain(int* c, int* out) {
  int v = 1;
  for (int k = 0; k < K; k++) if (threadIdx.x % 32 == 0) v = atomicAdd(&c[W * 8], v) & 1 | 1;
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
__global__ void l_same_word_two_lanes(int* c, int* out) {
  int v = 0;
  for (int k = 0; k < K; k++) if (threadIdx.x % 32 < 2) v += atomicAdd(&c[W * 8 + threadIdx.x % 32], 1);
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
int main() {
  int *c, *out;
  cudaMalloc(&c, 1 << 26); cudaMalloc(&out, 1 << 24);
  cudaMemset(c, 0, 1 << 26);
  for (int r = 0; r < 2; r++) {
    c_own_sector<<<132, 256>>>(c, out);
    g_sixteen_sectors<<<132, 256>>>(c, out);
    h_two_sectors<<<132, 256>>>(c, out);
    i_own_sector_red<<<132, 256>>>(c, out);
    j_own_sector_all_lanes<<<132, 256>>>(c, out);
    k_own_sector_chain<<<132, 256>>>(c, out);
    l_same_word_two_lanes<<<132, 256>>>(c, out);
  }
  cudaDeviceSynchronize();
  printf("done %s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
