// Barrier checker suite (issue 4): named barriers (bar.sync/bar.arrive with an
// id and a thread count, as inline PTX), including invalid ids and counts.
// Every kernel takes one buffer `out` (1024 ints, zeroed). Line numbers are
// lines of this file.

// namedBarrierPairs (128 threads): warps 0-1 synchronise on barrier 1 with
// count 64 (line 15), warps 2-3 on barrier 2 with count 64 (line 18),
// then the whole block on barrier 0 (line 21).
// Expect: none.
extern "C" __global__ void namedBarrierPairs(int* out) {
  __shared__ int s[128];
  unsigned tid = threadIdx.x;
  s[tid] = tid * 7;
  if (tid < 64) {
    asm volatile("bar.sync 1, 64;" ::: "memory");  // <- np1
    out[tid] = s[63 - tid];
  } else {
    asm volatile("bar.sync 2, 64;" ::: "memory");  // <- np2
    out[tid] = s[191 - tid];
  }
  __syncthreads();  // <- np3
  out[128 + tid] = s[127 - tid];
}

// producerConsumer (128 threads): warps 0-1 produce four rounds into buf,
// signal "full" with bar.arrive 1, 128 (line 39) and wait for "empty" with
// bar.sync 2, 128 (line 37); warps 2-3 wait for "full" with bar.sync 1, 128
// (line 41) and signal "empty" with bar.arrive 2, 128 (line 43).
// out[64..127] = sum over rounds of buf = 6000 + 4 * (tid - 64).
// Expect: none.
extern "C" __global__ void producerConsumer(int* out) {
  __shared__ int buf[64];
  unsigned tid = threadIdx.x;
  int acc = 0;
  for (int it = 0; it < 4; it++) {
    if (tid < 64) {
      if (it > 0) asm volatile("bar.sync 2, 128;" ::: "memory");  // <- pc1
      buf[tid] = it * 1000 + tid;
      asm volatile("bar.arrive 1, 128;" ::: "memory");  // <- pc2
    } else {
      asm volatile("bar.sync 1, 128;" ::: "memory");  // <- pc3
      acc += buf[tid - 64];
      if (it < 3) asm volatile("bar.arrive 2, 128;" ::: "memory");  // <- pc4
    }
  }
  out[tid] = acc;
}

// namedCountNotMultiple32 (128 threads): warps 0-1 (64 threads) wait at
// bar.sync 1 with a count of 48 computed at run time (line 59), warps 2-3
// at bar.sync 2, 64 (line 61).
// Expect: invalid-barrier, error, line 59 (count 48 is not a multiple of
// 32, and smaller than the 64 threads arriving).
extern "C" __global__ void namedCountNotMultiple32(int* out) {
  unsigned tid = threadIdx.x;
  unsigned count = blockDim.x - 80;  // 48 for 128 threads
  out[tid] = 1;
  if (tid < 64) {
    asm volatile("bar.sync 1, %0;" ::"r"(count) : "memory");  // <- nc1
  } else {
    asm volatile("bar.sync 2, 64;" ::: "memory");  // <- nc2
  }
  out[128 + tid] = tid;
}

// invalidBarrierId16 (128 threads): every thread executes bar.sync with a
// barrier id of 16 computed at run time (line 73); ids are 0-15.
// Expect: invalid-barrier, error, line 73.
extern "C" __global__ void invalidBarrierId16(int* out) {
  unsigned tid = threadIdx.x;
  unsigned id = blockDim.x / 8;  // 16 for 128 threads
  out[tid] = 1;
  asm volatile("bar.sync %0;" ::"r"(id) : "memory");  // <- ib
  out[128 + tid] = tid;
}

// namedCountNeverReached (128 threads): warps 0-1 wait at bar.sync 1, 96
// (line 85); warps 2-3 skip it and exit, so only 64 threads ever arrive
// (exits do not lower an explicit count).
// Expect: deadlock, error, line 85 (warps 0-1 wait for 32 more threads that
// have exited); divergent-barrier-in-block is acceptable in addition.
extern "C" __global__ void namedCountNeverReached(int* out) {
  unsigned tid = threadIdx.x;
  out[tid] = 1;
  if (tid < 64) asm volatile("bar.sync 1, 96;" ::: "memory");  // <- nn
  out[128 + tid] = tid;
}
