// Grid-wide barriers built from atomics: every block adds one to a counter
// and waits until it reaches the grid's size. A GPU finishes them when every
// block is resident at once, and so does warpsim, whose blocks that
// communicate run side by side; on a GPU that holds fewer blocks, the
// resident ones wait for ever: a deadlock across blocks that names them.

// gridBarrierThread0 (4 blocks of 64): thread 0 of each block counts and
// spins; the others wait for it at __syncthreads.
// Expect: none. With two-resident-blocks.sim.toml: deadlock E across
// blocks, spin line 14, barrier line 16, in blocks 0 and 1 (2 next in line).
extern "C" __global__ void gridBarrierThread0(unsigned* counter, int* out) {
  if (threadIdx.x == 0) {
    atomicAdd(counter, 1);
    while (atomicAdd(counter, 0) < gridDim.x) { }
  }
  __syncthreads();
  out[blockIdx.x] = 1;
}

// gridBarrierAllThreads (4 blocks of 64): every thread spins.
// Expect: none (all four blocks resident).
extern "C" __global__ void gridBarrierAllThreads(unsigned* counter, int* out) {
  __syncthreads();
  if (threadIdx.x == 0) atomicAdd(counter, 1);
  __syncthreads();
  while (atomicAdd(counter, 0) < gridDim.x) { }
  out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}
