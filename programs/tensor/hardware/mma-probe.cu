// Runs one mma.sync per warp on operands given register by register, to
// measure how the H100's tensor cores compute each shape and type, and times
// dependent and independent chains of each mma for the cycle model.
//
//   nvcc -arch=sm_90 -O2 -o mma-probe mma-probe.cu && ./mma-probe OUTDIR
//
// For each variant it writes OUTDIR/<variant>.random.bin: the D registers of
// 1024 fragments whose A, B, C registers come from splitmix64 (seeded by the
// variant's index, drawn as `random_operands` below describes; the Rust tests
// draw the same), and, when crafted-<variant>.bin exists beside the binary,
// OUTDIR/<variant>.crafted.bin: the D registers of the crafted operands it
// holds (A, B, C registers of each fragment, lane-major). Timings go to stdout.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

static uint64_t splitmix64(uint64_t &state) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

enum class Element { F16, BF16, TF32, F32, F64, I8, I32 };

// One random register (32 bits, or 64 for f64) of `element`s from one draw;
// `wide` fragments spread exponents far apart, narrow ones keep them close.
static uint64_t random_register(Element element, uint64_t r, bool wide) {
    auto f16 = [&](uint32_t u) -> uint32_t {
        uint32_t exponent = wide ? (u >> 10) % 31 : 12 + (u >> 10) % 7;
        return ((u >> 31) << 15) | (exponent << 10) | (u & 0x3ff);
    };
    auto bf16 = [&](uint32_t u) -> uint32_t {
        uint32_t exponent = wide ? 87 + (u >> 7) % 81 : 124 + (u >> 7) % 7;
        return ((u >> 31) << 15) | (exponent << 7) | (u & 0x7f);
    };
    auto f32 = [&](uint32_t u, uint32_t mantissa) -> uint32_t {
        uint32_t exponent = wide ? 87 + u % 81 : 124 + u % 7;
        return ((mantissa >> 31) << 31) | (exponent << 23) | (mantissa & 0x7fffff);
    };
    uint32_t low = (uint32_t)r, high = (uint32_t)(r >> 32);
    switch (element) {
    case Element::F16: return f16(low) | (f16(high) << 16);
    case Element::BF16: return bf16(low) | (bf16(high) << 16);
    case Element::TF32:
    case Element::F32: return f32(low, high);
    case Element::F64: {
        uint64_t exponent = wide ? 923 + (low >> 20) % 201 : 1020 + (low >> 20) % 7;
        return (r & 0x800fffffffffffffull) | (exponent << 52);
    }
    case Element::I8:
    case Element::I32: return low;
    }
    return 0;
}

struct Variant {
    const char *name;
    Element a, b, c;
    int a_registers, b_registers, c_registers;
};

#define VARIANTS(X)                                                                                   \
    X(f16_f32_m16n8k16, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", F16, F16, F32, 4, 2, 4)  \
    X(bf16_f32_m16n8k16, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", BF16, BF16, F32, 4, 2, 4) \
    X(f16_f16_m16n8k16, "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", F16, F16, F16, 4, 2, 2)  \
    X(f16_f32_m16n8k8, "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32", F16, F16, F32, 2, 1, 4)    \
    X(bf16_f32_m16n8k8, "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32", BF16, BF16, F32, 2, 1, 4) \
    X(f16_f16_m16n8k8, "mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16", F16, F16, F16, 2, 1, 2)    \
    X(tf32_f32_m16n8k8, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", TF32, TF32, F32, 4, 2, 4) \
    X(s8_s32_m16n8k32, "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", I8, I8, I32, 4, 2, 4)      \
    X(u8s8_s32_m16n8k32, "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32", I8, I8, I32, 4, 2, 4)    \
    X(u8_s32_m16n8k32, "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32", I8, I8, I32, 4, 2, 4)      \
    X(s8_s32_m16n8k32_satfinite, "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32", I8, I8, I32, 4, 2, 4)

// Registers are passed as 32-bit words; templates on the register counts
// spell out the asm operand lists.
template <int A, int B, int C> struct Mma;
#define MMA_KERNEL(NAME, INSTRUCTION, A_REGISTERS, B_REGISTERS, C_REGISTERS, OPERANDS, INPUTS)          \
    __global__ void run_##NAME(const uint32_t *a, const uint32_t *b, const uint32_t *c, uint32_t *d) {    \
        int lane = threadIdx.x % 32, fragment = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;       \
        const uint32_t *ap = a + (fragment * 32 + lane) * A_REGISTERS;                                    \
        const uint32_t *bp = b + (fragment * 32 + lane) * B_REGISTERS;                                    \
        const uint32_t *cp = c + (fragment * 32 + lane) * C_REGISTERS;                                    \
        uint32_t *dp = d + (fragment * 32 + lane) * C_REGISTERS;                                          \
        uint32_t r[C_REGISTERS];                                                                          \
        for (int i = 0; i < C_REGISTERS; ++i) r[i] = cp[i];                                               \
        asm volatile(INSTRUCTION " " OPERANDS : INPUTS);                                                 \
        for (int i = 0; i < C_REGISTERS; ++i) dp[i] = r[i];                                               \
    }

