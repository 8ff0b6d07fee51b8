// Global statistics with atomics on floats: the sum of all elements with
// atomicAdd(float*) after a warp reduction, and the maximum with the classic
// atomicCAS loop on the float's bits (no native atomicMax for floats).
__device__ float atomicMaxFloat(float* addr, float value) {
  int* address = (int*)addr;
  int old = *address, assumed;
  while (value > __int_as_float(old)) {
    assumed = old;
    old = atomicCAS(address, assumed, __float_as_int(value));
    if (old == assumed) break;
  }
  return __int_as_float(old);
}

extern "C" __global__ void float_sum_max_atomics(const float* in, float* sum, float* maximum) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[i];
  float s = v, m = v;
  for (int o = 16; o > 0; o /= 2) {
    s += __shfl_down_sync(0xffffffff, s, o);
    m = fmaxf(m, __shfl_down_sync(0xffffffff, m, o));
  }
  if (threadIdx.x % 32 == 0) {
    atomicAdd(sum, s);
    atomicMaxFloat(maximum, m);
  }
}
