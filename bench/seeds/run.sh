#!/bin/bash
# Issue 14's measurement on the GPU machine (bench/seeds/README.md):
#
#   MODE=pair  the seeds' show (192 sources at 1080p30), onair's best
#              settings then the seeds' "before" settings in the same run,
#              and the two side by side (about 3.5 minutes);
#   MODE=ramp  the seeds' mix of kinds scaled up step by step at 30 and at
#              60 fps until the first missed deadline, repeat or drop, the limit per
#              rate beside the plan's estimate (at most RAMP_BUDGET_S);
#   MODE=long  one 5-minute reading (the issue's limit reading) of COUNT
#              sources of the mix at FPS, after 20 s (about 6 minutes);
#   MODE=live  issue 24's: the seeds' show (best settings) with its HEVC
#              sources from MPEG-TS files, then the same show with them
#              arriving as LIVE (srt or udp) streams from one `onair send
#              -loop` process each on this machine, and the two compared
#              (about 2.5 minutes). MEDIA holds clip0..3.ts (make
#              live-bench); SRT needs libsrt: LD_LIBRARY_PATH=.../lib.
#   MODE=encoders  the pair's show (PAIR_COUNT sources, best settings,
#              30 fps) with N 1080p30 delivery outputs of Program A beside
#              it for each N in ENC_COUNTS (half recorded to MPEG-TS under
#              OUT/enc, half streamed over UDP to loopback), until a step
#              misses a deadline or drops a frame (bus or encoder): how many
#              encodes the machine sustains (issue 26). Needs an ffmpeg with
#              libx264: FFMPEG_DIR (the device build of
#              ../shared/tools/build-ffmpeg-device.sh: ffmpeg and lib/), else
#              ffmpeg on PATH. Writes OUT/encoders/N.txt|json, limits.txt.
#
# Needs: ONAIR (the onair binary, built on a Go machine: make seeds-bench),
# MEDIA (a directory with clip0..3.hevc: 1080p HEVC, made by make
# seeds-bench). Raw NV12 clips are generated here (RAW, default
# /tmp/onair-seeds-raw; kept while the machine stays warm).
# Writes under OUT (default ./out): everything it measured, partial results
# included, and summary.txt. Every step has a timeout; the producers are
# stopped on every exit.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# Absolute: the show resolves relative paths from its own directory.
ONAIR=$(realpath -m "${ONAIR:-$HERE/../../.device/seeds-bench/onair}")
MEDIA=$(realpath -m "${MEDIA:-$HERE/../../.device/seeds-bench/media}")
RAW=$(realpath -m "${RAW:-/tmp/onair-seeds-raw}") # outside the carried folder, which a call replaces
OUT=$(realpath -m "${OUT:-$HERE/out}")
MODE=${MODE:-pair}
SHOW=$HERE/seeds.hcl
# The pair: the seeds read 20 s a few minutes after start; device time is
# scarce, so 45 s of warm-up (documented in the README).
WARMUP=${WARMUP:-45s}
WINDOW=${WINDOW:-20s}
SWITCH_EVERY=${SWITCH_EVERY:-3s}
PAIR_COUNT=${PAIR_COUNT:-192} # 105 HEVC, 47 raw, 40 browser
PAIR_SETTINGS=${PAIR_SETTINGS:-best before} # a reading of best alone: PAIR_SETTINGS=best
AUX=${AUX:-20}
# The ramp: source counts per rate, 20 s readings after 20 s (the seeds'
# L4: 192 at 30, 99 at 60; the pair reads 192 at 30 already). Each rate
# gets an equal share of what is left of RAMP_BUDGET_S (seconds since the
# script started), and a step starts only if a reading fits in it.
RAMP_30=${RAMP_30:-256 300 340 384 448}
RAMP_60=${RAMP_60:-128 160 192 224}
RAMP_FPS=${RAMP_FPS:-30 60}
RAMP_WARMUP=${RAMP_WARMUP:-20s}
RAMP_WINDOW=${RAMP_WINDOW:-20s}
RAMP_BUDGET_S=${RAMP_BUDGET_S:-420}
COUNT=${COUNT:-300}
FPS=${FPS:-30}
# A dry run of the script's logic on a machine without a GPU:
# BACKEND=cpu WIDTH=640 HEIGHT=360 with 640x360 clips in MEDIA.
BACKEND=${BACKEND:-cuda}
WIDTH=${WIDTH:-1920}
HEIGHT=${HEIGHT:-1080}
# The encoders' steps (MODE=encoders): counts, encoder and preset, and the
# reading of each (every step at most ENC_BUDGET_S seconds from the start).
ENC_COUNTS=${ENC_COUNTS:-1 2 4 8 12 16}
ENC_ENCODER=${ENC_ENCODER:-libx264}
ENC_PRESET=${ENC_PRESET:-veryfast}
ENC_WARMUP=${ENC_WARMUP:-15s}
ENC_WINDOW=${ENC_WINDOW:-20s}
ENC_BUDGET_S=${ENC_BUDGET_S:-480}
FFMPEG_DIR=${FFMPEG_DIR:-}
# BEST_VARIANTS: more readings of best in the pair, each NAME:VAR=VALUE in
# onair's environment (best-NAME.txt), e.g. "procs4:GOMAXPROCS=4".
# Extra -var settings for every bench (e.g. the NVDEC work's decoder
# placement once its canvas key lands): EXTRA_VARS='-var canvas={...}'.
EXTRA_VARS=${EXTRA_VARS:-}

