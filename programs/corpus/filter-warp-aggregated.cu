// Stream compaction with warp-aggregated atomics (NVIDIA's "CUDA Pro Tip:
// Optimized Filtering with Warp-Aggregated Atomics"): the positive values of
// `src` are copied to `dst`, in an order the atomics decide, and *nres counts
// them. One atomicAdd per warp: the leader (the lowest active lane) adds the
// warp's count and broadcasts the base with a shuffle.
__device__ __forceinline__ int atomicAggInc(int* ctr) {
  unsigned int active = __activemask();
  int leader = __ffs(active) - 1;
  int change = __popc(active);
  unsigned int lane = threadIdx.x % 32;
  unsigned int rank = __popc(active & ((1u << lane) - 1));
  int warp_res = 0;
  if (lane == leader) warp_res = atomicAdd(ctr, change);
  warp_res = __shfl_sync(active, warp_res, leader);
  return warp_res + rank;
}

extern "C" __global__ void filter_warp_aggregated(int* dst, int* nres, const int* src, int n) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i < n && src[i] > 0) dst[atomicAggInc(nres)] = src[i];
}
