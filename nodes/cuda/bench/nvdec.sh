#!/bin/bash
# NVDEC in the CUDA backend on the H200: the byte-exact show test, then
# 105 HEVC 1080p30 sources in a show measured with `onair bench` for each
# decoder placement. Run from the repository root on the GPU machine with
# ONAIR (the binary), TEST (nodes/cuda's test binary) and MEDIA (a folder
# with clip0.hevc and clip1.hevc from `onair media -size 1920x1080
# -frames 150 -gop 30 -bitrate 8M -noise 30`); results go to $OUT.
set -u
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
O=${OUT:-out}; mkdir -p "$O"
ONAIR=$(realpath "$ONAIR"); TEST=$(realpath "$TEST"); MEDIA=$(realpath "$MEDIA")
nvidia-smi --query-gpu=name,driver_version --format=csv > "$O/gpu.txt" 2>&1
nproc >> "$O/gpu.txt"
# 1. Every decoded picture of a show equals ffmpeg's, each routing and placement.
(cd nodes/cuda && timeout 150 "$TEST" -test.v -test.count=1 -test.run 'NVDECShow' > "$O/nvdec-tests.txt" 2>&1; echo "rc=$?" >> "$O/nvdec-tests.txt")
# 2. 105 sources: bench windows after a warm-up.
cd nodes/cuda/bench
ln -sfn "$MEDIA" media
bench() { # name warmup window vars...
  local name=$1 w=$2 d=$3; shift 3
  echo "== $name $*" >> "$O/bench.txt"
  timeout $(( ${w%s} + ${d%s} + 40 )) "$ONAIR" bench -backend cuda -warmup "$w" -window "$d" -json "$O/$name.json" "$@" nvdec.hcl > "$O/$name.txt" 2>&1
  echo "rc=$?" >> "$O/$name.txt"
  cat "$O/$name.txt" >> "$O/bench.txt"
}
if [ -n "${ONLY:-}" ]; then # some of the runs: ONLY="thread-input thread-demux"
  for r in $ONLY; do
    case $r in
      thread-input) bench thread-input 10s 30s -var placement=thread ;;
      thread-demux) bench thread-demux 10s 20s -var placement=thread -var routing=demux ;;
      loops-demux) bench loops-demux 10s 20s -var routing=demux ;;
      run-stats) timeout 60 "$ONAIR" run -backend cuda -listen '' -duration 30s nvdec.hcl > "$O/run-stats.txt" 2>&1; echo "rc=$?" >> "$O/run-stats.txt" ;;
    esac
  done
  exit 0
fi
bench loops-default 10s 60s
bench thread-input 10s 30s -var placement=thread
bench thread-demux 10s 20s -var placement=thread -var routing=demux
bench loops-demux 10s 20s -var routing=demux
for l in 1 4; do bench loops-$l 10s 20s -var loops=$l; done
# Where a decode loop's time goes (its summary is logged at the end of a run).
timeout 70 "$ONAIR" run -backend cuda -listen '' -duration 30s nvdec.hcl > "$O/run-stats.txt" 2>&1
echo "rc=$?" >> "$O/run-stats.txt"
