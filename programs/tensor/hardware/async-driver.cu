// Runs the async-copy and mbarrier kernels of programs/tensor on a GPU, one
// per invocation (argv[1] names it), checks their outputs against the host
// and writes them to argv[2]/NAME.txt, so that Nsight Compute can profile
// one kernel at a time (run-async.sh).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <string>
#include <cmath>
#include "../async-gemm.cu"
#include "../async-stale-read.cu"
#include "../pipeline-mbarrier.cu"
#include "../async-mbarrier-ops.cu"

#define CHECK(call) do { cudaError_t e = (call); if (e != cudaSuccess) { fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e)); exit(1); } } while (0)

template <typename T> T *device_copy(const std::vector<T> &host)
{
    T *device;
    CHECK(cudaMalloc(&device, host.size() * sizeof(T)));
    CHECK(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
    return device;
}

template <typename T> std::vector<T> host_copy(const T *device, size_t n)
{
    std::vector<T> host(n);
    CHECK(cudaMemcpy(host.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
}

int main(int argc, char **argv)
{
    std::string name = argv[1];
    std::string path = std::string(argv[2]) + "/" + name + ".txt";
    FILE *out = fopen(path.c_str(), "w");
    int bad = 0;
    if (name == "async_gemm") {
        int M = 64, N = 64, K = 128;
        std::vector<float> A(M * K), B(K * N), C(M * N);
        for (int i = 0; i < M * K; ++i) A[i] = (float)((i * 7) % 17 - 8) * 0.25f;
        for (int i = 0; i < K * N; ++i) B[i] = (float)((i * 5) % 13 - 6) * 0.5f;
        float *dA = device_copy(A), *dB = device_copy(B), *dC = device_copy(C);
        async_gemm<<<dim3(N / 32, M / 32), dim3(32, 8)>>>(dA, dB, dC, M, N, K);
        CHECK(cudaDeviceSynchronize());
        C = host_copy(dC, M * N);
        for (int r = 0; r < M; ++r)
            for (int c = 0; c < N; ++c) {
                float s = 0;
                for (int k = 0; k < K; ++k) s = fmaf(A[r * K + k], B[k * N + c], s);
                if (s != C[r * N + c]) ++bad;
            }
        for (int i = 0; i < M * N; ++i) fprintf(out, "%a\n", C[i]);
    } else if (name == "async_stale_read") {
        std::vector<int> in(64), before(64), after(64);
        for (int i = 0; i < 64; ++i) in[i] = 100 + i;
        int *dIn = device_copy(in), *dBefore = device_copy(before), *dAfter = device_copy(after);
        async_stale_read<<<1, 64>>>(dIn, dBefore, dAfter);
        CHECK(cudaDeviceSynchronize());
        before = host_copy(dBefore, 64);
        after = host_copy(dAfter, 64);
        for (int i = 0; i < 64; ++i) {
            if (after[i] != in[i]) ++bad;
            fprintf(out, "%d %d\n", before[i], after[i]);
        }
    } else if (name == "pipeline_mbarrier") {
        int blocks = 2, chunks = 8, n = blocks * chunks * 256;
        std::vector<float> in(n), o(n);
        for (int i = 0; i < n; ++i) in[i] = (float)(i % 101) - 50.0f;
        float *dIn = device_copy(in), *dOut = device_copy(o);
        pipeline_mbarrier<<<blocks, 96>>>(dIn, dOut, chunks);
        CHECK(cudaDeviceSynchronize());
        o = host_copy(dOut, n);
        for (int i = 0; i < n; ++i) {
            int chunk = i / 256, j = i % 256;
            float expect = 3.0f * in[i] + in[chunk * 256 + (j + 1) % 256];
            if (o[i] != expect) ++bad;
            fprintf(out, "%a\n", o[i]);
        }
    } else if (name == "mbarrier_ops") {
        std::vector<int> in(32), o(160, -7);
        for (int i = 0; i < 32; ++i) in[i] = 1000 + 3 * i;
        int *dIn = device_copy(in), *dOut = device_copy(o);
        mbarrier_ops<<<1, 32>>>(dIn, dOut);
        CHECK(cudaDeviceSynchronize());
        o = host_copy(dOut, 160);
        for (int i = 0; i < 160; ++i) fprintf(out, "%d\n", o[i]);
    }
    fclose(out);
    printf("%s: %d mismatches\n", name.c_str(), bad);
    return 0;
}
