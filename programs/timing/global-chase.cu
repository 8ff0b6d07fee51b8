// Microbenchmark of global-memory load latency: one thread chases a chain of dependent loads over 16 KiB (L1 hits), 4 MiB (L2 hits) or, in lines untouched since the L2 was flushed, a large buffer (DRAM), timed by clock64() around the timed pass.
//
// The conventions (clocks, sink) are those of fma.cu, with one thread. The
// buffer holds zeros, and every step loads from `line + value`, where `line`
// is the next position of a fixed stride walk (computed off the chain) and
// `value` is what the previous load returned: zero, but the hardware cannot
// know that, so each load waits for the one before. In SASS the chain is one
// LDG and one IMAD.WIDE.U32 per step, as `p = buf[p]` would be, and the
// buffer needs no pointers written into it (warpsim and the GPU both start
// it zeroed). A first, untimed pass walks `warm_steps` steps from word
// `warm_offset`: for L1 and L2 the same lines as the timed pass (to bring
// them into the cache), for DRAM other lines of the same pages (to fill the
// TLBs but not the caches with the lines that the timed pass then loads).

// Writes the start and end clocks of the timed pass.
__device__ __forceinline__ void recordClocks(unsigned long long* clocks, long long start, long long stop) {
  clocks[0] = start;
  clocks[1] = stop;
}

// One pass of `steps` dependent loads, from word `first`, `stride` words apart, wrapping at `mask` + 1 words.
__device__ __forceinline__ unsigned chase(unsigned* buffer, unsigned first, unsigned stride, unsigned mask, int steps, unsigned value) {
  unsigned position = first;
#pragma unroll 4
  for (int i = 0; i < steps; ++i) {
    unsigned* line = buffer + position;
    // An opaque copy keeps NVVM from folding `position + value` into one
    // 64-bit index, which would put four integer instructions on the chain
    // instead of one IMAD.WIDE.U32; the load is written in PTX so that it
    // stays a global load (LDG) rather than a generic one.
    asm("mov.b64 %0, %0;" : "+l"(line));
    asm volatile("ld.global.u32 %0, [%1];" : "=r"(value) : "l"(line + value));
    position = (position + stride) & mask;
  }
  return value;
}

// A chase by one thread: `mask` + 1 words of buffer (a power of two).
extern "C" __global__ void globalChase(unsigned long long* clocks, unsigned* sink, unsigned* buffer, unsigned mask, unsigned stride, unsigned warm_offset, int warm_steps, int steps) {
  unsigned value = chase(buffer, warm_offset, stride, mask, warm_steps, 0);
  // The timed pass starts from the warm pass's result (zero), so that its
  // first load waits for the warm pass's last.
  long long start = clock64();
  value = chase(buffer, value, stride, mask, steps, value);
  long long stop = clock64();
  sink[0] = value;
  recordClocks(clocks, start, stop);
}
