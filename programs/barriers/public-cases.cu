// Barrier checker suite (issue 4): the four public cases of
// ../shared/reference/barriers.md, exactly as described there.
// Every kernel of programs/barriers takes one buffer `out` (1024 ints,
// zeroed) and writes its result there. Line numbers are lines of this file.

// ifElseSync (128 threads): seed 003's if/else pair. Even threads wait at the
// barrier of line 15, odd threads at the one of line 18: the two
// halves of every warp wait at different barrier instructions.
// Expect: divergent-barrier-in-warp, warning, lines 15 and 18
// (it completes on sm_70+, where bar.sync 0 counts threads, not instructions).
extern "C" __global__ void ifElseSync(int* out) {
  unsigned tid = threadIdx.x;
  if (tid % 2 == 0) {
    out[tid] = 1;
    __syncthreads();  // <- ies1
  } else {
    out[tid] = 2;
    __syncthreads();  // <- ies2
  }
  out[128 + tid] = tid;
}

// warpEarlyExit (128 threads): warps 2 and 3 return before the barrier of
// line 32; warps 0 and 1 synchronise among themselves (exited threads
// are not expected at a barrier).
// Expect: none.
extern "C" __global__ void warpEarlyExit(int* out) {
  __shared__ int s[64];
  unsigned tid = threadIdx.x;
  if (tid >= 64) return;
  s[tid] = tid * 3;
  __syncthreads();  // <- wee
  out[tid] = s[63 - tid];
}

// condSync (128 threads): only warps 0 and 1 execute the barrier of line
// 44; warps 2 and 3 skip it, go on to the store of line 45 and exit,
// and only their exit completes the barrier.
// Expect: barrier-completed-by-exit, warning, line 44 (the skipping threads
// run line 45); a divergent-barrier-in-block warning at line 44 is
// also acceptable.
extern "C" __global__ void condSync(int* out) {
  unsigned tid = threadIdx.x;
  if (tid < 64) __syncthreads();  // <- cs
  out[tid] = tid + 1;  // <- csst
}

// spinDeadlock (64 threads): warp 0 waits at the barrier of line 57 and
// only then (line 58) sets the flag that warp 1 spins on at line 60;
// warp 1 never reaches a barrier.
// Expect: livelock, error: warp 0 waits at line 57 for warp 1, which spins
// at line 60 on the flag written at line 58. Hangs on hardware.
extern "C" __global__ void spinDeadlock(int* out) {
  volatile int* flag = out + 1000;
  unsigned tid = threadIdx.x;
  if (tid < 32) {
    __syncthreads();  // <- sd1
    if (tid == 0) *flag = 1;  // <- sd2
  } else {
    while (*flag == 0) {  // <- sd3
    }
  }
  out[tid] = tid;
}
