// 2D convolution with a 5x5 filter in constant memory: each 16x16 block loads
// its 20x20 input tile (the halo of 2 on each side, zero outside the image)
// into shared memory, then computes 16x16 outputs.
#define RADIUS 2
#define FW (2 * RADIUS + 1)
#define TILE 16
#define SW (TILE + 2 * RADIUS)
// The binomial filter (1 4 6 4 1)^T (1 4 6 4 1) / 256: every weight exact.
__constant__ float c_filter[FW * FW] = {
    1 / 256.f,  4 / 256.f,  6 / 256.f,  4 / 256.f,  1 / 256.f,
    4 / 256.f,  16 / 256.f, 24 / 256.f, 16 / 256.f, 4 / 256.f,
    6 / 256.f,  24 / 256.f, 36 / 256.f, 24 / 256.f, 6 / 256.f,
    4 / 256.f,  16 / 256.f, 24 / 256.f, 16 / 256.f, 4 / 256.f,
    1 / 256.f,  4 / 256.f,  6 / 256.f,  4 / 256.f,  1 / 256.f};

extern "C" __global__ void convolution2d_tiled(const float* in, float* out, int width, int height) {
  __shared__ float tile[SW][SW];
  int tx = threadIdx.x, ty = threadIdx.y;
  int x0 = blockIdx.x * TILE - RADIUS;  // the tile's top-left corner in the image
  int y0 = blockIdx.y * TILE - RADIUS;
  for (int k = ty * TILE + tx; k < SW * SW; k += TILE * TILE) {
    int sy = k / SW, sx = k % SW;
    int gx = x0 + sx, gy = y0 + sy;
    tile[sy][sx] = (gx >= 0 && gx < width && gy >= 0 && gy < height) ? in[gy * width + gx] : 0.0f;
  }
  __syncthreads();
  float sum = 0.0f;
  for (int fy = 0; fy < FW; fy++)
    for (int fx = 0; fx < FW; fx++)
      sum += tile[ty + fy][tx + fx] * c_filter[fy * FW + fx];
  int x = blockIdx.x * TILE + tx, y = blockIdx.y * TILE + ty;
  if (x < width && y < height) out[y * width + x] = sum;
}

