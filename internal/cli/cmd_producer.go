package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/nodes/browser/chromium"
	"github.com/onairhq/onair/nodes/media/ipc"
)

func init() {
	register(&command{
		name:    "producer",
		summary: "Render a web page in headless Chromium, or paint a moving test picture (-pattern), and hand its frames to a browser source's socket (docs/PRODUCER-PROTOCOL.md).",
		usage:   "-socket PATH [-url URL] [-size WxH] [-frames N] [-chromium BINARY]\n       onair producer -pattern -socket PATH [-size WxH] [-rate R] [-format rgba|bgra|nv12] [-id N] [-frames N]",
		run:     runProducer,
	})
}

func runProducer(args []string, stdout, stderr io.Writer) int {
	fs := newFlags(commands["producer"], stderr)
	socket := fs.String("socket", "", "the browser source's socket `PATH` (required): its socket attribute, resolved from the show's directory")
	url := fs.String("url", "", "the page to render (file://, http://); default: the built-in lower third and ticker")
	size := fs.String("size", "1280x720", "page size `WxH`, even numbers; the source scales it to its layer")
	frames := fs.Int("frames", 0, "stop after N frames sent (0: until interrupted)")
	binary := fs.String("chromium", "", "Chromium `BINARY` (default: chromium, chromium-browser or google-chrome on $PATH)")
	pattern := fs.Bool("pattern", false, "paint a moving test picture instead of running Chromium: no browser needed, little CPU (for benchmarks)")
	rate := fs.String("rate", "30", "with -pattern: frame `rate` (30, 60, 30000/1001...)")
	format := fs.String("format", "rgba", "with -pattern: pixel format rgba, bgra or nv12")
	id := fs.Int("id", 0, "with -pattern: tints the picture, to tell sources apart")
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var st chromium.Stats
	var err error
	if *pattern {
		if *url != "" || *binary != "" {
			return usage("-pattern paints without a browser: leave out -url and -chromium")
		}
		r, rerr := mediaRate(*rate)
		if rerr != nil {
			return usage("-rate: %v", rerr)
		}
		f, ok := map[string]ipc.PixelFormat{"rgba": ipc.RGBA, "bgra": ipc.BGRA, "nv12": ipc.NV12}[*format]
		if !ok {
			return usage("-format %q: use rgba, bgra or nv12", *format)
		}
		err = ipc.RunPattern(ctx, ipc.PatternConfig{Socket: *socket, Format: f, Width: sz.W, Height: sz.H,
			Period: time.Duration(int64(time.Second) * r.Den / r.Num), ID: *id, Frames: *frames, Name: fmt.Sprintf("pattern %d", *id),
			OnConnect: func(p *ipc.Producer) {
				log.Info("connected", "socket", *socket, "return_queue", p.Welcome().ReturnQueue)
			},
			OnLost: func(err error) { log.Warn("onair went away; connecting again", "error", err) },
		}, &st)
	} else {
		err = chromium.Run(ctx, chromium.Config{Socket: *socket, URL: *url, Width: sz.W, Height: sz.H, Binary: *binary, Frames: *frames, Log: log}, &st)
	}
	fmt.Fprintf(stdout, "producer: %d frames painted, %d sent, %d dropped, %d connections\n", st.Painted.Load(), st.Sent.Load(), st.Dropped.Load(), st.Connections.Load())
	if err != nil {
		fmt.Fprintf(stderr, "onair producer: %v\n", err)
		return 1
	}
	return 0
}
