#!/bin/bash
# Runs every launch of hardware/launches.txt on the GPU: once plainly under
# `timeout` (a kill = "hangs") and once under compute-sanitizer's synccheck.
# Usage (from the repository root): bash programs/barriers/hardware/run.sh OUTDIR
set -u
export PATH=/usr/local/cuda/bin:$PATH
here=$(cd "$(dirname "$0")" && pwd)
outdir=${1:-/tmp/barriers-hw}
mkdir -p "$outdir/parts"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$outdir/device.txt" 2>&1
nvcc --version | tail -2 >> "$outdir/device.txt"
compute-sanitizer --version | head -2 >> "$outdir/device.txt" 2>&1
nvcc -arch=sm_90 -lineinfo -o "$outdir/driver" "$here/driver.cu" > "$outdir/build.txt" 2>&1 || { cat "$outdir/build.txt"; exit 1; }
limited() {  # SECONDS CMD...: runs CMD in its own process group; kills that group after SECONDS (status 124)
  local secs=$1 pid i; shift
  setsid "$@" &
  pid=$!
  for ((i = 0; i < secs * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || { wait "$pid"; return $?; }
    sleep 0.1
  done
  kill -TERM -- "-$pid" 2>/dev/null; sleep 1; kill -KILL -- "-$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  return 124
}
one() {  # launch kernel grid block
  local launch=$1 kernel=$2 grid=$3 block=$4 rc
  {
    echo "### $launch: $kernel<<<$grid, $block>>>"
    limited 8 "$outdir/driver" "$kernel" "$grid" "$block"; rc=$?
    if [ $rc = 124 ] || [ $rc = 137 ]; then echo "RESULT: hangs (killed after 8 s)"; else echo "RESULT: exit $rc"; fi
    echo "--- compute-sanitizer --tool synccheck"
    limited 20 compute-sanitizer --tool synccheck --print-limit 1000 "$outdir/driver" "$kernel" "$grid" "$block" > "$outdir/parts/$launch.sc" 2>&1; rc=$?
    head -24 "$outdir/parts/$launch.sc"
    echo "--- synccheck: $(grep -c 'Barrier error\|Invalid arguments\|error detected' "$outdir/parts/$launch.sc") error reports; distinct (message, location):"
    awk '/^========= [A-Z]/ {msg=$0; sub(/^========= /, "", msg)} /^=========  +at / {loc=$0; sub(/^=========  +at /, "", loc); sub(/\+0x[0-9a-f]+/, "", loc); print msg " @ " loc}' "$outdir/parts/$launch.sc" | sort | uniq -c | head -12
    if [ $rc = 124 ] || [ $rc = 137 ]; then echo "SYNCCHECK: hangs (killed after 20 s)"; else echo "SYNCCHECK: exit $rc"; fi
    echo
  } > "$outdir/parts/$launch.txt" 2>&1
}
export -f one limited
export outdir
grep -v '^#' "$here/launches.txt" | xargs -P 4 -L 1 bash -c 'one "$@"' _
cat "$outdir/device.txt" > "$outdir/results.txt"
grep -v '^#' "$here/launches.txt" | while read -r launch rest; do cat "$outdir/parts/$launch.txt"; done >> "$outdir/results.txt"
