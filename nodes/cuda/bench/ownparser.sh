#!/bin/bash
# HEVC on NVDEC without NVIDIA's parser (cuda/hevc), on the GPU machine:
# NVIDIA's picture parameters against cuda/hevc's, picture by picture, the
# own path's byte-exact test against ffmpeg's hashes, and, when that
# passes, the 105-source show with NVIDIA's parser and with onair's
# (-var parser=onair: canvas nvdec_parser) side by side (CPU by NVIDIA
# call in both: ONAIR_NVDEC_CLOCKS). `make own-parser-bench` on a Go
# machine fills .device/own (the test binary, onair, 1080p clips,
# generated clips); carry it and run this from the repository root
# there. Results under $OUT/r.
set -u
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
D=$PWD/.device/own; O=${OUT:-out}/r; mkdir -p "$O"
CL="$D/media/clip0.hevc $(ls "$D"/clips/*.hevc | tr '\n' ' ')"
(cd cuda && ONAIR_TEST_CLIPS="$CL" timeout 100 "$D/cuda.test" -test.run 'TestNVDECOwnParserMatchesNVIDIAs|TestNVDECOwnParserDecodesAsNVIDIAs|TestNVDECOwnParserIsByteExact|TestNVDECIsByteExact|TestNVDECPicParams' -test.v -test.count=1) > "$O/tests.txt" 2>&1
echo "rc=$?" >> "$O/tests.txt"
if grep -q -- "--- PASS: TestNVDECOwnParserIsByteExact" "$O/tests.txt"; then
  cd nodes/cuda/bench && ln -sfn "$D/media" media
  # name:parser:pacing loops:go_procs (empty: Go's default)
  for v in onair:onair:2: nvidia:nvidia:2: onair-p1-g2:onair:1:2 onair-p1-g3:onair:1:3; do
    IFS=: read -r name p pacing procs <<<"$v"
    ONAIR_NVDEC_CLOCKS=1 timeout 60 "$D/onair" bench -backend cuda -warmup 10s -window 20s -json "$O/bench-$name.json" -var pacing=$pacing -var parser=$p -var procs=${procs:-0} nvdec.hcl > "$O/bench-$name.txt" 2>&1
    echo "rc=$?" >> "$O/bench-$name.txt"
  done
fi
