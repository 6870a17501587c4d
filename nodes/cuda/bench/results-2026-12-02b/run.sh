#!/bin/bash
# Device call 1 (2026-12-02 session 2): GPU tests of the merged tree, BenchmarkDraw, BenchmarkPeerCopy, BenchmarkEncoderCPU.
set -u
ROOT=$(pwd); D=$ROOT/.device
cd $D && tar xJf gpu.tar.xz && cd $ROOT
export PATH=$D/ff:$PATH LD_LIBRARY_PATH=/usr/local/nvidia/lib64:$D/ff/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/gpu.txt 2>&1
S=$(date +%s)
( cd cuda && ONAIR_TEST_CLIPS=$D/gpu/clip0.hevc timeout 140 $D/gpu/cuda.test -test.v -test.count=1 > $OUT/cuda-tests.txt 2>&1; echo "rc=$? $(( $(date +%s)-S ))s" >> $OUT/cuda-tests.txt )
S=$(date +%s)
( cd nodes/cuda && timeout 230 $D/gpu/nodescuda.test -test.v -test.count=1 > $OUT/nodecuda-tests.txt 2>&1; echo "rc=$? $(( $(date +%s)-S ))s" >> $OUT/nodecuda-tests.txt )
( cd cuda && timeout 60 $D/gpu/cuda.test -test.run '^$' -test.bench 'Draw$|PeerCopy' -test.benchtime 2s > $OUT/bench-draw-peer.txt 2>&1; echo "rc=$?" >> $OUT/bench-draw-peer.txt )
S=$(date +%s)
( cd delivery && ONAIR_FFMPEG=$D/ff/ffmpeg timeout 100 $D/gpu/delivery.test -test.run '^$' -test.bench EncoderCPU -test.benchtime 2x > $OUT/encoder-cpu.txt 2>&1; echo "rc=$? $(( $(date +%s)-S ))s" >> $OUT/encoder-cpu.txt )
grep -E "^(--- |=== RUN|ok|FAIL|PASS|rc=)" $OUT/nodecuda-tests.txt | grep -v "=== RUN" | tail -60
grep -E "^(--- FAIL|FAIL|ok|PASS|rc=)" $OUT/cuda-tests.txt | tail -10
cat $OUT/bench-draw-peer.txt | grep -E "Benchmark|rc="; grep -E "Benchmark|rc=" $OUT/encoder-cpu.txt
