// Runs redux_arms and warp_reduce_match on a GPU and writes their outputs as
// raw little-endian files, to compare with warpsim's (run.sh).
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "redux-arms.cu"
#include "../warp-reduce-match.cu"

static std::vector<unsigned> read_words(const char* path, size_t count) {
    std::vector<unsigned> words(count);
    FILE* f = fopen(path, "rb");
    if (!f || fread(words.data(), 4, count, f) != count) { fprintf(stderr, "cannot read %s\n", path); exit(1); }
    fclose(f);
    return words;
}

static void write_words(const char* dir, const char* name, const void* data, size_t bytes) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE* f = fopen(path, "wb");
    fwrite(data, 1, bytes, f);
    fclose(f);
}

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

int main(int argc, char** argv) {
    const char* out_dir = argv[1];
    unsigned* d_arms;
    CHECK(cudaMalloc(&d_arms, 192 * 4));
    CHECK(cudaMemset(d_arms, 0, 192 * 4));
    redux_arms<<<1, 64>>>(d_arms);
    CHECK(cudaDeviceSynchronize());
    std::vector<unsigned> arms(192);
    CHECK(cudaMemcpy(arms.data(), d_arms, 192 * 4, cudaMemcpyDeviceToHost));
    write_words(out_dir, "redux-arms-out.bin", arms.data(), 192 * 4);

    std::vector<unsigned> in = read_words("wrm-in.bin", 192), xbits = read_words("wrm-xbits.bin", 192);
    unsigned *d_in, *d_x, *d_out; float* d_fout;
    CHECK(cudaMalloc(&d_in, 192 * 4)); CHECK(cudaMalloc(&d_x, 192 * 4));
    CHECK(cudaMalloc(&d_out, 2304 * 4)); CHECK(cudaMalloc(&d_fout, 192 * 4));
    CHECK(cudaMemcpy(d_in, in.data(), 192 * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_x, xbits.data(), 192 * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_out, 0, 2304 * 4)); CHECK(cudaMemset(d_fout, 0, 192 * 4));
    warp_reduce_match<<<4, 48>>>(d_in, d_x, d_out, d_fout, 192);
    CHECK(cudaDeviceSynchronize());
    std::vector<unsigned> out(2304), fout(192);
    CHECK(cudaMemcpy(out.data(), d_out, 2304 * 4, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(fout.data(), d_fout, 192 * 4, cudaMemcpyDeviceToHost));
    write_words(out_dir, "wrm-out.bin", out.data(), 2304 * 4);
    write_words(out_dir, "wrm-fout.bin", fout.data(), 192 * 4);
    printf("ok\n");
    return 0;
}
