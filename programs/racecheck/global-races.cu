// Global-memory races between blocks, for the `data-race` and `scope-race`
// findings of `warpsim check` (crates/machine/src/global_races.rs), with
// correct versions that have none. Each kernel runs as 2 or 4 blocks that
// are all resident, so the spinning ones finish.

// messagePassingNoFence (2 blocks of 32): block 1 writes data then sets a
// volatile flag; block 0 waits for the flag and reads the data. Nothing
// orders the data store before the flag store for a reader in another block.
// Expect: data-race (read-after-write) between lines 14 and 20, with the
// flag store of line 15 named and a note to add __threadfence().
extern "C" __global__ void messagePassingNoFence(int* data, volatile int* flag, int* out) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 1) {
    data[0] = 42;
    flag[0] = 1;
  } else {
    while (flag[0] == 0) {
    }
    __threadfence();
    out[0] = data[0];
  }
}

// messagePassingFenced (2 blocks of 32): the same with __threadfence() on
// both sides: a release pattern (fence, strong store) and an acquire pattern
// (strong load, fence). Expect: none.
extern "C" __global__ void messagePassingFenced(int* data, volatile int* flag, int* out) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 1) {
    data[0] = 42;
    __threadfence();
    flag[0] = 1;
  } else {
    while (flag[0] == 0) {
    }
    __threadfence();
    out[0] = data[0];
  }
}

// flagHandoffCtaScope (2 blocks of 32): the handoff with release and
// acquire at .cta scope (cuda::thread_scope_block) across blocks: the flag
// accesses are strong but their scope does not include the other block,
// and they order nothing. Expect: scope-race on the flag (lines 50 and 54),
// data-race on the data (lines 49 and 56).
extern "C" __global__ void flagHandoffCtaScope(int* data, int* flag, int* out) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 1) {
    data[0] = 42;
    asm volatile("st.release.cta.global.u32 [%0], %1;" ::"l"(flag), "r"(1) : "memory");
  } else {
    int seen = 0;
    while (seen == 0) {
      asm volatile("ld.acquire.cta.global.u32 %0, [%1];" : "=r"(seen) : "l"(flag) : "memory");
    }
    out[0] = data[0];
  }
}

// threadfenceReduction (4 blocks of 64), as the CUDA sample of that name:
// each block sums its part in shared memory, thread 0 writes the block's
// sum, fences, and takes a ticket; the block that takes the last ticket
// adds the partial sums. Expect: none.
extern "C" __global__ void threadfenceReduction(const int* in, int* partial, unsigned* ticket, int* out) {
  __shared__ int sums[64];
  __shared__ bool last;
  unsigned tid = threadIdx.x;
  sums[tid] = in[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (tid < stride) sums[tid] += sums[tid + stride];
    __syncthreads();
  }
  if (tid == 0) {
    partial[blockIdx.x] = sums[0];
    __threadfence();
    unsigned taken = atomicInc(ticket, gridDim.x);
    last = (taken == gridDim.x - 1);
  }
  __syncthreads();
  if (last && tid == 0) {
    int total = 0;
    for (unsigned block = 0; block < gridDim.x; block++) total += partial[block];
    out[0] = total;
  }
}

// threadfenceReductionNoFence (4 blocks of 64): the same without the
// __threadfence(): the last block may read partial sums not yet visible to
// it. Expect: data-race (read-after-write) between lines 102 and 109.
extern "C" __global__ void threadfenceReductionNoFence(const int* in, int* partial, unsigned* ticket, int* out) {
  __shared__ int sums[64];
  __shared__ bool last;
  unsigned tid = threadIdx.x;
  sums[tid] = in[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (tid < stride) sums[tid] += sums[tid + stride];
    __syncthreads();
  }
  if (tid == 0) {
    partial[blockIdx.x] = sums[0];
    unsigned taken = atomicInc(ticket, gridDim.x);
    last = (taken == gridDim.x - 1);
  }
  __syncthreads();
  if (last && tid == 0) {
    int total = 0;
    for (unsigned block = 0; block < gridDim.x; block++) total += partial[block];
    out[0] = total;
  }
}

// threadfenceReductionAcquire (4 blocks of 64): threadfenceReduction with a
// __threadfence() also between the last block's ticket and its reads of the
// partial sums, the acquire pattern (strong read, fence) the PTX memory
// model asks of a reader (../shared/reference/memory-model.md: message
// passing needs a fence in each thread). As the CUDA sample writes it, the
// reader has none, and the model allows it to read a partial sum from
// before the block that wrote it fenced: the explore model finds such runs
// (seeds 2, and 94 and 140 before parameters were read where ptxas reads
// them). Expect: none.
extern "C" __global__ void threadfenceReductionAcquire(const int* in, int* partial, unsigned* ticket, int* out) {
  __shared__ int sums[64];
  __shared__ bool last;
  unsigned tid = threadIdx.x;
  sums[tid] = in[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (tid < stride) sums[tid] += sums[tid + stride];
    __syncthreads();
  }
  if (tid == 0) {
    partial[blockIdx.x] = sums[0];
    __threadfence();
    unsigned taken = atomicInc(ticket, gridDim.x);
    last = (taken == gridDim.x - 1);
  }
  __syncthreads();
  if (last && tid == 0) {
    __threadfence();
    int total = 0;
    for (unsigned block = 0; block < gridDim.x; block++) total += partial[block];
    out[0] = total;
  }
}
