#!/usr/bin/env python3
"""Regenerates the PTX of programs/tensor from its CUDA, exactly as
programs/corpus/regen-ptx.py does (compute_90, -lineinfo, `.file` names
relative, CUDA's headers from the pip packages nvidia-cuda-runtime-cu12 and
nvidia-cuda-cccl-cu12,
and crt/mma.h for WMMA from nvidia-cuda-nvcc-cu12), one .ptx beside each .cu:

    python3 programs/tensor/regen-ptx.py
"""
import glob
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    corpus = load("corpus_regen", "../corpus/regen-ptx.py")
    nvrtc = load("nvrtc_ptx", "../../.ci/nvrtc-ptx.py").load_nvrtc()
    # WMMA's mma.h includes crt/mma.h, which comes with the nvidia-cuda-nvcc-cu12 package.
    includes = corpus.include_dirs()
    for site in sys.path:
        includes += glob.glob(os.path.join(site, "nvidia", "cuda_nvcc", "include"))
    os.chdir(HERE)
    for name in sorted(glob.glob("*.cu")):
        text = corpus.compile_to_ptx(nvrtc, name, includes)
        open(name[:-3] + ".ptx", "w").write(text)
        print(f"{name} -> {name[:-3]}.ptx", file=sys.stderr)


if __name__ == "__main__":
    main()
