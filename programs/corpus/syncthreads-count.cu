// Counting with barrier reductions: each block counts its elements above a
// threshold with __syncthreads_count, and flags with __syncthreads_or and
// __syncthreads_and whether any / all of them are even.
extern "C" __global__ void syncthreads_count_threshold(const unsigned int* in, unsigned int threshold,
                                                       unsigned int* counts, unsigned int* anyEven,
                                                       unsigned int* allEven) {
  unsigned int v = in[blockIdx.x * blockDim.x + threadIdx.x];
  int above = __syncthreads_count(v > threshold);
  int any = __syncthreads_or((v & 1) == 0);
  int all = __syncthreads_and((v & 1) == 0);
  if (threadIdx.x == 0) {
    counts[blockIdx.x] = above;
    anyEven[blockIdx.x] = any;
    allEven[blockIdx.x] = all;
  }
}
