// Host side of programs/schedule/load-store-pairs.cu on a GPU: five launches of one warp,
// printing the kernel's clock64 cycles (h200-load-schedule.txt).
// nvcc -arch=sm_90 -O3 -o pairs load-store-pairs.cu && ./pairs
#include <cstdio>
#include "../../schedule/load-store-pairs.cu"
int main() {
  float *in, *out; long long* cycles;
  cudaMalloc(&in, 8 * 1024 * 4 * 4);
  cudaMalloc(&out, 128);
  cudaMalloc(&cycles, 8);
  cudaMemset(in, 0, 8 * 1024 * 4 * 4);
  for (int run = 0; run < 5; run++) {
    load_store_pairs<<<1, 32>>>(in, out, cycles);
    long long c;
    cudaMemcpy(&c, cycles, 8, cudaMemcpyDeviceToHost);
    printf("run %d: %lld cycles\n", run, c);
  }
  return 0;
}
