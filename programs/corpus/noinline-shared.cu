// Device functions kept out of line that synchronise the block and use shared
// memory, and a device function that calls another one twice.
__device__ __noinline__ unsigned int mix(unsigned int a, unsigned int b) {
  return (a * 2654435761u) ^ (b >> 3);
}

__device__ __noinline__ unsigned int mix_twice(unsigned int a, unsigned int b) {
  unsigned int first = mix(a, b);
  return mix(first, b + 1);
}

// Every thread of the block publishes its value; after the barrier each reads
// the value of thread (4 t) mod 256, a stride of four words: 4-way conflicts.
__device__ __noinline__ unsigned int strided_exchange(unsigned int v) {
  __shared__ unsigned int tile[256];
  unsigned int t = threadIdx.x;
  tile[t] = v;
  __syncthreads();
  unsigned int r = tile[(t * 4) % 256];
  __syncthreads();
  return r;
}

extern "C" __global__ void noinline_shared_calls(const unsigned int* in, unsigned int* out) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int v = mix_twice(in[i], i);
  unsigned int r = strided_exchange(v);
  if (threadIdx.x % 3 == 0) {
    r = mix(r, 7);
  }
  out[i] = r;
}
