// Barrier checker suite (issue 4): threads exiting before barriers.
// (warpEarlyExit and condSync, the public cases, are in public-cases.cu.)
// Every kernel takes one buffer `out` (1024 ints, zeroed). Line numbers are
// lines of this file.

// partialWarpExit (128 threads): lanes 16-31 of every warp return (line
// 14) before any barrier; lanes 0-15 then synchronise at line 16 and
// read a word written by their own half-warp. Exited threads are not expected
// at a barrier, and the remaining lanes of each warp arrive together.
// Expect: none. out[tid] = tid ^ 15 for lanes 0-15, 0 for the others.
extern "C" __global__ void partialWarpExit(int* out) {
  __shared__ int s[128];
  unsigned tid = threadIdx.x, lane = tid % 32;
  if (lane >= 16) return;  // <- pw0
  s[tid] = tid;
  __syncthreads();  // <- pw
  out[tid] = s[tid ^ 15];
}

// exitInsideLoop (128 threads): four rounds of store / barrier (line 31) /
// read / barrier (line 37); after round i's first barrier warp i records
// its result and returns (line 35), so each round synchronises one warp
// fewer. Whole warps exit, none passes a barrier without waiting.
// Expect: none.
extern "C" __global__ void exitInsideLoop(int* out) {
  __shared__ int s[128];
  unsigned tid = threadIdx.x;
  int acc = 0;
  for (unsigned i = 0; i < 4; i++) {
    s[tid] = i * 1000 + tid;
    __syncthreads();  // <- el1
    acc += s[tid ^ 32];
    if (tid / 32 == i) {
      out[tid] = acc;
      return;  // <- el0
    }
    __syncthreads();  // <- el2
  }
}

// skipBarrierThenExit (128 threads): warps 0-1 store, wait at the barrier of
// line 52 and read the words of warps 2-3; warps 2-3 store, skip the
// barrier, read the words of warps 0-1 (line 55) and exit, which is what
// completes the barrier.
// Expect: barrier-completed-by-exit, warning, line 52 (divergent-barrier-in-
// block acceptable in addition); shared-race (read-after-write), line 55.
extern "C" __global__ void skipBarrierThenExit(int* out) {
  __shared__ int s[128];
  unsigned tid = threadIdx.x;
  s[tid] = tid + 1;
  if (tid < 64) {
    __syncthreads();  // <- sb
    out[tid] = s[tid + 64];
  } else {
    out[tid] = s[tid - 64];  // <- sbst
  }
}
