// Single-warp shared-memory cases for Nsight Compute: every case is one
// warp-level shared-memory instruction (inline PTX, so the machine
// instruction is exactly the PTX one), executed by the lanes of its mask at
// the byte offsets of its table row. gen_cases.py writes the tables; run.sh
// runs every kernel once under `ncu --section SourceCounters`, whose source
// page gives each instruction's wavefronts and ideal wavefronts.
//
// The tables live in global memory, so the masks and addresses are data to
// the compiler: it cannot fold, reorder or merge the cases.

#define SHARED_BYTES 8192

__device__ __forceinline__ unsigned shared_address(const void *pointer)
{
    return (unsigned)__cvta_generic_to_shared(pointer);
}

#define CASE_KERNEL(NAME, COUNT, ...)                                               \
    extern "C" __global__ void NAME(const unsigned *addr, const unsigned *masks,    \
                                    unsigned *sink)                                 \
    {                                                                               \
        __shared__ __align__(16) unsigned char smem[SHARED_BYTES];                  \
        unsigned lane = threadIdx.x;                                                \
        unsigned base = shared_address(smem);                                       \
        unsigned acc = 0;                                                           \
        _Pragma("unroll") for (int c = 0; c < COUNT; ++c)                           \
        {                                                                           \
            unsigned a = base + addr[c * 32 + lane];                                \
            if ((masks[c] >> lane) & 1u) {                                          \
                __VA_ARGS__                                                         \
            }                                                                       \
        }                                                                           \
        sink[lane] = acc;                                                           \
    }

CASE_KERNEL(cases_ld32, 96, {
    unsigned x;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(x) : "r"(a) : "memory");
    acc += x;
})

CASE_KERNEL(cases_ld64, 640, {
    unsigned x, y;
    asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(x), "=r"(y) : "r"(a) : "memory");
    acc += x ^ y;
})

CASE_KERNEL(cases_ld128, 320, {
    unsigned x, y, z, w;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(x), "=r"(y), "=r"(z), "=r"(w) : "r"(a) : "memory");
    acc += x ^ y ^ z ^ w;
})

CASE_KERNEL(cases_st64, 160, {
    asm volatile("st.shared.v2.u32 [%0], {%1, %2};" :: "r"(a), "r"(lane), "r"(acc) : "memory");
    acc += 1;
})

CASE_KERNEL(cases_st128, 96, {
    asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};"
                 :: "r"(a), "r"(lane), "r"(acc), "r"(c), "r"(a) : "memory");
    acc += 1;
})

CASE_KERNEL(cases_popc, 192, {
    asm volatile("red.shared.add.u32 [%0], 1;" :: "r"(a) : "memory");
    acc += 1;
})

CASE_KERNEL(cases_atom, 64, {
    unsigned old;
    asm volatile("atom.shared.add.u32 %0, [%1], 1;" : "=r"(old) : "r"(a) : "memory");
    acc += old;
})
