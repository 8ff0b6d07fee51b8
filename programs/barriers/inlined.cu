// A barrier inside a device function that NVRTC inlines, called under a
// divergent branch: findings are reported at the call (the user's line),
// with the function's line as where the code came from.

__device__ __forceinline__ void stage(int* s, int t) {
  s[t] = t;
  __syncthreads();  // <- ib0
}

// inlineBarrierDivergent (128 threads): the odd threads call stage().
// Expect: non-uniform-barrier W, divergent-barrier-in-warp W, barrier-completed-by-exit
// W, all at line 16, inlined from line 7; uninitialized-read E, line 17 (even t).
extern "C" __global__ void inlineBarrierDivergent(int* out) {
  __shared__ int s[128];
  int t = threadIdx.x;
  if (t % 2) stage(s, t);  // <- ib1
  out[t] = s[t];
}
