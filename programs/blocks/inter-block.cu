// Blocks that wait for each other (issue 9): block 0 spins on a flag that
// block 1 sets, which finishes only if both blocks are resident at once.
// An H100 or H200 finishes at once; out = {1, 2}.
extern "C" __global__ void interBlock(volatile int* flag, int* out) {
  if (blockIdx.x == 0) { if (threadIdx.x == 0) { while (flag[0] == 0) { } out[0] = 1; } }
  else if (threadIdx.x == 0) { out[1] = 2; __threadfence(); flag[0] = 1; }
}
