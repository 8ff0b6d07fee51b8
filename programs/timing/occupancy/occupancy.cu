// Occupancy ground truth for warpsim's timing model: asks an H100's CUDA runtime how many blocks fit on one SM for kernels of known register and shared-memory use, and prints the table and the device's limits.
//
// Build and run on the GPU machine (the commands are in
// programs/timing/README.md):
//
//   nvcc -arch=sm_90 -O3 -o occupancy occupancy.cu
//   ./occupancy h100-occupancy.csv h100-device.txt
//
// Each kernel's registers per thread are set with __maxnreg__ on a body that
// wants far more registers than that (256 values live across a loop), so
// that ptxas uses exactly the cap and spills the rest; the program reads the
// count back with cudaFuncGetAttributes and records that, not the cap.
// Static shared memory comes from kernels that declare __shared__ arrays of
// a given size; dynamic shared memory is the occupancy query's argument,
// after cudaFuncSetAttribute has raised each kernel's limit to the most a
// block may have (sharedMemPerBlockOptin minus its static shared memory).

// Keeps `N` floats live across a loop, so that register allocation must
// either find registers for all of them or spill.
template <int N>
__device__ __forceinline__ void pressure(float* out, const float* in, int rounds, float* shared, int shared_words) {
  float v[N];
#pragma unroll
  for (int k = 0; k < N; ++k) {
    v[k] = in[threadIdx.x + k * 32];
  }
  for (int r = 0; r < rounds; ++r) {
#pragma unroll
    for (int k = 0; k < N; ++k) {
      v[k] = fmaf(v[k], v[(k + 1) % N], v[(k + 7) % N]);
    }
  }
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    sum += v[k] * (float)(k + 1);
  }
  if (shared_words > 0) {
    shared[threadIdx.x % shared_words] = sum;
    __syncthreads();
    sum += shared[(threadIdx.x * 7 + 1) % shared_words];
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

// A kernel capped at R registers per thread, with no static shared memory.
#define REGISTER_KERNEL(R)                                                                   \
  extern "C" __global__ void __maxnreg__(R) regs##R(float* out, const float* in, int rounds) { \
    pressure<256>(out, in, rounds, nullptr, 0);                                             \
  }

// A kernel that needs few registers (14 when ptxas 12.9 compiles it): ptxas
// does not spill below about 24 registers whatever the cap, so the low end
// comes from a small body instead.
extern "C" __global__ void light(float* out, const float* in, int rounds) {
  pressure<6>(out, in, rounds, nullptr, 0);
}

// A kernel capped at R registers per thread, with BYTES of static shared memory.
#define SHARED_KERNEL(R, BYTES)                                                                             \
  extern "C" __global__ void __maxnreg__(R) regs##R##_static##BYTES(float* out, const float* in, int rounds) { \
    __shared__ float words[(BYTES) / 4];                                                                    \
    pressure<256>(out, in, rounds, words, (BYTES) / 4);                                                      \
  }

REGISTER_KERNEL(24)
REGISTER_KERNEL(32)
REGISTER_KERNEL(37)
REGISTER_KERNEL(40)
REGISTER_KERNEL(48)
REGISTER_KERNEL(64)
REGISTER_KERNEL(72)
REGISTER_KERNEL(80)
REGISTER_KERNEL(96)
REGISTER_KERNEL(100)
REGISTER_KERNEL(128)
REGISTER_KERNEL(168)
REGISTER_KERNEL(255)
SHARED_KERNEL(32, 4000)
SHARED_KERNEL(32, 40000)
SHARED_KERNEL(32, 49152)
SHARED_KERNEL(64, 12288)

#ifndef __CUDACC_RTC__
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

// Stops the program with the failed call's message.
static void check(cudaError_t error, const char* what) {
  if (error != cudaSuccess) {
    fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(error));
    exit(1);
  }
}

// A kernel of the table, by name.
struct Kernel {
  const char* name;
  const void* function;
};

#define K(name) {#name, (const void*)name}

static const Kernel kKernels[] = {
    K(light), K(regs24), K(regs32), K(regs37), K(regs40), K(regs48), K(regs64),
    K(regs72), K(regs80), K(regs96), K(regs100), K(regs128), K(regs168), K(regs255),
    K(regs32_static4000), K(regs32_static40000), K(regs32_static49152), K(regs64_static12288),
};

