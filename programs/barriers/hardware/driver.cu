// Host driver for programs/barriers: runs one kernel, by name, with its launch
// shape, on a 1024-int zeroed buffer, and prints how it ended and a checksum of
// the buffer. hardware/run.sh runs it once per launch file under `timeout`, so
// a kernel that hangs is killed and recorded as hanging.
//
//   nvcc -arch=sm_90 -lineinfo -o driver driver.cu
//   ./driver KERNEL GRID BLOCK
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "../public-cases.cu"
#include "../named-barriers.cu"
#include "../divergence.cu"
#include "../functions.cu"
#include "../warp-sync.cu"
#include "../exits.cu"
#include "../loops.cu"
#include "kir-equivalents.cu"

typedef void (*Kernel)(int*);
struct Entry {
  const char* name;
  Kernel fn;
};
#define K(n) {#n, n},
static const Entry kTable[] = {
    K(ifElseSync) K(warpEarlyExit) K(condSync) K(spinDeadlock)
    K(namedBarrierPairs) K(producerConsumer) K(namedCountNotMultiple32) K(invalidBarrierId16) K(namedCountNeverReached)
    K(syncthreadsCountAndOr) K(syncthreadsCountDivergent) K(nestedDivergence) K(nestedUniformCorrect)
    K(ifElseSharedNeighbour) K(warpUniformIfElse) K(shapeDependentDeadlock)
    K(funcBarrierUniform) K(funcBarrierDivergent) K(funcBarrierBothArms)
    K(syncwarpCorrect) K(syncwarpMaskMissesCaller) K(syncwarpMaskExitedLanes) K(syncwarpNeverArrive)
    K(shflPartialCorrect) K(shflReadsInactiveLane) K(shflMaskAbsentLanes) K(ballotMaskExcludesCaller)
    K(partialWarpExit) K(exitInsideLoop) K(skipBarrierThenExit)
    K(loopTripCountByThread) K(loopTripCountByWarp) K(loopUniformCorrect)
    K(warpArrivesTwice) K(redMixedWithSync) K(countSmallerThanArrivals) K(unalignedBarriers)};

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s KERNEL GRID BLOCK\n", argv[0]);
    return 2;
  }
  Kernel fn = nullptr;
  for (const Entry& e : kTable)
    if (strcmp(e.name, argv[1]) == 0) fn = e.fn;
  if (!fn) {
    fprintf(stderr, "unknown kernel %s\n", argv[1]);
    return 2;
  }
  int grid = atoi(argv[2]), block = atoi(argv[3]);
  const int n = 1024;
  int* d = nullptr;
  cudaMalloc(&d, n * sizeof(int));
  cudaMemset(d, 0, n * sizeof(int));
  cudaDeviceSynchronize();
  printf("launch %s<<<%d, %d>>>\n", argv[1], grid, block);
  fflush(stdout);
  fn<<<grid, block>>>(d);
  cudaError_t launch = cudaGetLastError();
  cudaError_t sync = cudaDeviceSynchronize();
  if (launch != cudaSuccess || sync != cudaSuccess) {
    printf("status: error: launch %s, sync %s\n", cudaGetErrorString(launch), cudaGetErrorString(sync));
    return 1;
  }
  static int h[n];
  cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost);
  unsigned fnv = 2166136261u;
  long long sum = 0;
  for (int i = 0; i < n; i++) {
    sum += h[i];
    for (int b = 0; b < 4; b++) fnv = (fnv ^ ((unsigned)h[i] >> (8 * b) & 0xff)) * 16777619u;
  }
  printf("status: finished; sum %lld, fnv1a %08x\n", sum, fnv);
  // Every value, runs of equal values and of steps of the same difference collapsed.
  printf("out:");
  for (int i = 0; i < n;) {
    int j = i + 1;
    if (j < n) {
      long long d0 = (long long)h[j] - h[i];
      while (j + 1 < n && (long long)h[j + 1] - h[j] == d0) j++;
      if (j - i >= 2) {
        printf(" [%d..%d]=%d..%d(step %lld)", i, j, h[i], h[j], d0);
        i = j + 1;
        continue;
      }
    }
    printf(" [%d]=%d", i, h[i]);
    i++;
  }
  printf("\n");
  return 0;
}
