// Run on an H100 (nvcc -arch=sm_90 -O3; one warp), 2026-11-25: load_chain 34.8 cycles per load,
// store_then_other_load 48.8-50.4 cycles per iteration; store_load was folded by the compiler into
// registers (1.9 cycles) and measures nothing. See h100-local-stores.txt.
// Latency of local memory on one warp: a store then a load of the same
// address, chained through the loaded value; and a chain of loads alone.
#include <cstdio>
__global__ void store_load(unsigned long long* cycles, int* sink, int n, int seed) {
  int buffer[32];
  for (int i = 0; i < 32; i++) buffer[i] = seed + i;
  int v = seed & 7;
  unsigned long long start = clock64();
  for (int i = 0; i < n; i++) {
    buffer[v & 31] = v + 1;          // st.local
    v = buffer[v & 31];              // ld.local of the same word: waits for the store
  }
  unsigned long long end = clock64();
  sink[threadIdx.x] = v;
  if (threadIdx.x == 0) cycles[0] = end - start;
}
__global__ void load_chain(unsigned long long* cycles, int* sink, int n, int seed) {
  int buffer[32];
  for (int i = 0; i < 32; i++) buffer[i] = (i + 1 + seed) & 31;
  int v = seed & 31;
  unsigned long long start = clock64();
  for (int i = 0; i < n; i++) v = buffer[v];  // ld.local chain
  unsigned long long end = clock64();
  sink[threadIdx.x] = v;
  if (threadIdx.x == 0) cycles[0] = end - start;
}
__global__ void store_then_other_load(unsigned long long* cycles, int* sink, int n, int seed) {
  int buffer[32];
  for (int i = 0; i < 32; i++) buffer[i] = (i + 1 + seed) & 31;
  int v = seed & 31;
  unsigned long long start = clock64();
  for (int i = 0; i < n; i++) { buffer[(v + 16) & 31] = i; v = buffer[v]; }  // store elsewhere, load chain
  unsigned long long end = clock64();
  sink[threadIdx.x] = v;
  if (threadIdx.x == 0) cycles[0] = end - start;
}
int main() {
  unsigned long long* c; int* s; cudaMalloc(&c, 8); cudaMalloc(&s, 4096);
  for (int n : {1000, 2000}) {
    unsigned long long h;
    store_load<<<1, 32>>>(c, s, n, 0); cudaMemcpy(&h, c, 8, cudaMemcpyDeviceToHost);
    printf("store_load n=%d cycles=%llu per=%.2f\n", n, h, (double)h / n);
    load_chain<<<1, 32>>>(c, s, n, 0); cudaMemcpy(&h, c, 8, cudaMemcpyDeviceToHost);
    printf("load_chain n=%d cycles=%llu per=%.2f\n", n, h, (double)h / n);
    store_then_other_load<<<1, 32>>>(c, s, n, 0); cudaMemcpy(&h, c, 8, cudaMemcpyDeviceToHost);
    printf("store_then_other_load n=%d cycles=%llu per=%.2f\n", n, h, (double)h / n);
  }
  return 0;
}
