// Histogram of bytes into 256 bins: per-block privatised bins in shared memory
// (atomicAdd on shared), then one atomicAdd per bin on the global histogram.
extern "C" __global__ void histogram256_shared_atomics(const unsigned char* data, unsigned int n,
                                                       unsigned int* hist) {
  __shared__ unsigned int bins[256];
  bins[threadIdx.x] = 0;
  __syncthreads();
  for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    atomicAdd(&bins[data[i]], 1u);
  }
  __syncthreads();
  atomicAdd(&hist[threadIdx.x], bins[threadIdx.x]);
}

