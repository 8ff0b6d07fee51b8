// Barrier checker suite (issue 4): a __noinline__ device function holding a
// __syncthreads(), called from uniform and from divergent code. Needs `.func`
// and `call` in warpsim's PTX parser. Every kernel takes one buffer `out`
// (1024 ints, zeroed). Line numbers are lines of this file.

__shared__ int fs[256];

// blockReverse: every thread of the block stores v, waits at the barrier of
// line 13, and returns the value of the thread at the mirrored index.
__device__ __noinline__ int blockReverse(int v) {
  unsigned tid = threadIdx.x;
  fs[tid] = v;
  __syncthreads();  // <- fb
  return fs[blockDim.x - 1 - tid];
}

// funcBarrierUniform (128 threads): every thread calls blockReverse (line
// 22). out[tid] = 5 * (127 - tid).
// Expect: none.
extern "C" __global__ void funcBarrierUniform(int* out) {
  unsigned tid = threadIdx.x;
  out[tid] = blockReverse(tid * 5);  // <- fu
}

// funcBarrierDivergent (128 threads): only even threads call blockReverse
// (line 33); odd threads store -1 and exit. The barrier is reached at line
// 13 by half of every warp; line 14 reads the odd threads' unwritten slots.
// Expect: divergent-barrier-in-warp W, line 13 (called from line 33);
// barrier-completed-by-exit W, line 13; uninitialized-read E, line 14.
extern "C" __global__ void funcBarrierDivergent(int* out) {
  unsigned tid = threadIdx.x;
  int v = -1;
  if (tid % 2 == 0) v = blockReverse(tid);  // <- fd
  out[tid] = v;
}

// funcBarrierBothArms (128 threads): even threads call blockReverse from line
// 46, odd threads from line 48: the same barrier instruction (line
// 13) is reached by the two halves of each warp through different calls.
// Expect: divergent-barrier-in-warp, warning, line 13 (calls at lines
// 46 and 48).
extern "C" __global__ void funcBarrierBothArms(int* out) {
  unsigned tid = threadIdx.x;
  int v;
  if (tid % 2 == 0)
    v = blockReverse(tid);  // <- fa1
  else
    v = blockReverse(-(int)tid) + 1;  // <- fa2
  out[tid] = v;
}
