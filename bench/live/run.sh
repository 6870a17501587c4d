#!/usr/bin/env bash
# Live sources under load (issue 24): N srt listener sources on BACKEND
# (default cpu), each fed by `onair send -loop` over loopback, measured by
# `onair bench`; then the same show from files, for the ratio.
#   bench/live/run.sh [N] [CLIP.ts]     (defaults: 16, a 640x360 HEVC clip made by onair media)
# Needs libsrt (libsrt1.5-openssl), and ffmpeg on the cpu backend (it
# decodes with it). The seeds' show with its HEVC sources live, on the GPU
# machine: bench/seeds/run.sh MODE=live (make live-bench).
set -euo pipefail
n=${1:-16}
dir=$(mktemp -d)
bin=${ONAIR:-bin/onair}
clip=${2:-$dir/clip.ts}
[ -f "$clip" ] || "$bin" media -size 640x360 -frames 300 -kind ts -bitrate 2M -o "$clip"
show() { # $1: live | file
  printf 'show {\n  name = "live-%s"\n  size = "640x360"\n  frame_rate = "30"\n}\n' "$1"
  for i in $(seq 0 $((n-1))); do
    if [ "$1" = live ]; then
      printf 'source "srt" "s%d" {\n  port = %d\n}\n' "$i" $((20000+i))
    else
      printf 'source "hevc_file" "s%d" {\n  path = "%s"\n}\n' "$i" "$clip"
    fi
  done
  printf 'scene "grid" {\n'
  for i in $(seq 0 $((n-1))); do printf '  layer {\n    source = source.s%d\n  }\n' "$i"; done
  printf '}\nbus "program" "pgm" {\n  scene = scene.grid\n}\noutput "null" "pgm" {\n  bus = bus.pgm\n}\n'
}
show live > "$dir/live.hcl"
show file > "$dir/file.hcl"
pids=()
for i in $(seq 0 $((n-1))); do
  "$bin" send -loop "srt://127.0.0.1:$((20000+i))" "$clip" 2>/dev/null & pids+=($!)
done
"$bin" bench -backend "${BACKEND:-cpu}" -window "${WINDOW:-20s}" -json "$dir/live.json" "$dir/live.hcl"
for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
"$bin" bench -backend "${BACKEND:-cpu}" -window "${WINDOW:-20s}" -json "$dir/file.json" "$dir/file.hcl"
"$bin" bench -compare "$dir/file.json" "$dir/live.json"
echo "results in $dir"
