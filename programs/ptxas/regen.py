#!/usr/bin/env python3
"""Regenerates the committed PTX and SASS of the kernels in this folder.

    python3 -m pip install nvidia-cuda-nvrtc-cu12 nvidia-cuda-nvcc-cu12 nvidia-cuda-nvdisasm
    python3 programs/ptxas/regen.py [--cubin-dir DIR] [NAME.cu ...]

For every `NAME.cu` here: NVRTC (compute_90, -lineinfo, as `.ci/nvrtc-ptx.py`)
writes `NAME.ptx`; ptxas (`-arch=sm_90 -lineinfo`) assembles it to a cubin;
`nvdisasm -g -c` writes `NAME.sass`, the machine code with a
`//## File "NAME.cu", line N` comment before each run of instructions of one
CUDA line. The tests of `crates/ir` read both. `--cubin-dir DIR` also keeps
the cubins there (`hardware/run.sh` measures them on a GPU).
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def tool(package, name):
    """Finds a CUDA tool installed by a pip wheel (nvidia/<package>/bin/<name>)."""
    for site in sys.path:
        for candidate in glob.glob(os.path.join(site, "nvidia", package, "bin", name)):
            if os.access(candidate, os.X_OK):
                return candidate
    sys.exit(f"{name} not found: python3 -m pip install the wheel that holds nvidia/{package}/bin/{name}")


def main():
    ptxas = tool("cuda_nvcc", "ptxas")
    nvdisasm = tool("*", "nvdisasm")
    arguments = sys.argv[1:]
    cubin_dir = None
    if arguments[:1] == ["--cubin-dir"] and len(arguments) >= 2:
        cubin_dir = arguments[1]
        arguments = arguments[2:]
        os.makedirs(cubin_dir, exist_ok=True)
    sources = sorted(glob.glob(os.path.join(HERE, "*.cu")))
    if arguments:
        sources = [s for s in sources if os.path.basename(s) in arguments]
    for source in sources:
        stem = source[: -len(".cu")]
        # NVRTC names the file relative to the working directory.
        ptx = subprocess.run(
            [sys.executable, os.path.join(ROOT, ".ci", "nvrtc-ptx.py"), os.path.basename(source)],
            cwd=HERE, check=True, capture_output=True, text=True,
        ).stdout
        with open(stem + ".ptx", "w") as out:
            out.write(ptx)
        with tempfile.TemporaryDirectory() as scratch:
            cubin = os.path.join(scratch, "kernel.cubin")
            subprocess.run([ptxas, "-arch=sm_90", "-lineinfo", stem + ".ptx", "-o", cubin], check=True)
            sass = subprocess.run(
                [nvdisasm, "-g", "-c", cubin], check=True, capture_output=True, text=True
            ).stdout
            if cubin_dir:
                shutil.copy(cubin, os.path.join(cubin_dir, os.path.basename(stem) + ".cubin"))
        with open(stem + ".sass", "w") as out:
            out.write(sass)
        print(f"{os.path.basename(source)}: PTX {len(ptx)} bytes, SASS {len(sass)} bytes")


if __name__ == "__main__":
    main()
