// Sorting networks in shared memory: comparators that load and store a pair.
// Device code only.

extern "C" __global__ void bitonic_pairs(int *data)
{
    // Each thread owns the adjacent pair (2t, 2t + 1) at the first step of
    // every merge: an aligned pair, loaded and stored as one 64-bit access.
    __shared__ int s[1024];
    int t = threadIdx.x;
    s[2 * t] = data[2 * t];
    s[2 * t + 1] = data[2 * t + 1];
    __syncthreads();
    for (int size = 2; size <= 1024; size <<= 1) {
        bool up = ((2 * t) & size) == 0;
        int a = s[2 * t];
        int b = s[2 * t + 1];
        bool swap = (a > b) == up;
        s[2 * t] = swap ? b : a;
        s[2 * t + 1] = swap ? a : b;
        __syncthreads();
    }
    data[2 * t] = s[2 * t];
    data[2 * t + 1] = s[2 * t + 1];
}

extern "C" __global__ void odd_even_transposition(int *data)
{
    // Even phases compare (2t, 2t + 1), an aligned pair; odd phases compare
    // (2t + 1, 2t + 2), a pair that starts 4 bytes past an 8-byte boundary.
    __shared__ int s[1025];
    int t = threadIdx.x;
    s[2 * t] = data[2 * t];
    s[2 * t + 1] = data[2 * t + 1];
    __syncthreads();
    for (int phase = 0; phase < 1024; ++phase) {
        int i = 2 * t + (phase & 1);
        if (i + 1 < 1024) {
            int a = s[i];
            int b = s[i + 1];
            s[i] = min(a, b);
            s[i + 1] = max(a, b);
        }
        __syncthreads();
    }
    data[2 * t] = s[2 * t];
    data[2 * t + 1] = s[2 * t + 1];
}

extern "C" __global__ void odd_pairs(int *data)
{
    // Only the odd comparator (2t + 1, 2t + 2): never aligned.
    __shared__ int s[1026];
    int t = threadIdx.x;
    s[t] = data[t];
    __syncthreads();
    int a = s[2 * t + 1];
    int b = s[2 * t + 2];
    s[2 * t + 1] = min(a, b);
    s[2 * t + 2] = max(a, b);
    __syncthreads();
    data[t] = s[t];
}

extern "C" __global__ void compare_exchange_f64(double *data)
{
    // A comparator of two doubles: one 16-byte load and one 16-byte store.
    __shared__ double s[512];
    int t = threadIdx.x;
    s[t] = data[t];
    __syncthreads();
    if (t < 256) {
        double a = s[2 * t];
        double b = s[2 * t + 1];
        s[2 * t] = fmin(a, b);
        s[2 * t + 1] = fmax(a, b);
    }
    __syncthreads();
    data[t] = s[t];
}
