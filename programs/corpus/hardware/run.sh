#!/usr/bin/env bash
# On the GPU machine, from the repository root: bash programs/corpus/hardware/run.sh OUTDIR
set -euo pipefail
cd "$(dirname "$0")"
nvcc -arch=sm_90 -O2 -o /tmp/wrm-driver driver.cu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
/tmp/wrm-driver "$1"
