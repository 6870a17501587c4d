# onair: the two commands a newcomer needs are `make run` and `make test`.
GO        ?= go
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)
LDFLAGS   := -X github.com/onairhq/onair/internal/cli.version=$(VERSION)
# go-nvml declares some NVML calls deprecated; onair calls none of them.
export CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations

.PHONY: build run test test-short test-gpu gpu-bench browser-bench seeds-bench live-bench sound-bench delivery-bench timing-bench own-parser-bench race fuzz bench lint docs clean ptx

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/onair .

DEMO_MEDIA := examples/media/clip0.nv12 examples/media/clip1.nv12

# run: the main job on the embedded default (CPU backend when there is no
# GPU): make the demo's media with onair's own generator, play
# examples/cpu-demo.hcl for ten seconds with a cut to scene.clip at 5 s and a
# wipe back at 7 s, write out/*.y4m and print the summary.
run: build $(DEMO_MEDIA)
	./bin/onair run -backend auto -duration 10s \
		-cue '5s bus.pgm scene.clip' -cue '7s bus.pgm scene.grid wipe 1s' \
		examples/cpu-demo.hcl

examples/media/clip0.nv12: | build
	mkdir -p $(@D)
	./bin/onair media -size 640x360 -rate 30 -frames 60 -pattern ramp -id 3 -o $@

examples/media/clip1.nv12: | build
	mkdir -p $(@D)
	./bin/onair media -size 640x360 -rate 30 -frames 60 -pattern checker -id 4 -o $@

test: build
	$(GO) vet ./...
	$(GO) test -count=1 ./...
	$(GO) test -count=1 -race ./runtime/... ./control/ ./nodes/show/ ./nodes/media/ipc/ ./nodes/media/es/ ./nodes/media/live/ ./nodes/browser/... ./cuda/
	$(GO) test -count=1 -race -run 'TestLiveFeed' ./nodes/cuda/
	$(GO) test -count=1 -race -run 'TestLiveAudio|TestLiveSound|TestRTMPSound' ./nodes/media/ ./nodes/cpu/
	$(MAKE) fuzz

# test-gpu: the GPU tests (cuda/, nodes/cuda/), on a machine with a GPU
# and Go. Without a GPU they skip, saying why.
test-gpu:
	CGO_ENABLED=1 $(GO) test -count=1 -v ./cuda/ ./nodes/cuda/

# gpu-bench: what a GPU machine without Go needs to run the backend's GPU
# tests and benchmarks (nodes/cuda/BENCHMARKS.md): bin/onair, the test
# binary and the scripts in .device/backend/; carry .device and run
# `bash .device/backend/run.sh` there.
gpu-bench: build
	mkdir -p .device/backend
	cp bin/onair nodes/cuda/bench/run.sh nodes/cuda/bench/bench.hcl .device/backend/
	CGO_ENABLED=1 $(GO) test -c -o .device/backend/cuda.test ./nodes/cuda/

# browser-bench: issue 12's measurement (40 producers at 1080p30, with and
# without the return queue, memfd and CUDA buffers) for a GPU machine
# without Go: carry .device/browser and run `.device/browser/run.sh OUT`
# there (nodes/browser/BENCHMARKS.md has the figures).
browser-bench: build
	mkdir -p .device/browser
	cp bin/onair nodes/browser/bench/run.sh nodes/browser/bench/browser-40.hcl .device/browser/
# seeds-bench: what the GPU machine needs for issue 14's measurement
# (bench/seeds/README.md): a stripped onair and four 10-second 1080p30 HEVC
# clips at 8 Mbit/s in .device/seeds-bench (about 58 MB, under the 64 MiB a
# device call carries); the raw clips are generated there. Carry
# .device/seeds-bench and run bench/seeds/run.sh there.
SEEDS_CLIPS := $(foreach i,0 1 2 3,.device/seeds-bench/media/clip$(i).hevc)
seeds-bench: build $(SEEDS_CLIPS)
	$(GO) build -ldflags "$(LDFLAGS) -s -w" -o .device/seeds-bench/onair .
	du -sh .device/seeds-bench

