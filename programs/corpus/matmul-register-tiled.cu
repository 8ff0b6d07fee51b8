// C = A x B (n x n, row-major) with register tiling: a 32x8 block computes a
// 32x32 tile of C, each thread 4 outputs of one column (rows ty, ty+8, ty+16,
// ty+24), kept in registers across the k loop.
#define MM_TILE 32
#define MM_ROWS 8
#define MM_PER_THREAD (MM_TILE / MM_ROWS)
extern "C" __global__ void matmul_register_tiled(const float* A, const float* B, float* C, int n) {
  __shared__ float As[MM_TILE][MM_TILE];
  __shared__ float Bs[MM_TILE][MM_TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row0 = blockIdx.y * MM_TILE + ty;
  int col = blockIdx.x * MM_TILE + tx;
  float acc[MM_PER_THREAD] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int t = 0; t < n; t += MM_TILE) {
#pragma unroll
    for (int r = 0; r < MM_PER_THREAD; r++) {
      As[ty + r * MM_ROWS][tx] = A[(row0 + r * MM_ROWS) * n + t + tx];
      Bs[ty + r * MM_ROWS][tx] = B[(t + ty + r * MM_ROWS) * n + col];
    }
    __syncthreads();
    for (int k = 0; k < MM_TILE; k++) {
      float b = Bs[k][tx];
#pragma unroll
      for (int r = 0; r < MM_PER_THREAD; r++) acc[r] += As[ty + r * MM_ROWS][k] * b;
    }
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < MM_PER_THREAD; r++) C[(row0 + r * MM_ROWS) * n + col] = acc[r];
}

