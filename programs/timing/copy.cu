// Microbenchmark of DRAM bandwidth: a grid-stride copy of float4s across the whole GPU, timed on hardware by Nsight Compute (gpc__cycles_elapsed.max, dram__bytes) and by each block's clock64().
//
// Thread 0 of every block writes the clock64() value before and after its
// block's share of the copy to clocks[2 * block] and clocks[2 * block + 1];
// the clocks of different SMs are not synchronized, so only each block's own
// span is meaningful.
extern "C" __global__ void copyFloat4(unsigned long long* clocks, float4* destination, const float4* source, unsigned long long count) {
  long long start = clock64();
  unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
    destination[i] = source[i];
  }
  long long stop = clock64();
  if (threadIdx.x == 0) {
    clocks[2 * blockIdx.x] = start;
    clocks[2 * blockIdx.x + 1] = stop;
  }
}
