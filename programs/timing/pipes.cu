// Which sub-partition pipe each common integer and FP32 instruction issues to, at what rate and latency: eight independent chains of one operation (or two alternating), and one chain, timed by clock64().
//
// Every row is two kernels, `pipe_NAME_chains8` and `pipe_NAME_chains1`:
// 256 iterations of 4 steps of 8 independent chains (or of one chain),
// each step one operation of the row (two alternate, step by step). Lane 0
// of warp w writes its clocks before and after the timed loop to
// clocks[2w] and clocks[2w + 1]; the loop runs twice and the second run is
// timed, as in fma.cu. `nvcc -arch=sm_90 -O3 -o pipes pipes.cu && ./pipes`
// runs every row with one warp and with 32 (eight a sub-partition, so the
// rate is the sub-partition's) and prints the cycles per operation;
// hardware/h200-pipes.txt holds that output and the SASS of every timed
// loop (`cuobjdump -sass pipes | python3 hardware/sass-loops.py`). NVRTC
// compiles the kernels alone (pipes.ptx; the launch files pipes_*.toml).
//
// Every step is one inline PTX instruction on run-time operands, yet ptxas
// still optimises across them: it merges steps of a chain where the
// algebra allows (two `add`s into one IMAD or LEA, two `min`s into one
// VIMNMX3, two `xor`s of one value into none), so the SASS, not the PTX,
// says what a row measures. Which SASS a PTX `add` or `shl` becomes (IADD3
// or LEA on the ALU pipe, IMAD.IADD, IMAD.SHL or VIADD on the FMA pipe's
// heavy half) is ptxas's choice, and the point of the rows that mix them
// with other operations.

#define STEPS 4
#define ITERATIONS 256

struct Operands {
  unsigned a, b, m, s;
  float fa, fb;
};

// One step of a chain, x to y, as one inline PTX instruction (or a setp and
// its selp): %1 is x, and %2 to %5 the run-time operands a, b, m, s (FP32
// steps: %2 and %3 are fa and fb).
#define OP_U(name, text)                                                          \
  __device__ __forceinline__ unsigned name(unsigned x, const Operands& o) {       \
    unsigned y;                                                                   \
    asm volatile(text : "=r"(y) : "r"(x), "r"(o.a), "r"(o.b), "r"(o.m), "r"(o.s)); \
    return y;                                                                     \
  }
#define OP_F(name, text)                                                   \
  __device__ __forceinline__ float name(float x, const Operands& o) {      \
    float y;                                                               \
    asm volatile(text : "=f"(y) : "f"(x), "f"(o.fa), "f"(o.fb));           \
    return y;                                                              \
  }

OP_U(opShf, "shf.l.wrap.b32 %0, %1, %1, %5;")
OP_U(opShr, "shr.u32 %0, %1, %5;")
OP_U(opShlImm, "shl.b32 %0, %1, 3;")
OP_U(opLop3, "lop3.b32 %0, %1, %2, %3, 0x28;")
OP_U(opXor, "xor.b32 %0, %1, %2;")
OP_U(opAdd, "add.u32 %0, %1, %2;")
OP_U(opSub, "sub.u32 %0, %1, %2;")
OP_U(opMad, "mad.lo.u32 %0, %1, %4, %2;")
OP_U(opMul, "mul.lo.u32 %0, %1, %4;")
OP_U(opMin, "min.u32 %0, %1, %2;")
OP_U(opPrmt, "prmt.b32 %0, %1, %2, 0x1032;")
OP_U(opBfe, "bfe.u32 %0, %1, %5, 20;")
OP_U(opBrev, "brev.b32 %0, %1;")
OP_U(opPopc, "popc.b32 %0, %1;")
OP_U(opSetpSelp, "{ .reg .pred p; setp.lt.u32 p, %1, %2; selp.b32 %0, %1, %3, p; }")
OP_F(opFfma, "fma.rn.f32 %0, %1, %2, %3;")
OP_F(opFadd, "add.f32 %0, %1, %2;")
OP_F(opFmul, "mul.f32 %0, %1, %2;")
OP_F(opFmin, "min.f32 %0, %1, %2;")
OP_F(opFsetpSelp, "{ .reg .pred p; setp.lt.f32 p, %1, %2; selp.f32 %0, %1, %3, p; }")

