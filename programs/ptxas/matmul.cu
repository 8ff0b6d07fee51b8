// Tiled matrix multiplies: the unrolled inner loop reads a row of the A tile
// at consecutive addresses, which ptxas turns into 16-byte loads when the row
// is 16-byte aligned. Device code only.

#define TILE 16

extern "C" __global__ void matmul_tiled(const float *A, const float *B, float *C, int n)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (int t = 0; t < n / TILE; ++t) {
        As[ty][tx] = A[row * n + t * TILE + tx];
        Bs[ty][tx] = B[(t * TILE + ty) * n + col];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k)
            sum += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[row * n + col] = sum;
}

extern "C" __global__ void matmul_padded(const float *A, const float *B, float *C, int n)
{
    // A row of 17 floats is 68 bytes: only 4-byte aligned, so no merge.
    __shared__ float As[TILE][TILE + 1];
    __shared__ float Bs[TILE][TILE + 1];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (int t = 0; t < n / TILE; ++t) {
        As[ty][tx] = A[row * n + t * TILE + tx];
        Bs[ty][tx] = B[(t * TILE + ty) * n + col];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k)
            sum += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[row * n + col] = sum;
}

extern "C" __global__ void matmul_register_tiled(const float *A, const float *B, float *C, int n)
{
    // Each thread computes a 2x2 block of C: it reads two adjacent columns of
    // a B row (a pair) and two rows of A.
    __shared__ float As[32][TILE];
    __shared__ float Bs[TILE][32];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * 32 + 2 * ty, col = blockIdx.x * 32 + 2 * tx;
    float c00 = 0.0f, c01 = 0.0f, c10 = 0.0f, c11 = 0.0f;
    for (int t = 0; t < n / TILE; ++t) {
        As[2 * ty][tx] = A[row * n + t * TILE + tx];
        As[2 * ty + 1][tx] = A[(row + 1) * n + t * TILE + tx];
        Bs[ty][2 * tx] = B[(t * TILE + ty) * n + col];
        Bs[ty][2 * tx + 1] = B[(t * TILE + ty) * n + col + 1];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) {
            float a0 = As[2 * ty][k], a1 = As[2 * ty + 1][k];
            float b0 = Bs[k][2 * tx], b1 = Bs[k][2 * tx + 1];
            c00 += a0 * b0;
            c01 += a0 * b1;
            c10 += a1 * b0;
            c11 += a1 * b1;
        }
        __syncthreads();
    }
    C[row * n + col] = c00;
    C[row * n + col + 1] = c01;
    C[(row + 1) * n + col] = c10;
    C[(row + 1) * n + col + 1] = c11;
}
