// Barriers that some threads skip on their way to the exit: GPUVerify's
// barrier-divergence failures that end the kernel, and the early returns
// that are fine. 64 threads (two warps); every kernel writes `out`.
// The H100 finished all five, and compute-sanitizer's synccheck (CUDA 13.0)
// reported nothing for any of them (hardware/skip-to-exit.txt).

// evenThenExit: the barrier is the last statement, under `idx % 2 == 0`;
// the odd threads exit instead. CUDA leaves it undefined; Volta and later
// complete it by the exits.
// Expect: non-uniform-barrier W (static, skipped by exit), line 15;
// divergent-barrier-in-warp W and barrier-completed-by-exit W, line 15.
extern "C" __global__ void evenThenExit(int* out) {
  int idx = threadIdx.x;
  out[idx] = idx;
  if (idx % 2 == 0) __syncthreads();
}

// loopTripThenExit: the trip count is idx % 4, and the loop's end is the
// kernel's: lanes leave the loop for the exit while others of their warp go
// round to the barrier again.
// Expect: divergent-barrier-in-warp W, line 27 (lanes that took part in
// earlier phases exited).
extern "C" __global__ void loopTripThenExit(int* out) {
  int idx = threadIdx.x;
  for (int i = 0; i < idx % 4; i++) {
    out[idx] += i;
    __syncthreads();
  }
}

// partialWarpEarlyReturn: `if (i >= n) return;` with n not a multiple of
// 32, before a barrier that guards what follows it.
// Expect: none.
extern "C" __global__ void partialWarpEarlyReturn(int* out) {
  int idx = threadIdx.x;
  if (idx >= 60) return;
  __syncthreads();
  out[idx] = 1;
}

// warpEarlyReturn: whole warps return early.
// Expect: none.
extern "C" __global__ void warpEarlyReturn(int* out) {
  int idx = threadIdx.x;
  if (idx >= 32) return;
  __syncthreads();
  out[idx] = 1;
}

// oddEarlyReturn: every other thread returns before a barrier that guards
// a store.
// Expect: none.
extern "C" __global__ void oddEarlyReturn(int* out) {
  int idx = threadIdx.x;
  if (idx % 2) return;
  __syncthreads();
  out[idx] = 1;
}
