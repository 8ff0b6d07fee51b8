// Launches the kernels of programs/ptxas on a GPU, from the cubins that
// regen.py's ptxas (12.9, sm_90, -lineinfo) made, so that Nsight Compute
// measures exactly the committed SASS:  launch TABLE CUBIN_DIR
//
// TABLE is launches.tsv: file, kernel, grid, block, dynamic shared bytes and
// arguments (`buf`: a fresh 4 MiB buffer filled by fill(); `i32:N`: a number).
#include <cuda.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
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

// Every buffer starts as the same bytes: xorshift32 from 2463534242, one
// little-endian word a step.
static std::vector<uint32_t> fill(size_t words)
{
    std::vector<uint32_t> out(words);
    uint32_t x = 2463534242u;
    for (auto &word : out) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        word = x;
    }
    return out;
}

static std::vector<std::string> split(const std::string &text, char separator)
{
    std::vector<std::string> parts;
    size_t start = 0;
    while (true) {
        size_t end = text.find(separator, start);
        parts.push_back(text.substr(start, end - start));
        if (end == std::string::npos)
            return parts;
        start = end + 1;
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        std::fprintf(stderr, "usage: launch TABLE CUBIN_DIR\n");
        return 2;
    }
    check(cuInit(0), "cuInit");
    CUdevice device;
    check(cuDeviceGet(&device, 0), "cuDeviceGet");
    CUcontext context;
    check(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
    check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
    const size_t buffer_bytes = 4 << 20;
    std::vector<uint32_t> pattern = fill(buffer_bytes / 4);
    std::map<std::string, CUmodule> modules;
    FILE *table = std::fopen(argv[1], "r");
    if (!table) {
        std::fprintf(stderr, "cannot open %s\n", argv[1]);
        return 1;
    }
    char line[1024];
    int failures = 0;
    while (std::fgets(line, sizeof line, table)) {
        std::string text(line);
        while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
            text.pop_back();
        if (text.empty() || text[0] == '#')
            continue;
        std::vector<std::string> field = split(text, '\t');
        if (field.size() != 6) {
            std::fprintf(stderr, "bad line: %s\n", text.c_str());
            return 1;
        }
        if (!modules.count(field[0])) {
            std::string path = std::string(argv[2]) + "/" + field[0] + ".cubin";
            CUmodule module;
            check(cuModuleLoad(&module, path.c_str()), path.c_str());
            modules[field[0]] = module;
        }
        CUfunction function;
        check(cuModuleGetFunction(&function, modules[field[0]], field[1].c_str()), field[1].c_str());
        std::vector<std::string> grid = split(field[2], ','), block = split(field[3], ',');
        unsigned dynamic_shared = std::stoul(field[4]);
        if (dynamic_shared > 48 * 1024)
            check(cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     dynamic_shared),
                  "cuFuncSetAttribute");
        std::vector<std::string> arguments = split(field[5], ',');
        std::vector<CUdeviceptr> buffers;
        std::vector<int32_t> numbers;
        buffers.reserve(arguments.size());
        numbers.reserve(arguments.size());
        std::vector<void *> params;
        for (const std::string &argument : arguments) {
            if (argument == "buf") {
                CUdeviceptr pointer;
                check(cuMemAlloc(&pointer, buffer_bytes), "cuMemAlloc");
                check(cuMemcpyHtoD(pointer, pattern.data(), buffer_bytes), "cuMemcpyHtoD");
                buffers.push_back(pointer);
                params.push_back(&buffers.back());
            } else if (argument.rfind("i32:", 0) == 0) {
                numbers.push_back(std::stoi(argument.substr(4)));
                params.push_back(&numbers.back());
            } else {
                std::fprintf(stderr, "bad argument %s\n", argument.c_str());
                return 1;
            }
        }
        CUresult result = cuLaunchKernel(function, std::stoul(grid[0]), std::stoul(grid[1]),
                                         std::stoul(grid[2]), std::stoul(block[0]),
                                         std::stoul(block[1]), std::stoul(block[2]),
                                         dynamic_shared, nullptr, params.data(), nullptr);
        if (result == CUDA_SUCCESS)
            result = cuCtxSynchronize();
        const char *name = "CUDA_SUCCESS";
        cuGetErrorName(result, &name);
        std::printf("%s %s: %s\n", field[0].c_str(), field[1].c_str(), name);
        failures += result != CUDA_SUCCESS;
        for (CUdeviceptr pointer : buffers)
            cuMemFree(pointer);
        if (result != CUDA_SUCCESS)
            return 1;
    }
    return failures != 0;
}