export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
# libsrt (and what it links) carried beside the binary (make live-bench).
[ -d "$(dirname "$ONAIR")/lib" ] && export LD_LIBRARY_PATH=$(dirname "$ONAIR")/lib:$LD_LIBRARY_PATH
mkdir -p "$OUT"
SOCK=$(mktemp -d /tmp/onair-seeds.XXXX)
START=$(date +%s)
PIDS=()
log() { echo "[$(( $(date +%s) - START ))s] $*" | tee -a "$OUT/summary.txt"; }
stop_producers() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	PIDS=()
}
cleanup() { stop_producers; rm -rf "$SOCK"; }
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT TERM

[ -x "$ONAIR" ] || { log "no onair binary at ONAIR=$ONAIR: build it with make seeds-bench on a Go machine and carry .device/seeds-bench"; exit 2; }
CLIP_EXT=hevc
[ "$MODE" = live ] && CLIP_EXT=ts # onair send sends MPEG-TS; the file show reads the same clips
for i in 0 1 2 3; do
	[ -s "$MEDIA/clip$i.$CLIP_EXT" ] || { log "no $MEDIA/clip$i.$CLIP_EXT: make seeds-bench (live-bench for .ts) writes the clips; carry them with the binary"; exit 2; }
done
{
	nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
	echo "cores: $(nproc)"; free -g | head -2; "$ONAIR" version
} > "$OUT/machine.txt" 2>&1

# Four 2-second 1080p NV12 clips, as the seeds' raw sources loop over.
mkdir -p "$RAW"
for i in 0 1 2 3; do
	case " ${MIX:-} " in *" -var n_raw=0 "*) break ;; esac # a mix without raw sources needs no raw clips
	[ "$(stat -c %s "$RAW/raw$i.nv12" 2>/dev/null)" = $(( WIDTH * HEIGHT * 3 / 2 * 60 )) ] && continue
	timeout 120 "$ONAIR" media -size "${WIDTH}x$HEIGHT" -rate 30 -frames 60 -pattern ramp -id $((200 + i)) -o "$RAW/raw$i.nv12" >> "$OUT/media.txt" 2>&1 ||
		{ log "generating $RAW/raw$i.nv12 failed: see media.txt"; exit 1; }
done
log "media ready: $(ls "$MEDIA"/*.$CLIP_EXT | wc -l) HEVC clips, 4 raw clips in $RAW"

