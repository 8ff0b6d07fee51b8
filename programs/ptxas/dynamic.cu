// Dynamic shared memory (`extern __shared__`): its start is aligned, so pairs
// and quads of it merge like those of a static array. Device code only.

extern "C" __global__ void dynamic_pairs(float *out)
{
    extern __shared__ float dyn[];
    int t = threadIdx.x;
    dyn[2 * t] = t;
    dyn[2 * t + 1] = 2 * t;
    __syncthreads();
    out[t] = dyn[2 * t] + dyn[2 * t + 1];
}

extern "C" __global__ void dynamic_quads(float4 *out)
{
    extern __shared__ float dyn[];
    int t = threadIdx.x;
    dyn[4 * t] = t;
    dyn[4 * t + 1] = t + 1;
    dyn[4 * t + 2] = t + 2;
    dyn[4 * t + 3] = t + 3;
    __syncthreads();
    int u = t ^ 1;
    out[t] = make_float4(dyn[4 * u], dyn[4 * u + 1], dyn[4 * u + 2], dyn[4 * u + 3]);
}

extern "C" __global__ void dynamic_after_static(float *out)
{
    // A static array before the dynamic one: the dynamic one still starts
    // 16-byte aligned.
    __shared__ float head[3];
    extern __shared__ float dyn[];
    int t = threadIdx.x;
    if (t < 3) head[t] = t;
    dyn[2 * t] = t;
    dyn[2 * t + 1] = 2 * t;
    __syncthreads();
    out[t] = dyn[2 * t] + dyn[2 * t + 1] + head[t % 3];
}

extern "C" __global__ void dynamic_offset_by_parameter(float *out, int offset)
{
    // The second array starts `offset` floats in: unknown alignment.
    extern __shared__ float dyn[];
    float *second = dyn + offset;
    int t = threadIdx.x;
    second[2 * t] = t;
    second[2 * t + 1] = 2 * t;
    __syncthreads();
    out[t] = second[2 * t] + second[2 * t + 1];
}

extern "C" __global__ void dynamic_offset_even(float *out, int offset)
{
    // An even number of floats in: still 8-byte aligned.
    extern __shared__ float dyn[];
    float *second = dyn + 2 * offset;
    int t = threadIdx.x;
    second[2 * t] = t;
    second[2 * t + 1] = 2 * t;
    __syncthreads();
    out[t] = second[2 * t] + second[2 * t + 1];
}

extern "C" __global__ void dynamic_double2(double *out)
{
    extern __shared__ double dynd[];
    int t = threadIdx.x;
    dynd[2 * t] = t;
    dynd[2 * t + 1] = 0.5 * t;
    __syncthreads();
    out[t] = dynd[2 * t] * dynd[2 * t + 1];
}
