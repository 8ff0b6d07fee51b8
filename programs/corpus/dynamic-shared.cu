// A block reduction over dynamic shared memory (extern __shared__, sized at
// launch): the block size comes from blockDim, the buffer from the launch's
// shared_bytes; unsigned sums of 16-bit values, exact.
extern "C" __global__ void reduce_dynamic_shared(const unsigned short* in, unsigned int* out) {
  extern __shared__ unsigned int sdyn[];
  unsigned int tid = threadIdx.x;
  sdyn[tid] = in[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdyn[tid] += sdyn[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdyn[0];
}
