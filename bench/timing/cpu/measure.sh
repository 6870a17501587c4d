#!/bin/bash
# measure.sh BIN SHOW PORT: 42 s of SHOW on the CPU backend with a cue every
# 2 s on bus.pgm and bus.pgm2 (cut, fade, wipe in turn), /status as JSON at
# 41 s into status-BIN-SHOW.json (bench/timing/README.md).
set -u
B=$1; SHOW=$2; PORT=$3
cues=(); kinds=(cut fade wipe)
for i in $(seq 1 20); do k=${kinds[$((i%3))]}; s=$([ $((i%2)) = 1 ] && echo b || echo a); s2=$([ $((i%2)) = 1 ] && echo a || echo b); tr=""; [ $k != cut ] && tr=" 500ms"; cues+=(-cue "$((i*2))s bus.pgm scene.$s $k$tr" -cue "$((i*2))s bus.pgm2 scene.$s2 $k$tr"); done
$B run -backend cpu -quiet -listen 127.0.0.1:$PORT -duration 42s "${cues[@]}" $SHOW > /dev/null 2>&1 &
sleep 41
$B status -addr 127.0.0.1:$PORT -json > status-$(basename $B)-$(basename $SHOW .hcl).json
wait
