// A cp.async double-buffered tiled GEMM: C = A * B in fp32 (SIMT FMA math),
// its tiles staged into shared memory by `cp.async.cg.shared.global` (16
// bytes a thread) while the previous stage is being multiplied.
//
// A is M x K, B is K x N, C is M x N, all row-major; M, N, K multiples of 32.
// Block (32, 8): thread (tx, ty) computes C[row0 + ty + 8i][col0 + tx] for
// i = 0..3. Each stage holds a 32x32 tile of A and of B (4 KiB each): 256
// threads copy one 16-byte chunk of each.

#define TILE 32

__device__ __forceinline__ void copy_16_bytes_async(void *shared_destination, const void *global_source)
{
    unsigned destination = (unsigned)__cvta_generic_to_shared(shared_destination);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(destination), "l"(global_source) : "memory");
}

__device__ __forceinline__ void commit_copies()
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most one group of this thread's copies is still in flight.
__device__ __forceinline__ void wait_all_but_one_group()
{
    asm volatile("cp.async.wait_group 1;\n" ::: "memory");
}

extern "C" __global__ void async_gemm(const float *A, const float *B, float *C, int M, int N, int K)
{
    __shared__ __align__(16) float tileA[2][TILE][TILE];
    __shared__ __align__(16) float tileB[2][TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int thread = ty * 32 + tx;
    int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
    // The chunk this thread copies: row thread / 8, four floats from column 4 * (thread % 8).
    int chunkRow = thread / 8, chunkCol = (thread % 8) * 4;
    int tiles = K / TILE;

    copy_16_bytes_async(&tileA[0][chunkRow][chunkCol], &A[(row0 + chunkRow) * K + chunkCol]);
    copy_16_bytes_async(&tileB[0][chunkRow][chunkCol], &B[chunkRow * N + col0 + chunkCol]);
    commit_copies();

    float sum[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int t = 0; t < tiles; ++t) {
        int stage = t & 1;
        if (t + 1 < tiles) {
            int next = stage ^ 1, k0 = (t + 1) * TILE;
            copy_16_bytes_async(&tileA[next][chunkRow][chunkCol], &A[(row0 + chunkRow) * K + k0 + chunkCol]);
            copy_16_bytes_async(&tileB[next][chunkRow][chunkCol], &B[(k0 + chunkRow) * N + col0 + chunkCol]);
        }
        // An empty group on the last tile keeps "all but one" meaning "this tile's".
        commit_copies();
        wait_all_but_one_group();
        __syncthreads();
        for (int k = 0; k < TILE; ++k) {
            float b = tileB[stage][k][tx];
            for (int i = 0; i < 4; ++i)
                sum[i] = fmaf(tileA[stage][ty + 8 * i][k], b, sum[i]);
        }
        __syncthreads();
    }
    for (int i = 0; i < 4; ++i)
        C[(row0 + ty + 8 * i) * N + col0 + tx] = sum[i];
}
