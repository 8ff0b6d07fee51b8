#!/usr/bin/env bash
# On the H100, from programs/tensor/hardware (or a copy of it beside the
# kernels): bash run-async.sh OUTDIR. Builds the driver, runs each kernel,
# profiles each with Nsight Compute's SourceCounters and prints the source
# page (CUDA and SASS) as CSV, and dumps the SASS.
set -uo pipefail
out="$1"
nvcc -arch=sm_90 -O3 -lineinfo -o /tmp/async-driver async-driver.cu 2>&1 | grep -v "warning #550\|state;\|\^\|^$\|Remark" 
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt"
ncu --version >> "$out/gpu.txt"
cuobjdump -sass /tmp/async-driver > "$out/sass.txt"
for kernel in async_gemm async_stale_read pipeline_mbarrier mbarrier_ops; do
  /tmp/async-driver $kernel "$out"
  ncu --section SourceCounters --import-source yes -k $kernel -f -o /tmp/rep-$kernel /tmp/async-driver $kernel /tmp > /dev/null 2>&1
  ncu -i /tmp/rep-$kernel.ncu-rep --page source --csv --print-source cuda > "$out/$kernel.cuda.csv" 2>&1
  ncu -i /tmp/rep-$kernel.ncu-rep --page source --csv --print-source sass > "$out/$kernel.sass.csv" 2>&1
  ncu -i /tmp/rep-$kernel.ncu-rep --page details --csv > "$out/$kernel.details.csv" 2>&1
done
cd "$out" && tar czf ../async-results.tar.gz . && rm -f ./* && mv ../async-results.tar.gz .
