// Loads a cubin (cases.cu or probe.cu assembled by ptxas 12.9 for sm_90) with
// the CUDA driver API and launches each named case kernel once, one warp, on
// the tables written by gen_cases.py or gen_probe.py:
//     host CUBIN TABLE_DIR [KERNEL...]
// Without kernel names it runs the seven kernels of cases.cu.
#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#include <vector>

static void check(CUresult result, const char *what)
{
    if (result != CUDA_SUCCESS) {
        const char *name = nullptr;
        cuGetErrorName(result, &name);
        std::fprintf(stderr, "%s failed: %s\n", what, name ? name : "?");
        std::exit(1);
    }
}

static std::vector<unsigned> read_words(const char *dir, const char *kernel, const char *ext)
{
    char path[512];
    std::snprintf(path, sizeof path, "%s/%s.%s", dir, kernel, ext);
    FILE *file = std::fopen(path, "rb");
    if (!file) {
        std::fprintf(stderr, "cannot open %s\n", path);
        std::exit(1);
    }
    std::vector<unsigned> words;
    unsigned word;
    while (std::fread(&word, 4, 1, file) == 1)
        words.push_back(word);
    std::fclose(file);
    return words;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        std::fprintf(stderr, "usage: host CUBIN TABLE_DIR [KERNEL...]\n");
        return 2;
    }
    check(cuInit(0), "cuInit");
    CUdevice device;
    check(cuDeviceGet(&device, 0), "cuDeviceGet");
    CUcontext context;
    check(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
    check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
    CUmodule module;
    check(cuModuleLoad(&module, argv[1]), "cuModuleLoad");
    std::vector<const char *> kernels = {"cases_ld32", "cases_ld64", "cases_ld128", "cases_st64",
                                         "cases_st128", "cases_popc", "cases_atom"};
    if (argc > 3)
        kernels.assign(argv + 3, argv + argc);
    for (const char *kernel : kernels) {
        std::vector<unsigned> addr = read_words(argv[2], kernel, "addr");
        std::vector<unsigned> mask = read_words(argv[2], kernel, "mask");
        if (addr.size() != 32 * mask.size()) {
            std::fprintf(stderr, "%s: %zu offsets for %zu masks\n", kernel, addr.size(), mask.size());
            return 1;
        }
        CUfunction function;
        check(cuModuleGetFunction(&function, module, kernel), "cuModuleGetFunction");
        CUdeviceptr d_addr, d_mask, d_sink;
        check(cuMemAlloc(&d_addr, addr.size() * 4), "cuMemAlloc");
        check(cuMemAlloc(&d_mask, mask.size() * 4), "cuMemAlloc");
        check(cuMemAlloc(&d_sink, 32 * 4), "cuMemAlloc");
        check(cuMemcpyHtoD(d_addr, addr.data(), addr.size() * 4), "cuMemcpyHtoD");
        check(cuMemcpyHtoD(d_mask, mask.data(), mask.size() * 4), "cuMemcpyHtoD");
        void *params[] = {&d_addr, &d_mask, &d_sink};
        check(cuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr), "cuLaunchKernel");
        check(cuCtxSynchronize(), kernel);
        std::printf("%s: %zu cases ran\n", kernel, mask.size());
        cuMemFree(d_addr);
        cuMemFree(d_mask);
        cuMemFree(d_sink);
    }
    return 0;
}
