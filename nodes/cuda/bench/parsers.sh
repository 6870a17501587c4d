#!/bin/bash
# NVIDIA's HEVC parser against onair's (cuda/hevc), on the GPU machine:
# BenchmarkNVDECParsers (the decode loops alone, unpaced, process CPU a
# frame), then the 105-source show with each parser on one pacing loop and
# Go on three processors (-var procs=3: canvas go_procs), and with NVIDIA's
# on Go's default, each with Go's CPU profile of its window. `make
# own-parser-bench` on a Go machine fills .device/own; carry it and run
# this from the repository root there. Results under $OUT/r.
set -u
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
D=$PWD/.device/own; O=${OUT:-out}/r; mkdir -p "$O"
(cd cuda && ONAIR_NVDEC_BENCH="$D/media/clip0.hevc" timeout 150 "$D/cuda.test" -test.run '^$' -test.bench 'NVDECParsers' -test.benchtime 300x -test.count 3) > "$O/parsers.txt" 2>&1
echo "rc=$?" >> "$O/parsers.txt"
cd nodes/cuda/bench && ln -sfn "$D/media" media
# name:parser:pacing loops:go_procs (empty: Go's default)
for v in nvidia:nvidia:2: nvidia-p1-g3:nvidia:1:3 onair-p1-g3:onair:1:3; do
  IFS=: read -r name p pacing procs <<<"$v"
  timeout 60 "$D/onair" bench -backend cuda -warmup 10s -window 20s -json "$O/bench-$name.json" -cpuprofile "$O/cpu-$name.pprof" -var pacing=$pacing -var parser=$p -var procs=${procs:-0} nvdec.hcl > "$O/bench-$name.txt" 2>&1
  echo "rc=$?" >> "$O/bench-$name.txt"
done
