// A block sum with cooperative groups: the block is partitioned into tiles of
// 32 threads (cg::tiled_partition<32>), each tile reduces with
// tile.shfl_down, and the tiles' sums are combined through shared memory.
// cooperative_groups.h is not one of NVRTC's built-in headers: compile with
// the CUDA runtime's include directory (pip package nvidia-cuda-runtime-cu12),
// see programs/corpus/README.md.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void cg_tile_reduce(const int* in, int* out) {
  __shared__ int tileSums[32];
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  int v = in[blockIdx.x * block.size() + block.thread_rank()];
  for (int offset = tile.size() / 2; offset > 0; offset /= 2) v += tile.shfl_down(v, offset);
  if (tile.thread_rank() == 0) tileSums[tile.meta_group_rank()] = v;
  block.sync();
  if (tile.meta_group_rank() == 0) {
    v = tile.thread_rank() < tile.meta_group_size() ? tileSums[tile.thread_rank()] : 0;
    tile.sync();
    for (int offset = tile.size() / 2; offset > 0; offset /= 2) v += tile.shfl_down(v, offset);
    if (tile.thread_rank() == 0) out[blockIdx.x] = v;
  }
}
