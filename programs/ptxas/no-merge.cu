// Adjacent accesses that ptxas must not (or does not) merge: alignment that
// cannot be proven, an access or barrier in between, volatile, guards.
// Device code only.

extern "C" __global__ void unaligned_t_plus_one(float *out)
{
    // s + 4t + 4 and s + 4t + 8: t is unknown, so neither is known 8-aligned.
    __shared__ float s[1024];
    int t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    out[t] = s[t + 1] + s[t + 2];
}

extern "C" __global__ void odd_pair(float *out)
{
    // s + 8t + 4 and s + 8t + 8: the pair starts 4 bytes past an 8-byte boundary.
    __shared__ float s[1024];
    int t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    out[t] = s[2 * t + 1] * s[2 * t + 2];
}

extern "C" __global__ void odd_pair_after_odd_array(float *out)
{
    // The same odd pair in an array that starts 4 bytes past an 8-byte
    // boundary (after a 3-float array): now the pair is aligned and merges.
    __shared__ float head[3];
    __shared__ float s[1024];
    int t = threadIdx.x;
    if (t < 3) head[t] = t;
    s[t] = t;
    __syncthreads();
    out[t] = s[2 * t + 1] * s[2 * t + 2] + head[t % 3];
}

extern "C" __global__ void barrier_between(float *out)
{
    __shared__ float s[1024];
    int t = threadIdx.x;
    s[2 * t] = t;
    __syncthreads();
    s[2 * t + 1] = t + 1;
    __syncthreads();
    float a = s[2 * t];
    __syncthreads();
    float b = s[2 * t + 1];
    out[t] = a + b;
}

extern "C" __global__ void store_between_loads(float *out, int k)
{
    // A store to an unknown element between the loads may alias the second.
    __shared__ float s[1024];
    int t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    float a = s[2 * t];
    s[k] = a;
    float b = s[2 * t + 1];
    out[t] = a + b;
}

extern "C" __global__ void load_between_stores(float *out, int k)
{
    // A load of an unknown element between the stores may alias the first.
    __shared__ float s[1024];
    int t = threadIdx.x;
    s[2 * t] = t;
    float c = s[k];
    s[2 * t + 1] = c;
    __syncthreads();
    out[t] = s[t];
}

extern "C" __global__ void volatile_pair(float *out)
{
    volatile __shared__ float s[1024];
    int t = threadIdx.x;
    s[2 * t] = t;
    s[2 * t + 1] = t + 1;
    __syncthreads();
    out[t] = s[2 * t] + s[2 * t + 1];
}

extern "C" __global__ void different_guards(float *out)
{
    __shared__ float s[1024];
    int t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    float a = 0.0f, b = 0.0f;
    if (t & 1)
        a = s[2 * t];
    if (t & 2)
        b = s[2 * t + 1];
    out[t] = a + b;
}

extern "C" __global__ void twice_t(float *out)
{
    // NVVM may write 2 * t as t + t; the sum of two unknown numbers has no
    // known low bit, so ptxas cannot prove the pair aligned.
    __shared__ float s[2048];
    int t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    int i = t + t;
    out[t] = s[i] + s[i + 1];
}

extern "C" __global__ void byte_quads(unsigned char *out)
{
    // 8-bit accesses are never merged.
    __shared__ unsigned char s[4096];
    int t = threadIdx.x;
    s[4 * t] = t;
    s[4 * t + 1] = t;
    s[4 * t + 2] = t;
    s[4 * t + 3] = t;
    __syncthreads();
    out[t] = s[4 * t] + s[4 * t + 1] + s[4 * t + 2] + s[4 * t + 3];
}

extern "C" __global__ void half_pairs(unsigned short *out)
{
    // 16-bit stores are merged into a 32-bit store, 16-bit loads are not.
    __shared__ unsigned short s[4096];
    int t = threadIdx.x;
    s[2 * t] = t;
    s[2 * t + 1] = 3 * t;
    __syncthreads();
    out[t] = s[2 * t] + s[2 * t + 1];
}
