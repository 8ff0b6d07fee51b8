// Ground-truth probes, second round, run on an H100 (nvcc 13, -arch=sm_90,
// both -O2 and -G): `./probe2 rem64|samshfl|samvote|lateexit`.
// Found: rem.s64/rem.u64/div.u64 by zero give all ones; the same shfl.sync.idx
// (full mask) in both arms of a branch exchanges values across the arms
// (lanes 0..15 get (l^16)+200, lanes 16..31 get (l^16)+100); the same
// vote.sync.ballot in both arms gives 0xffffffff to every lane; bar.warp.sync
// with the full mask is released when the missing lanes exit later.
#include <cstdio>
#include <cstring>
#define ASM asm volatile
__global__ void rem64(unsigned long long *o, const long long *in) {
  long long z = in[0], a = -7 + z; unsigned long long r;
  ASM("rem.s64 %0, %1, %2;" : "=l"(r) : "l"(a), "l"(z)); o[0] = r;
  ASM("rem.u64 %0, %1, %2;" : "=l"(r) : "l"(a), "l"(z)); o[1] = r;
  ASM("div.u64 %0, %1, %2;" : "=l"(r) : "l"(a), "l"(z)); o[2] = r;
  ASM("rem.s32 %0, %1, %2;" : "=r"(*(unsigned*)&o[3]) : "r"((int)a), "r"((int)z));
}
__global__ void samshfl(unsigned *o) {
  unsigned l = threadIdx.x, v, r;
  if (l < 16) { v = l + 100; ASM("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(l ^ 16)); o[64 + l] = 1; }
  else { v = l + 200; ASM("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(l ^ 16)); o[64 + l] = 2; }
  o[l] = r;
}
__global__ void samvote(unsigned *o) {
  unsigned l = threadIdx.x, b;
  if (l < 16) { ASM("{.reg .pred p; setp.ne.u32 p, %1, 99; vote.sync.ballot.b32 %0, p, 0xffffffff;}" : "=r"(b) : "r"(l)); o[64 + l] = 1; }
  else { ASM("{.reg .pred p; setp.ne.u32 p, %1, 99; vote.sync.ballot.b32 %0, p, 0xffffffff;}" : "=r"(b) : "r"(l + 1)); o[64 + l] = 2; }
  o[l] = b;
}
__global__ void lateexit(unsigned *o) {
  unsigned l = threadIdx.x;
  if (l >= 16) { for (volatile int i = 0; i < 100000; i++) {} return; }
  ASM("bar.warp.sync 0xffffffff;");
  o[l] = l + 1;
}
int main(int argc, char **argv) {
  unsigned *o; long long *in; cudaMalloc(&o, 4096); cudaMalloc(&in, 64); cudaMemset(o, 0, 4096); cudaMemset(in, 0, 64);
  unsigned out[1024]; int n = 0; const char *w = argv[1];
  if (!strcmp(w, "rem64")) { rem64<<<1, 1>>>((unsigned long long *)o, in); n = 8; }
  if (!strcmp(w, "samshfl")) { samshfl<<<1, 32>>>(o); n = 96; }
  if (!strcmp(w, "samvote")) { samvote<<<1, 32>>>(o); n = 96; }
  if (!strcmp(w, "lateexit")) { lateexit<<<1, 32>>>(o); n = 32; }
  cudaError_t e = cudaDeviceSynchronize();
  cudaMemcpy(out, o, n * 4, cudaMemcpyDeviceToHost);
  printf("%s: %s\n", w, cudaGetErrorString(e));
  for (int i = 0; i < n; i++) printf("%d:%08x%c", i, out[i], i % 8 == 7 ? '\n' : ' ');
  printf("\n");
}
