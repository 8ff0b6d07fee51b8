// Shared-memory race checker suite: kernels whose threads access the same
// shared bytes, one of them writing, with no barrier between, and correct
// versions, each with what `warpsim check` must report (NAME.check beside
// each launch file, tests/racecheck.rs). Every kernel runs as one block of
// 64 threads (two warps) and writes `out` (64 ints, zeroed). Line numbers
// are lines of this file.

// rawMissingSync: every thread stores its id to s[tid] and, with no
// __syncthreads() between, reads its neighbour s[(tid + 1) % 64]. Thread 31
// reads what thread 32 of the other warp wrote; the lanes of each warp read
// what their neighbours wrote in an earlier instruction.
// Expect: shared-race (read-after-write), store at line 16, load at line 17.
extern "C" __global__ void rawMissingSync(int* out) {
  __shared__ int s[64];
  unsigned tid = threadIdx.x;
  s[tid] = tid;
  out[tid] = s[(tid + 1) % 64];
}

// rawWithSync: the same with the barrier. Expect: none.
extern "C" __global__ void rawWithSync(int* out) {
  __shared__ int s[64];
  unsigned tid = threadIdx.x;
  s[tid] = tid;
  __syncthreads();
  out[tid] = s[(tid + 1) % 64];
}

// warShiftInPlace: a shift left in place, s[tid] = s[tid + 1], with no
// barrier between the reads and the writes: thread 31 reads s[32], which
// thread 32 then overwrites (and the same inside each warp).
// Expect: shared-race (write-after-read), load and store at line 39.
extern "C" __global__ void warShiftInPlace(int* out) {
  __shared__ int s[65];
  unsigned tid = threadIdx.x;
  s[tid] = tid;
  if (tid == 0) s[64] = 64;
  __syncthreads();
  s[tid] = s[tid + 1];
  __syncthreads();
  out[tid] = s[tid];
}

// wawLastWriterWins: every thread writes its id to one shared word; which
// value stays depends on which store lands last.
// Expect: shared-race (write-after-write), the store at line 49.
extern "C" __global__ void wawLastWriterWins(int* out) {
  __shared__ int winner;
  winner = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = winner;
}

// warpReduceNoSyncwarp: the last steps of a reduction done by one warp,
// relying on lockstep (the pre-Volta idiom) with neither __syncwarp() nor
// volatile. Nothing orders one thread's accesses to s[tid] and s[tid + k],
// so NVRTC keeps s[tid] in a register and hoists every load of the loop
// above its one store: lane t reads s[t + 1] .. s[t + 16] before lanes
// t + 1 .. t + 16 store to them.
// Expect: shared-race (write-after-read), load and store at line 67.
extern "C" __global__ void warpReduceNoSyncwarp(int* out) {
  __shared__ int s[64];
  unsigned tid = threadIdx.x;
  s[tid] = tid;
  __syncthreads();
  if (tid < 32) {
    for (int offset = 16; offset > 0; offset /= 2) s[tid] += s[tid + offset];
  }
  __syncthreads();
  out[tid] = s[0];
}

// warpReduceSyncwarp: the same reduction as NVIDIA's "Using CUDA Warp-Level
// Primitives" writes it for Volta: read, __syncwarp(), write, __syncwarp().
// Expect: none.
extern "C" __global__ void warpReduceSyncwarp(int* out) {
  __shared__ int s[64];
  unsigned tid = threadIdx.x;
  s[tid] = tid;
  __syncthreads();
  if (tid < 32) {
    int v = s[tid];
    for (int offset = 16; offset > 0; offset /= 2) {
      v += s[tid + offset];
      __syncwarp();
      s[tid] = v;
      __syncwarp();
    }
  }
  __syncthreads();
  out[tid] = s[0];
}