// One occupancy question: a kernel, a block size and the dynamic shared memory per block.
struct Case {
  const char* kernel;
  int threads;
  int dynamic_shared;
};

// The cases, grouped by the limit they are meant to reach.
static const Case kCases[] = {
    // Threads per SM (2,048) and warps per SM (64).
    {"light", 1024, 0},
    {"regs32", 1024, 0},
    {"regs24", 512, 0},
    {"regs32", 256, 0},
    {"regs32", 96, 0},
    {"regs32", 160, 0},
    {"regs32", 992, 0},
    {"light", 736, 0},
    {"regs32", 33, 0},
    // Blocks per SM (32).
    {"light", 32, 0},
    {"light", 64, 0},
    {"light", 1, 0},
    {"regs40", 32, 0},
    // Registers, allocated per warp in units of 256 from each sub-partition's 16,384.
    {"regs64", 1024, 0},
    {"regs72", 1024, 0},
    {"regs64", 992, 0},
    {"regs37", 256, 0},
    {"regs37", 64, 0},
    {"regs40", 256, 0},
    {"regs48", 256, 0},
    {"regs72", 128, 0},
    {"regs80", 32, 0},
    {"regs80", 768, 0},
    {"regs80", 800, 0},
    {"regs96", 32, 0},
    {"regs96", 64, 0},
    {"regs96", 640, 0},
    {"regs100", 128, 0},
    {"regs100", 32, 0},
    {"regs128", 256, 0},
    {"regs128", 512, 0},
    {"regs168", 32, 0},
    {"regs168", 96, 0},
    {"regs168", 384, 0},
    {"regs255", 32, 0},
    {"regs255", 256, 0},
    {"regs255", 288, 0},
    // Shared memory: 128-byte units, 1 KiB reserved per block, 228 KiB per SM, 227 KiB per block.
    {"regs32", 256, 49152},
    {"regs32", 128, 1},
    {"light", 32, 100},
    {"regs32", 256, 115712},
    {"regs32", 256, 115713},
    {"regs32", 256, 232448},
    {"regs32", 256, 232449},
    {"regs32", 64, 8704},
    {"regs32", 64, 8705},
    {"regs32", 1024, 102400},
    {"regs32", 1024, 122880},
    {"regs32", 32, 0},
    {"regs32_static4000", 32, 0},
    {"regs32_static4000", 64, 3000},
    {"regs32_static40000", 128, 0},
    {"regs32_static40000", 128, 8000},
    {"regs32_static49152", 256, 0},
    {"regs32_static49152", 256, 183296},
    {"regs64_static12288", 256, 0},
    {"regs64_static12288", 512, 20000},
};