#define OPS_4_2_4 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
#define IN_4_2_4 "+r"(r[0]), "+r"(r[1]), "+r"(r[2]), "+r"(r[3]) : "r"(ap[0]), "r"(ap[1]), "r"(ap[2]), "r"(ap[3]), "r"(bp[0]), "r"(bp[1])
#define OPS_4_2_2 "{%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};"
#define IN_4_2_2 "+r"(r[0]), "+r"(r[1]) : "r"(ap[0]), "r"(ap[1]), "r"(ap[2]), "r"(ap[3]), "r"(bp[0]), "r"(bp[1])
#define OPS_2_1_4 "{%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
#define IN_2_1_4 "+r"(r[0]), "+r"(r[1]), "+r"(r[2]), "+r"(r[3]) : "r"(ap[0]), "r"(ap[1]), "r"(bp[0])
#define OPS_2_1_2 "{%0,%1}, {%2,%3}, {%4}, {%0,%1};"
#define IN_2_1_2 "+r"(r[0]), "+r"(r[1]) : "r"(ap[0]), "r"(ap[1]), "r"(bp[0])

#define DEFINE_KERNEL(NAME, INSTRUCTION, A, B, C, AR, BR, CR) \
    MMA_KERNEL(NAME, INSTRUCTION, AR, BR, CR, OPS_##AR##_##BR##_##CR, IN_##AR##_##BR##_##CR)
VARIANTS(DEFINE_KERNEL)

// f64 m8n8k4: one 64-bit register of A and B, two of C and D.
__global__ void run_f64_f64_m8n8k4(const uint32_t *a, const uint32_t *b, const uint32_t *c, uint32_t *d) {
    int lane = threadIdx.x % 32, fragment = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    const double *ap = (const double *)a + fragment * 32 + lane, *bp = (const double *)b + fragment * 32 + lane;
    const double *cp = (const double *)c + (fragment * 32 + lane) * 2;
    double *dp = (double *)d + (fragment * 32 + lane) * 2;
    double d0 = cp[0], d1 = cp[1];
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
                 : "+d"(d0), "+d"(d1) : "d"(*ap), "d"(*bp));
    dp[0] = d0;
    dp[1] = d1;
}