# live-bench: what the GPU machine needs for issue 24's measurement
# (bench/seeds/run.sh MODE=live): a stripped onair, four 4-second 1080p30
# HEVC clips at 8 Mbit/s in MPEG-TS (onair send sends them; the file show
# reads the same ones), and libsrt with the libcrypto it links in lib/
# (the GPU machine has neither; run.sh puts lib/ on LD_LIBRARY_PATH), about
# 40 MB. Carry .device/live-bench and run
# ONAIR=.device/live-bench/onair MEDIA=.device/live-bench/media MODE=live bench/seeds/run.sh there.
LIVE_MEDIA := .device/live-bench/media
LIVE_CLIPS := $(foreach i,0 1 2 3,$(LIVE_MEDIA)/clip$(i).ts)
LIVE_LIBS := $(shell ls /usr/lib/x86_64-linux-gnu/libsrt.so.1.5 2>/dev/null) $(shell ldd /usr/lib/x86_64-linux-gnu/libsrt.so.1.5 2>/dev/null | awk '/libcrypto/{print $$3}')
live-bench: build $(LIVE_CLIPS)
	$(GO) build -ldflags "$(LDFLAGS) -s -w" -o .device/live-bench/onair .
	mkdir -p .device/live-bench/lib
	cp -L $(LIVE_LIBS) .device/live-bench/lib/
	du -sh .device/live-bench

$(LIVE_MEDIA)/clip%.ts: | build
	mkdir -p $(@D)
	./bin/onair media -kind ts -size 1920x1080 -rate 30 -frames 120 -bitrate 8M -noise 30 -pattern bars -id $$(( $* + 1 )) -o $@
# sound-bench: what the GPU machine needs for issue 25's figure (audio/
# BENCHMARKS.md, "On the H200"): a stripped onair and four 4-second
# 1080p30 HEVC transport streams with the line-up tone in AAC, in
# .device/sound-bench (about 20 MB). Carry .device/sound-bench and run
# the onair bench line of audio/BENCHMARKS.md there.
SOUND_CLIPS := $(foreach i,0 1 2 3,.device/sound-bench/media/clip$(i).ts)
sound-bench: build $(SOUND_CLIPS)
	$(GO) build -ldflags "$(LDFLAGS) -s -w" -o .device/sound-bench/onair .
	du -sh .device/sound-bench

.device/sound-bench/media/clip%.ts: | build
	mkdir -p $(@D)
	./bin/onair media -kind ts -audio aac -size 1920x1080 -rate 30 -frames 120 -bitrate 8M -noise 30 -pattern bars -id $$(( $* + 1 )) -o $@

# delivery-bench: what the GPU machine needs for issue 26's encoder
# figures (delivery/BENCHMARKS.md): the delivery package's test binary
# (BenchmarkEncoderCPU) and the device ffmpeg with its libraries
# (FFMPEG_DEVICE, built by ../shared/tools/build-ffmpeg-device.sh) in
# .device/deliv, about 45 MB. Carry it and run the benchmark there; a call
# right after (the machine still warm) carries .device/seeds-bench and runs
# bench/seeds/run.sh with MODE=encoders FFMPEG_DIR=.device/deliv.
FFMPEG_DEVICE ?= /tmp/ffmpeg-device
delivery-bench:
	$(GO) test -c -o .device/deliv/delivery.test ./delivery/
	cp $(FFMPEG_DEVICE)/ffmpeg .device/deliv/
	cp -r $(FFMPEG_DEVICE)/lib .device/deliv/
	du -sh .device/deliv

# timing-bench: what the GPU machine needs for issue 23's measurements
# (bench/timing/README.md): a stripped onair in .device/timing, four
# 4-second 1080p30 HEVC clips at 8 Mbit/s for the seeds' show and the
# looped clips (2 s each: HEVC, H.264, MPEG-TS of H.264), under the 64 MiB
# a device call carries. Carry .device/timing and run
# bench/timing/run.sh there.
TIMING_MEDIA := .device/timing/media
TIMING_CLIPS := $(foreach i,0 1 2 3,$(TIMING_MEDIA)/clip$(i).hevc) $(TIMING_MEDIA)/loop.hevc $(TIMING_MEDIA)/loop.264 $(TIMING_MEDIA)/loop.ts
timing-bench: build $(TIMING_CLIPS)
	$(GO) build -ldflags "$(LDFLAGS) -s -w" -o .device/timing/onair .
	du -sh .device/timing

$(TIMING_MEDIA)/clip%.hevc: | build
	mkdir -p $(@D)
	./bin/onair media -kind hevc -size 1920x1080 -rate 30 -frames 120 -bitrate 8M -noise 30 -pattern bars -id $$(( $* + 1 )) -o $@

$(TIMING_MEDIA)/loop.hevc: | build
	mkdir -p $(@D)
	./bin/onair media -kind hevc -size 1920x1080 -rate 30 -frames 60 -bitrate 8M -noise 30 -pattern bars -id 21 -o $@

