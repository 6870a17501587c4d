#!/bin/bash
# The decode loops' batched copies on the GPU machine (nodes/cuda/BENCHMARKS.md,
# "Batched copies"): builds the compositor PTX with the copy kernels as
# `make ptx` does, runs the GPU tests against it (ONAIR_CUDA_PTX: the copy
# kernel on the GPU against plain copies, the NVDEC byte-exact tests with
# the round's copies in one launch and picture by picture, the compositor
# against package cpu), then BenchmarkNVDEC with ONAIR_NVDEC_COPY=batch,
# =each and the decoders created with PreferCUDA (ONAIR_NVDEC_CREATE=cuda, a
# switch of that run's binary, removed since: PreferCUVID stays; a binary
# without it measures PreferCUVID there too), alternating, and once more
# with ONAIR_NVDEC_CLOCKS. .device/copies holds
# cuda.test (go test -c ./cuda/), src/cuda/{compositor.h,kernels/compositor.cu}
# and clip0.hevc (a 1080p HEVC clip: make own-parser-bench); carry it and
# run this from the repository root there. Results under $OUT/r.
set -u
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
D=$PWD/.device/copies; O=${OUT:-out}/r; mkdir -p "$O"
T0=$SECONDS
left() { echo $(( ${BUDGET:-225} - (SECONDS - T0) )); }
log() { echo "[$((SECONDS - T0)) s] $*" >> "$O/steps.txt"; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; } > "$O/gpu.txt" 2>&1
# 1. The PTX (the Makefile's ptx target, step by step; ptxas's check runs
#    beside the tests).
S=$D/src/cuda
( cd "$S" && nvcc --version | tail -2 && nvcc -ptx -arch=compute_75 -DONAIR_MIN_BLOCKS=4 -o kernels/compositor.ptx kernels/compositor.cu &&
  sed -i -e '/^\s*\.pragma "used_bytes_mask/d' -e 's/^\.version .*/.version 7.0/' kernels/compositor.ptx &&
  sha256sum kernels/compositor.cu compositor.h > kernels/compositor.sha256 ) > "$O/ptx.txt" 2>&1
echo "rc=$?" >> "$O/ptx.txt"; log ptx
cp "$S/kernels/compositor.ptx" "$S/kernels/compositor.sha256" "$O/"
( cd "$S" && ptxas -arch=sm_75 -o /dev/null kernels/compositor.ptx; echo "rc=$?" ) > "$O/ptxas.txt" 2>&1 &
[ -s "$S/kernels/compositor.ptx" ] && export ONAIR_CUDA_PTX=$S/kernels/compositor.ptx
cd cuda
T=$D/cuda.test
exact='TestNVDECIsByteExact$|TestNVDECOwnParserIsByteExact$|TestNVDECLoopOnIsByteExact$'
# 2. The GPU tests (the stand-in's would build the tree's stand-in, not
#    this binary's): batched copies (the default), then picture by picture.
gpu='TestNVDEC(Caps|IsByteExact|RefusesWhatDoesNotFit|LoopOnIsByteExact|OwnParser(MatchesNVIDIAs|IsByteExact|DecodesAsNVIDIAs))$|CopyKernelOnTheGPU|Compositor|Transitions|PictureKernel|Events|DrawAllocates'
timeout 90 "$T" -test.run "$gpu" -test.v -test.count=1 > "$O/tests.txt" 2>&1
echo "rc=$?" >> "$O/tests.txt"; log tests
ONAIR_NVDEC_COPY=each timeout 30 "$T" -test.run "$exact" -test.v -test.count=1 > "$O/tests-each.txt" 2>&1
echo "rc=$?" >> "$O/tests-each.txt"; log tests-each
# 3. BenchmarkNVDEC, 300 frames a stream: each variant in turn, twice.
export ONAIR_NVDEC_BENCH=$D/clip0.hevc
bench() { # name, sub-benchmarks, then the environment
  local f=$O/bench-$1.txt subs=$2; shift 2
  for sub in $subs; do
    local l; l=$(left)
    [ "$l" -gt 20 ] || { echo "skipped $sub: out of time" >> "$f"; continue; }
    env "$@" timeout $(( l < 45 ? l : 45 )) "$T" -test.run '^$' -test.bench "NVDEC\$/$sub" -test.benchtime 300x -test.count 1 >> "$f" 2>&1
    echo "rc=$?" >> "$f"
  done
  log "bench $f $*"
}
both='streams=105$/threads=2$ streams=7$/threads=1$'
for i in 1 2; do
  bench batch "$both" ONAIR_NVDEC_COPY=batch
  bench each "$both" ONAIR_NVDEC_COPY=each
  bench prefercuda "$both" ONAIR_NVDEC_COPY=batch ONAIR_NVDEC_CREATE=cuda
  if [ $i = 1 ]; then
    ONAIR_NVDEC_CREATE=cuda timeout 30 "$T" -test.run "$exact" -test.v -test.count=1 > "$O/tests-prefercuda.txt" 2>&1
    echo "rc=$?" >> "$O/tests-prefercuda.txt"; log tests-prefercuda
  fi
done
# 4. Where the loops' CPU goes, by call (the clocks cost system calls of
#    their own: not the figures above).
bench clocks-batch 'streams=105$/threads=2$' ONAIR_NVDEC_COPY=batch ONAIR_NVDEC_CLOCKS=1
bench clocks-each 'streams=105$/threads=2$' ONAIR_NVDEC_COPY=each ONAIR_NVDEC_CLOCKS=1
wait
log done
