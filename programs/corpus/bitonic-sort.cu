// Bitonic sort of 1024 ints in shared memory by one block of 512 threads, each
// thread one comparator per step (as the CUDA samples' bitonicSortShared).
#define SORT_N 1024
__device__ __forceinline__ void comparator(int& a, int& b, unsigned int dir) {
  if ((a > b) == dir) {
    int t = a;
    a = b;
    b = t;
  }
}

extern "C" __global__ void bitonic_sort_shared(const int* in, int* out) {
  __shared__ int s[SORT_N];
  unsigned int tid = threadIdx.x;
  s[tid] = in[tid];
  s[tid + SORT_N / 2] = in[tid + SORT_N / 2];
  for (unsigned int size = 2; size < SORT_N; size <<= 1) {
    unsigned int ddd = (tid & (size / 2)) != 0;  // alternate directions: bitonic runs
    for (unsigned int stride = size / 2; stride > 0; stride >>= 1) {
      __syncthreads();
      unsigned int pos = 2 * tid - (tid & (stride - 1));
      comparator(s[pos], s[pos + stride], ddd);
    }
  }
  for (unsigned int stride = SORT_N / 2; stride > 0; stride >>= 1) {  // final merge, ascending
    __syncthreads();
    unsigned int pos = 2 * tid - (tid & (stride - 1));
    comparator(s[pos], s[pos + stride], 1u);
  }
  __syncthreads();
  out[tid] = s[tid];
  out[tid + SORT_N / 2] = s[tid + SORT_N / 2];
}

