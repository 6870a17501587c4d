#!/bin/bash
# Issue 12's measurement, on the GPU machine: 40 producers at 1080p30 into
# one show on -backend cuda, with the return queue (browser_frame_queue 9:
# return queue 3) and without (browser_frame_queue 3: return queue 0), the
# two shows side by side in the same window, first with memfd buffers, then
# with CUDA buffers (onair producer -gpu). The producers' pools behave like
# Chromium's (two idle at most, the rest destroyed).
#
#   ./run.sh OUT [WINDOW_S] [WARMUP_S]
#
# Run it in a directory holding onair (built here: see BENCHMARKS.md),
# browser-40.hcl and this script. For each MODE (memfd, cuda) and frame
# queue FQ (9, 3) it writes OUT/MODE-fqFQ.json and .txt (onair bench: CPU,
# threads, deadlines, browser imports a second) and OUT/MODE-fqFQ-producer.txt
# (frames sent, buffers made and destroyed over the whole run).
#
# For a smoke run elsewhere: SOURCES (40), SIZE (1920x1080), BACKEND (cuda)
# and MODES ("memfd cuda"), e.g. SOURCES=2 SIZE=320x180 BACKEND=cpu
# MODES=memfd ./run.sh out 3 2 on a machine without a GPU.
set -u
out=${1:?usage: run.sh OUT [WINDOW_S] [WARMUP_S]}
window=${2:-60}
warmup=${3:-10}
sources=${SOURCES:-40}
size=${SIZE:-1920x1080}
backend=${BACKEND:-cuda}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
nproc > "$out/machine.txt"
uname -a >> "$out/machine.txt"
for mode in ${MODES:-memfd cuda}; do
	gpuflag=""
	[ "$mode" = cuda ] && gpuflag="-gpu"
	pids=()
	for fq in 9 3; do
		dir=$(mktemp -d /tmp/oair-bench.XXXXXX)
		mkdir "$dir/sock"
		cp "$here/browser-40.hcl" "$dir/"
		"$here/onair" producer -pattern $gpuflag -pool chromium -count "$sources" -size "$size" \
			-socket "$dir/sock/gfx%d.sock" >"$out/$mode-fq$fq-producer.txt" 2>"$out/$mode-fq$fq-producer.log" &
		echo $! >"$dir/producer.pid"
		"$here/onair" bench -backend "$backend" -warmup "${warmup}s" -window "${window}s" -var frame_queue=$fq -var sources="$sources" \
			-json "$out/$mode-fq$fq.json" "$dir/browser-40.hcl" >"$out/$mode-fq$fq.txt" 2>&1 &
		pids+=($!)
		echo "$dir" >>"$out/dirs-$mode"
	done
	for p in "${pids[@]}"; do wait "$p"; done
	while read -r dir; do
		kill -INT "$(cat "$dir/producer.pid")" 2>/dev/null
	done <"$out/dirs-$mode"
	wait
	while read -r dir; do rm -rf "$dir"; done <"$out/dirs-$mode"
	rm -f "$out/dirs-$mode"
done
