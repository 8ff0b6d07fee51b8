// Parallel reductions, as in Mark Harris, "Optimizing Parallel Reduction in
// CUDA" (NVIDIA, 2007): each block sums its part of `in` into out[blockIdx.x].
// Integers, so the host check is exact (the sums wrap as the host's do).
// Launched with blocks of 256 threads over 1024 ints.

#define WARP 32

// Reduction #1: interleaved addressing with divergent branching.
extern "C" __global__ void reduce0_interleaved_divergent(const int* in, int* out) {
  __shared__ int sdata[256];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = in[i];
  __syncthreads();
  for (unsigned int s = 1; s < blockDim.x; s *= 2) {
    if (tid % (2 * s) == 0) {
      sdata[tid] += sdata[tid + s];
    }
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// Reduction #2: interleaved addressing, strided index, no divergence in the
// first levels but shared-memory bank conflicts.
extern "C" __global__ void reduce1_interleaved_strided(const int* in, int* out) {
  __shared__ int sdata[256];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = in[i];
  __syncthreads();
  for (unsigned int s = 1; s < blockDim.x; s *= 2) {
    int index = 2 * s * tid;
    if (index < blockDim.x) {
      sdata[index] += sdata[index + s];
    }
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// Reduction #3: sequential addressing.
extern "C" __global__ void reduce2_sequential(const int* in, int* out) {
  __shared__ int sdata[256];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = in[i];
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {
      sdata[tid] += sdata[tid + s];
    }
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// Reduction #4: first add during the global load; each block sums
// 2 * blockDim.x elements.
extern "C" __global__ void reduce3_first_add(const int* in, int* out) {
  __shared__ int sdata[256];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
  sdata[tid] = in[i] + in[i + blockDim.x];
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {
      sdata[tid] += sdata[tid + s];
    }
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// Reduction #5: unroll the last warp through volatile shared memory
// (warp-synchronous, as the 2007 slides wrote it).
__device__ void warpReduce(volatile int* sdata, unsigned int tid) {
  sdata[tid] += sdata[tid + 32];
  sdata[tid] += sdata[tid + 16];
  sdata[tid] += sdata[tid + 8];
  sdata[tid] += sdata[tid + 4];
  sdata[tid] += sdata[tid + 2];
  sdata[tid] += sdata[tid + 1];
}

extern "C" __global__ void reduce4_unroll_last_warp(const int* in, int* out) {
  __shared__ int sdata[256];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
  sdata[tid] = in[i] + in[i + blockDim.x];
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s) {
      sdata[tid] += sdata[tid + s];
    }
    __syncthreads();
  }
  if (tid < 32) warpReduce(sdata, tid);
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// Reduction with warp shuffles (the modern form): each warp sums its values
// with __shfl_down_sync, lane 0 of each warp writes its warp's sum to shared
// memory, and the first warp sums those.
__device__ __forceinline__ int warpReduceSum(int val) {
  for (int offset = WARP / 2; offset > 0; offset /= 2)
    val += __shfl_down_sync(0xffffffff, val, offset);
  return val;
}

extern "C" __global__ void reduce5_warp_shuffle(const int* in, int* out) {
  __shared__ int warpSums[WARP];
  unsigned int tid = threadIdx.x;
  unsigned int lane = tid % WARP;
  unsigned int warp = tid / WARP;
  int val = in[blockIdx.x * blockDim.x + tid];
  val = warpReduceSum(val);
  if (lane == 0) warpSums[warp] = val;
  __syncthreads();
  if (warp == 0) {
    val = (tid < blockDim.x / WARP) ? warpSums[lane] : 0;
    val = warpReduceSum(val);
    if (lane == 0) out[blockIdx.x] = val;
  }
}

// Reduction #7: several elements per thread (grid-stride loop) and the tree
// completely unrolled for a block size known at compile time; the last warp
// through volatile shared memory.
#define BLOCK6 256
extern "C" __global__ void reduce6_multi_element(const int* in, int* out, unsigned int n) {
  __shared__ int sdata[BLOCK6];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * (BLOCK6 * 2) + tid;
  unsigned int gridSize = BLOCK6 * 2 * gridDim.x;
  int sum = 0;
  while (i < n) {
    sum += in[i] + in[i + BLOCK6];
    i += gridSize;
  }
  sdata[tid] = sum;
  __syncthreads();
  if (BLOCK6 >= 512) { if (tid < 256) { sdata[tid] = sum = sum + sdata[tid + 256]; } __syncthreads(); }
  if (BLOCK6 >= 256) { if (tid < 128) { sdata[tid] = sum = sum + sdata[tid + 128]; } __syncthreads(); }
  if (BLOCK6 >= 128) { if (tid < 64) { sdata[tid] = sum = sum + sdata[tid + 64]; } __syncthreads(); }
  if (tid < 32) {
    volatile int* v = sdata;
    v[tid] = sum = sum + v[tid + 32];
    v[tid] = sum = sum + v[tid + 16];
    v[tid] = sum = sum + v[tid + 8];
    v[tid] = sum = sum + v[tid + 4];
    v[tid] = sum = sum + v[tid + 2];
    v[tid] = sum = sum + v[tid + 1];
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// A float dot product: products summed per warp with a butterfly
// (__shfl_xor_sync), warp sums combined by warp 0. The order of additions is
// fixed, so the host can reproduce it bit for bit.
extern "C" __global__ void dot_product_shfl_xor(const float* a, const float* b, float* out) {
  __shared__ float warpSums[WARP];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + tid;
  float v = a[i] * b[i];
  for (int mask = WARP / 2; mask > 0; mask /= 2)
    v += __shfl_xor_sync(0xffffffff, v, mask);
  if (tid % WARP == 0) warpSums[tid / WARP] = v;
  __syncthreads();
  if (tid < WARP) {
    v = (tid < blockDim.x / WARP) ? warpSums[tid] : 0.0f;
    for (int mask = WARP / 2; mask > 0; mask /= 2)
      v += __shfl_xor_sync(0xffffffff, v, mask);
    if (tid == 0) out[blockIdx.x] = v;
  }
}
