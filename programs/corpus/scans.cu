// Exclusive prefix sums (Blelloch's work-efficient scan), as in GPU Gems 3,
// chapter 39 (Harris, Sengupta, Owens): each block of 256 threads scans its
// 512 elements of `in` into `out`. Integers, so the host check is exact.

#define N_PER_BLOCK 512
#define NUM_BANKS 32
#define LOG_NUM_BANKS 5
#define CONFLICT_FREE_OFFSET(n) ((n) >> LOG_NUM_BANKS)

// The plain version: the tree's strided indices conflict in shared memory.
extern "C" __global__ void scan_blelloch(const int* in, int* out) {
  __shared__ int temp[N_PER_BLOCK];
  const int n = N_PER_BLOCK;
  int thid = threadIdx.x;
  const int* g_idata = in + blockIdx.x * n;
  int* g_odata = out + blockIdx.x * n;
  int offset = 1;
  temp[2 * thid] = g_idata[2 * thid];
  temp[2 * thid + 1] = g_idata[2 * thid + 1];
  for (int d = n >> 1; d > 0; d >>= 1) {  // up-sweep: build the sum in place
    __syncthreads();
    if (thid < d) {
      int ai = offset * (2 * thid + 1) - 1;
      int bi = offset * (2 * thid + 2) - 1;
      temp[bi] += temp[ai];
    }
    offset *= 2;
  }
  if (thid == 0) { temp[n - 1] = 0; }  // clear the last element
  for (int d = 1; d < n; d *= 2) {  // down-sweep
    offset >>= 1;
    __syncthreads();
    if (thid < d) {
      int ai = offset * (2 * thid + 1) - 1;
      int bi = offset * (2 * thid + 2) - 1;
      int t = temp[ai];
      temp[ai] = temp[bi];
      temp[bi] += t;
    }
  }
  __syncthreads();
  g_odata[2 * thid] = temp[2 * thid];
  g_odata[2 * thid + 1] = temp[2 * thid + 1];
}

// With the padding of GPU Gems 3 (one word every NUM_BANKS words): each
// thread loads elements thid and thid + n/2, and every index into temp is
// shifted by CONFLICT_FREE_OFFSET.
extern "C" __global__ void scan_blelloch_conflict_free(const int* in, int* out) {
  __shared__ int temp[N_PER_BLOCK + N_PER_BLOCK / NUM_BANKS];
  const int n = N_PER_BLOCK;
  int thid = threadIdx.x;
  const int* g_idata = in + blockIdx.x * n;
  int* g_odata = out + blockIdx.x * n;
  int offset = 1;
  int ai = thid;
  int bi = thid + (n / 2);
  int bankOffsetA = CONFLICT_FREE_OFFSET(ai);
  int bankOffsetB = CONFLICT_FREE_OFFSET(bi);
  temp[ai + bankOffsetA] = g_idata[ai];
  temp[bi + bankOffsetB] = g_idata[bi];
  for (int d = n >> 1; d > 0; d >>= 1) {
    __syncthreads();
    if (thid < d) {
      int ai = offset * (2 * thid + 1) - 1;
      int bi = offset * (2 * thid + 2) - 1;
      ai += CONFLICT_FREE_OFFSET(ai);
      bi += CONFLICT_FREE_OFFSET(bi);
      temp[bi] += temp[ai];
    }
    offset *= 2;
  }
  if (thid == 0) { temp[n - 1 + CONFLICT_FREE_OFFSET(n - 1)] = 0; }
  for (int d = 1; d < n; d *= 2) {
    offset >>= 1;
    __syncthreads();
    if (thid < d) {
      int ai = offset * (2 * thid + 1) - 1;
      int bi = offset * (2 * thid + 2) - 1;
      ai += CONFLICT_FREE_OFFSET(ai);
      bi += CONFLICT_FREE_OFFSET(bi);
      int t = temp[ai];
      temp[ai] = temp[bi];
      temp[bi] += t;
    }
  }
  __syncthreads();
  g_odata[ai] = temp[ai + bankOffsetA];
  g_odata[bi] = temp[bi + bankOffsetB];
}

// Inclusive scan of each warp's 32 values with __shfl_up_sync, then the warp
// totals scanned by warp 0 and added back: an inclusive scan of each block's
// 256 elements.
extern "C" __global__ void scan_warp_shuffle(const int* in, int* out) {
  __shared__ int warpTotals[32];
  unsigned int tid = threadIdx.x;
  unsigned int lane = tid % 32;
  unsigned int warp = tid / 32;
  unsigned int i = blockIdx.x * blockDim.x + tid;
  int v = in[i];
  for (int delta = 1; delta < 32; delta *= 2) {
    int up = __shfl_up_sync(0xffffffff, v, delta);
    if (lane >= delta) v += up;
  }
  if (lane == 31) warpTotals[warp] = v;
  __syncthreads();
  if (warp == 0) {
    int t = (lane < blockDim.x / 32) ? warpTotals[lane] : 0;
    for (int delta = 1; delta < 32; delta *= 2) {
      int up = __shfl_up_sync(0xffffffff, t, delta);
      if (lane >= delta) t += up;
    }
    warpTotals[lane] = t;
  }
  __syncthreads();
  if (warp > 0) v += warpTotals[warp - 1];
  out[i] = v;
}
