// An instruction warpsim does not have, in inline PTX: the error names this line.
extern "C" __global__ void k(int* out) {
  int t = threadIdx.x;
  asm volatile("brkpt;");  // <- here
  out[t] = t;
}
