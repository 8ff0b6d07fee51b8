#!/usr/bin/env bash
# Measures the launches of programs/timing/tails_*.toml on a GPU, as
# h200-tails.txt records them: each launch 5 times under Nsight Compute
# (sm__cycles_active.max, the instructions, the kernel's clock64 cycles).
#
#   bash programs/timing/hardware/run-tails.sh export DIR     # here: warpsim export of every launch
#   bash programs/timing/hardware/run-tails.sh measure DIR OUT # on the GPU machine
set -euo pipefail
mode=${1:?export or measure}
dir=${2:?a directory}
here=$(cd "$(dirname "$0")" && pwd)
if [ "$mode" = export ]; then
  mkdir -p "$dir"
  for launch in "$here"/../tails_*.toml; do
    name=$(basename "$launch" .toml)
    cargo run --release -q -p warpsim -- export "$launch" "$dir/$name" --config "$here/../../h200.toml" > /dev/null
  done
  exit 0
fi
out=${3:?an output directory}
mkdir -p "$out"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
"$ncu" --csv --page raw --print-units base \
  --metrics sm__cycles_active.max,gpc__cycles_elapsed.max,smsp__inst_executed.sum \
  python3 "$here/launch.py" $(ls -d "$dir"/* | sort) --repeat 5 --dump "$out/dump" > "$out/ncu.csv"
python3 - "$dir" "$out" <<'PY'
import csv, os, struct, sys
exports, out = sys.argv[1], sys.argv[2]
names = sorted(os.listdir(exports))
rows = [row for row in csv.reader(open(os.path.join(out, "ncu.csv"))) if row]
head = next(row for row in rows if "ID" in row and "Kernel Name" in row)
launches = [dict(zip(head, row)) for row in rows if len(row) == len(head) and row[0].isdigit()]
for index, name in enumerate(names):
    runs = launches[index * 5:(index + 1) * 5]
    active = "/".join(run["sm__cycles_active.max"].replace(",", "") for run in runs)
    instructions = runs[0]["smsp__inst_executed.sum"].replace(",", "")
    path = os.path.join(out, "dump", name, "cycles.bin")
    data = open(path, "rb").read() if os.path.exists(path) else b""
    clock = "/".join(map(str, struct.unpack("<%dQ" % (len(data) // 8), data))) or "-"
    print(f"{name} runN active={active} sass_instructions={instructions} clock={clock}")
PY
