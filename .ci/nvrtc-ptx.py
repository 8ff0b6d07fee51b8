#!/usr/bin/env python3
"""Compiles a CUDA file to PTX with NVRTC, the run-time compiler, which needs no GPU.

    pip install nvidia-cuda-nvrtc-cu12
    python3 .ci/nvrtc-ptx.py programs/cuda/seed-kernels.cu > programs/cuda/seed-kernels.ptx

Options: compute_90, line info on (so every PTX instruction carries its CUDA
line in `.loc`). The file is named by its base name, so the PTX's `.file`
directive names it relative to the PTX beside it.
"""
import ctypes
import glob
import os
import sys


def load_nvrtc():
    named = os.environ.get("WARPSIM_NVRTC")
    candidates = [named] if named else []
    for site in sys.path:
        candidates += glob.glob(os.path.join(site, "nvidia", "cuda_nvrtc", "lib", "libnvrtc.so.*"))
    for candidate in candidates:
        if candidate and os.path.exists(candidate) and "builtins" not in candidate and ".alt." not in candidate:
            return ctypes.CDLL(candidate)
    sys.exit("NVRTC not found: pip install nvidia-cuda-nvrtc-cu12, or set WARPSIM_NVRTC to libnvrtc.so")


def main():
    path = sys.argv[1]
    nvrtc = load_nvrtc()
    source = open(path, "rb").read()
    program = ctypes.c_void_p()
    name = os.path.basename(path).encode()
    if nvrtc.nvrtcCreateProgram(ctypes.byref(program), source, name, 0, None, None) != 0:
        sys.exit("nvrtcCreateProgram failed")
    options = [b"--gpu-architecture=compute_90", b"-lineinfo"]
    status = nvrtc.nvrtcCompileProgram(program, len(options), (ctypes.c_char_p * len(options))(*options))
    size = ctypes.c_size_t()
    nvrtc.nvrtcGetProgramLogSize(program, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    nvrtc.nvrtcGetProgramLog(program, log)
    if log.value.strip():
        print(log.value.decode(), file=sys.stderr)
    if status != 0:
        sys.exit(f"NVRTC failed with status {status}")
    nvrtc.nvrtcGetPTXSize(program, ctypes.byref(size))
    ptx = ctypes.create_string_buffer(size.value)
    nvrtc.nvrtcGetPTX(program, ptx)
    # NVRTC prefixes the working directory to the file name in `.file`; keep
    # the name relative so the PTX can be moved with its source.
    text = ptx.value.decode().replace('"' + os.getcwd() + "/", '"')
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
