// Ground-truth probes behind some expectations of the machine tests, run on an
// H100 (nvcc 13, -arch=sm_90 -O2): `./probe arith|divshfl|syncexit|spin`.
// Found: div and rem by zero give all ones (s32/u32; div.s64 too); INT_MIN / -1
// = INT_MIN, INT_MIN % -1 = 0; shr/shl by >= 32 clamp; min.f32(+0,-0) = -0 and
// max = +0 in both orders; NaN results are the canonical 0x7fffffff; cvt of
// NaN to s32 = 0, of -5.0 to u32 = 0, of 3e10 to s32 = INT_MAX; `divshfl`
// (shfl.idx in one arm, shfl.bfly in the other) hangs, as PTX says mixed
// qualifiers never meet; `syncexit`: bar.warp.sync with exited lanes in the
// mask completes; `spin`: a lane spinning on a flag another lane of its warp
// sets completes (independent thread scheduling).
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#define ASM asm volatile
__global__ void arith(unsigned *o, const int *in) {
  if (threadIdx.x != 0) return;
  int z = in[0];       // 0
  int m1 = in[1];      // -1
  int big = in[2];     // 40
  int k = 0;
  int as[5] = {7, -7, 0, (int)0x80000000, 1};
  for (int i = 0; i < 5; i++) {
    int a = as[i] + z; unsigned r;
    ASM("div.s32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(z)); o[k++] = r;
    ASM("div.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(z)); o[k++] = r;
    ASM("rem.s32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(z)); o[k++] = r;
    ASM("rem.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(z)); o[k++] = r;
  }
  unsigned r; int imin = (int)0x80000000 + z;
  ASM("div.s32 %0, %1, %2;" : "=r"(r) : "r"(imin), "r"(m1)); o[k++] = r;   // 20
  ASM("rem.s32 %0, %1, %2;" : "=r"(r) : "r"(imin), "r"(m1)); o[k++] = r;
  ASM("shr.s32 %0, %1, %2;" : "=r"(r) : "r"(imin), "r"(big)); o[k++] = r;
  ASM("shr.u32 %0, %1, %2;" : "=r"(r) : "r"(imin), "r"(big)); o[k++] = r;
  ASM("shl.b32 %0, %1, %2;" : "=r"(r) : "r"(m1), "r"(big - 8)); o[k++] = r;
  float nan = __int_as_float(0x7fc00001 + z), nan2 = __int_as_float(0xffc00002 + z);
  float pz = __int_as_float(0 + z), nz = __int_as_float(0x80000000 + z), one = 1.0f + z;
  float f;
  ASM("min.f32 %0, %1, %2;" : "=f"(f) : "f"(nan), "f"(nan2)); o[k++] = __float_as_uint(f); // 25
  ASM("min.f32 %0, %1, %2;" : "=f"(f) : "f"(nan), "f"(one)); o[k++] = __float_as_uint(f);
  ASM("min.f32 %0, %1, %2;" : "=f"(f) : "f"(pz), "f"(nz)); o[k++] = __float_as_uint(f);
  ASM("min.f32 %0, %1, %2;" : "=f"(f) : "f"(nz), "f"(pz)); o[k++] = __float_as_uint(f);
  ASM("max.f32 %0, %1, %2;" : "=f"(f) : "f"(pz), "f"(nz)); o[k++] = __float_as_uint(f);
  ASM("max.f32 %0, %1, %2;" : "=f"(f) : "f"(nz), "f"(pz)); o[k++] = __float_as_uint(f); // 30
  ASM("cvt.rni.s32.f32 %0, %1;" : "=r"(r) : "f"(nan)); o[k++] = r;
  ASM("cvt.rzi.u32.f32 %0, %1;" : "=r"(r) : "f"(-5.0f + z)); o[k++] = r;
  ASM("cvt.rzi.s32.f32 %0, %1;" : "=r"(r) : "f"(3e10f + z)); o[k++] = r;
  ASM("cvt.rzi.s32.f32 %0, %1;" : "=r"(r) : "f"(__int_as_float(0xff800000 + z))); o[k++] = r;
  ASM("add.f32 %0, %1, %2;" : "=f"(f) : "f"(nan), "f"(one)); o[k++] = __float_as_uint(f); // 35
  ASM("div.s64 %0, %1, %2;" : "=l"(*(long long*)&o[40]) : "l"((long long)-7 + z), "l"((long long)z));
  o[k++] = 0xabcd;
}
__global__ void divshfl(unsigned *o) {
  unsigned l = threadIdx.x, v, r, b;
  if (l < 16) { v = l + 100; ASM("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(l ^ 16)); }
  else { v = l + 200; ASM("shfl.sync.bfly.b32 %0, %1, 16, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v)); }
  o[l] = r;
  if (l < 16) ASM("{.reg .pred p; setp.ne.u32 p, %1, 99; vote.sync.ballot.b32 %0, p, 0xffffffff;}" : "=r"(b) : "r"(l));
  else ASM("{.reg .pred p; setp.eq.u32 p, %1, 99; vote.sync.ballot.b32 %0, !p, 0xffffffff;}" : "=r"(b) : "r"(l));
  o[32 + l] = b;
  unsigned pr;
  ASM("{.reg .pred p; shfl.sync.bfly.b32 %0|p, %2, 9, 0x181f, 0xffffffff; selp.u32 %1, 1, 0, p;}" : "=r"(r), "=r"(pr) : "r"(l * 10 + 7));
  o[64 + l] = r; o[96 + l] = pr;
}
__global__ void syncexit(unsigned *o) {
  unsigned l = threadIdx.x;
  if (l >= 16) return;
  for (volatile int i = 0; i < 1000; i++) {}
  ASM("bar.warp.sync 0xffffffff;");
  o[l] = l + 1;
}
__global__ void spin(volatile unsigned *flag, unsigned *o) {
  unsigned l = threadIdx.x;
  if (l == 0) { while (flag[0] == 0) {} o[0] = 2; }
  else if (l == 1) { flag[0] = 1; }
}
int main(int argc, char **argv) {
  unsigned *o; int *in; cudaMalloc(&o, 4096); cudaMalloc(&in, 64); cudaMemset(o, 0, 4096);
  int h[3] = {0, -1, 40}; cudaMemcpy(in, h, 12, cudaMemcpyHostToDevice);
  unsigned out[1024]; int n = 0; const char *w = argv[1];
  if (!strcmp(w, "arith")) { arith<<<1, 32>>>(o, in); n = 42; }
  if (!strcmp(w, "divshfl")) { divshfl<<<1, 32>>>(o); n = 128; }
  if (!strcmp(w, "syncexit")) { syncexit<<<1, 32>>>(o); n = 32; }
  if (!strcmp(w, "spin")) { spin<<<1, 32>>>(o, o + 16); n = 32; }
  cudaError_t e = cudaDeviceSynchronize();
  cudaMemcpy(out, o, n * 4, cudaMemcpyDeviceToHost);
  printf("%s: %s\n", w, cudaGetErrorString(e));
  for (int i = 0; i < n; i++) printf("%d:%08x%c", i, out[i], i % 8 == 7 ? '\n' : ' ');
  printf("\n");
}