# start_producers N FPS: a pattern producer per browser source, each on its
# own socket; they connect whenever onair listens and again after it
# restarts, so one set serves every step at that rate.
start_producers() {
	stop_producers
	[ "$1" -gt 0 ] || return 0
	# One process runs every producer (-count), in CUDA buffers with
	# PRODUCER_GPU=1, memfds otherwise; Chromium's pool (two idle at most).
	local gpu=()
	[ -n "${PRODUCER_GPU:-}" ] && gpu=(-gpu)
	"$ONAIR" producer -pattern "${gpu[@]}" -count "$1" -socket "$SOCK/gfx-%d.sock" -size "${WIDTH}x$HEIGHT" -fps "$2" \
		> /dev/null 2>> "$OUT/producers.log" &
	PIDS+=($!)
}

# mix N: the seeds' 105:47:40 mix scaled to N sources, as -var flags;
# browsers N: its browser sources.
# MIX, when set, replaces the mix at every count (e.g. issue 25's sound
# show: MIX="-var n_hevc=105 -var n_raw=0 -var n_browser=0 -var n_pattern=87").
mix() {
	[ -n "${MIX:-}" ] && { echo "$MIX"; return; }
	local h=$(( ($1 * 105 + 96) / 192 )) r=$(( ($1 * 47 + 96) / 192 ))
	echo "-var n_hevc=$h -var n_raw=$r -var n_browser=$(( $1 - h - r ))"
}
browsers() { mix "$1" | sed 's/.*n_browser=//; s/ .*//'; }
secs() { echo "${1%s}"; }

# bench NAME WARMUP WINDOW ARGS...: one onair bench, its table in NAME.txt
# and its JSON in NAME.json; returns bench's status (3: a missed deadline
# or a drop; 124: timed out).
bench() {
	local name=$1 warm=$2 win=$3; shift 3
	timeout --kill-after=10 $(( $(secs "$warm") + $(secs "$win") + 120 )) \
		"$ONAIR" bench -backend "$BACKEND" -warmup "$warm" -window "$win" -switch-every "$SWITCH_EVERY" -json "$OUT/$name.json" -cpuprofile "$OUT/$name.pprof" \
		-var media="$MEDIA" -var raw_dir="$RAW" -var socket_dir="$SOCK" -var width="$WIDTH" -var height="$HEIGHT" -var aux="$AUX" $EXTRA_VARS "$@" "$SHOW" > "$OUT/$name.txt" 2>&1
	local rc=$?
	echo "rc=$rc" >> "$OUT/$name.txt"
	return $rc
}

pair() {
	log "pair: $PAIR_COUNT sources ($(mix "$PAIR_COUNT")) at 30 fps, $WARMUP warm-up, $WINDOW window, switches every $SWITCH_EVERY"
	start_producers "$(browsers "$PAIR_COUNT")" 30
	for s in $PAIR_SETTINGS; do
		timeout 60 "$ONAIR" plan -backend "$BACKEND" -summary -var settings=$s -var media="$MEDIA" -var raw_dir="$RAW" -var socket_dir="$SOCK" -var width="$WIDTH" -var height="$HEIGHT" -var aux="$AUX" $(mix "$PAIR_COUNT") $EXTRA_VARS "$SHOW" > "$OUT/plan-$s.txt" 2>&1
	done
	for s in $PAIR_SETTINGS; do
		bench "$s" "$WARMUP" "$WINDOW" -var settings=$s -var fps=30 $(mix "$PAIR_COUNT")
		log "  $s: rc=$? $(grep -E '^  CPU ' "$OUT/$s.txt" | tr -s ' ')"
	done
	# Variants of best, each with its environment: BEST_VARIANTS="procs4:GOMAXPROCS=4".
	local v
	for v in ${BEST_VARIANTS:-}; do
		(export "${v#*:}"; bench "best-${v%%:*}" "$WARMUP" "$WINDOW" -var settings=best -var fps=30 $(mix "$PAIR_COUNT"))
		log "  best-${v%%:*} (${v#*:}): $(grep -E '^  CPU |^  threads ' "$OUT/best-${v%%:*}.txt" | tr -s ' ' | tr '\n' ';')"
	done
	stop_producers
	if [ -s "$OUT/before.json" ] && [ -s "$OUT/best.json" ]; then
		"$ONAIR" bench -compare "$OUT/before.json" "$OUT/best.json" > "$OUT/compare.md" 2>&1
		cat "$OUT/compare.md" >> "$OUT/summary.txt"
	fi
}

