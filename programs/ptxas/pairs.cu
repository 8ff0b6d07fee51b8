// Adjacent 32-bit and 64-bit accesses of one thread that ptxas can prove
// aligned, and so merges into one 64- or 128-bit shared-memory instruction.
// Device code only: warpsim's tests compile it with NVRTC, ptxas and nvdisasm.

extern "C" __global__ void pair_f32(float *out)
{
    __shared__ float s[512];
    int t = threadIdx.x;
    s[2 * t] = t;
    s[2 * t + 1] = t + 1;
    __syncthreads();
    float a = s[2 * t];
    float b = s[2 * t + 1];
    out[t] = a * b;
}

extern "C" __global__ void pair_hidden_by_mad(float *out)
{
    __shared__ float s[1024];
    int t = threadIdx.x;
    // NVVM writes 4 * t as t * 3 + t here, and a product by 3 plus an unknown
    // number has no known low bits: ptxas cannot prove alignment, no merge.
    s[4 * t + 1] = t + 1;
    s[4 * t] = t;
    __syncthreads();
    float b = s[4 * t + 1];
    float a = s[4 * t];
    out[t] = a - b;
}

extern "C" __global__ void pair_reversed(float *out)
{
    __shared__ float s[1024];
    int t = threadIdx.x;
    s[2 * t] = t;
    s[2 * t + 1] = t + 1;
    __syncthreads();
    // Read from the higher address down: ptxas merges in either order.
    float b = s[2 * t + 1];
    float a = s[2 * t];
    out[t] = a - b;
}

extern "C" __global__ void quad_three_of_four(float *out)
{
    __shared__ float s[1024];
    int t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    // Three words of an aligned 16-byte group: ptxas reads all four.
    float b = s[4 * t + 1];
    float c = s[4 * t + 2];
    float d = s[4 * t + 3];
    out[t] = b + c * d;
}

extern "C" __global__ void quad_two_pairs_apart(float *out)
{
    __shared__ float s[1024];
    int t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    // Words 0 and 2 of a 16-byte group: neither a pair nor three of four.
    float a = s[4 * t];
    float c = s[4 * t + 2];
    out[t] = a - c;
}

extern "C" __global__ void quad_f32(float *out)
{
    __shared__ float s[1024];
    int t = threadIdx.x;
    s[4 * t] = t;
    s[4 * t + 1] = t + 1;
    s[4 * t + 2] = t + 2;
    s[4 * t + 3] = t + 3;
    __syncthreads();
    float a = s[4 * t];
    float b = s[4 * t + 1];
    float c = s[4 * t + 2];
    float d = s[4 * t + 3];
    out[t] = (a + b) * (c - d);
}

extern "C" __global__ void quad_only_pair_aligned(float *out)
{
    __shared__ float s[1024];
    int t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    float a = s[2 * t];
    float b = s[2 * t + 1];
    float c = s[2 * t + 2];
    float d = s[2 * t + 3];
    out[t] = (a + b) * (c - d);
}

extern "C" __global__ void pair_f64(double *out)
{
    __shared__ double s[512];
    int t = threadIdx.x;
    s[2 * t] = t;
    s[2 * t + 1] = t + 1;
    __syncthreads();
    double a = s[2 * t];
    double b = s[2 * t + 1];
    out[t] = a * b;
}

extern "C" __global__ void pair_u16(unsigned short *out)
{
    __shared__ unsigned short s[1024];
    int t = threadIdx.x;
    s[2 * t] = t;
    s[2 * t + 1] = t * 3;
    __syncthreads();
    unsigned short a = s[2 * t];
    unsigned short b = s[2 * t + 1];
    out[t] = a ^ b;
}

extern "C" __global__ void quad_u8(unsigned char *out)
{
    __shared__ unsigned char s[1024];
    int t = threadIdx.x;
    s[4 * t] = t;
    s[4 * t + 1] = t * 3;
    s[4 * t + 2] = t * 5;
    s[4 * t + 3] = t * 7;
    __syncthreads();
    unsigned char a = s[4 * t];
    unsigned char b = s[4 * t + 1];
    unsigned char c = s[4 * t + 2];
    unsigned char d = s[4 * t + 3];
    out[t] = a ^ b ^ c ^ d;
}

extern "C" __global__ void pair_int_mixed_types(int *out)
{
    __shared__ int s[512];
    int t = threadIdx.x;
    s[2 * t] = t;
    ((float *)s)[2 * t + 1] = 1.5f * t;
    __syncthreads();
    int a = s[2 * t];
    float b = ((float *)s)[2 * t + 1];
    out[t] = a + (int)b;
}

extern "C" __global__ void pair_two_d(float *out)
{
    __shared__ float s[32][33];
    __shared__ float u[32][34];
    int x = threadIdx.x, y = threadIdx.y;
    u[y][x] = x;
    s[y][x] = y;
    __syncthreads();
    // Row y of s starts at 132*y bytes: only 4-byte aligned, so no merge.
    float a = s[y][2 * (x & 7)];
    float b = s[y][2 * (x & 7) + 1];
    // Row y of u starts at 136*y bytes: 8-byte aligned, so a merge.
    float c = u[y][2 * (x & 7)];
    float d = u[y][2 * (x & 7) + 1];
    out[32 * y + x] = a + b + c * d;
}

extern "C" __global__ void pair_f64_to_quad(double *out)
{
    __shared__ double s[512];
    int t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    double a = s[2 * (t & 63)];
    double b = s[2 * (t & 63) + 1];
    out[t] = a + b;
}

extern "C" __global__ void pair_from_param_index(float *out, int k)
{
    __shared__ float s[2048];
    int t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    // 2*(t+k) is even whatever k is: the pair is 8-byte aligned.
    float a = s[2 * (t + k)];
    float b = s[2 * (t + k) + 1];
    out[t] = a + b;
}

extern "C" __global__ void pair_float2_vs_scalar(float2 *out)
{
    __shared__ float2 s[256];
    int t = threadIdx.x;
    s[t] = make_float2(t, t + 1);
    __syncthreads();
    float a = s[t ^ 1].x;
    float b = s[t ^ 1].y;
    out[t] = make_float2(a, b);
}
