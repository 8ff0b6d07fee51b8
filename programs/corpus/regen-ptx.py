#!/usr/bin/env python3
"""Regenerates the corpus's PTX from its CUDA, as .ci/nvrtc-ptx.py does
(compute_90, -lineinfo, `.file` names relative), one .ptx beside each .cu:

    python3 programs/corpus/regen-ptx.py

cg-tiles.cu, half-dot.cu, half-arith.cu, shfl-wide.cu, bf16-arith.cu and
modern-scalar.cu include cooperative_groups.h, cuda_fp16.h, cuda_bf16.h or
cuda_fp8.h, which are not among
NVRTC's built-in headers: they come from the pip packages
nvidia-cuda-runtime-cu12 and nvidia-cuda-cccl-cu12 (nv/target), found on
sys.path or in the directories named by CORPUS_CUDA_INCLUDE (colon-separated),
for example after
    pip install --target /tmp/cudart nvidia-cuda-runtime-cu12 nvidia-cuda-cccl-cu12
    CORPUS_CUDA_INCLUDE=/tmp/cudart/nvidia/cuda_runtime/include:/tmp/cudart/nvidia/cuda_cccl/include
The include directories are stripped from the PTX's `.file` names.
modern-scalar.cu computes in `unsigned __int128`, which NVRTC accepts only
with `--device-int128` (EXTRA_OPTIONS).
"""
import ctypes
import glob
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NEEDS_HEADERS = {
    "cg-tiles.cu",
    "half-dot.cu",
    "half-arith.cu",
    "shfl-wide.cu",
    "bf16-arith.cu",
    "modern-scalar.cu",
}
# Options a file needs beyond the common ones.
EXTRA_OPTIONS = {"modern-scalar.cu": [b"--device-int128"]}


def include_dirs():
    named = [d for d in os.environ.get("CORPUS_CUDA_INCLUDE", "").split(":") if d]
    found = []
    for site in sys.path:
        for package in ("cuda_runtime", "cuda_cccl"):
            found += glob.glob(os.path.join(site, "nvidia", package, "include"))
    return named + found


def compile_to_ptx(nvrtc, name, includes, extra_options=()):
    source = open(name, "rb").read()
    program = ctypes.c_void_p()
    if nvrtc.nvrtcCreateProgram(ctypes.byref(program), source, name.encode(), 0, None, None) != 0:
        sys.exit("nvrtcCreateProgram failed")
    options = [b"--gpu-architecture=compute_90", b"-lineinfo"] + list(extra_options)
    options += [b"-I" + d.encode() for d in includes]
    status = nvrtc.nvrtcCompileProgram(program, len(options), (ctypes.c_char_p * len(options))(*options))
    size = ctypes.c_size_t()
    nvrtc.nvrtcGetProgramLogSize(program, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    nvrtc.nvrtcGetProgramLog(program, log)
    if log.value.strip():
        print(log.value.decode(), file=sys.stderr)
    if status != 0:
        sys.exit(f"{name}: NVRTC failed with status {status}")
    nvrtc.nvrtcGetPTXSize(program, ctypes.byref(size))
    ptx = ctypes.create_string_buffer(size.value)
    nvrtc.nvrtcGetPTX(program, ptx)
    text = ptx.value.decode().replace('"' + os.getcwd() + "/", '"')
    for d in includes:
        text = text.replace('"' + d.rstrip("/") + "/", '"')
    return text


def main():
    spec = importlib.util.spec_from_file_location("nvrtc_ptx", os.path.join(HERE, "../../.ci/nvrtc-ptx.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    nvrtc = module.load_nvrtc()
    os.chdir(HERE)
    for name in sorted(glob.glob("*.cu")):
        includes = include_dirs() if name in NEEDS_HEADERS else []
        text = compile_to_ptx(nvrtc, name, includes, EXTRA_OPTIONS.get(name, ()))
        open(name[:-3] + ".ptx", "w").write(text)
        print(f"{name} -> {name[:-3]}.ptx", file=sys.stderr)


if __name__ == "__main__":
    main()
