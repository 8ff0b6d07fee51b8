// CUDA versions (inline PTX) of the four kernels of programs/barriers that are
// written in warpsim's IR (*.kir), so that hardware/driver.cu can run them on
// a GPU. Same names, same launch shapes, same outputs as the .kir files; the
// expected checker findings are in the .kir files' comments.

// warpArrivesTwice: see ../warp-arrives-twice.kir.
extern "C" __global__ void warpArrivesTwice(int* out) {
  unsigned tid = threadIdx.x, w = tid / 32;
  out[tid] = 1;
  if (w == 0) {
    asm volatile("bar.arrive 1, 64;" ::: "memory");
    asm volatile("bar.arrive 1, 64;" ::: "memory");
  } else if (w == 1) {
    long long start = clock64();
    while (clock64() - start < 20000) {
    }
    asm volatile("bar.sync 1, 64;" ::: "memory");
    asm volatile("bar.sync 1, 64;" ::: "memory");
  }
  out[128 + tid] = tid;
}

// redMixedWithSync: see ../red-mixed-with-sync.kir.
extern "C" __global__ void redMixedWithSync(int* out) {
  unsigned tid = threadIdx.x;
  int c = -1;
  if (tid < 64)
    c = __syncthreads_count(tid & 1);
  else
    __syncthreads();
  out[tid] = c;
  out[128 + tid] = tid;
}

// countSmallerThanArrivals: see ../count-smaller-than-arrivals.kir.
extern "C" __global__ void countSmallerThanArrivals(int* out) {
  __shared__ int s[128];
  unsigned tid = threadIdx.x;
  s[tid] = tid;
  asm volatile("bar.sync 1, 64;" ::: "memory");
  out[tid] = s[tid ^ 64];
}

// unalignedBarriers: see ../unaligned-barriers.kir (warps 0-1 and warps 2-3
// reach two different bar.sync 0 instructions).
extern "C" __global__ void unalignedBarriers(int* out) {
  __shared__ int s[128];
  unsigned tid = threadIdx.x;
  s[tid] = tid;
  if (tid / 32 >= 2) {
    out[256 + tid] = 2;
    __syncthreads();
  } else {
    out[256 + tid] = 1;
    __syncthreads();
  }
  out[tid] = s[tid ^ 64];
}
