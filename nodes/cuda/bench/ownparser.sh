#!/bin/bash
# NVDEC with onair's HEVC parser (nvdec_parser = "onair"), on the GPU
# machine: NVIDIA's picture parameters against cuda/hevc's picture by
# picture, both parsers' byte-exact tests against ffmpeg's hashes (package
# cuda, and shows in nodes/cuda with every routing and placement, a file
# that recovers, bad files, examples/decode-mix.hcl), `onair run` of
# examples/decode-mix.hcl, then, when the own parser is byte-exact, the
# 105-source show (nvdec.hcl) in the readings VARIANTS lists, each with
# Go's CPU profile of its window. `make own-parser-bench` on a Go machine
# fills .device/own (the test binaries, onair, 1080p clips, generated
# clips); carry it and run this from the repository root there. Results
# under $OUT/r.
set -u
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
D=$PWD/.device/own; O=${OUT:-out}/r; mkdir -p "$O"
CL="$D/media/clip0.hevc $(ls "$D"/clips/*.hevc | tr '\n' ' ')"
(cd cuda && ONAIR_TEST_CLIPS="$CL" timeout 100 "$D/cuda.test" -test.run 'TestNVDECOwnParserMatchesNVIDIAs|TestNVDECOwnParserDecodesAsNVIDIAs|TestNVDECOwnParserIsByteExact|TestNVDECIsByteExact|TestNVDECLoopOnIsByteExact|TestNVDECPicParams|Copy' -test.v -test.count=1) > "$O/tests.txt" 2>&1
echo "rc=$?" >> "$O/tests.txt"
if [ -x "$D/nodecuda.test" ]; then
  (cd nodes/cuda && timeout 200 "$D/nodecuda.test" -test.run 'TestNVDEC' -test.v -test.count=1) > "$O/show-tests.txt" 2>&1
  echo "rc=$?" >> "$O/show-tests.txt"
fi
# examples/decode-mix.hcl as a user runs it: HEVC and H.264, Annex B and
# MPEG-TS, on NVDEC (the recordings stay on the machine: 100 MB each).
mkdir -p /tmp/decode-mix
timeout 60 "$D/onair" run -backend cuda -listen '' -duration 10s -var out=/tmp/decode-mix examples/decode-mix.hcl > "$O/decode-mix-run.txt" 2>&1
echo "rc=$?" >> "$O/decode-mix-run.txt"
grep -q -- "--- PASS: TestNVDECOwnParserIsByteExact" "$O/tests.txt" || exit 0
cd nodes/cuda/bench && ln -sfn "$D/media" media
# name:parser:pacing loops:go_procs:placement[:decode loops] (go_procs 0:
# Go's default; decode loops 0 or absent: the profile's); WINDOW (20s) is
# each reading's window, after 10 s.
VARIANTS=${VARIANTS:-onair-p1-g3:onair:1:3:decode_loops nvidia-p1-g3:nvidia:1:3:decode_loops onair:onair:2:0:decode_loops nvidia:nvidia:2:0:decode_loops thread:nvidia:2:0:thread}
WINDOW=${WINDOW:-20s}
for v in $VARIANTS; do
  IFS=: read -r name p pacing procs placement loops <<<"$v"
  timeout $(( ${WINDOW%s} + 40 )) "$D/onair" bench -backend cuda -warmup 10s -window "$WINDOW" -json "$O/bench-$name.json" -cpuprofile "$O/cpu-$name.pprof" \
    -var pacing=$pacing -var parser=$p -var procs=$procs -var placement=$placement -var loops=${loops:-0} nvdec.hcl > "$O/bench-$name.txt" 2>&1
  echo "rc=$?" >> "$O/bench-$name.txt"
done