// The attributes of a kernel by name.
static const Kernel* find(const char* name) {
  for (const Kernel& kernel : kKernels) {
    if (strcmp(kernel.name, name) == 0) {
      return &kernel;
    }
  }
  fprintf(stderr, "no kernel %s\n", name);
  exit(1);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s OCCUPANCY.csv DEVICE.txt\n", argv[0]);
    return 2;
  }
  cudaDeviceProp prop;
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  int driver = 0;
  int runtime = 0;
  check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
  // The clocks are read with cudaDeviceGetAttribute, since CUDA 13's
  // cudaDeviceProp no longer carries them; the bus width too, to be safe.
  int clock_khz = 0;
  int memory_clock_khz = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
  cudaDeviceGetAttribute(&memory_clock_khz, cudaDevAttrMemoryClockRate, 0);
  int bus_width = 0;
  cudaDeviceGetAttribute(&bus_width, cudaDevAttrGlobalMemoryBusWidth, 0);

  FILE* device = fopen(argv[2], "w");
  if (device == nullptr) {
    perror(argv[2]);
    return 1;
  }
  fprintf(device, "# The H100's limits as its CUDA runtime reports them (cudaDeviceProp and cudaDeviceGetAttribute), written by programs/timing/occupancy/occupancy.cu; then each occupancy kernel's attributes (cudaFuncGetAttributes).\n");
  fprintf(device, "name = %s\n", prop.name);
  fprintf(device, "compute_capability = %d.%d\n", prop.major, prop.minor);
  fprintf(device, "driver_version = %d\n", driver);
  fprintf(device, "runtime_version = %d\n", runtime);
  fprintf(device, "multiProcessorCount = %d\n", prop.multiProcessorCount);
  fprintf(device, "sharedMemPerMultiprocessor = %zu\n", prop.sharedMemPerMultiprocessor);
  fprintf(device, "sharedMemPerBlock = %zu\n", prop.sharedMemPerBlock);
  fprintf(device, "sharedMemPerBlockOptin = %zu\n", prop.sharedMemPerBlockOptin);
  fprintf(device, "reservedSharedMemPerBlock = %zu\n", prop.reservedSharedMemPerBlock);
  fprintf(device, "regsPerMultiprocessor = %d\n", prop.regsPerMultiprocessor);
  fprintf(device, "regsPerBlock = %d\n", prop.regsPerBlock);
  fprintf(device, "maxThreadsPerMultiProcessor = %d\n", prop.maxThreadsPerMultiProcessor);
  fprintf(device, "maxThreadsPerBlock = %d\n", prop.maxThreadsPerBlock);
  fprintf(device, "maxBlocksPerMultiProcessor = %d\n", prop.maxBlocksPerMultiProcessor);
  fprintf(device, "warpSize = %d\n", prop.warpSize);
  fprintf(device, "l2CacheSize = %d\n", prop.l2CacheSize);
  fprintf(device, "persistingL2CacheMaxSize = %d\n", prop.persistingL2CacheMaxSize);
  fprintf(device, "totalGlobalMem = %zu\n", prop.totalGlobalMem);
  fprintf(device, "clockRate = %d\n", clock_khz);
  fprintf(device, "memoryClockRate = %d\n", memory_clock_khz);
  fprintf(device, "memoryBusWidth = %d\n", bus_width);

  for (const Kernel& kernel : kKernels) {
    cudaFuncAttributes attributes;
    check(cudaFuncGetAttributes(&attributes, kernel.function), kernel.name);
    int most = (int)prop.sharedMemPerBlockOptin - (int)attributes.sharedSizeBytes;
    check(cudaFuncSetAttribute(kernel.function, cudaFuncAttributeMaxDynamicSharedMemorySize, most), kernel.name);
    check(cudaFuncGetAttributes(&attributes, kernel.function), kernel.name);
    fprintf(device, "kernel %s: numRegs = %d, sharedSizeBytes = %zu, maxThreadsPerBlock = %d, localSizeBytes = %zu, maxDynamicSharedSizeBytes = %d\n",
            kernel.name, attributes.numRegs, attributes.sharedSizeBytes, attributes.maxThreadsPerBlock,
            attributes.localSizeBytes, attributes.maxDynamicSharedSizeBytes);
  }
  fclose(device);

  FILE* table = fopen(argv[1], "w");
  if (table == nullptr) {
    perror(argv[1]);
    return 1;
  }
  fprintf(table, "# Blocks per SM that cudaOccupancyMaxActiveBlocksPerMultiprocessor gives on an H100, by threads per block, registers per thread (numRegs as allocated), static and dynamic shared memory per block in bytes; written by programs/timing/occupancy/occupancy.cu.\n");
  fprintf(table, "threads,registers,static_shared,dynamic_shared,blocks_per_sm\n");
  for (const Case& c : kCases) {
    const Kernel* kernel = find(c.kernel);
    cudaFuncAttributes attributes;
    check(cudaFuncGetAttributes(&attributes, kernel->function), kernel->name);
    int blocks = -1;
    cudaError_t error = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel->function, c.threads, c.dynamic_shared);
    if (error != cudaSuccess) {
      // A block that cannot be resident at all (too much shared memory, or
      // more threads than the kernel allows) is recorded as 0 blocks; the
      // error goes to stderr.
      fprintf(stderr, "%s, %d threads, %d dynamic: %s\n", c.kernel, c.threads, c.dynamic_shared, cudaGetErrorString(error));
      cudaGetLastError();
      blocks = 0;
    }
    fprintf(table, "%d,%d,%zu,%d,%d\n", c.threads, attributes.numRegs, attributes.sharedSizeBytes, c.dynamic_shared, blocks);
    printf("%-20s threads %4d  regs %3d  static %6zu  dynamic %6d  ->  %2d blocks\n", c.kernel, c.threads, attributes.numRegs,
           attributes.sharedSizeBytes, c.dynamic_shared, blocks);
  }
  fclose(table);
  return 0;
}
#endif
