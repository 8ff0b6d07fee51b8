// A small fused attention forward in half precision: O = softmax(Q K^T / sqrt(D)) V
// for one head, SEQ = 64 keys, D = 32. One warp (one block) takes 16 query rows:
// Q, K and V are staged in shared memory, S = Q K^T with WMMA (K read as a
// column-major B fragment), the softmax of each row with warp shuffles, P
// rounded to half, and O = P V with WMMA again.
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;

#define SEQ 64
#define D 32

extern "C" __global__ void attention_forward(const half *Q, const half *K, const half *V, float *O) {
    __shared__ __align__(32) half q_rows[16 * D];
    __shared__ __align__(32) half k_all[SEQ * D];
    __shared__ __align__(32) half v_all[SEQ * D];
    __shared__ __align__(32) float scores[16 * SEQ];
    __shared__ __align__(32) half probabilities[16 * SEQ];
    const int lane = threadIdx.x;
    const int first_row = blockIdx.x * 16;
    for (int i = lane; i < 16 * D; i += 32) q_rows[i] = Q[first_row * D + i];
    for (int i = lane; i < SEQ * D; i += 32) {
        k_all[i] = K[i];
        v_all[i] = V[i];
    }
    __syncwarp();
    for (int key = 0; key < SEQ; key += 16) {
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> s;
        wmma::fill_fragment(s, 0.0f);
        for (int k = 0; k < D; k += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> q;
            wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> kt;
            wmma::load_matrix_sync(q, q_rows + k, D);
            wmma::load_matrix_sync(kt, k_all + key * D + k, D);
            wmma::mma_sync(s, q, kt, s);
        }
        wmma::store_matrix_sync(scores + key, s, SEQ, wmma::mem_row_major);
    }
    __syncwarp();
    const float scale = rsqrtf((float)D);
    for (int row = 0; row < 16; ++row) {
        float x0 = scores[row * SEQ + lane] * scale, x1 = scores[row * SEQ + lane + 32] * scale;
        float largest = fmaxf(x0, x1);
        for (int offset = 16; offset > 0; offset /= 2)
            largest = fmaxf(largest, __shfl_xor_sync(0xffffffff, largest, offset));
        float e0 = __expf(x0 - largest), e1 = __expf(x1 - largest);
        float sum = e0 + e1;
        for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffff, sum, offset);
        probabilities[row * SEQ + lane] = __float2half(e0 / sum);
        probabilities[row * SEQ + lane + 32] = __float2half(e1 / sum);
    }
    __syncwarp();
    for (int col = 0; col < D; col += 16) {
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> o;
        wmma::fill_fragment(o, 0.0f);
        for (int key = 0; key < SEQ; key += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> p;
            wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> v;
            wmma::load_matrix_sync(p, probabilities + key, SEQ);
            wmma::load_matrix_sync(v, v_all + key * D + col, D);
            wmma::mma_sync(o, p, v, o);
        }
        wmma::store_matrix_sync(O + (first_row * D) + col, o, D, wmma::mem_row_major);
    }
}
