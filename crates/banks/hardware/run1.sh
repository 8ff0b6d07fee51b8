#!/usr/bin/env bash
# The first H100 run, as it ran (from a folder holding host.cu, cases.cubin,
# tables/ from gen_cases.py, and programs/ with the cubins, sources, launch.cu
# and launches.tsv of programs/ptxas). Measures the single-warp bank cases,
# then the programs/ptxas kernels, with Nsight Compute; $OUT receives tarballs.
set -u
cd "$(dirname "$0")"
R=$PWD/res
mkdir -p $R
exec > >(tee $R/log.txt) 2>&1
date
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
ncu --version | tail -1
nvcc --version | tail -2
NCU="ncu --target-processes all"
M='regex:^(l1tex__data_pipe_lsu_wavefronts_mem_shared|l1tex__data_bank_conflicts_pipe_lsu_mem_shared|smsp__sass_inst_executed_op_shared|smsp__inst_executed_op_shared).*\.sum$'
nvcc -O2 -o host host.cu -lcuda || exit 1
(cd programs && nvcc -O2 -o launch launch.cu -lcuda) || exit 1
./host cases.cubin tables || exit 1
echo "== cases: metrics"
timeout 120 $NCU --metrics "$M" --csv ./host cases.cubin tables > $R/cases-metrics.csv 2> $R/cases-metrics.err
echo "rc=$? lines=$(wc -l < $R/cases-metrics.csv)"
echo "== cases: source counters"
timeout 240 $NCU --section SourceCounters -o $R/cases -f ./host cases.cubin tables > $R/cases-ncu.log 2>&1
echo "rc=$?"; tail -3 $R/cases-ncu.log
for k in cases_ld32 cases_ld64 cases_ld128 cases_st64 cases_st128 cases_popc cases_atom; do
  timeout 60 ncu -i $R/cases.ncu-rep --page source --csv --print-source sass -k $k > $R/$k.csv 2> $R/$k.err
  echo "$k rc=$? lines=$(wc -l < $R/$k.csv)"
done
timeout 60 ncu -i $R/cases.ncu-rep --page source --csv --print-source sass > $R/cases-all.csv 2> $R/cases-all.err
echo "cases-all rc=$? lines=$(wc -l < $R/cases-all.csv)"
head -c 1500 $R/cases_ld64.csv; echo
tar czf $OUT/cases.tar.gz -C $R . 2>/dev/null
echo "== programs: metrics"
cd programs
timeout 90 ./launch launches.tsv . > $R/programs-run.log 2>&1; echo "rc=$?"; tail -2 $R/programs-run.log
timeout 120 $NCU --metrics "$M" --csv ./launch launches.tsv . > $R/programs-metrics.csv 2> $R/programs-metrics.err
echo "rc=$? lines=$(wc -l < $R/programs-metrics.csv)"
echo "== programs: source counters"
timeout 240 $NCU --section SourceCounters --import-source yes -o $R/programs -f ./launch launches.tsv . > $R/programs-ncu.log 2>&1
echo "rc=$?"; tail -3 $R/programs-ncu.log
timeout 60 ncu -i $R/programs.ncu-rep --page source --csv --print-source cuda,sass > $R/programs-source.csv 2> $R/programs-source.err
echo "all rc=$? lines=$(wc -l < $R/programs-source.csv)"
mkdir -p $R/programs
for k in $(grep -v '^#' launches.tsv | cut -f2); do
  timeout 20 ncu -i $R/programs.ncu-rep --page source --csv --print-source sass -k $k > $R/programs/$k.csv 2>/dev/null
done
echo "per-kernel files: $(ls $R/programs | wc -l)"
cd ..
tar czf $OUT/results.tar.gz -C $R --exclude='*.ncu-rep' .
tar czf $OUT/reports.tar.gz -C $R cases.ncu-rep programs.ncu-rep 2>/dev/null
ls -la $OUT
date