ramp() {
	local fps steps n last limit why est share step_s rates_left
	mkdir -p "$OUT/ramp"
	rates_left=$(echo $RAMP_FPS | wc -w)
	for fps in $RAMP_FPS; do
		share=$(( (RAMP_BUDGET_S - ($(date +%s) - START)) / rates_left ))
		local rate_end=$(( $(date +%s) + share ))
		rates_left=$(( rates_left - 1 ))
		# What a step takes: a reading, plus starting and stopping a few
		# hundred sources; after the first step, what the previous one took.
		step_s=$(( $(secs "$RAMP_WARMUP") + $(secs "$RAMP_WINDOW") + 30 ))
		steps=RAMP_$fps
		steps=${!steps:-}
		[ -n "$steps" ] || { log "ramp: no counts for $fps fps (set RAMP_$fps)"; continue; }
		local maxn=0
		for n in $steps; do [ "$n" -gt "$maxn" ] && maxn=$n; done
		start_producers "$(browsers "$maxn")" "$fps"
		last=0; limit=""; why="every step was clean"; est=""
		for n in $steps; do
			if [ $(( rate_end - $(date +%s) )) -lt "$step_s" ]; then
				why="this rate's share of RAMP_BUDGET_S ($share s) spent before $n"
				break
			fi
			local t0=$(date +%s)
			bench "ramp/$fps-$n" "$RAMP_WARMUP" "$RAMP_WINDOW" -beyond-capacity -fail-on-miss -var fps="$fps" $(mix "$n")
			local rc=$?
			step_s=$(( $(date +%s) - t0 + 5 )) # the next step is at least as long
			est=$(grep -m1 '^  plan estimate' "$OUT/ramp/$fps-$n.txt" | sed 's/^  plan estimate *//')
			log "  $fps fps, $n sources: rc=$rc $(grep -E '^  (CPU|bus frames) ' "$OUT/ramp/$fps-$n.txt" | tr -s ' ' | tr '\n' ';')"
			case $rc in
			0) last=$n ;;
			3) why="first missed deadline, repeat or drop at $n"; break ;;
			*) why="bench failed at $n (rc=$rc): see ramp/$fps-$n.txt"; break ;;
			esac
		done
		if [ "$last" -gt 0 ]; then
			limit="$fps fps: $last sources clean ($why)"
		else
			limit="$fps fps: no step clean ($why)"
		fi
		limit="$limit; plan estimate: ${est:-none read}"
		echo "$limit" >> "$OUT/ramp/limits.txt"
		log "limit $limit"
	done
	stop_producers
}

long() {
	log "long: $COUNT sources at $FPS fps, a 5-minute reading after 20 s"
	mkdir -p "$OUT/ramp"
	start_producers "$(browsers "$COUNT")" "$FPS"
	bench "ramp/$FPS-$COUNT-5min" 20s 300s -beyond-capacity -fail-on-miss -var fps="$FPS" $(mix "$COUNT")
	log "  rc=$? $(grep -E '^  (CPU|bus frames|plan estimate) ' "$OUT/ramp/$FPS-$COUNT-5min.txt" | tr -s ' ' | tr '\n' ';')"
	stop_producers
}

# send_loop URL CLIP: one sender, started again whenever it ends (a UDP
# sender's port refused before the show listens, the show's restart);
# TERM ends it and its sender.
send_loop() {
	local child=
	trap '[ -n "$child" ] && kill "$child" 2>/dev/null; exit 0' TERM
	while :; do
		"$ONAIR" send -loop "$1" "$2" > /dev/null 2>> "$OUT/senders.log" &
		child=$!
		wait "$child"
		sleep 0.5
	done
}

