# onair: the two commands a newcomer needs are `make run` and `make test`.
GO        ?= go
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)
LDFLAGS   := -X github.com/onairhq/onair/internal/cli.version=$(VERSION)

.PHONY: build run test test-short race fuzz bench lint docs clean

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
	$(GO) test -count=1 -race ./runtime/...
	$(MAKE) fuzz

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
	$(FUZZ) -fuzz '^FuzzLoadPlan$$' -fuzztime 300000x ./compiler/plan/
	$(FUZZ) -fuzz '^FuzzIgnores$$' -fuzztime 60000x ./compiler/lint/
	$(FUZZ) -fuzz '^FuzzAnnexB$$' -fuzztime 20000x ./nodes/media/es/
	$(FUZZ) -fuzz '^FuzzSPS$$' -fuzztime 40000x ./nodes/media/es/
	$(FUZZ) -fuzz '^FuzzTS$$' -fuzztime 10000x ./nodes/media/es/

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

clean:
	rm -rf bin out
