#!/bin/bash
# The CUDA backend on the H200: its GPU tests, then the raw-upload
# benchmarks, each a real `onair run -backend cuda` with its summary.
set -u
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
cd "$(dirname "$0")"
O=${OUT:-out}; mkdir -p "$O"
nvidia-smi --query-gpu=name,driver_version --format=csv > "$O/gpu.txt" 2>&1
nproc >> "$O/gpu.txt"
# 1. The backend's GPU tests: byte-exact uploads in every mode, and a show
#    drawn on the GPU equal to the CPU backend's drawing of the same pictures.
timeout 240 ./cuda.test -test.v -test.count=1 > "$O/gpu-tests.txt" 2>&1; echo "rc=$?" >> "$O/gpu-tests.txt"
# 2. Media: eight 2-second 1080p NV12 clips, generated here.
mkdir -p m
for i in 0 1 2 3 4 5 6 7; do ./onair media -size 1920x1080 -rate 30 -frames 60 -pattern ramp -id $((i+1)) -o m/raw$i.nv12 >/dev/null; done
run() { # name duration vars...
  local name=$1 d=$2; shift 2
  echo "== $name $*" >> "$O/runs.txt"
  timeout $(( ${d%s} + 60 )) ./onair run -backend cuda -quiet -listen '' -duration "$d" "$@" bench.hcl > "$O/$name.txt" 2>&1
  echo "rc=$?" >> "$O/$name.txt"
  grep -E "^(backend|Process|  bus|  source.vt\[0\])" "$O/$name.txt" >> "$O/runs.txt"
}
# 3. The seeds' isolated benchmark: 8 raw 1080p30 sources, 30 s per mode.
for mode in hwupload pinned direct resident; do run iso-$mode 30s -var mode=$mode -var n=8; done
# 4. The seeds' raw share: 47 sources, resident and direct, 60 s each.
for mode in resident direct; do run raw47-$mode 60s -var mode=$mode -var n=47; done
# 5. 22 buses at 30 fps (a Program and 21 AUX, 16 scaled layers each).
run buses22 20s -var mode=direct -var n=47 -var aux=21
ls -la m > "$O/media.txt"
