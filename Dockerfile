# A small image for CI: onair lint, validate, plan, fmt and diff, without a
# GPU (the CUDA backend loads the driver only when a show runs on it).
#
#   docker build -t onair .
#   docker run --rm -v "$PWD:/shows" onair lint -backend cpu /shows
#
# internal/cli's TestCIFilesRunHere checks the command it runs by default.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN go build -trimpath -ldflags "-s -w -X github.com/onairhq/onair/internal/cli.version=${VERSION}" -o /out/onair .

FROM debian:bookworm-slim
COPY --from=build /out/onair /usr/local/bin/onair
WORKDIR /shows
USER 65534:65534
ENTRYPOINT ["onair"]
CMD ["version"]
