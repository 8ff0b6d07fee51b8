// What bounds the L1's merging of partial-sector stores on an H200, time or room (neither: h200-store-merging-window.txt has the answer). One warp writes 4-byte words into 32-byte sectors, lane by lane, so that every sector is completed by several store instructions; between two stores to the same sector it either waits (`delay` cycles of clock64() spinning) or writes other sectors (`groups` sets of 32 sectors, or 16 with two lanes a sector).
//
// nvcc -arch=sm_90 -O3 -o window store-merging-window.cu
// ncu --metrics lts__t_sectors_srcunit_tex_op_write.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum ./window
// The program prints its launches in order, one line each; Nsight Compute's
// rows follow the same order. A sector is 8 words: lanes 32 bytes apart
// need 8 stores to complete a sector, lanes 16 bytes apart 4.
#include <cstdio>

__device__ __forceinline__ void spin(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// Word k of lane l's run in group g is out[(g * 32 + l) * run + k]; the
// stores go k by k, and within k group by group.
// `same`: every store of a lane writes the lane's index (else k + 1);
// `fence`: a __threadfence() after the last store.
extern "C" __global__ void window(unsigned* out, int run, int groups, long long delay, int same, int fence) {
  unsigned lane = threadIdx.x;
  for (int k = 0; k < run; ++k) {
    for (int g = 0; g < groups; ++g) {
      out[(g * 32 + lane) * run + k] = same ? lane : k + 1;
    }
    if (delay > 0) spin(delay);
  }
  if (fence) __threadfence();
}

// The same 8 (or 4) stores of a lane into its own run, from one base
// register with immediate offsets, back to back (`runStores` of stores.cu
// stores so); `gap` dependent IMADs between two stores.
extern "C" __global__ void immediate(unsigned* out, int run, int gap) {
  unsigned* base = out + threadIdx.x * run;
  unsigned value = threadIdx.x;
  if (run == 8) {
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      base[k] = value;
      for (int i = 0; i < gap; ++i) value = value * 3u + 1u;
    }
  } else {
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      base[k] = value;
      for (int i = 0; i < gap; ++i) value = value * 3u + 1u;
    }
  }
}

int main() {
  unsigned* out;
  cudaMalloc(&out, 64 << 20);
  struct Case {
    int run, groups;
    long long delay;
    int same = 0, fence = 0;
  } cases[] = {
      {8, 1, 0, 1, 0},  {8, 1, 0, 0, 1},  {8, 1, 0, 1, 1},  {4, 1, 0, 1, 1},  {8, 8, 0, 1, 1},
      {8, 1, 0},    {8, 1, 200},  {8, 1, 500},  {8, 1, 1000}, {8, 1, 2000}, {8, 1, 4000},
      {8, 1, 8000}, {8, 1, 16000}, {8, 1, 32000}, {4, 1, 1000}, {4, 1, 4000}, {4, 1, 16000},
      {8, 2, 0},    {8, 4, 0},    {8, 8, 0},    {8, 16, 0},   {8, 32, 0},   {8, 64, 0},
      {4, 2, 0},    {4, 4, 0},    {4, 8, 0},    {4, 16, 0},   {4, 32, 0},   {4, 64, 0},
      {8, 4, 2000}, {4, 8, 2000},
  };
  for (const Case& c : cases) {
    window<<<1, 32>>>(out, c.run, c.groups, c.delay, c.same, c.fence);
    cudaDeviceSynchronize();
    printf("window run=%d groups=%d delay=%lld same=%d fence=%d union_sectors=%d\n", c.run, c.groups, c.delay,
           c.same, c.fence, c.groups * 32 * c.run * 4 / 32);
  }
  for (int gap : {0, 4, 16, 64}) {
    for (int run : {8, 4}) {
      immediate<<<1, 32>>>(out, run, gap);
      cudaDeviceSynchronize();
      printf("immediate run=%d gap=%d union_sectors=%d\n", run, gap, run * 4);
    }
  }
  cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess) {
    printf("error: %s\n", cudaGetErrorString(error));
    return 1;
  }
  return 0;
}
