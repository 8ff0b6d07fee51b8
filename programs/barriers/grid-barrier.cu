// Grid-wide barriers built from atomics: every block adds one to a counter
// and waits until it reaches the grid's size. A GPU finishes them when every
// block is resident at once; warpsim runs the blocks of a launch one after
// another, so the first blocks wait for ever for the later ones, and the
// checker reports a livelock across blocks that names them.

// gridBarrierThread0 (4 blocks of 64): thread 0 of each block counts and
// spins; the others wait for it at __syncthreads.
// Expect: livelock E (across blocks), spin line 14, barrier line 16, in
// blocks 0, 1 and 2 (block 3 finds the count complete).
extern "C" __global__ void gridBarrierThread0(unsigned* counter, int* out) {
  if (threadIdx.x == 0) {
    atomicAdd(counter, 1);
    while (atomicAdd(counter, 0) < gridDim.x) { }
  }
  __syncthreads();
  out[blockIdx.x] = 1;
}

// gridBarrierAllThreads (4 blocks of 64): every thread spins.
// Expect: livelock E (across blocks), spin line 26, in blocks 0, 1 and 2.
extern "C" __global__ void gridBarrierAllThreads(unsigned* counter, int* out) {
  __syncthreads();
  if (threadIdx.x == 0) atomicAdd(counter, 1);
  __syncthreads();
  while (atomicAdd(counter, 0) < gridDim.x) { }
  out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}
