// What the CUDA runtime and real-world PTX bring beyond plain arithmetic:
// printf, assert, __trap, __nanosleep, __device__ variables, structs passed
// by value, warpSize, generic pointers into __constant__ memory, and a null
// pointer. tests/runtime.rs runs each kernel and checks its output.

struct Options {
    float scale;
    int offset;
    double bias;
    const int* table;
};

__device__ float d_CallValue[64];
__device__ int d_launches = 40;
__constant__ float c_weights[4] = {0.5f, 1.5f, 2.5f, 3.5f};

// Each thread prints one line; lanes of a warp print in lane order, warps in
// order, blocks in block order (what warpsim promises: a deterministic order).
extern "C" __global__ void printEveryThread(int n) {
    int t = threadIdx.x;
    if (t < n) {
        printf("block %d thread %2d: %5.2f %x %s|%-3c|%+d %e %g\n", blockIdx.x, t, t * 0.25f, t * 17,
               t % 2 ? "odd" : "even", 'a' + t % 26, t - 2, t * 1000.0, t / 3.0);
    }
}

// A struct by value, a __device__ array written by the kernel, and a
// __device__ scalar with an initial value, read and updated.
extern "C" __global__ void structAndGlobals(Options options, float* out) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float value = options.scale * t + options.offset + (float)options.bias + options.table[t % 4];
    d_CallValue[t] = value;
    out[t] = value + warpSize;
    if (t == 0) {
        d_launches += 1;
    }
}

// A generic pointer that points into __constant__ memory (cvta.const).
extern "C" __global__ void constantThroughGenericPointer(const float* fallback, int useConstant, float* out) {
    const float* weights = useConstant ? c_weights : fallback;
    int t = threadIdx.x;
    out[t] = weights[t % 4] * 2.0f;
}

// assert(): thread 37 of block 1 fails; the kernel stops there.
extern "C" __global__ void assertInBlockOne(const int* values, int limit) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    assert(values[t] < limit);
}

// __trap() when asked, after __nanosleep.
extern "C" __global__ void trapWhenAsked(int ask, int* out) {
    __nanosleep(100);
    out[threadIdx.x] = threadIdx.x;
    if (ask == threadIdx.x) {
        __trap();
    }
}

// A pointer that was never set: reading through it is a null-pointer access.
extern "C" __global__ void readThroughNull(int* const* pointers, int* out) {
    const int* p = pointers[threadIdx.x];
    out[threadIdx.x] = p[2];
}