__device__ __forceinline__ unsigned opCvtToFloat(unsigned x, const Operands& o) {
  float y;
  asm volatile("cvt.rn.f32.u32 %0, %1;" : "=f"(y) : "r"(x));
  return __float_as_uint(y);
}
__device__ __forceinline__ float opCvtToInt(float x, const Operands& o) {
  unsigned y;
  asm volatile("cvt.rzi.u32.f32 %0, %1;" : "=r"(y) : "f"(x));
  return __uint_as_float(y);
}

// The integer operations on a float's bits, for chains that mix them with
// FP32 ones. `mad` and `add` go through `mov.b32`s in the PTX, which ptxas
// drops but warpsim issues.
#define ON_BITS(name, op)                                              \
  __device__ __forceinline__ float name(float x, const Operands& o) { \
    return __uint_as_float(op(__float_as_uint(x), o));                \
  }
ON_BITS(opMadF, opMad)
ON_BITS(opAddF, opAdd)
// Bit-typed instructions take `f32` registers as they are (no `mov.b32`
// to an integer register and back in the PTX, which ptxas would drop).
OP_F(opLop3F, "lop3.b32 %0, %1, %2, %3, 0x28;")
OP_F(opShlImmF, "shl.b32 %0, %1, 3;")

template <typename T, T (*First)(T, const Operands&), T (*Second)(T, const Operands&), int CHAINS>
__device__ __forceinline__ void chains(unsigned long long* clocks, T* sink, const Operands& o) {
  T x[CHAINS];
#pragma unroll
  for (int j = 0; j < CHAINS; ++j) x[j] = (T)(threadIdx.x * 7 + j + 1);
  long long start = 0, stop = 0;
#pragma unroll 1
  for (int round = 0; round < 2; ++round) {
    __syncthreads();
    start = clock64();
#pragma unroll 1
    for (int i = 0; i < ITERATIONS; ++i) {
#pragma unroll
      for (int k = 0; k < STEPS; ++k) {
#pragma unroll
        for (int j = 0; j < CHAINS; ++j) x[j] = (k & 1) ? Second(x[j], o) : First(x[j], o);
      }
    }
    stop = clock64();
  }
  T sum = 0;
#pragma unroll
  for (int j = 0; j < CHAINS; ++j) sum += x[j];
  sink[blockIdx.x * blockDim.x + threadIdx.x] = sum;
  unsigned warp = threadIdx.x / 32;
  if ((threadIdx.x & 31) == 0) {
    clocks[2 * warp] = start;
    clocks[2 * warp + 1] = stop;
  }
}

#define KERNEL(name, T, first, second, count)                                                          \
  extern "C" __global__ void pipe_##name##_chains##count(unsigned long long* clocks, T* sink, unsigned a, \
                                                         unsigned b, unsigned m, unsigned s, float fa,   \
                                                         float fb) {                                     \
    chains<T, first, second, count>(clocks, sink, Operands{a, b, m, s, fa, fb});                         \
  }
#define ROW(name, T, first, second) KERNEL(name, T, first, second, 8) KERNEL(name, T, first, second, 1)

