// Runs one case of ../skip-to-exit.cu or ../../runtime/runtime.cu, named on
// the command line (nvcc -arch=sm_90 -lineinfo), and prints what happened:
// the CUDA errors and the sum of out[0..64). The H100 run used these
// kernels from a scratch copy of the two files.
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <cassert>
#include <cuda_runtime.h>
#include "../../runtime/runtime.cu"
#include "../skip-to-exit.cu"

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s -> %s (%s)\n", #x, cudaGetErrorName(e), cudaGetErrorString(e)); } } while (0)

int main(int argc, char** argv) {
  const char* c = argv[1];
  int* out; CHECK(cudaMalloc(&out, 4096)); CHECK(cudaMemset(out, 0, 4096));
  if (!strcmp(c, "printf")) { printEveryThread<<<2, 40>>>(36); }
  else if (!strcmp(c, "assert")) {
    int host[128]; for (int i = 0; i < 128; i++) host[i] = i;
    int* values; CHECK(cudaMalloc(&values, 512)); CHECK(cudaMemcpy(values, host, 512, cudaMemcpyHostToDevice));
    assertInBlockOne<<<2, 64>>>(values, 101);
  }
  else if (!strcmp(c, "trap")) { trapWhenAsked<<<1, 32>>>(5, out); }
  else if (!strcmp(c, "null")) {
    int** pointers; CHECK(cudaMalloc(&pointers, 32)); CHECK(cudaMemset(pointers, 0, 32));
    readThroughNull<<<1, 4>>>(pointers, out);
  }
  else if (!strcmp(c, "evenThenExit")) evenThenExit<<<1, 64>>>(out);
  else if (!strcmp(c, "loopTripThenExit")) loopTripThenExit<<<1, 64>>>(out);
  else if (!strcmp(c, "partialWarpEarlyReturn")) partialWarpEarlyReturn<<<1, 64>>>(out);
  else if (!strcmp(c, "warpEarlyReturn")) warpEarlyReturn<<<1, 64>>>(out);
  else if (!strcmp(c, "oddEarlyReturn")) oddEarlyReturn<<<1, 64>>>(out);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  int host[64]; CHECK(cudaMemcpy(host, out, 256, cudaMemcpyDeviceToHost));
  long sum = 0; for (int i = 0; i < 64; i++) sum += host[i];
  printf("case %s: done, sum of out[0..64) = %ld\n", c, sum);
  return 0;
}
