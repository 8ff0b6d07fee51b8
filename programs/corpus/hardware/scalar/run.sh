#!/usr/bin/env bash
# On the GPU machine: bash run.sh OUTDIR (from this directory or anywhere).
set -euo pipefail
cd "$(dirname "$0")"
nvcc --version | tail -2
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc -arch=sm_90 -O2 -o /tmp/scalar-driver driver.cu
cuobjdump -sass /tmp/scalar-driver > "$1/sass.txt" || true
/tmp/scalar-driver "$1"
