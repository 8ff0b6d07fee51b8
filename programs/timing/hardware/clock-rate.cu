// Measures the SM clock while the microbenchmarks run: one thread spins for a given number of clock64() cycles and reads the global nanosecond timer before and after, so cycles / nanoseconds is the clock in GHz.
//
// Built on the GPU machine with `nvcc -cubin -arch=sm_90 -o clock-rate.cubin
// clock-rate.cu` and launched by micro.py; warpsim never runs it (it reads
// %globaltimer, which warpsim does not have).
extern "C" __global__ void clockRate(unsigned long long* out, long long cycles) {
  unsigned long long begin_ns;
  unsigned long long end_ns;
  long long begin = clock64();
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(begin_ns));
  long long now = begin;
  while (now - begin < cycles) {
    now = clock64();
  }
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(end_ns));
  out[0] = (unsigned long long)(now - begin);
  out[1] = end_ns - begin_ns;
}