// Latency: CHAIN mma each reading the previous one's D as C (one warp).
// Throughput: INDEPENDENT accumulators in turn, per warp, one warp per
// sub-partition (4 warps) and one warp alone.
#define CHAIN 512
#define INDEPENDENT 8
#define TIMING_KERNELS(NAME, INSTRUCTION, AR, BR, CR, OPS)                                               \
    __global__ void latency_##NAME(uint32_t seed, long long *cycles, uint32_t *sink) {                 \
        uint32_t ap[4] = {seed, seed ^ 1, seed ^ 2, seed ^ 3}, bp[2] = {seed ^ 4, seed ^ 5};             \
        uint32_t r[4] = {0, 0, 0, 0};                                                                    \
        long long start = clock64();                                                                     \
        for (int i = 0; i < CHAIN; ++i) asm volatile(INSTRUCTION " " OPS);                               \
        long long stop = clock64();                                                                      \
        if (threadIdx.x == 0) cycles[0] = stop - start;                                                  \
        sink[threadIdx.x] = r[0] ^ r[1] ^ r[2] ^ r[3];                                                   \
    }                                                                                                    \
    __global__ void throughput_##NAME(uint32_t seed, long long *cycles, uint32_t *sink) {              \
        uint32_t ap[4] = {seed, seed ^ 1, seed ^ 2, seed ^ 3}, bp[2] = {seed ^ 4, seed ^ 5};             \
        uint32_t acc[INDEPENDENT][4] = {};                                                               \
        __syncthreads();                                                                                 \
        long long start = clock64();                                                                     \
        for (int i = 0; i < CHAIN / INDEPENDENT; ++i)                                                    \
            _Pragma("unroll") for (int j = 0; j < INDEPENDENT; ++j) {                                    \
                uint32_t *r = acc[j];                                                                    \
                asm volatile(INSTRUCTION " " OPS);                                                       \
            }                                                                                            \
        long long stop = clock64();                                                                      \
        if (threadIdx.x % 32 == 0) cycles[threadIdx.x / 32] = stop - start;                              \
        uint32_t x = 0;                                                                                  \
        for (int j = 0; j < INDEPENDENT; ++j) x ^= acc[j][0] ^ acc[j][1] ^ acc[j][2] ^ acc[j][3];        \
        sink[threadIdx.x] = x;                                                                           \
    }
#define TIMING_4_2_4 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};" : "+r"(r[0]), "+r"(r[1]), "+r"(r[2]), "+r"(r[3]) : "r"(ap[0]), "r"(ap[1]), "r"(ap[2]), "r"(ap[3]), "r"(bp[0]), "r"(bp[1])
#define TIMING_4_2_2 "{%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};" : "+r"(r[0]), "+r"(r[1]) : "r"(ap[0]), "r"(ap[1]), "r"(ap[2]), "r"(ap[3]), "r"(bp[0]), "r"(bp[1])
#define TIMING_2_1_4 "{%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};" : "+r"(r[0]), "+r"(r[1]), "+r"(r[2]), "+r"(r[3]) : "r"(ap[0]), "r"(ap[1]), "r"(bp[0])
#define TIMING_2_1_2 "{%0,%1}, {%2,%3}, {%4}, {%0,%1};" : "+r"(r[0]), "+r"(r[1]) : "r"(ap[0]), "r"(ap[1]), "r"(bp[0])
#define DEFINE_TIMING(NAME, INSTRUCTION, A, B, C, AR, BR, CR) TIMING_KERNELS(NAME, INSTRUCTION, AR, BR, CR, TIMING_##AR##_##BR##_##CR)
VARIANTS(DEFINE_TIMING)

__global__ void latency_f64_f64_m8n8k4(uint32_t seed, long long *cycles, uint32_t *sink) {
    double a = seed * 1e-9, b = seed * 2e-9, d0 = 0, d1 = 0;
    long long start = clock64();
    for (int i = 0; i < CHAIN; ++i)
        asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
                     : "+d"(d0), "+d"(d1) : "d"(a), "d"(b));
    long long stop = clock64();
    if (threadIdx.x == 0) cycles[0] = stop - start;
    sink[threadIdx.x] = (uint32_t)(d0 + d1);
}
__global__ void throughput_f64_f64_m8n8k4(uint32_t seed, long long *cycles, uint32_t *sink) {
    double a = seed * 1e-9, b = seed * 2e-9, acc[INDEPENDENT][2] = {};
    __syncthreads();
    long long start = clock64();
    for (int i = 0; i < CHAIN / INDEPENDENT; ++i)
#pragma unroll
        for (int j = 0; j < INDEPENDENT; ++j)
            asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
                         : "+d"(acc[j][0]), "+d"(acc[j][1]) : "d"(a), "d"(b));
    long long stop = clock64();
    if (threadIdx.x % 32 == 0) cycles[threadIdx.x / 32] = stop - start;
    double x = 0;
    for (int j = 0; j < INDEPENDENT; ++j) x += acc[j][0] + acc[j][1];
    sink[threadIdx.x] = (uint32_t)x;
}

