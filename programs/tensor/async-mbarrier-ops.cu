// The mbarrier operations one at a time, in one warp, with results that do
// not depend on the order of the lanes: cp.async completing on an mbarrier
// (`cp.async.mbarrier.arrive.noinc`), expect_tx / complete_tx, arrive_drop,
// arrive with a count, test_wait on a state and on a parity, pending_count
// and inval.
//
// out[lane]        in[lane] * 2, read after phase 0 (the copies) completed
// out[32 + lane]   test_wait on phase 1 before its 64 transaction bytes: 0
// out[64 + lane]   test_wait on phase 1 after complete_tx: 1
// out[96 + lane]   phase 2 done (parity 0: 1) + 2 * phase 3 done (parity 1: 0)
// out[128]         pending_count after lane 0's one arrival on phase 3: 15

__device__ __forceinline__ unsigned shared_offset(const void *pointer)
{
    return (unsigned)__cvta_generic_to_shared(pointer);
}

__device__ __forceinline__ unsigned test_parity(unsigned barrier, unsigned parity)
{
    unsigned done;
    asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done) : "r"(barrier), "r"(parity) : "memory");
    return done;
}

__device__ __forceinline__ unsigned test_state(unsigned barrier, unsigned long long state)
{
    unsigned done;
    asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done) : "r"(barrier), "l"(state) : "memory");
    return done;
}

extern "C" __global__ void mbarrier_ops(const int *in, int *out)
{
    __shared__ __align__(8) unsigned long long barrier;
    __shared__ __align__(16) int staged[32];
    int lane = threadIdx.x;
    unsigned b = shared_offset(&barrier);
    if (lane == 0)
        asm volatile("mbarrier.init.shared.b64 [%0], 32;\n" ::"r"(b) : "memory");
    __syncwarp();

    // Phase 0: every lane's copy, then its arrival once its copies are done.
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(shared_offset(&staged[lane])), "l"(&in[lane]) : "memory");
    asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];\n" ::"r"(b) : "memory");
    while (!test_parity(b, 0)) {
    }
    out[lane] = staged[lane] * 2;
    __syncwarp();

    // Phase 1: 64 transaction bytes expected; half the lanes drop out of later phases.
    if (lane == 0)
        asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], 64;\n" ::"r"(b) : "memory");
    __syncwarp();
    unsigned long long state;
    if (lane < 16)
        asm volatile("mbarrier.arrive.shared.b64 %0, [%1];\n" : "=l"(state) : "r"(b) : "memory");
    else
        asm volatile("mbarrier.arrive_drop.shared.b64 %0, [%1];\n" : "=l"(state) : "r"(b) : "memory");
    __syncwarp();
    out[32 + lane] = test_state(b, state);
    __syncwarp();
    if (lane == 0)
        asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], 64;\n" ::"r"(b) : "memory");
    __syncwarp();
    out[64 + lane] = test_state(b, state);
    __syncwarp();

    // Phase 2: 16 arrivals expected: lane 0 counts for four, lanes 1-12 for one each.
    if (lane == 0)
        asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1], 4;\n" : "=l"(state) : "r"(b) : "memory");
    else if (lane <= 12)
        asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];\n" : "=l"(state) : "r"(b) : "memory");
    __syncwarp();
    out[96 + lane] = test_parity(b, 0) + 2 * test_parity(b, 1);
    __syncwarp();

    // Phase 3: one arrival, and the count still pending.
    if (lane == 0) {
        asm volatile("mbarrier.arrive.shared.b64 %0, [%1];\n" : "=l"(state) : "r"(b) : "memory");
        unsigned pending;
        asm volatile("mbarrier.pending_count.b64 %0, %1;\n" : "=r"(pending) : "l"(state));
        out[128] = pending;
        asm volatile("mbarrier.inval.shared.b64 [%0];\n" ::"r"(b) : "memory");
    }
}
