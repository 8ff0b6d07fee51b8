// An mbarrier producer/consumer pipeline, as Hopper kernels build them: one
// producer thread streams chunks of `in` into a ring of shared-memory stages
// with `cp.async.bulk` (the bulk copy engine), each stage guarded by a
// "full" mbarrier (the producer's arrive.expect_tx, completed by the copy's
// transactions) and an "empty" one (one arrival per consumer thread); two
// consumer warps wait on "full", compute out[i] = 3 * x + x_next from the
// stage, and arrive on "empty".
//
// Block 96 threads: warp 0 produces (lane 0 only), warps 1 and 2 consume.
// Each block handles `chunksPerBlock` chunks of CHUNK floats.

#define STAGES 3
#define CHUNK 256
#define CONSUMERS 64

__device__ __forceinline__ unsigned shared_address(const void *pointer)
{
    return (unsigned)__cvta_generic_to_shared(pointer);
}

__device__ __forceinline__ void wait_parity(unsigned barrier, unsigned parity)
{
    unsigned done = 0;
    while (!done) {
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(barrier), "r"(parity) : "memory");
    }
}

// The producer's wait, with a suspend-time hint (nanoseconds).
__device__ __forceinline__ void wait_parity_with_hint(unsigned barrier, unsigned parity)
{
    unsigned done = 0;
    while (!done) {
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2, 100000;\n selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(barrier), "r"(parity) : "memory");
    }
}

extern "C" __global__ void pipeline_mbarrier(const float *in, float *out, int chunksPerBlock)
{
    __shared__ __align__(128) float stage[STAGES][CHUNK];
    __shared__ __align__(8) unsigned long long full[STAGES];
    __shared__ __align__(8) unsigned long long empty[STAGES];
    int thread = threadIdx.x;
    if (thread == 0) {
        for (int s = 0; s < STAGES; ++s) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(shared_address(&full[s])) : "memory");
            asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(&empty[s])), "r"(CONSUMERS) : "memory");
        }
    }
    __syncthreads();
    const float *blockIn = in + (size_t)blockIdx.x * chunksPerBlock * CHUNK;
    float *blockOut = out + (size_t)blockIdx.x * chunksPerBlock * CHUNK;
    if (thread == 0) {
        for (int c = 0; c < chunksPerBlock; ++c) {
            int s = c % STAGES;
            unsigned phase = (c / STAGES) & 1;
            if (c >= STAGES)
                wait_parity_with_hint(shared_address(&empty[s]), phase ^ 1);
            unsigned long long state;
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;\n"
                         : "=l"(state) : "r"(shared_address(&full[s])), "r"(CHUNK * 4) : "memory");
            asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
                         ::"r"(shared_address(&stage[s][0])), "l"(blockIn + c * CHUNK), "r"(CHUNK * 4),
                           "r"(shared_address(&full[s])) : "memory");
        }
    } else if (thread >= 32) {
        int consumer = thread - 32;
        for (int c = 0; c < chunksPerBlock; ++c) {
            int s = c % STAGES;
            unsigned phase = (c / STAGES) & 1;
            wait_parity(shared_address(&full[s]), phase);
            for (int j = consumer; j < CHUNK; j += CONSUMERS) {
                float x = stage[s][j], next = stage[s][(j + 1) % CHUNK];
                blockOut[c * CHUNK + j] = 3.0f * x + next;
            }
            unsigned long long state;
            asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 %0, [%1];\n"
                         : "=l"(state) : "r"(shared_address(&empty[s])) : "memory");
        }
    }
}
