# onair: the two commands a newcomer needs are `make run` and `make test`.
GO        ?= go
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)
LDFLAGS   := -X main.version=$(VERSION)
FUZZTIME  ?= 10s

.PHONY: build run test test-short race fuzz bench lint docs clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/onair .

# run: the main job on the embedded default (CPU backend when there is no GPU).
run: build
	./bin/onair run -backend auto -duration 10s examples/cpu-demo.hcl

test: build
	$(GO) vet ./...
	$(GO) test -count=1 ./...
	$(GO) test -count=1 -race ./runtime/...
	$(MAKE) fuzz

test-short:
	$(GO) test -short ./...

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzLoad -fuzztime $(FUZZTIME) ./lang/

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

lint: build
	gofmt -l . | tee /dev/stderr | (! read)
	$(GO) vet ./...
	./bin/onair fmt -check shows/ examples/
	./bin/onair lint shows/

docs: build
	./bin/onair docs -markdown > docs/REFERENCE.md

clean:
	rm -rf bin out
