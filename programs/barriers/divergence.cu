// Barrier checker suite (issue 4): barriers under divergent control flow,
// barrier reductions (__syncthreads_count/_and/_or), nested divergence, the
// seed document's if/else pair with shared memory, and a kernel that
// deadlocks only for some launch shapes.
// Every kernel takes one buffer `out` (1024 ints, zeroed). Line numbers are
// lines of this file.

// syncthreadsCountAndOr (128 threads): __syncthreads_count, _and and _or
// (bar.red.popc/and/or) executed by every thread (lines 15-17).
// out[tid] = 100 * count + 10 * and + or, the same for every thread.
// Expect: none.
extern "C" __global__ void syncthreadsCountAndOr(int* out) {
  unsigned tid = threadIdx.x;
  int v = (tid * 37) % 11;
  int c = __syncthreads_count(v > 5);  // <- sr1
  int a = __syncthreads_and(v < 11);  // <- sr2
  int o = __syncthreads_or(v == 10);  // <- sr3
  out[tid] = c * 100 + a * 10 + o;
}

// syncthreadsCountDivergent (128 threads): only lanes 0-15 of each warp call
// __syncthreads_count (line 29); lanes 16-31 store -1 and exit.
// Expect: divergent-barrier-in-warp, warning, line 29; and
// barrier-completed-by-exit, warning, line 29 (the skipping lanes run line
// 30 and exit).
extern "C" __global__ void syncthreadsCountDivergent(int* out) {
  unsigned tid = threadIdx.x;
  int c = -1;
  if (tid % 32 < 16) c = __syncthreads_count(tid % 3 == 0);  // <- sd
  out[tid] = c;  // <- sdst
}

// nestedDivergence (2 blocks of 128 threads): a uniform outer if (block 0
// only) around a divergent inner if (tid % 4 == 0) holding the barrier of
// line 46. In block 0 a quarter of each warp waits while the rest exits.
// Expect: divergent-barrier-in-warp, warning, line 46; and
// barrier-completed-by-exit, warning, line 46 (block 0 only; block 1 never
// reaches a barrier).
extern "C" __global__ void nestedDivergence(int* out) {
  __shared__ int s[128];
  unsigned tid = threadIdx.x;
  s[tid] = tid;
  int v = -1;
  if (blockIdx.x == 0) {
    if (tid % 4 == 0) {
      __syncthreads();  // <- nd
      v = s[(tid + 4) % 128];
    }
  }
  out[blockIdx.x * 128 + tid] = v;
}

// nestedUniformCorrect (2 blocks of 128 threads): a uniform outer if (block 1
// only) around a divergent inner if/else without barriers; the barrier of line
// 67 comes after the inner paths reconverge.
// Expect: none.
extern "C" __global__ void nestedUniformCorrect(int* out) {
  __shared__ int s[128];
  unsigned tid = threadIdx.x;
  int v = -1;
  if (blockIdx.x == 1) {
    if (tid & 1)
      v = tid * 2;
    else
      v = tid + 1000;
    s[tid] = v;
    __syncthreads();  // <- nu
    v = s[127 - tid];
  }
  out[blockIdx.x * 128 + tid] = v;
}

// ifElseSharedNeighbour (128 threads): seed 003's if/else __syncthreads pair,
// each arm writing its own shared word, waiting at its own barrier (lines
// 93 and 97) and then reading its neighbour's word, written by the
// other arm. s is first filled with -1 (barrier of line 90).
// Volta and later (per-thread arrival): all 128 threads arrive (at two
// instructions) before anyone reads: out[even t] = 2t - 998, out[odd t] = 2t - 2.
// Pre-Volta (per-warp arrival): NVRTC merges the two reads into one after
// the arms join, so the barrier of the arm run first completing early does
// no harm here: every value is fresh (tests/barriers.rs checks it). The
// reads-in-the-arms form that goes wrong before Volta is the IR kernel
// ifElseNeighbourInArms (if-else-neighbour.kir): odd threads read -1 there.
// (Per-warp arrival: programs/barriers/pre-volta.sim.toml.)
// Expect: divergent-barrier-in-warp, warning, lines 93 and 97.
extern "C" __global__ void ifElseSharedNeighbour(int* out) {
  __shared__ int s[128];
  unsigned tid = threadIdx.x;
  s[tid] = -1;
  __syncthreads();  // <- sn0
  if (tid % 2 == 0) {
    s[tid] = 2 * tid;
    __syncthreads();  // <- sn1
    out[tid] = s[tid + 1];
  } else {
    s[tid] = 2 * tid - 1000;
    __syncthreads();  // <- sn2
    out[tid] = s[tid - 1];
  }
}

// warpUniformIfElse (128 threads): warps 0 and 2 wait at the barrier of line
// 111, warps 1 and 3 at the one of line 115: uniform within each warp,
// different barrier instructions of barrier 0 across the block.
// Expect: divergent-barrier-in-block, warning, lines 111 and 115.
extern "C" __global__ void warpUniformIfElse(int* out) {
  __shared__ int s[128];
  unsigned tid = threadIdx.x;
  if ((tid / 32) % 2 == 0) {
    s[tid] = tid;
    __syncthreads();  // <- wu1
    out[tid] = s[tid + 32];
  } else {
    s[tid] = 1000 + tid;
    __syncthreads();  // <- wu2
    out[tid] = s[tid - 32];
  }
}

// shapeDependentDeadlock (launched with 128 and with 256 threads): threads
// below 128 wait at __syncthreads (line 133), the others at bar.sync 1
// without a count (line 136); both wait for every thread of the block.
// With 128 threads the condition is uniform and only line 133 runs.
// With 256 threads half the block waits at each barrier, nobody exits.
// Expect, 128 threads: none. 256 threads: deadlock, error, lines 133 and
// 136 (barrier 0 has 128 of 256 threads, barrier 1 the other 128);
// divergent-barrier-in-block is acceptable in addition.
extern "C" __global__ void shapeDependentDeadlock(int* out) {
  __shared__ int s[256];
  unsigned tid = threadIdx.x;
  s[tid] = tid;
  if (tid < 128) {
    __syncthreads();  // <- sh1
    out[tid] = s[127 - tid];
  } else {
    asm volatile("bar.sync 1;" ::: "memory");  // <- sh2
    out[tid] = s[tid];
  }
}
