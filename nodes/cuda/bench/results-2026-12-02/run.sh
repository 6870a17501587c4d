#!/bin/bash
# One device call: the GPU tests of the merged tree, BenchmarkDraw, and issue 23's timing run.
set -u
ROOT=$(pwd)
G=$ROOT/.device/gpu
T=$ROOT/.device/timing
xz -dk $G/cuda.test.xz $G/nodescuda.test.xz && xz -dc $G/onair.xz > $T/onair && chmod +x $G/*.test $T/onair
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/gpu.txt 2>&1
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
S=$(date +%s)
( cd cuda && ONAIR_TEST_CLIPS=$T/media/clip0.hevc timeout 150 $G/cuda.test -test.v -test.count=1 > $OUT/cuda-tests.txt 2>&1; echo "rc=$? $(( $(date +%s)-S ))s" >> $OUT/cuda-tests.txt )
S=$(date +%s)
( cd nodes/cuda && timeout 130 $G/nodescuda.test -test.v -test.count=1 > $OUT/nodecuda-tests.txt 2>&1; echo "rc=$? $(( $(date +%s)-S ))s" >> $OUT/nodecuda-tests.txt )
( cd cuda && timeout 45 $G/cuda.test -test.run '^$' -test.bench 'Draw$' -test.benchtime 2s > $OUT/bench-draw.txt 2>&1; echo "rc=$?" >> $OUT/bench-draw.txt )
S=$(date +%s)
mkdir -p $OUT/timing
MODE=all MINUTES=1.5 WARMUP=15 LOOPS_S=30 STARTUP_S=20 OUT=$OUT/timing timeout 250 bash bench/timing/run.sh > $OUT/timing-run.txt 2>&1; echo "rc=$? $(( $(date +%s)-S ))s" >> $OUT/timing-run.txt
cp $OUT/timing/summary.txt $OUT/timing-summary.txt 2>/dev/null; cd $OUT && ls timing | head -50 > timing-files.txt && tar czf timing.tgz timing && rm -rf timing