// ldmatrix x4 latency: each address depends on the previous load's result.
__global__ void latency_ldmatrix_x4(long long *cycles, uint32_t *sink) {
    __shared__ __align__(16) uint32_t tile[1024];
    for (int i = threadIdx.x; i < 1024; i += blockDim.x) tile[i] = 0;
    __syncwarp();
    unsigned base = (unsigned)__cvta_generic_to_shared(tile) + (threadIdx.x % 32) * 16;
    uint32_t r0 = 0, r1 = 0, r2 = 0, r3 = 0;
    long long start = clock64();
    for (int i = 0; i < CHAIN; ++i)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(base + r0));
    long long stop = clock64();
    if (threadIdx.x == 0) cycles[0] = stop - start;
    sink[threadIdx.x] = r0 ^ r1 ^ r2 ^ r3;
}

static std::vector<uint32_t> read_file(const std::string &path) {
    std::vector<uint32_t> words;
    FILE *f = fopen(path.c_str(), "rb");
    if (!f) return words;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    words.resize(size / 4);
    if (fread(words.data(), 4, words.size(), f) != words.size()) words.clear();
    fclose(f);
    return words;
}

static void write_file(const std::string &path, const std::vector<uint32_t> &words) {
    FILE *f = fopen(path.c_str(), "wb");
    fwrite(words.data(), 4, words.size(), f);
    fclose(f);
}

typedef void (*MmaKernel)(const uint32_t *, const uint32_t *, const uint32_t *, uint32_t *);

// Runs `fragments` mma on the given registers (32-bit words; a 64-bit register is two).
static std::vector<uint32_t> run(MmaKernel kernel, int fragments, int a_words, int b_words, int c_words,
                                 const std::vector<uint32_t> &a, const std::vector<uint32_t> &b,
                                 const std::vector<uint32_t> &c) {
    uint32_t *da, *db, *dc, *dd;
    cudaMalloc(&da, a.size() * 4);
    cudaMalloc(&db, b.size() * 4);
    cudaMalloc(&dc, c.size() * 4);
    cudaMalloc(&dd, c.size() * 4);
    cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b.data(), b.size() * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(dc, c.data(), c.size() * 4, cudaMemcpyHostToDevice);
    kernel<<<fragments, 32>>>(da, db, dc, dd);
    std::vector<uint32_t> d(c.size());
    cudaError_t error = cudaMemcpy(d.data(), dd, d.size() * 4, cudaMemcpyDeviceToHost);
    if (error != cudaSuccess) {
        fprintf(stderr, "CUDA error %s\n", cudaGetErrorString(error));
        exit(1);
    }
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    cudaFree(dd);
    return d;
}