# cpu_of NAME: the CPU % of one core in NAME.txt's table.
cpu_of() { awk '/^  CPU /{print $2; exit}' "$OUT/$1.txt"; }

live_pair() {
	local LIVE=${LIVE:-srt} PORT=${LIVE_PORT:-20000} n=$PAIR_COUNT
	local h
	h=$(mix "$n" | sed 's/.*n_hevc=//; s/ .*//')
	local clips='hevc_clips=["clip0.ts","clip1.ts","clip2.ts","clip3.ts"]'
	log "live: $n sources ($(mix "$n")) at 30 fps, best settings, HEVC from files then over $LIVE; $WARMUP warm-up, $WINDOW window"
	start_producers "$(browsers "$n")" 30
	timeout 60 "$ONAIR" plan -backend "$BACKEND" -summary -var live="$LIVE" -var live_port="$PORT" -var "$clips" -var media="$MEDIA" -var raw_dir="$RAW" -var socket_dir="$SOCK" -var width="$WIDTH" -var height="$HEIGHT" -var aux="$AUX" $(mix "$n") $EXTRA_VARS "$SHOW" > "$OUT/plan-live.txt" 2>&1
	bench file "$WARMUP" "$WINDOW" -var settings=best -var fps=30 -var "$clips" $(mix "$n")
	log "  file: rc=$? $(grep -E '^  (CPU|threads|bus frames|sources) ' "$OUT/file.txt" | tr -s ' ' | tr '\n' ';')"
	local i senders=()
	for i in $(seq 0 $(( h - 1 ))); do
		send_loop "$LIVE://127.0.0.1:$(( PORT + i ))" "$MEDIA/clip$(( i % 4 )).ts" &
		senders+=($!)
	done
	log "  $h senders over $LIVE from port $PORT"
	bench "live-$LIVE" "$WARMUP" "$WINDOW" -var settings=best -var fps=30 -var live="$LIVE" -var live_port="$PORT" -var "$clips" $(mix "$n")
	log "  live-$LIVE: rc=$? $(grep -E '^  (CPU|threads|bus frames|sources|live sources|live latency) ' "$OUT/live-$LIVE.txt" | tr -s ' ' | tr '\n' ';')"
	for i in "${senders[@]}"; do kill "$i" 2>/dev/null; done
	for i in "${senders[@]}"; do wait "$i" 2>/dev/null; done
	stop_producers
	if [ -s "$OUT/file.json" ] && [ -s "$OUT/live-$LIVE.json" ]; then
		"$ONAIR" bench -compare "$OUT/file.json" "$OUT/live-$LIVE.json" > "$OUT/compare.md" 2>&1
		cat "$OUT/compare.md" >> "$OUT/summary.txt"
		local f l
		f=$(cpu_of file) l=$(cpu_of "live-$LIVE")
		log "  CPU: file $f %, live $l % of one core: live/file $(awk -v f="$f" -v l="$l" 'BEGIN{printf "%.2f", l/f}') (target: at most 1.5, and live under 100 %)"
	fi
}

