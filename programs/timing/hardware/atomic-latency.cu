// The latency of a global atomic: one thread, a chain of 1,000 dependent
// atomicAdds (each address from the last old value), and a chain of volatile
// loads that hit the L2, timed with clock64 (programs/timing/hardware/
// h100-atomic-latency.txt has the figures). Built with
// `nvcc -O3 -arch=sm_90 -o latency atomic-latency.cu`, run plain and under
// `ncu --metrics sm__cycles_active.max ./latency`. (The first session's
// version also ran the atomic chain over 1,024 sectors, `mask` 1023.)
#include <cstdio>
__global__ void chain(int* c, long long* out, int n, int mask) {
  int v = 0;
  long long t0 = clock64();
  for (int i = 0; i < n; i++) v = atomicAdd(&c[(v & mask) * 8], 1);
  long long t1 = clock64();
  out[0] = t1 - t0; out[1] = v;
}
__global__ void loads(int* c, long long* out, int n) {
  int v = 0;
  long long t0 = clock64();
  for (int i = 0; i < n; i++) v = ((volatile int*)c)[v];
  long long t1 = clock64();
  out[0] = t1 - t0; out[1] = v;
}
int main() {
  int* c; long long* out; long long h[2];
  cudaMalloc(&c, 1 << 20); cudaMalloc(&out, 16); cudaMemset(c, 0, 1 << 20);
  for (int r = 0; r < 3; r++) {
    cudaMemset(c, 0, 1 << 20);
    chain<<<1, 1>>>(c, out, 1000, 0); cudaMemcpy(h, out, 16, cudaMemcpyDeviceToHost);
    printf("atomic chain: %.1f cycles per atomic\n", h[0] / 1000.0);
  }
  for (int r = 0; r < 3; r++) {
    cudaMemset(c, 0, 1 << 20);
    loads<<<1, 1>>>(c, out, 1000); cudaMemcpy(h, out, 16, cudaMemcpyDeviceToHost);
    printf("volatile load chain: %.1f cycles per load\n", h[0] / 1000.0);
  }
  return 0;
}
