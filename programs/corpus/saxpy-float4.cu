// y = a * x + y with 128-bit vector accesses through the read-only cache
// (float4, __ldg, __restrict__), each thread four elements, a grid-stride loop.
extern "C" __global__ void saxpy_float4(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
  const float4* x4 = reinterpret_cast<const float4*>(x);
  float4* y4 = reinterpret_cast<float4*>(y);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n / 4; i += blockDim.x * gridDim.x) {
    float4 xv = __ldg(&x4[i]);
    float4 yv = y4[i];
    yv.x = a * xv.x + yv.x;
    yv.y = a * xv.y + yv.y;
    yv.z = a * xv.z + yv.z;
    yv.w = a * xv.w + yv.w;
    y4[i] = yv;
  }
}
