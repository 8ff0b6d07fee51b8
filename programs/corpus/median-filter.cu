// 3x3 median filter (salt-and-pepper denoising): each thread gathers its 9
// neighbours (clamped at the border) into a per-thread array and sorts it by
// insertion sort; the data-dependent indices put the array in local memory.
extern "C" __global__ void median_filter3x3(const unsigned char* in, unsigned char* out, int width, int height) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  unsigned char window[9];
  int n = 0;
  for (int dy = -1; dy <= 1; dy++) {
    for (int dx = -1; dx <= 1; dx++) {
      int sx = min(max(x + dx, 0), width - 1);
      int sy = min(max(y + dy, 0), height - 1);
      unsigned char v = in[sy * width + sx];
      int j = n++;
      while (j > 0 && window[j - 1] > v) {
        window[j] = window[j - 1];
        j--;
      }
      window[j] = v;
    }
  }
  out[y * width + x] = window[4];
}
