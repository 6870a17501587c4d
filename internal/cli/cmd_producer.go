package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	gpu "github.com/onairhq/onair/cuda"
	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/nodes/browser"
	"github.com/onairhq/onair/nodes/browser/chromium"
	nodecuda "github.com/onairhq/onair/nodes/cuda"
)

func init() {
	register(&command{
		name:    "producer",
		summary: "Hand frames to a browser source's socket (docs/PRODUCER-PROTOCOL.md): a web page rendered by headless Chromium, or a moving, frame-numbered test pattern in memfds or CUDA buffers.",
		usage:   "-socket PATH [-url URL] [-size WxH] [-frames N] [-chromium BINARY] | -pattern [-gpu] [-pool chromium|steady] [-count N] [-fps F] -socket PATH",
		run:     runProducer,
	})
}

func runProducer(args []string, stdout, stderr io.Writer) int {
	fs := newFlags(commands["producer"], stderr)
	socket := fs.String("socket", "", "the browser source's socket `PATH` (required): its socket attribute, resolved from the show's directory; with -count, a path with %d, numbered from 0")
	url := fs.String("url", "", "the page to render (file://, http://); default: the built-in lower third and ticker")
	size := fs.String("size", "1280x720", "picture size `WxH`, even numbers; the source scales it to its layer")
	frames := fs.Int("frames", 0, "stop after N frames sent, by each producer (0: until interrupted)")
	binary := fs.String("chromium", "", "Chromium `BINARY` (default: chromium, chromium-browser or google-chrome on $PATH)")
	pattern := fs.Bool("pattern", false, "send the built-in test pattern (a moving box and the frame number in blocks) instead of a web page")
	onGPU := fs.Bool("gpu", false, "with -pattern: buffers in CUDA device memory, exported as POSIX file descriptors (the source must run on -backend cuda)")
	pool := fs.String("pool", "chromium", "with -pattern: the buffer pool, `chromium` (at most two idle, the rest destroyed, as Chromium's capture pool) or steady (every buffer kept)")
	count := fs.Int("count", 1, "with -pattern: run `N` producers, one per socket (-socket holds %d)")
	fps := fs.Float64("fps", 30, "with -pattern: frames per second")
	if rc := parseFlags(fs, args); rc >= 0 {
		return rc
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "onair producer: "+format+"\n", a...)
		return 2
	}
	if fs.NArg() > 0 {
		return usage("unexpected argument %q: flags only", fs.Arg(0))
	}
	if *socket == "" {
		return usage("-socket PATH is required: the socket of the browser source to feed")
	}
	sz, msg := lang.ParseSize(*size)
	if msg != "" {
		return usage("-size: %s", msg)
	}
	if *frames < 0 {
		return usage("-frames %d: must be 0 or more", *frames)
	}
	if !*pattern && (*onGPU || *count != 1) {
		return usage("-gpu and -count go with -pattern: Chromium's frames come from the CPU, one page per producer")
	}
	if *count < 1 || *count > 1000 {
		return usage("-count %d: must be 1 to 1000", *count)
	}
	if *count > 1 && !strings.Contains(*socket, "%d") {
		return usage("-count %d needs a -socket with %%d (for example gfx%%d.sock), one socket per producer", *count)
	}
	if *pool != "chromium" && *pool != "steady" {
		return usage("-pool %q: chromium or steady", *pool)
	}
	if *fps <= 0 || *fps > 240 {
		return usage("-fps %v: must be above 0 and at most 240", *fps)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if *pattern {
		cfg := browser.PatternConfig{Width: sz.W, Height: sz.H, Frames: *frames, Period: time.Duration(float64(time.Second) / *fps), Log: log}
		if *pool == "chromium" {
			cfg.MaxIdle = 2
		}
		return runPatterns(ctx, cfg, *socket, *count, *onGPU, stdout, stderr)
	}
	var st chromium.Stats
	err := chromium.Run(ctx, chromium.Config{Socket: *socket, URL: *url, Width: sz.W, Height: sz.H, Binary: *binary, Frames: *frames, Log: log}, &st)
	fmt.Fprintf(stdout, "producer: %d frames painted, %d sent, %d dropped, %d connections\n", st.Painted.Load(), st.Sent.Load(), st.Dropped.Load(), st.Connections.Load())
	if err != nil {
		fmt.Fprintf(stderr, "onair producer: %v\n", err)
		return 1
	}
	return 0
}

// runPatterns runs count pattern producers, on the GPU's buffers with
// onGPU, and prints what they did together.
func runPatterns(ctx context.Context, cfg browser.PatternConfig, socket string, count int, onGPU bool, stdout, stderr io.Writer) int {
	var painters []*nodecuda.GPUPainter
	if onGPU {
		c, err := gpu.NewContext(gpu.SchedBlockingSync)
		if err != nil {
			fmt.Fprintf(stderr, "onair producer: -gpu: %v\n", err)
			return 1
		}
		defer c.Close()
		for i := 0; i < count; i++ {
			p, err := nodecuda.NewGPUPainter(c)
			if err != nil {
				fmt.Fprintf(stderr, "onair producer: -gpu: %v\n", err)
				return 1
			}
			defer p.Close()
			painters = append(painters, p)
		}
	}
	stats := make([]browser.PatternStats, count)
	errs := make([]error, count)
	var wg sync.WaitGroup
	for i := 0; i < count; i++ {
		c := cfg
		c.Socket, c.Name = socket, "pattern"
		if strings.Contains(socket, "%d") { // numbered from 0, -count 1 included
			c.Socket, c.Name = fmt.Sprintf(socket, i), fmt.Sprintf("pattern %d", i)
		}
		if onGPU {
			c.Painter = painters[i].Painter()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = browser.RunPattern(ctx, c, &stats[i])
		}()
	}
	wg.Wait()
	var sent, dropped, conns, made, destroyed uint64
	for i := range stats {
		sent += stats[i].Sent.Load()
		dropped += stats[i].Dropped.Load()
		conns += stats[i].Connections.Load()
		made += stats[i].Created.Load()
		destroyed += stats[i].Destroyed.Load()
	}
	fmt.Fprintf(stdout, "producer: %d frames sent, %d dropped, %d connections, %d buffers made, %d destroyed\n", sent, dropped, conns, made, destroyed)
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(stderr, "onair producer: %v\n", err)
		return 1
	}
	return 0
}
