// A WMMA GEMM: C (M x N, float) = A (M x K, half, row-major) * B (K x N,
// half, row-major). One block of four warps computes a 32 x 32 tile of C;
// each 32 x 16 slab of A and 16 x 32 slab of B is staged through shared
// memory and read by wmma::load_matrix_sync, each warp one 16 x 16 fragment.
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;

extern "C" __global__ void wmma_gemm(const half *A, const half *B, float *C, int M, int N, int K) {
    __shared__ __align__(32) half a_slab[32 * 16];
    __shared__ __align__(32) half b_slab[16 * 32];
    const int warp = threadIdx.x / 32;
    const int warp_row = (warp / 2) * 16, warp_col = (warp % 2) * 16;
    const int block_row = blockIdx.y * 32, block_col = blockIdx.x * 32;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
    wmma::fill_fragment(c, 0.0f);
    for (int k0 = 0; k0 < K; k0 += 16) {
        for (int i = threadIdx.x; i < 32 * 16; i += blockDim.x) {
            a_slab[i] = A[(size_t)(block_row + i / 16) * K + k0 + i % 16];
            b_slab[i] = B[(size_t)(k0 + i / 32) * N + block_col + i % 32];
        }
        __syncthreads();
        wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b;
        wmma::load_matrix_sync(a, a_slab + warp_row * 16, 16);
        wmma::load_matrix_sync(b, b_slab + warp_col, 32);
        wmma::mma_sync(c, a, b, c);
        __syncthreads();
    }
    wmma::store_matrix_sync(C + (size_t)(block_row + warp_row) * N + block_col + warp_col, c, N,
                            wmma::mem_row_major);
}
