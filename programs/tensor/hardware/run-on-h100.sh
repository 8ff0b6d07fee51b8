#!/usr/bin/env bash
# Everything measured on the H100 in one go (see README.md). Run from a copy
# of programs/tensor/hardware with the tensor sources one directory up; the
# results go to $OUT.
set -x
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt"
nvcc --version >> "$OUT/gpu.txt"
nvcc -arch=sm_90 -O2 -o mma-probe mma-probe.cu 2> "$OUT/probe-build.txt" || cat "$OUT/probe-build.txt"
mkdir -p "$OUT/probe"
./mma-probe "$OUT/probe" > "$OUT/probe/timing.txt" 2>&1
cat "$OUT/probe/timing.txt"
cuobjdump -sass mma-probe | grep -E "HMMA|IMMA|DMMA|LDSM" | sed 's/^ *//' | awk '{$1="";print}' | sort | uniq -c > "$OUT/probe/sass-opcodes.txt"
nvcc -arch=sm_90 -lineinfo -O2 -o gemm-mma launch.cu -DSOURCE='"../gemm-mma.cu"' -DGEMM_MMA
nvcc -arch=sm_90 -lineinfo -O2 -o wmma-gemm launch.cu -DSOURCE='"../wmma-gemm.cu"' -DWMMA_GEMM
nvcc -arch=sm_90 -lineinfo -O2 -o attention launch.cu -DSOURCE='"../attention-forward.cu"' -DATTENTION
for run in "gemm-mma gemm_mma_swizzled" "gemm-mma gemm_mma_plain" "wmma-gemm wmma_gemm" "attention attention_forward"; do
  set -- $run
  ./$1 $2
  ncu --section SourceCounters --import-source yes -k $2 -f -o "$OUT/$2" ./$1 $2 > /dev/null 2>&1
  ncu -i "$OUT/$2.ncu-rep" --page source --csv --print-source cuda > "$OUT/$2.cuda.csv" 2>&1
  ncu -i "$OUT/$2.ncu-rep" --page source --csv --print-source sass > "$OUT/$2.sass.csv" 2>&1
  ncu -k $2 --metrics smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum ./$1 $2 > "$OUT/$2.metrics.txt" 2>&1
  ncu -k $2 --metrics smsp__sass_inst_executed_op_ldsm.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum ./$1 $2 >> "$OUT/$2.metrics.txt" 2>&1
  cuobjdump -sass $1 > "$OUT/$1.sass.txt"
done
ls -la "$OUT"
