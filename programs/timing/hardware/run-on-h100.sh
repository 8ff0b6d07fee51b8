#!/usr/bin/env bash
# Measures programs/timing/ on the GPU machine: the occupancy table, the device's limits, every microbenchmark by its own clocks and under Nsight Compute, and the SASS of every kernel.
#
#   bash programs/timing/hardware/run-on-h100.sh OUTDIR
#
# It needs nvcc, cuobjdump, ncu and a python3 with CuPy (all on the GPU
# machines of this project). It writes into OUTDIR: log.txt (the machine, the
# tools' versions, the compilers' register reports and every step's output),
# h100-occupancy.csv and h100-device.txt (from occupancy/occupancy.cu),
# all.sass (cuobjdump -sass of every microbenchmark, compiled by ptxas from
# the committed PTX), sass-loops.csv (hardware/sass-loops.py on it),
# timed.csv (micro.py timed), ncu.csv (ncu's counters) and ncu-clocks.csv
# (the kernels' own clocks under ncu). `micro.py merge` then makes
# h100-micro.csv of the last four.
set -u
OUTDIR=${1:?usage: run-on-h100.sh OUTDIR}
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
TIMING=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
LOG="$OUTDIR/log.txt"
exec > >(tee -a "$LOG") 2>&1

echo "== machine"
date -u
nvidia-smi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.limit --format=csv
nvcc --version
ncu --version
python3 -c 'import cupy; print("cupy", cupy.__version__, "CUDA runtime", cupy.cuda.runtime.runtimeGetVersion())'

echo "== occupancy"
nvcc -arch=sm_90 -O3 -Xptxas -v -o "$WORK/occupancy" "$TIMING/occupancy/occupancy.cu" 2>&1 | grep -E "Compiling entry|Used"
"$WORK/occupancy" "$OUTDIR/h100-occupancy.csv" "$OUTDIR/h100-device.txt"
cat "$OUTDIR/h100-device.txt"

echo "== cubins from the committed PTX, and their SASS"
mkdir -p "$WORK/cubins"
: > "$OUTDIR/all.sass"
for ptx in "$TIMING"/*.ptx; do
  name=$(basename "$ptx" .ptx)
  nvcc -cubin -arch=sm_90 -Xptxas -v -o "$WORK/cubins/$name.cubin" "$ptx" 2>&1 | grep -E "Compiling entry|Used"
  cuobjdump -sass "$WORK/cubins/$name.cubin" >> "$OUTDIR/all.sass"
done
python3 "$TIMING/hardware/sass-loops.py" < "$OUTDIR/all.sass" > "$OUTDIR/sass-loops.csv"
grep ',yes,' "$OUTDIR/sass-loops.csv"
nvcc -cubin -arch=sm_90 -o "$WORK/clock-rate.cubin" "$TIMING/hardware/clock-rate.cu"

echo "== timed by the kernels' own clocks"
python3 "$TIMING/hardware/micro.py" timed --cubins "$WORK/cubins" --clock-cubin "$WORK/clock-rate.cubin" --out "$OUTDIR/timed.csv"

echo "== under Nsight Compute"
METRICS=sm__cycles_active.max,sm__cycles_elapsed.max,gpc__cycles_elapsed.max,smsp__inst_executed.sum,sm__cycles_elapsed.avg.per_second,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
ncu --csv --print-units base --metrics "$METRICS" --kernel-name "$(python3 "$TIMING/hardware/micro.py" kernels)" \
  --log-file "$OUTDIR/ncu.csv" python3 "$TIMING/hardware/micro.py" ncu --cubins "$WORK/cubins" --out "$OUTDIR/ncu-clocks.csv"
echo "ncu exit status $?"
grep -c '"sm__cycles_active.max"' "$OUTDIR/ncu.csv"
date -u