encoders() {
	if [ -n "$FFMPEG_DIR" ]; then
		# A wrapper on PATH gives the device build its libraries without
		# putting them before the system's for onair itself.
		local dir
		dir=$(realpath -m "$FFMPEG_DIR")
		mkdir -p "$OUT/bin"
		printf '#!/bin/sh\nLD_LIBRARY_PATH=%s/lib exec %s/ffmpeg "$@"\n' "$dir" "$dir" > "$OUT/bin/ffmpeg"
		chmod +x "$OUT/bin/ffmpeg"
		export PATH="$OUT/bin:$PATH"
	fi
	command -v ffmpeg > /dev/null || { log "encoders: no ffmpeg (set FFMPEG_DIR)"; exit 2; }
	ffmpeg -hide_banner -encoders 2>/dev/null | grep -q " $ENC_ENCODER " || { log "encoders: $(command -v ffmpeg) has no $ENC_ENCODER"; exit 2; }
	mkdir -p "$OUT/encoders"
	log "encoders: $PAIR_COUNT sources ($(mix "$PAIR_COUNT")) at 30 fps with N ${WIDTH}x${HEIGHT}p30 $ENC_ENCODER $ENC_PRESET outputs of bus.a, N in $ENC_COUNTS; $ENC_WARMUP warm-up, $ENC_WINDOW window"
	start_producers "$(browsers "$PAIR_COUNT")" 30
	local n last=0 why="every step was clean" step_s=$(( $(secs "$ENC_WARMUP") + $(secs "$ENC_WINDOW") + 40 ))
	for n in $ENC_COUNTS; do
		if [ $(( ENC_BUDGET_S - ($(date +%s) - START) )) -lt "$step_s" ]; then
			why="ENC_BUDGET_S ($ENC_BUDGET_S s) spent before $n"
			break
		fi
		local nf=$(( (n + 1) / 2 )) ns=$(( n / 2 )) t0=$(date +%s)
		rm -rf "$OUT/enc"
		mkdir -p "$OUT/enc"
		timeout 60 "$ONAIR" plan -backend "$BACKEND" -var settings=best -var fps=30 -var media="$MEDIA" -var raw_dir="$RAW" -var socket_dir="$SOCK" -var width="$WIDTH" -var height="$HEIGHT" -var aux="$AUX" $(mix "$PAIR_COUNT") \
			-var n_enc_file=$nf -var n_enc_stream=$ns -var enc_dir="$OUT/enc" -var enc_encoder="$ENC_ENCODER" -var enc_preset="$ENC_PRESET" $EXTRA_VARS "$SHOW" 2>&1 | grep -A $(( n + 1 )) '^  encoding cpu' > "$OUT/encoders/plan-$n.txt"
		bench "encoders/$n" "$ENC_WARMUP" "$ENC_WINDOW" -fail-on-miss -var settings=best -var fps=30 $(mix "$PAIR_COUNT") \
			-var n_enc_file=$nf -var n_enc_stream=$ns -var enc_dir="$OUT/enc" -var enc_encoder="$ENC_ENCODER" -var enc_preset="$ENC_PRESET"
		local rc=$?
		step_s=$(( $(date +%s) - t0 + 5 ))
		local busline encline drops
		busline=$(grep -m1 '^  bus frames' "$OUT/encoders/$n.txt" | tr -s ' ')
		encline=$(grep -m1 '^  encoders' "$OUT/encoders/$n.txt" | tr -s ' ')
		drops=$(echo "$encline" | sed -n 's/.*outputs, \([0-9]*\) drops.*/\1/p')
		log "  $n encodes ($nf files, $ns streams): rc=$rc;$busline;$encline; plan:$(head -1 "$OUT/encoders/plan-$n.txt" | tr -s ' ')"
		rm -rf "$OUT/enc"
		if [ "$rc" -ne 0 ]; then
			why="first missed deadline, repeat or drop at $n (rc=$rc): see encoders/$n.txt"
			break
		fi
		if [ "${drops:-1}" != 0 ]; then
			why="encoders dropped frames at $n (${drops:-unread}): see encoders/$n.txt"
			break
		fi
		last=$n
	done
	stop_producers
	echo "$ENC_ENCODER $ENC_PRESET ${WIDTH}x${HEIGHT}p30 beside $PAIR_COUNT sources: $last encodes clean ($why)" | tee -a "$OUT/encoders/limits.txt" >> "$OUT/summary.txt"
	log "encoders: $last clean ($why)"
}

case $MODE in
pair) pair ;;
ramp) ramp ;;
long) long ;;
live) live_pair ;;
encoders) encoders ;;
*) log "MODE=$MODE: use pair, ramp, long, live or encoders"; exit 2 ;;
esac
log "done"
