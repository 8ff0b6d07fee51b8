// Calls to device functions kept out of line: the number of Collatz steps of
// each value (a loop inside the callee) and a clamp through a pointer.
__device__ __noinline__ unsigned int collatz_steps(unsigned int x) {
  unsigned int steps = 0;
  while (x > 1 && steps < 1000) {
    x = (x & 1) ? 3 * x + 1 : x / 2;
    steps++;
  }
  return steps;
}

__device__ __noinline__ void clamp_store(unsigned int* p, unsigned int v, unsigned int hi) {
  *p = v < hi ? v : hi;
}

extern "C" __global__ void noinline_device_call(const unsigned int* in, unsigned int* out,
                                                unsigned int* clamped) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int steps = collatz_steps((in[i] & 0xffff) + 1);
  out[i] = steps;
  clamp_store(&clamped[i], steps, 100);
}

