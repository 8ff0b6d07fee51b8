//! Microbenchmark of global store throughput: every thread of a block stores `stores` elements of 2, 4, 8 or 16 bytes, its lanes `stride_bytes` apart, so that one warp's request writes whole sectors (stride = element size) or a few bytes of each of up to 32 sectors in 1 to 32 lines.
//
// Thread 0 of every block writes the clock64() cycles from the barrier
// before its first store to the barrier after a __threadfence() (its stores
// have reached the L2) to cycles[block]. The k-th store of a thread goes
// k x (all threads) x stride_bytes past its first, so no two stores of a
// launch write one sector. Hardware figures:
// programs/timing/hardware/h200-stores.txt.
template <typename T>
__device__ void stridedStores(unsigned long long* cycles, char* out, int stride_bytes, int stores) {
  char* base = out + (size_t)(blockIdx.x * blockDim.x + threadIdx.x) * stride_bytes;
  size_t step = (size_t)gridDim.x * blockDim.x * stride_bytes;
  T value = {};
  *reinterpret_cast<unsigned char*>(&value) = (unsigned char)threadIdx.x;
  __syncthreads();
  long long start = clock64();
#pragma unroll 4
  for (int k = 0; k < stores; k++) *reinterpret_cast<T*>(base + k * step) = value;
  __threadfence();
  __syncthreads();
  long long end = clock64();
  if (threadIdx.x == 0) cycles[blockIdx.x] = end - start;
}

// The same stores with no fence: the clock stops once every warp has
// handed its stores to the memory system, and whether the SM stays active
// while they drain shows in Nsight Compute's sm__cycles_active.
extern "C" __global__ void storesUnfenced4(unsigned long long* cycles, char* out, int stride_bytes, int stores) {
  char* base = out + (size_t)(blockIdx.x * blockDim.x + threadIdx.x) * stride_bytes;
  size_t step = (size_t)gridDim.x * blockDim.x * stride_bytes;
  __syncthreads();
  long long start = clock64();
#pragma unroll 4
  for (int k = 0; k < stores; k++) *reinterpret_cast<unsigned*>(base + k * step) = threadIdx.x;
  __syncthreads();
  long long end = clock64();
  if (threadIdx.x == 0) cycles[blockIdx.x] = end - start;
}

// Loads with the same pattern, for the L2's rate by lines on reads: each
// thread sums `loads` words, its lanes `stride_bytes` apart, and stores the
// sum once.
extern "C" __global__ void stridedLoads4(unsigned long long* cycles, unsigned* sums, const char* in, int stride_bytes, int loads) {
  const char* base = in + (size_t)(blockIdx.x * blockDim.x + threadIdx.x) * stride_bytes;
  size_t step = (size_t)gridDim.x * blockDim.x * stride_bytes;
  unsigned sum = 0;
  __syncthreads();
  long long start = clock64();
#pragma unroll 8
  for (int k = 0; k < loads; k++) sum += *reinterpret_cast<const unsigned*>(base + k * step);
  __syncthreads();
  long long end = clock64();
  sums[blockIdx.x * blockDim.x + threadIdx.x] = sum;
  if (threadIdx.x == 0) cycles[blockIdx.x] = end - start;
}

// The k-th store of a thread writes element k % run of a run of `run`
// consecutive elements, runs `step` apart: a run of 8 words fills a sector a
// thread, as out[8 * i + k] for k = 0..7 does, one warp request at a time.
template <typename T>
__device__ void runStores(unsigned long long* cycles, char* out, int stride_bytes, int stores, int run) {
  char* base = out + (size_t)(blockIdx.x * blockDim.x + threadIdx.x) * stride_bytes;
  size_t step = (size_t)gridDim.x * blockDim.x * stride_bytes;
  T value = (T)threadIdx.x;
  __syncthreads();
  long long start = clock64();
  for (int k = 0; k < stores; k += run) {
    T* first = reinterpret_cast<T*>(base + (k / run) * step);
#pragma unroll 4
    for (int j = 0; j < run; j++) first[j] = value;
  }
  __threadfence();
  __syncthreads();
  long long end = clock64();
  if (threadIdx.x == 0) cycles[blockIdx.x] = end - start;
}

// `fences` __threadfence()s with no store outstanding: a fence's own cost.
extern "C" __global__ void fences(unsigned long long* cycles, int fences) {
  __syncthreads();
  long long start = clock64();
  for (int k = 0; k < fences; k++) __threadfence();
  __syncthreads();
  long long end = clock64();
  if (threadIdx.x == 0) cycles[blockIdx.x] = end - start;
}

// The same with fence.acq_rel.gpu, the fence of release and acquire
// patterns, and with __threadfence_block() (membar.cta).
extern "C" __global__ void fencesAcqRel(unsigned long long* cycles, int fences) {
  __syncthreads();
  long long start = clock64();
  for (int k = 0; k < fences; k++) asm volatile("fence.acq_rel.gpu;" ::: "memory");
  __syncthreads();
  long long end = clock64();
  if (threadIdx.x == 0) cycles[blockIdx.x] = end - start;
}
extern "C" __global__ void fencesBlock(unsigned long long* cycles, int fences) {
  __syncthreads();
  long long start = clock64();
  for (int k = 0; k < fences; k++) __threadfence_block();
  __syncthreads();
  long long end = clock64();
  if (threadIdx.x == 0) cycles[blockIdx.x] = end - start;
}

extern "C" __global__ void runStores2(unsigned long long* cycles, char* out, int stride_bytes, int stores, int run) {
  runStores<unsigned short>(cycles, out, stride_bytes, stores, run);
}
extern "C" __global__ void runStores4(unsigned long long* cycles, char* out, int stride_bytes, int stores, int run) {
  runStores<unsigned int>(cycles, out, stride_bytes, stores, run);
}

extern "C" __global__ void runStores8(unsigned long long* cycles, char* out, int stride_bytes, int stores, int run) {
  runStores<unsigned long long>(cycles, out, stride_bytes, stores, run);
}

extern "C" __global__ void stores2(unsigned long long* cycles, char* out, int stride_bytes, int stores) {
  stridedStores<unsigned short>(cycles, out, stride_bytes, stores);
}
extern "C" __global__ void stores4(unsigned long long* cycles, char* out, int stride_bytes, int stores) {
  stridedStores<unsigned int>(cycles, out, stride_bytes, stores);
}
extern "C" __global__ void stores8(unsigned long long* cycles, char* out, int stride_bytes, int stores) {
  stridedStores<unsigned long long>(cycles, out, stride_bytes, stores);
}
extern "C" __global__ void stores16(unsigned long long* cycles, char* out, int stride_bytes, int stores) {
  stridedStores<uint4>(cycles, out, stride_bytes, stores);
}