$(TIMING_MEDIA)/loop.264: | build
	mkdir -p $(@D)
	./bin/onair media -kind h264 -size 1920x1080 -rate 30 -frames 60 -bitrate 8M -noise 30 -pattern ramp -id 22 -o $@

$(TIMING_MEDIA)/loop.ts: | build
	mkdir -p $(@D)
	./bin/onair media -kind ts -codec h264 -size 1920x1080 -rate 30 -frames 60 -bitrate 8M -noise 30 -pattern checker -id 23 -o $@

# own-parser-bench: NVDEC fed by cuda/hevc instead of NVIDIA's parser
# (nodes/cuda/BENCHMARKS.md): .device/own holds the cuda and nodes/cuda test binaries, a
# stripped onair, two 1080p clips and four generated 640x360 streams (open
# GOPs, slices, scaling lists, P-only, 10-bit); carry it and run
# nodes/cuda/bench/ownparser.sh there.
OWN_CLIPS := opengop:keyint=12:min-keyint=12:scenecut=0:open-gop=1:bframes=4:b-pyramid=1:ref=4:slices=3 \
	scaling:keyint=10:bframes=2:scaling-list=default:ref=3 ponly:keyint=30:bframes=0:ref=6 \
	tenbit:keyint=9:min-keyint=9:scenecut=0:open-gop=1:bframes=3
