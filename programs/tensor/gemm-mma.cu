// An mma.sync GEMM reading its tiles from shared memory with ldmatrix, in two
// layouts: rows of 128 bytes stored plainly (eight ldmatrix rows of one phase
// land in the same four banks: 8-way conflicts) and with the 16-byte chunks of
// row r XOR-swizzled by r % 8 (every phase touches all 32 banks once).
// C (M x N, float) = A (M x K, half, row-major) * B (K x N, half, row-major).
// One block computes a 64 x 64 tile of C with four warps (2 x 2), each warp a
// 32 x 32 tile as 2 x 4 m16n8k16 products per 16-wide step of K.
#include <cuda_fp16.h>

#define TILE 64

// The byte offset of the 16-byte chunk `chunk` (0..7) of row `row` of a
// 64-half (128-byte) row of a shared tile.
__device__ __forceinline__ unsigned plain_offset(int row, int chunk) {
    return row * 128 + chunk * 16;
}
__device__ __forceinline__ unsigned swizzled_offset(int row, int chunk) {
    return row * 128 + ((chunk ^ (row & 7)) * 16);
}

template <bool SWIZZLE>
__device__ __forceinline__ unsigned tile_offset(int row, int chunk) {
    return SWIZZLE ? swizzled_offset(row, chunk) : plain_offset(row, chunk);
}

template <bool SWIZZLE>
__device__ void gemm_mma(const half *A, const half *B, float *C, int M, int N, int K) {
    __shared__ __align__(128) half a_tile[TILE * TILE];
    __shared__ __align__(128) half b_tile[TILE * TILE];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int block_row = blockIdx.y * TILE, block_col = blockIdx.x * TILE;
    const int warp_row = (warp / 2) * 32, warp_col = (warp % 2) * 32;
    float accumulator[2][4][4] = {};
    const unsigned a_base = (unsigned)__cvta_generic_to_shared(a_tile);
    const unsigned b_base = (unsigned)__cvta_generic_to_shared(b_tile);
    for (int k0 = 0; k0 < K; k0 += TILE) {
        // 128 threads copy 64 rows of 8 chunks each, 16 bytes at a time.
        for (int i = threadIdx.x; i < TILE * 8; i += blockDim.x) {
            int row = i / 8, chunk = i % 8;
            uint4 a = *(const uint4 *)(A + (size_t)(block_row + row) * K + k0 + chunk * 8);
            uint4 b = *(const uint4 *)(B + (size_t)(k0 + row) * N + block_col + chunk * 8);
            *(uint4 *)((char *)a_tile + tile_offset<SWIZZLE>(row, chunk)) = a;
            *(uint4 *)((char *)b_tile + tile_offset<SWIZZLE>(row, chunk)) = b;
        }
        __syncthreads();
        for (int kk = 0; kk < TILE; kk += 16) {
            unsigned a_fragment[2][4], b_fragment[4][2];
            for (int m = 0; m < 2; ++m) {
                // Lanes 0-15 give rows 0-15 of the first 8 columns, lanes 16-31
                // the same rows 8 columns on: the four 8x8 matrices of A's fragment.
                int row = warp_row + m * 16 + lane % 16;
                int chunk = kk / 8 + lane / 16;
                asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                             : "=r"(a_fragment[m][0]), "=r"(a_fragment[m][1]), "=r"(a_fragment[m][2]),
                               "=r"(a_fragment[m][3])
                             : "r"(a_base + tile_offset<SWIZZLE>(row, chunk)));
            }
            for (int n = 0; n < 4; n += 2) {
                // B is stored k-major: .trans turns its 8x8 matrices into the
                // column fragments mma wants. Lanes 0-7 rows k..k+7, 8-15 rows
                // k+8..k+15 of columns n, lanes 16-31 the same 8 columns on.
                int row = kk + lane % 16;
                int chunk = (warp_col + n * 8) / 8 + lane / 16;
                asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                             : "=r"(b_fragment[n][0]), "=r"(b_fragment[n][1]), "=r"(b_fragment[n + 1][0]),
                               "=r"(b_fragment[n + 1][1])
                             : "r"(b_base + tile_offset<SWIZZLE>(row, chunk)));
            }
            for (int m = 0; m < 2; ++m)
                for (int n = 0; n < 4; ++n) {
                    float *d = accumulator[m][n];
                    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                                 : "r"(a_fragment[m][0]), "r"(a_fragment[m][1]), "r"(a_fragment[m][2]),
                                   "r"(a_fragment[m][3]), "r"(b_fragment[n][0]), "r"(b_fragment[n][1]));
                }
        }
        __syncthreads();
    }
    // The accumulator fragment: c0,c1 at row lane/4, columns 2*(lane%4)+{0,1};
    // c2,c3 eight rows down.
    for (int m = 0; m < 2; ++m)
        for (int n = 0; n < 4; ++n) {
            int row = block_row + warp_row + m * 16 + lane / 4;
            int col = block_col + warp_col + n * 8 + 2 * (lane % 4);
            C[(size_t)row * N + col] = accumulator[m][n][0];
            C[(size_t)row * N + col + 1] = accumulator[m][n][1];
            C[(size_t)(row + 8) * N + col] = accumulator[m][n][2];
            C[(size_t)(row + 8) * N + col + 1] = accumulator[m][n][3];
        }
}

extern "C" __global__ void gemm_mma_swizzled(const half *A, const half *B, float *C, int M, int N, int K) {
    gemm_mma<true>(A, B, C, M, N, K);
}

extern "C" __global__ void gemm_mma_plain(const half *A, const half *B, float *C, int M, int N, int K) {
    gemm_mma<false>(A, B, C, M, N, K);
}
