// Atomics whose result is unused: `atomicAdd(p, 1)` on shared memory becomes
// a population-count increment (ATOMS.POPC.INC), which handles the lanes that
// name one address as one operation. Device code only.

extern "C" __global__ void histogram_unused(const unsigned char *in, unsigned *out)
{
    __shared__ unsigned h[256];
    int t = threadIdx.x;
    h[t] = 0;
    __syncthreads();
    atomicAdd(&h[in[t]], 1);
    __syncthreads();
    out[t] = h[t];
}

extern "C" __global__ void histogram_used(const unsigned char *in, unsigned *out, unsigned *old)
{
    __shared__ unsigned h[256];
    int t = threadIdx.x;
    h[t] = 0;
    __syncthreads();
    old[t] = atomicAdd(&h[in[t]], 1);
    __syncthreads();
    out[t] = h[t];
}

extern "C" __global__ void add_two(const unsigned char *in, unsigned *out)
{
    __shared__ unsigned h[256];
    int t = threadIdx.x;
    h[t] = 0;
    __syncthreads();
    atomicAdd(&h[in[t]], 2);
    __syncthreads();
    out[t] = h[t];
}

extern "C" __global__ void sub_one(const unsigned char *in, int *out)
{
    __shared__ int h[256];
    int t = threadIdx.x;
    h[t] = 0;
    __syncthreads();
    atomicSub(&h[in[t]], 1);
    __syncthreads();
    out[t] = h[t];
}

extern "C" __global__ void signed_add_one(const unsigned char *in, int *out)
{
    __shared__ int h[256];
    int t = threadIdx.x;
    h[t] = 0;
    __syncthreads();
    atomicAdd(&h[in[t]], 1);
    __syncthreads();
    out[t] = h[t];
}

extern "C" __global__ void add_parameter(const unsigned char *in, unsigned *out, unsigned k)
{
    // An increment ptxas cannot see: an ordinary atomic add (the host passes 1).
    __shared__ unsigned h[256];
    int t = threadIdx.x;
    h[t] = 0;
    __syncthreads();
    atomicAdd(&h[in[t]], k);
    __syncthreads();
    out[t] = h[t];
}

extern "C" __global__ void add_one_in_register(const unsigned char *in, unsigned *out)
{
    // The increment 1 is moved into a register first: ptxas still sees the
    // constant and makes a population-count increment.
    __shared__ unsigned h[256];
    int t = threadIdx.x;
    h[t] = 0;
    __syncthreads();
    unsigned address = (unsigned)__cvta_generic_to_shared(&h[in[t]]);
    asm volatile("{\n\t.reg .u32 one;\n\tmov.u32 one, 1;\n\tred.shared.add.u32 [%0], one;\n\t}" ::"r"(address));
    __syncthreads();
    out[t] = h[t];
}

extern "C" __global__ void increment_wrapping(const unsigned char *in, unsigned *out)
{
    __shared__ unsigned h[256];
    int t = threadIdx.x;
    h[t] = 0;
    __syncthreads();
    atomicInc(&h[in[t]], 1000u);
    __syncthreads();
    out[t] = h[t];
}

extern "C" __global__ void float_add_one(const unsigned char *in, float *out)
{
    __shared__ float h[256];
    int t = threadIdx.x;
    h[t] = 0.0f;
    __syncthreads();
    atomicAdd(&h[in[t]], 1.0f);
    __syncthreads();
    out[t] = h[t];
}

extern "C" __global__ void guarded_add_one(const unsigned char *in, unsigned *out)
{
    __shared__ unsigned h[256];
    int t = threadIdx.x;
    h[t] = 0;
    __syncthreads();
    if (in[t] & 1)
        atomicAdd(&h[in[t]], 1);
    __syncthreads();
    out[t] = h[t];
}

extern "C" __global__ void global_add_one(const unsigned char *in, unsigned *out, unsigned *old)
{
    // On global memory ptxas keeps an ordinary reduction (RED) or atomic.
    int t = threadIdx.x;
    atomicAdd(&out[in[t]], 1);
    old[t] = atomicAdd(&out[256 + in[t]], 1);
}
