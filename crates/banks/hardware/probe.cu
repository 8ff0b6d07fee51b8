// The second H100 run: 64- and 128-bit shared loads whose address registers
// are computed in every lane, active or not (the predicate is applied inside
// the inline PTX), so that the addresses of inactive lanes are table values.
// gen_probe.py writes the tables; run.sh profiles each kernel once.

#define SHARED_BYTES 8192

__device__ __forceinline__ unsigned shared_address(const void *pointer)
{
    return (unsigned)__cvta_generic_to_shared(pointer);
}

#define PROBE_KERNEL(NAME, COUNT, ...)                                              \
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
            unsigned on = (masks[c] >> lane) & 1u;                                  \
            __VA_ARGS__                                                             \
        }                                                                           \
        sink[lane] = acc;                                                           \
    }

#define LD64                                                                        \
    unsigned x = 0, y = 0;                                                          \
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %3, 0;\n\t"                  \
                 "@p ld.shared.v2.u32 {%0, %1}, [%2];\n\t}"                         \
                 : "+r"(x), "+r"(y) : "r"(a), "r"(on) : "memory");                  \
    acc += x ^ y;

#define LD128                                                                       \
    unsigned x = 0, y = 0, z = 0, w = 0;                                            \
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %5, 0;\n\t"                  \
                 "@p ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n\t}"                 \
                 : "+r"(x), "+r"(y), "+r"(z), "+r"(w) : "r"(a), "r"(on) : "memory"); \
    acc += x ^ y ^ z ^ w;

PROBE_KERNEL(probe_ld64_same, 640, LD64)
PROBE_KERNEL(probe_ld128_same, 320, LD128)
PROBE_KERNEL(probe_ld64_neutral, 640, LD64)
PROBE_KERNEL(probe_ld128_neutral, 320, LD128)
PROBE_KERNEL(probe_ld64_targeted, 416, LD64)
PROBE_KERNEL(probe_ld128_targeted, 368, LD128)
