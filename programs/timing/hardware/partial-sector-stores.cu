// Partial-sector stores: the sweep behind docs/timing.md, "Stores and fences"
// (its output is h200-stores-sweep.txt). funnel_lop3, wide_arithmetic,
// half_arith, bf16_arith and transpose_naive_2048 store 2 or 4 bytes a lane at
// 16-48-byte strides, and warpsim ran them 40-59% fast.
// Each thread stores `stores` elements of E bytes at a stride of S bytes
// between lanes (the warp's request spans 32 x S bytes), for E = 2, 4, 8, 16
// and strides from E (coalesced) to 128 bytes, on 1, 16 and 132 blocks of 256
// threads. Printed: block 0's clock64 cycles from the first store to the end
// of a __threadfence (the stores have reached the L2), the slowest block's,
// and the launch's best wall time of 5. Under ncu (`profile` as the first
// argument: each launch once) sm__cycles_active.max and the L1's and the L2's
// store sectors and requests.
// nvcc -arch=sm_90 -O3 -o partial partial-sector-stores.cu && ./partial
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <vector>

template <typename T>
__global__ void strided_stores(char* out, long long* cycles, int stride_bytes, int stores) {
  char* base = out + (size_t)(blockIdx.x * blockDim.x + threadIdx.x) * stride_bytes;
  size_t step = (size_t)gridDim.x * blockDim.x * stride_bytes;
  T value;
  memset(&value, 0, sizeof(T));
  reinterpret_cast<unsigned char*>(&value)[0] = threadIdx.x;
  __syncthreads();
  long long start = clock64();
#pragma unroll 4
  for (int k = 0; k < stores; k++) *reinterpret_cast<T*>(base + k * step) = value;
  __threadfence();
  __syncthreads();
  long long end = clock64();
  if (threadIdx.x == 0) cycles[blockIdx.x] = end - start;
}

template <typename T>
void launch(int grid, int stride, int stores, char* out, long long* cycles) {
  strided_stores<T><<<grid, 256>>>(out, cycles, stride, stores);
}

int main(int argc, char** argv) {
  bool profile = argc > 1 && strcmp(argv[1], "profile") == 0;
  struct Config { int element, stride; };
  std::vector<Config> configs = {
      {2, 2}, {2, 4}, {2, 8}, {2, 16}, {2, 24}, {2, 32}, {2, 64},
      {4, 4}, {4, 8}, {4, 16}, {4, 32}, {4, 48}, {4, 64}, {4, 128},
      {8, 8}, {8, 16}, {8, 32}, {8, 64},
      {16, 16}, {16, 32}, {16, 64}};
  int grids[] = {1, 16, 132};
  char* out;
  long long* cycles;
  size_t bytes = (size_t)64 << 20;
  cudaMalloc(&out, bytes);
  cudaMalloc(&cycles, 132 * 8);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int grid : grids)
    for (Config c : configs) {
      int stores = grid > 16 ? 8 : 32;
      float best = 1e9;
      std::vector<long long> host(grid);
      for (int r = 0; r < (profile ? 1 : 5); r++) {
        cudaEventRecord(a);
        switch (c.element) {
          case 2: launch<unsigned short>(grid, c.stride, stores, out, cycles); break;
          case 4: launch<unsigned>(grid, c.stride, stores, out, cycles); break;
          case 8: launch<unsigned long long>(grid, c.stride, stores, out, cycles); break;
          default: launch<uint4>(grid, c.stride, stores, out, cycles); break;
        }
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms;
        cudaEventElapsedTime(&ms, a, b);
        best = std::min(best, ms);
        cudaMemcpy(host.data(), cycles, grid * 8, cudaMemcpyDeviceToHost);
      }
      long long slowest = *std::max_element(host.begin(), host.end());
      printf("grid %d element %d stride %d stores %d block0_cycles %lld slowest_cycles %lld best_us %.2f\n",
             grid, c.element, c.stride, stores, host[0], slowest, best * 1000);
    }
  cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess) printf("error: %s\n", cudaGetErrorString(error));
}
