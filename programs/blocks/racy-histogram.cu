// A histogram with a bug real code has: each thread bumps its bins with a
// plain load and store where it needed atomicAdd, so threads and blocks
// that run at the same time lose each other's updates. The counts come out
// wrong, and which updates are lost depends on how the blocks interleave;
// warpsim decides that from simulated time, so the wrong counts are the
// same on every run and for any --threads (tests/blocks.rs runs it many
// times).
extern "C" __global__ void racyHistogram(const int* keys, int* bins, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    int bin = (keys[i] * 7) & 15;
    bins[bin] = bins[bin] + 1;  // a race: should be atomicAdd(&bins[bin], 1)
  }
}