static void probe(const char *name, int index, MmaKernel kernel, Element ea, Element eb, Element ec, int ar, int br,
                  int cr, bool wide64, const std::string &directory) {
    const int fragments = 1024;
    int word = wide64 ? 2 : 1;
    std::vector<uint32_t> a, b, c;
    uint64_t state = 1000 + index;
    for (int fragment = 0; fragment < fragments; ++fragment) {
        bool wide = fragment % 2 == 1;
        for (int lane = 0; lane < 32; ++lane) {
            // Per lane: A's registers, then B's, then C's, one draw each.
            auto push = [&](std::vector<uint32_t> &v, Element e, int count) {
                for (int i = 0; i < count; ++i) {
                    uint64_t value = random_register(e, splitmix64(state), wide);
                    v.push_back((uint32_t)value);
                    if (wide64) v.push_back((uint32_t)(value >> 32));
                }
            };
            push(a, ea, ar);
            push(b, eb, br);
            push(c, ec, cr);
        }
    }
    write_file(directory + "/" + name + ".random.bin", run(kernel, fragments, ar, br, cr, a, b, c));
    std::vector<uint32_t> crafted = read_file(std::string("crafted-") + name + ".bin");
    if (!crafted.empty()) {
        int per_lane = (ar + br + cr) * word;
        int count = crafted.size() / (32 * per_lane);
        std::vector<uint32_t> ca, cb, cc;
        for (int fragment = 0; fragment < count; ++fragment)
            for (int lane = 0; lane < 32; ++lane) {
                const uint32_t *p = &crafted[(fragment * 32 + lane) * per_lane];
                ca.insert(ca.end(), p, p + ar * word);
                cb.insert(cb.end(), p + ar * word, p + (ar + br) * word);
                cc.insert(cc.end(), p + (ar + br) * word, p + per_lane);
            }
        write_file(directory + "/" + name + ".crafted.bin", run(kernel, count, ar, br, cr, ca, cb, cc));
        printf("%s: %d crafted fragments\n", name, count);
    }
}

int main(int argc, char **argv) {
    std::string directory = argc > 1 ? argv[1] : ".";
    int index = 0;
#define PROBE(NAME, INSTRUCTION, A, B, C, AR, BR, CR) \
    probe(#NAME, index++, run_##NAME, Element::A, Element::B, Element::C, AR, BR, CR, false, directory);
    VARIANTS(PROBE)
    probe("f64_f64_m8n8k4", index++, run_f64_f64_m8n8k4, Element::F64, Element::F64, Element::F64, 1, 1, 2, true,
          directory);
    long long *cycles;
    uint32_t *sink;
    cudaMalloc(&cycles, 64 * sizeof(long long));
    cudaMalloc(&sink, 1024 * 4);
    long long host[8];
    printf("variant latency_cycles_per_mma throughput_1warp_cycles_per_mma throughput_4warps_cycles_per_mma_per_warp\n");
    auto time = [&](const char *name, void (*latency)(uint32_t, long long *, uint32_t *),
                    void (*throughput)(uint32_t, long long *, uint32_t *)) {
        for (int repeat = 0; repeat < 2; ++repeat) latency<<<1, 32>>>(7, cycles, sink);
        cudaMemcpy(host, cycles, 8, cudaMemcpyDeviceToHost);
        double latency_cycles = host[0] / (double)CHAIN;
        for (int repeat = 0; repeat < 2; ++repeat) throughput<<<1, 32>>>(7, cycles, sink);
        cudaMemcpy(host, cycles, 8, cudaMemcpyDeviceToHost);
        double one = host[0] / (double)CHAIN;
        for (int repeat = 0; repeat < 2; ++repeat) throughput<<<1, 128>>>(7, cycles, sink);
        cudaMemcpy(host, cycles, 32, cudaMemcpyDeviceToHost);
        double four = (host[0] + host[1] + host[2] + host[3]) / 4.0 / CHAIN;
        printf("%s %.2f %.2f %.2f\n", name, latency_cycles, one, four);
    };
#define TIME(NAME, INSTRUCTION, A, B, C, AR, BR, CR) time(#NAME, latency_##NAME, throughput_##NAME);
    VARIANTS(TIME)
    time("f64_f64_m8n8k4", latency_f64_f64_m8n8k4, throughput_f64_f64_m8n8k4);
    for (int repeat = 0; repeat < 2; ++repeat) latency_ldmatrix_x4<<<1, 32>>>(cycles, sink);
    cudaMemcpy(host, cycles, 8, cudaMemcpyDeviceToHost);
    printf("ldmatrix_x4_latency_cycles %.2f\n", host[0] / (double)CHAIN);
    cudaError_t error = cudaDeviceSynchronize();
    printf("status %s\n", cudaGetErrorString(error));
    return 0;
}
