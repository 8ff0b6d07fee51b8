// Barrier checker suite (issue 4): barriers in loops.
// Every kernel takes one buffer `out` (1024 ints, zeroed). Line numbers are
// lines of this file.

// loopTripCountByThread (128 threads): thread t executes the barrier of line
// 14 t % 4 times: lanes of one warp arrive different numbers of times, and
// the last rounds complete only as the threads with fewer rounds exit.
// Expect: divergent-barrier-in-warp, warning, line 14;
// barrier-completed-by-exit, warning, line 14.
extern "C" __global__ void loopTripCountByThread(int* out) {
  unsigned tid = threadIdx.x;
  int v = 0;
  for (unsigned i = 0; i < tid % 4; i++) {
    __syncthreads();  // <- lt
    v += i + 1;
  }
  out[tid] = v;
}

// loopTripCountByWarp (128 threads): warp w executes the barrier of line 29
// w + 1 times (uniform within a warp); rounds 2-4 complete only because the
// warps with fewer rounds leave the loop, store (line 32) and exit.
// Expect: barrier-completed-by-exit, warning, line 29
// (divergent-barrier-in-block acceptable in addition).
extern "C" __global__ void loopTripCountByWarp(int* out) {
  unsigned tid = threadIdx.x;
  int v = 0;
  for (unsigned i = 0; i <= tid / 32; i++) {
    __syncthreads();  // <- lw
    v += i + 1;
  }
  out[tid] = v;  // <- lwst
}

// loopUniformCorrect (128 threads): four rounds of store / barrier (line
// 45) / read the neighbour / barrier (line 47), same trip count for
// every thread. out[tid] = sum over t < 4 of (128 t + (tid + 1) % 128).
// Expect: none.
extern "C" __global__ void loopUniformCorrect(int* out) {
  __shared__ int s[128];
  unsigned tid = threadIdx.x;
  int acc = 0;
  for (int t = 0; t < 4; t++) {
    s[tid] = t * 128 + tid;
    __syncthreads();  // <- lu1
    acc += s[(tid + 1) % 128];
    __syncthreads();  // <- lu2
  }
  out[tid] = acc;
}