own-parser-bench: build
	mkdir -p .device/own/clips .device/own/media
	CGO_ENABLED=1 $(GO) test -c -ldflags "-s -w" -o .device/own/cuda.test ./cuda/
	CGO_ENABLED=1 $(GO) test -c -ldflags "-s -w" -o .device/own/nodecuda.test ./nodes/cuda/
	$(GO) build -ldflags "$(LDFLAGS) -s -w" -o .device/own/onair .
	for i in 0 1; do [ -s .device/own/media/clip$$i.hevc ] || ./bin/onair media -size 1920x1080 -frames 150 -gop 30 -bitrate 8M -noise 30 -id $$(( 10 + i )) -o .device/own/media/clip$$i.hevc; done
	for spec in $(OWN_CLIPS); do n=$${spec%%:*}; x=$${spec#*:}; pix=yuv420p; [ $$n = tenbit ] && pix=yuv420p10le; \
	  [ -s .device/own/clips/$$n.hevc ] || ffmpeg -hide_banner -loglevel error -f lavfi -i testsrc2=size=640x360:rate=30 -frames:v 40 \
	    -pix_fmt $$pix -c:v libx265 -x265-params "$$x:log-level=error" .device/own/clips/$$n.hevc; done
	du -sh .device/own

.device/seeds-bench/media/clip%.hevc: | build
	mkdir -p $(@D)
	./bin/onair media -kind hevc -size 1920x1080 -rate 30 -frames 300 -bitrate 8M -noise 30 -pattern bars -id $$(( $* + 1 )) -o $@

test-short:
	$(GO) test -short ./...

# fuzz: each parser for a bounded number of inputs (about ten seconds each
# here). Counts, not durations: a duration that ends while the engine
# minimizes a new input is reported as a failure ("context deadline
# exceeded") although nothing failed. New inputs are minimized for at most a
# second, so the time goes to exploring.
FUZZ = $(GO) test -run '^$$' -fuzzminimizetime 1s
fuzz:
	$(FUZZ) -fuzz '^FuzzLoad$$' -fuzztime 30000x ./lang/
	$(FUZZ) -fuzz '^FuzzParseBitrate$$' -fuzztime 100000x ./delivery/
	$(FUZZ) -fuzz '^FuzzParseEncoders$$' -fuzztime 100000x ./delivery/
	$(FUZZ) -fuzz '^FuzzLoadPlan$$' -fuzztime 300000x ./plan/
	$(FUZZ) -fuzz '^FuzzParseColour$$' -fuzztime 100000x ./internal/value/
	$(FUZZ) -fuzz '^FuzzIgnores$$' -fuzztime 60000x ./compiler/lint/
	$(FUZZ) -fuzz '^FuzzParse$$' -fuzztime 100000x ./nodes/media/ipc/
	$(FUZZ) -fuzz '^FuzzAnnexB$$' -fuzztime 20000x ./nodes/media/es/
	$(FUZZ) -fuzz '^FuzzSPS$$' -fuzztime 40000x ./nodes/media/es/
	$(FUZZ) -fuzz '^FuzzTS$$' -fuzztime 10000x ./nodes/media/es/
	$(FUZZ) -fuzz '^FuzzLive$$' -fuzztime 10000x ./nodes/media/es/
	$(FUZZ) -fuzz '^FuzzContinuity$$' -fuzztime 100000x ./nodes/media/live/
	$(FUZZ) -fuzz '^FuzzReorder$$' -fuzztime 100000x ./nodes/media/live/
	$(FUZZ) -fuzz '^FuzzPacer$$' -fuzztime 100000x ./nodes/media/live/
	$(FUZZ) -fuzz '^FuzzSplitAVCC$$' -fuzztime 100000x ./nodes/media/live/
	$(FUZZ) -fuzz '^FuzzRTMPTS$$' -fuzztime 50000x ./nodes/media/live/
	$(FUZZ) -fuzz '^FuzzParser$$' -fuzztime 100000x ./cuda/hevc/
	$(FUZZ) -fuzz '^FuzzParserNALs$$' -fuzztime 100000x ./cuda/hevc/
	$(FUZZ) -fuzz '^FuzzCleanJSON$$' -fuzztime 30000x ./control/
	$(FUZZ) -fuzz '^FuzzParseDuration$$' -fuzztime 100000x ./control/
	$(FUZZ) -fuzz '^FuzzDecode$$' -fuzztime 100000x ./tsl5/
	$(FUZZ) -fuzz '^FuzzUnwrap$$' -fuzztime 100000x ./tsl5/
	$(FUZZ) -fuzz '^FuzzParse$$' -fuzztime 200000x ./timecode/
	$(FUZZ) -fuzz '^FuzzParseStrip$$' -fuzztime 100000x ./audio/
	$(FUZZ) -fuzz '^FuzzMemTotal$$' -fuzztime 100000x ./compiler/

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

lint: build
	gofmt -l . | tee /dev/stderr | (! read)
	$(GO) vet ./...
	./bin/onair fmt -check shows/ examples/
	./bin/onair lint shows/

docs: build
	./bin/onair docs -markdown > docs/REFERENCE.md
	./bin/onair nodes -markdown > docs/NODES.md

# ptx: compile the GPU kernels (cuda/kernels/compositor.cu with
# cuda/compositor.h) to PTX for compute_75, which every GPU from Turing on
# (T4, L4, H200) JIT-compiles, and record the sources' SHA-256 beside it.
# It needs nvcc and ptxas: run it on the GPU machine, then commit
# compositor.ptx and compositor.sha256 (a test fails while they are stale).
# onair embeds the PTX, so users need only the NVIDIA driver.
#
# nvcc 13 stamps its PTX ".version 9.0", which only CUDA 13 drivers load,
# and adds "used_bytes_mask" pragmas (optimisation hints of ISA 8.3). The
# kernels need nothing newer than ISA 7.0, so the target drops the hints
# and declares PTX_ISA, and ptxas then checks every instruction against
# that version: the PTX loads on any driver since CUDA 11.0 (R450), the
# loader's MinDriverVersion. PTX_BLOCKS is the draw kernels' launch bound
# (blocks of 256 threads per multiprocessor): 4 was the fastest measured
# (cuda/BENCHMARKS.md).
NVCC       ?= nvcc
PTXAS      ?= ptxas
PTX_ISA    ?= 7.0
PTX_BLOCKS ?= 4
# The GPUs the profiles name (H200: 9.0, L4: 8.9) get the PTX assembled to
# machine code (cuda/module.go), so a first start needs no JIT.
CUBIN_ARCHS ?= 90 89
ptx:
	cd cuda && $(NVCC) -ptx -arch=compute_75 -DONAIR_MIN_BLOCKS=$(PTX_BLOCKS) -o kernels/compositor.ptx kernels/compositor.cu
	cd cuda && sed -i -e '/^\s*\.pragma "used_bytes_mask/d' -e 's/^\.version .*/.version $(PTX_ISA)/' kernels/compositor.ptx
	cd cuda && $(PTXAS) -arch=sm_75 -o /dev/null kernels/compositor.ptx
	cd cuda && for a in $(CUBIN_ARCHS); do $(PTXAS) -arch=sm_$$a -o kernels/compositor.sm_$$a.cubin kernels/compositor.ptx; done
	cd cuda && sha256sum kernels/compositor.cu compositor.h kernels/compositor.ptx > kernels/compositor.sha256

clean:
	rm -rf bin out
