#!/usr/bin/env bash
# The second H100 run, as it ran (from a folder holding host.cu, cases.cubin,
# probe.cubin and tables/ with the tables of gen_cases.py and gen_probe.py).
set -u
cd "$(dirname "$0")"
R=$PWD/res2
mkdir -p $R
exec > >(tee $R/log.txt) 2>&1
date
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc -O2 -o host host.cu -lcuda || exit 1
P="probe_ld64_same probe_ld128_same probe_ld64_neutral probe_ld128_neutral probe_ld64_targeted probe_ld128_targeted"
./host probe.cubin tables $P || exit 1
timeout 240 ncu --section SourceCounters -o $R/probe -f ./host probe.cubin tables $P > $R/probe-ncu.log 2>&1
echo "probe rc=$?"; tail -2 $R/probe-ncu.log
for k in $P; do
  timeout 60 ncu -i $R/probe.ncu-rep --page source --csv --print-source sass -k $k > $R/$k.csv 2> $R/$k.err
  echo "$k rc=$? lines=$(wc -l < $R/$k.csv)"
done
timeout 200 ncu --section SourceCounters -o $R/repeat -f ./host cases.cubin tables cases_ld64 cases_ld128 > $R/repeat-ncu.log 2>&1
echo "repeat rc=$?"
for k in cases_ld64 cases_ld128; do
  timeout 60 ncu -i $R/repeat.ncu-rep --page source --csv --print-source sass -k $k > $R/repeat_$k.csv 2> $R/repeat_$k.err
  echo "repeat $k rc=$? lines=$(wc -l < $R/repeat_$k.csv)"
done
tar czf $OUT/results2.tar.gz -C $R --exclude='*.ncu-rep' .
date
