#!/usr/bin/env bash
# Runs the validation launches on the GPU machine, from the bundle that
# `validate.py export` packs:  bash device.sh BUNDLE OUT
#
# It replays every launch once without a profiler (final buffers hashed
# into OUT/hashes.json, those that differ from warpsim's, as
# BUNDLE/expected-hashes.json gives them, packed into OUT/dumps.tar.xz up to
# 14 MiB, per launch the JIT's registers and log in OUT/summary.json), then
# REPEAT times each (default 5) under Nsight Compute with the metrics of
# BUNDLE/metrics.txt (OUT/ncu.csv, its raw page, in base units).
# OUT/environment.txt records the GPU, driver, CUDA and Nsight Compute
# versions and the date. Nsight Compute keeps its default clock and cache
# control: the GPU's clocks locked to base, and caches flushed before each
# profiled launch.
set -euo pipefail
bundle=$(cd "$1" && pwd)
out=$2
mkdir -p "$out"
work=$(mktemp -d)
python3 -c 'import lzma, sys, tarfile; tarfile.open(fileobj=lzma.open(sys.argv[1])).extractall(sys.argv[2], filter="data")' \
  "$bundle/exports.tar.xz" "$work"
exports=()
while read -r name; do exports+=("$work/exports/$name"); done < "$bundle/names.txt"

# Nsight Compute: on the PATH, or where CUDA installs it.
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || true)
{
  date -u '+date: %Y-%m-%dT%H:%M:%SZ'
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,memory.total --format=csv
  nvidia-smi > "$work/nvidia-smi.txt"
  head -4 "$work/nvidia-smi.txt"
  "$ncu" --version
  nvcc --version
  python3 --version
} > "$out/environment.txt" 2>&1 || true

# The outputs, without a profiler.
python3 "$bundle/launch.py" "${exports[@]}" --dump "$work/dumps" --summary "$out/summary.json" \
  > "$out/launch.log" 2>&1 || echo "launch.py failed: see launch.log" >&2
python3 - "$work/dumps" "$out" "$bundle/expected-hashes.json" <<'EOF'
import hashlib, json, lzma, os, sys, tarfile
dumps, out = sys.argv[1], sys.argv[2]
with open(sys.argv[3]) as f:
    expected = json.load(f)
hashes, packed = {}, 0
with lzma.open(os.path.join(out, "dumps.tar.xz"), "wb", preset=6) as compressed:
    with tarfile.open(fileobj=compressed, mode="w") as tar:
        for name in sorted(os.listdir(dumps)):
            hashes[name] = {}
            for file in sorted(os.listdir(os.path.join(dumps, name))):
                path = os.path.join(dumps, name, file)
                with open(path, "rb") as f:
                    hashes[name][file] = hashlib.sha256(f.read()).hexdigest()
                size = os.path.getsize(path)
                if hashes[name][file] != expected.get(name, {}).get(file) and packed + size <= 14 << 20:
                    tar.add(path, arcname=os.path.join("dumps", name, file))
                    packed += size
with open(os.path.join(out, "hashes.json"), "w") as f:
    json.dump(hashes, f, indent=1)
EOF

# The counters, one profiled kernel per launch.
"$ncu" --csv --page raw --print-units base --target-processes all \
  --metrics "$(cat "$bundle/metrics.txt")" \
  python3 "$bundle/launch.py" --repeat "${REPEAT:-5}" "${exports[@]}" > "$out/ncu.csv" 2> "$out/ncu.log" \
  || echo "ncu failed: see ncu.log" >&2
rm -rf "$work"
