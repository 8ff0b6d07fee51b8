// An mbarrier wait that can never complete, for `warpsim check`: the
// producer announces 1024 transaction bytes with arrive.expect_tx but its
// bulk copy brings only 512 (the byte count of a half-size stage, a typical
// slip), so the phase keeps 512 bytes pending for ever and every thread
// spins in its try_wait loop. On a GPU the kernel hangs.

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

extern "C" __global__ void mbarrier_deadlock(const float *in, float *out)
{
    __shared__ __align__(128) float stage[256];
    __shared__ __align__(8) unsigned long long full;
    int thread = threadIdx.x;
    if (thread == 0)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(shared_address(&full)) : "memory");
    __syncthreads();
    if (thread == 0) {
        unsigned long long state;
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;\n"
                     : "=l"(state) : "r"(shared_address(&full)), "r"(256 * 4) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
                     ::"r"(shared_address(stage)), "l"(in), "r"(128 * 4), "r"(shared_address(&full)) : "memory");
    }
    wait_parity(shared_address(&full), 0);
    out[thread] = stage[thread];
}
