// One warp stores the values of eight global loads into shared memory, as a
// tile load does (`tile[k * 32 + lane] = in[k * 1024 + lane]`, unrolled):
// NVVM writes each load next to the store of its value, ptxas issues the
// eight loads first (programs/timing/hardware/h200-load-schedule.txt). clock64 around the
// eight pairs: about one memory round trip, not eight.
extern "C" __global__ void load_store_pairs(const float* in, float* out, long long* cycles) {
  __shared__ float tile[8 * 32];
  int lane = threadIdx.x;
  long long start = clock64();
#pragma unroll
  for (int k = 0; k < 8; k++) tile[k * 32 + lane] = in[k * 1024 + lane];
  __syncwarp();
  long long end = clock64();
  float sum = 0;
  for (int k = 0; k < 8; k++) sum += tile[k * 32 + (lane ^ k)];
  out[lane] = sum;
  if (lane == 0) cycles[0] = end - start;
}