// The rows: name, the chains' type, the operation of the even steps and of the odd ones.
#define ROWS(X)                                   \
  X(shf, unsigned, opShf, opShf)                  \
  X(shr, unsigned, opShr, opShr)                  \
  X(shl_imm, unsigned, opShlImm, opShlImm)        \
  X(lop3, unsigned, opLop3, opLop3)               \
  X(xor, unsigned, opXor, opXor)                  \
  X(add, unsigned, opAdd, opAdd)                  \
  X(sub, unsigned, opSub, opSub)                  \
  X(mad, unsigned, opMad, opMad)                  \
  X(mul, unsigned, opMul, opMul)                  \
  X(min_u32, unsigned, opMin, opMin)              \
  X(prmt, unsigned, opPrmt, opPrmt)               \
  X(bfe, unsigned, opBfe, opBfe)                  \
  X(brev, unsigned, opBrev, opBrev)               \
  X(popc, unsigned, opPopc, opPopc)               \
  X(setp_selp_u32, unsigned, opSetpSelp, opSetpSelp) \
  X(cvt_f32_u32, unsigned, opCvtToFloat, opCvtToFloat) \
  X(ffma, float, opFfma, opFfma)                  \
  X(fadd, float, opFadd, opFadd)                  \
  X(fmul, float, opFmul, opFmul)                  \
  X(fmin, float, opFmin, opFmin)                  \
  X(setp_selp_f32, float, opFsetpSelp, opFsetpSelp) \
  X(cvt_u32_f32, float, opCvtToInt, opCvtToInt)   \
  X(shf_mad, unsigned, opShf, opMad)              \
  X(lop3_mad, unsigned, opLop3, opMad)            \
  X(shf_lop3, unsigned, opShf, opLop3)            \
  X(shf_add, unsigned, opShf, opAdd)              \
  X(mad_add, unsigned, opMad, opAdd)              \
  X(ffma_fmin, float, opFfma, opFmin)             \
  X(fadd_fmul, float, opFadd, opFmul)             \
  X(ffma_mad, float, opFfma, opMadF)              \
  X(ffma_lop3, float, opFfma, opLop3F)            \
  X(ffma_shl_imm, float, opFfma, opShlImmF)       \
  X(ffma_add, float, opFfma, opAddF)

ROWS(ROW)

#ifndef __CUDACC_RTC__
#include <cstdio>

typedef void (*Kernel)(unsigned long long*, void*, unsigned, unsigned, unsigned, unsigned, float, float);

struct Row {
  const char* name;
  Kernel independent;
  Kernel dependent;
};

static double measure(Kernel kernel, int threads, unsigned long long* clocks, void* sink) {
  kernel<<<1, threads>>>(clocks, sink, 0x9e3779b9u, 0x7f4a7c15u, 2654435761u, 7u, 1.0001f, 0.5f);
  cudaDeviceSynchronize();
  unsigned long long host[64];
  cudaMemcpy(host, clocks, sizeof host, cudaMemcpyDeviceToHost);
  unsigned long long first = host[0], last = host[1];
  for (int w = 0; w < threads / 32; ++w) {
    if (host[2 * w] > first) first = host[2 * w];
    if (host[2 * w + 1] > last) last = host[2 * w + 1];
  }
  return (double)(last - first);
}

static double median(double* values) {
  for (int i = 0; i < 5; ++i)
    for (int j = i + 1; j < 5; ++j)
      if (values[j] < values[i]) {
        double t = values[i];
        values[i] = values[j];
        values[j] = t;
      }
  return values[2];
}

#define TABLE(name, T, first, second) {#name, (Kernel)pipe_##name##_chains8, (Kernel)pipe_##name##_chains1},

int main() {
  Row rows[] = {ROWS(TABLE)};
  unsigned long long* clocks;
  void* sink;
  cudaMalloc(&clocks, 64 * sizeof(unsigned long long));
  cudaMalloc(&sink, 1024 * sizeof(unsigned));
  const double operations = (double)ITERATIONS * STEPS * 8;
  const double chained = (double)ITERATIONS * STEPS;
  printf("# operation: cycles per operation of the timed loop, medians of 5 launches. one_warp: eight "
         "independent chains, one warp alone; sub_partition_8_warps: the same with a block of 1024 threads, "
         "the block's cycles over the 8 warps of each sub-partition; dependent: one chain, one warp\n");
  for (const Row& row : rows) {
    double one[5], full[5], dependent[5];
    measure(row.independent, 32, clocks, sink);
    measure(row.dependent, 32, clocks, sink);
    for (int r = 0; r < 5; ++r) {
      one[r] = measure(row.independent, 32, clocks, sink);
      full[r] = measure(row.independent, 1024, clocks, sink);
      dependent[r] = measure(row.dependent, 32, clocks, sink);
    }
    printf("%s one_warp=%.3f sub_partition_8_warps=%.3f dependent=%.3f\n", row.name, median(one) / operations,
           median(full) / (operations * 8), median(dependent) / chained);
  }
  cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess) {
    printf("error: %s\n", cudaGetErrorString(error));
    return 1;
  }
  return 0;
}
#endif
