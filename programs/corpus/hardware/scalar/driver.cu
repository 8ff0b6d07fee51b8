// Runs the kernels of scalar-kernels.cu on a GPU and writes their inputs and
// outputs as little-endian binary files into the directory named on the
// command line (see README.md). Build: nvcc -arch=sm_90 -O2 driver.cu
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "scalar-kernels.cu"

#define CHECK(call)                                                              \
    do {                                                                         \
        cudaError_t err = (call);                                                \
        if (err != cudaSuccess) {                                                \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err)); \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

// A 32-bit integer hash (lowbias32), the source of every random bit here.
static unsigned hash32(unsigned x)
{
    x ^= x >> 16; x *= 0x7feb352du;
    x ^= x >> 15; x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

static const int F32_COUNT = 65536;
static const int STRUCTURED = 49152; // 256 exponents x 192 patterns
static const int WORD_CASES = 4096;

// The f32 inputs: for every exponent field and both signs, mantissas at,
// just below and just above the midpoint between neighbours at every bit
// position (ties with an even and an odd kept bit), with random bits above
// them or none; then random floats whose exponents lie where fp8 and tf32
// round, saturate and go subnormal (2^-30 to 2^20), and a few random ones.
static unsigned f32_input(unsigned i)
{
    if (i < STRUCTURED) {
        unsigned exponent = i / 192, r = i % 192;
        unsigned sign = r & 1, p = r >> 1, k = p / 4, kind = p % 4;
        unsigned h = hash32(i * 2654435761u + 17);
        unsigned mantissa;
        if (k == 23) {
            const unsigned special[4] = {0, 0x7fffff, 1, 0x400000};
            mantissa = special[kind];
        } else {
            unsigned half = 1u << k;
            const unsigned low[4] = {half, 3 * half, half - 1, half + 1};
            mantissa = low[kind] & 0x7fffff;
            if (h & 1) mantissa |= (h >> 1) & ~((2u << k) - 1) & 0x7fffff;
        }
        return sign << 31 | exponent << 23 | mantissa;
    }
    unsigned h = hash32(i ^ 0x9e3779b9u);
    if (i % 8 == 7) return h;
    unsigned exponent = 127 - 30 + (hash32(h) % 51);
    return (h & 0x807fffff) | exponent << 23;
}

static void write_file(const char *dir, const char *name, const void *data, size_t bytes)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, bytes, f) != bytes) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    fclose(f);
    printf("%s: %zu bytes\n", name, bytes);
}

template <typename T> static T *device(size_t count)
{
    T *p;
    CHECK(cudaMalloc(&p, count * sizeof(T)));
    CHECK(cudaMemset(p, 0, count * sizeof(T)));
    return p;
}

template <typename T> static std::vector<T> host(const T *p, size_t count)
{
    std::vector<T> v(count);
    CHECK(cudaMemcpy(v.data(), p, count * sizeof(T), cudaMemcpyDeviceToHost));
    return v;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("device: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);

    std::vector<unsigned> f32(F32_COUNT);
    for (int i = 0; i < F32_COUNT; i++) f32[i] = f32_input(i);
    std::vector<unsigned> words(4 * WORD_CASES);
    for (int i = 0; i < 4 * WORD_CASES; i++) {
        unsigned h = hash32(i + 0x51ed270bu);
        // Every fourth case takes words near the ends of the ranges, where
        // carries, saturation and sign extension show.
        if ((i / 4) % 4 == 3) h = (h & 1) ? 0xffffffffu - (h >> 28) : 0x80000000u + (h >> 28) - 8;
        words[i] = h;
    }
    write_file(dir, "f32-inputs.bin", f32.data(), f32.size() * 4);
    write_file(dir, "words-inputs.bin", words.data(), words.size() * 4);

    float *d_f32 = device<float>(F32_COUNT);
    CHECK(cudaMemcpy(d_f32, f32.data(), F32_COUNT * 4, cudaMemcpyHostToDevice));
    unsigned *d_words = device<unsigned>(words.size());
    CHECK(cudaMemcpy(d_words, words.data(), words.size() * 4, cudaMemcpyHostToDevice));

    unsigned *tf32 = device<unsigned>(6 * F32_COUNT);
    tf32_from_f32<<<F32_COUNT / 256, 256>>>(d_f32, tf32, F32_COUNT);
    unsigned short *fp8 = device<unsigned short>(2 * F32_COUNT);
    unsigned short *bf16 = device<unsigned short>(2 * F32_COUNT);
    fp8_from_f32<<<F32_COUNT / 2 / 256, 256>>>(d_f32, fp8, bf16, F32_COUNT / 2);
    unsigned short *fp8_f16 = device<unsigned short>(4 * 32768);
    fp8_from_f16x2<<<32768 / 256, 256>>>(fp8_f16);
    unsigned *f16_fp8 = device<unsigned>(4 * 256);
    f16x2_from_fp8<<<1, 256>>>(f16_fp8);
    unsigned *dots = device<unsigned>(16 * WORD_CASES);
    dot_products<<<WORD_CASES / 256, 256>>>(d_words, dots, WORD_CASES);
    unsigned *carries = device<unsigned>(24 * WORD_CASES);
    carry_chains<<<WORD_CASES / 256, 256>>>(d_words, carries, WORD_CASES);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());

    auto v1 = host(tf32, 6 * F32_COUNT);
    write_file(dir, "h100-tf32.bin", v1.data(), v1.size() * 4);
    auto v2 = host(fp8, 2 * F32_COUNT);
    write_file(dir, "h100-fp8-from-f32.bin", v2.data(), v2.size() * 2);
    auto v3 = host(bf16, 2 * F32_COUNT);
    write_file(dir, "h100-bf16-relu.bin", v3.data(), v3.size() * 2);
    auto v4 = host(fp8_f16, 4 * 32768);
    write_file(dir, "h100-fp8-from-f16x2.bin", v4.data(), v4.size() * 2);
    auto v5 = host(f16_fp8, 4 * 256);
    write_file(dir, "h100-f16x2-from-fp8.bin", v5.data(), v5.size() * 4);
    auto v6 = host(dots, 16 * WORD_CASES);
    write_file(dir, "h100-dot-products.bin", v6.data(), v6.size() * 4);
    auto v7 = host(carries, 24 * WORD_CASES);
    write_file(dir, "h100-carry-chains.bin", v7.data(), v7.size() * 4);
    return 0;
}
