// Initialization checker suite: kernels that read shared or local memory
// before any thread wrote it, and correct versions that do not, each with
// what `warpsim check` must report (NAME.check beside each launch file,
// tests/initcheck.rs). Fresh memory holds `memory.fresh_fill` bytes (0xff,
// -1 as an int), so what a missing write leaves shows in `out`. Every kernel
// writes `out` (1024 ints, zeroed). Line numbers are lines of this file.

// sharedMissingSync (64 threads): every thread stores its id to s[tid] and,
// with no __syncthreads() between, reads its mirror s[63 - tid]. warpsim runs
// the two warps side by side in time, as a GPU does: both store before either
// loads, so out[tid] = 63 - tid and no uninitialized read happens; the missing
// barrier is a race for a race checker to find, not a read of unwritten bytes.
// Expect: none.
extern "C" __global__ void sharedMissingSync(int* out) {
  __shared__ int s[64];
  unsigned tid = threadIdx.x;
  s[tid] = tid;
  out[tid] = s[63 - tid];  // <- missing sync
}

// sharedWithSync (64 threads): the same with the barrier; out[tid] = 63 - tid.
// Expect: none.
extern "C" __global__ void sharedWithSync(int* out) {
  __shared__ int s[64];
  unsigned tid = threadIdx.x;
  s[tid] = tid;
  __syncthreads();
  out[tid] = s[63 - tid];
}

// sharedCounterNotZeroed (64 threads): a block-wide counter that no thread
// sets to 0 before every thread adds 1 to it. out[0] = -1 + 64 = 63.
// Expect: uninitialized-read E, line 37 (the atomic of warp 0, which runs
// first; warp 1's adds to what warp 0 wrote).
extern "C" __global__ void sharedCounterNotZeroed(int* out) {
  __shared__ int count;
  atomicAdd(&count, 1);  // <- not zeroed
  __syncthreads();
  if (threadIdx.x == 0) out[0] = count;
}

// dynamicSharedHalo (64 threads, 260 bytes of dynamic shared memory): every
// thread stores 2 * tid to dyn[tid] and, after the barrier, adds its right
// neighbour dyn[tid + 1]; the halo dyn[64] is written only when
// `haloWritten` is not 0. out[tid] = 4 * tid + 2, out[63] = 126 + the halo.
// haloWritten = 0 (dynamicSharedHalo): out[63] = 125; expect
// uninitialized-read E, line 55 (thread 63, bytes 256-259 of dyn).
// haloWritten = 1 (dynamicSharedHaloWritten): out[63] = 126; expect: none.
extern "C" __global__ void dynamicSharedHalo(int* out, int haloWritten) {
  extern __shared__ int dyn[];
  unsigned tid = threadIdx.x;
  dyn[tid] = 2 * tid;
  if (haloWritten && tid == 0) dyn[blockDim.x] = 0;
  __syncthreads();
  out[tid] = dyn[tid] + dyn[tid + 1];  // <- halo
}

// localArray (32 threads): a local array of 8 ints of which the first
// `count` are written, then read at tid % 8 (an index only known at run
// time, so the array lives in local memory). count = 6
// (localArrayPartlyWritten): threads whose tid % 8 is 6 or 7 read -1; expect
// uninitialized-read E, line 68 (threads 6-7, 14-15, 22-23, 30-31).
// count = 8 (localArrayAllWritten): out[tid] = 10 * (tid % 8) + 1; expect:
// none.
extern "C" __global__ void localArray(int* out, int count) {
  int a[8];
  for (int i = 0; i < count && i < 8; i++) a[i] = 10 * i + 1;
  out[threadIdx.x] = a[threadIdx.x % 8];  // <- local
}
