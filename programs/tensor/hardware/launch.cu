// Launches the kernels of programs/tensor on an H100 with the grids and
// blocks of their .toml files, so Nsight Compute can count their shared
// wavefronts per source line (see README.md):
//
//   nvcc -arch=sm_90 -lineinfo -o gemm-mma launch.cu -DSOURCE='"../gemm-mma.cu"'
//   ./gemm-mma gemm_mma_swizzled
#include <cstdio>
#include <cstring>
#include <cuda_fp16.h>
#include SOURCE

static half *random_halves(int count, unsigned seed) {
    half *host = new half[count];
    for (int i = 0; i < count; ++i) {
        seed = seed * 1664525u + 1013904223u;
        host[i] = __float2half(((int)(seed >> 24) - 128) / 128.0f);
    }
    half *device;
    cudaMalloc(&device, count * sizeof(half));
    cudaMemcpy(device, host, count * sizeof(half), cudaMemcpyHostToDevice);
    delete[] host;
    return device;
}

int main(int argc, char **argv) {
    const char *kernel = argc > 1 ? argv[1] : "";
    float *out;
    cudaMalloc(&out, 1 << 20);
#ifdef GEMM_MMA
    half *a = random_halves(128 * 128, 1), *b = random_halves(128 * 128, 2);
    if (!strcmp(kernel, "gemm_mma_swizzled")) gemm_mma_swizzled<<<dim3(2, 2), 128>>>(a, b, out, 128, 128, 128);
    if (!strcmp(kernel, "gemm_mma_plain")) gemm_mma_plain<<<dim3(2, 2), 128>>>(a, b, out, 128, 128, 128);
#endif
#ifdef WMMA_GEMM
    half *a = random_halves(64 * 64, 1), *b = random_halves(64 * 64, 2);
    wmma_gemm<<<dim3(2, 2), 128>>>(a, b, out, 64, 64, 64);
#endif
#ifdef ATTENTION
    half *q = random_halves(64 * 32, 1), *k = random_halves(64 * 32, 2), *v = random_halves(64 * 32, 3);
    attention_forward<<<4, 32>>>(q, k, v, out);
#endif
    cudaError_t error = cudaDeviceSynchronize();
    printf("%s: %s\n", kernel, cudaGetErrorString(error));
    return error != cudaSuccess;
}
