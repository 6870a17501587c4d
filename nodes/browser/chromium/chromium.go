// Package chromium is a producer for browser sources: headless Chromium
// renders a page (an HTML lower third, a ticker), each frame it paints is
// captured over the DevTools protocol (Page.startScreencast, PNG, alpha
// kept), painted into a shared buffer and handed to onair over the
// producer protocol (nodes/media/ipc). `onair producer` runs it.
//
// Screencast frames are copies, not the browser's own GPU buffers: this is
// the portable producer, for tests, demos and the CPU backend. The
// production browser service hands over Chromium's DMA-BUFs themselves;
// the protocol is the same.
//
// chromium must never import runtime/, lang/, compiler/, nodes/show or any
// backend.
package chromium

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/onairhq/onair/nodes/media/ipc"
)

// LowerThird is the built-in page: a red lower third, a blue ticker and a
// half-transparent yellow corner bug on a transparent page.
//
//go:embed lowerthird.html
var LowerThird []byte

// Config configures a producer.
type Config struct {
	// Socket is the browser source's socket.
	Socket string
	// URL is the page; "" is LowerThird.
	URL string
	// Width and Height are the page's size in pixels (even).
	Width, Height int
	// Binary is Chromium's path; "" looks for it on $PATH (Find).
	Binary string
	// Frames stops the producer after that many frames sent; 0 runs until
	// the context ends.
	Frames int
	// Log gets what the producer does; nil discards it.
	Log *slog.Logger
	// Painting, when set, is called once, when the browser has painted its
	// first frame.
	Painting func()
}

// Stats counts what a producer did.
type Stats = ipc.FeedStats

// idleLimit is how long the producer waits for a frame: the built-in page
// paints every frame.
const idleLimit = 20 * time.Second

// names are the binaries Find looks for, in order.
var names = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// Find returns the Chromium binary to run: binary when set, else the first
// of chromium, chromium-browser, google-chrome on $PATH.
func Find(binary string) (string, error) {
	if binary != "" {
		p, err := exec.LookPath(binary)
		if err != nil {
			return "", fmt.Errorf("chromium binary %s: %w", binary, err)
		}
		return p, nil
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("chromium is not installed: none of %v is on $PATH; install Debian's chromium package (apt-get install chromium) or give the binary's path", names)
}

// Run starts Chromium on the page and hands its frames to the socket until
// ctx ends or cfg.Frames have been sent. It connects when onair listens
// and connects again when onair goes away and comes back.
func Run(ctx context.Context, cfg Config, st *Stats) error {
	if st == nil {
		st = &Stats{}
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	// Headless Chromium's screencast PNGs carry premultiplied colour,
	// whatever PNG says: a page's rgba(255, 255, 0, 0.5) arrives as
	// 128, 128, 0 at alpha 128 (measured with Chromium 156, the keying
	// test's half-transparent bug), so the pictures are announced as
	// premultiplied. Opaque and transparent pixels read the same either way.
	pic := ipc.NewPicture(ipc.RGBA, ipc.AlphaPremultiplied, cfg.Width, cfg.Height)
	if err := pic.Check(); err != nil {
		return fmt.Errorf("producer: %w", err)
	}
	bin, err := Find(cfg.Binary)
	if err != nil {
		return err
	}
	url := cfg.URL
	if url == "" {
		dir, err := os.MkdirTemp("", "onair-page")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "lowerthird.html")
		if err := os.WriteFile(path, LowerThird, 0o644); err != nil {
			return err
		}
		url = "file://" + path
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin),
		chromedp.WindowSize(cfg.Width, cfg.Height), chromedp.Flag("hide-scrollbars", true), chromedp.Flag("mute-audio", true))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run its sandbox as root
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()

	// Screencast frames arrive on the tab's reading loop; at most three are
	// unacknowledged, so the channel never fills.
	frames := make(chan *page.EventScreencastFrame, 8)
	if err := chromedp.Listen(bctx, func(ev any) {
		if f, ok := ev.(*page.EventScreencastFrame); ok {
			select {
			case frames <- f:
			default:
			}
		}
	}); err != nil {
		return fmt.Errorf("producer: start %s: %w", bin, err)
	}
	t0 := time.Now()
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(int64(cfg.Width), int64(cfg.Height))); err != nil {
		return fmt.Errorf("producer: start %s: %w", bin, err)
	}
	log.Info("browser started", "binary", bin, "took", time.Since(t0).Round(time.Millisecond))
	// A transparent page: alpha 0 is the protocol's "absent", so ask for the
	// smallest alpha there is (it rounds to 0).
	if _, err := chromedp.Call(bctx, emulation.SetDefaultBackgroundColorOverride,
		emulation.SetDefaultBackgroundColorOverrideParams{Color: &cdp.RGBA{A: 1e-6}}); err != nil {
		return fmt.Errorf("producer: transparent background: %w", err)
	}
	t0 = time.Now()
	if err := chromedp.Do(bctx, chromedp.Navigate(url)); err != nil {
		return fmt.Errorf("producer: open %s: %w", url, err)
	}
	log.Info("page loaded", "url", url, "took", time.Since(t0).Round(time.Millisecond))
	if _, err := chromedp.Call(bctx, page.StartScreencast, page.StartScreencastParams{
		Format: page.StartScreencastFormatPng, MaxWidth: int64(cfg.Width), MaxHeight: int64(cfg.Height), EveryNthFrame: 1,
	}); err != nil {
		return fmt.Errorf("producer: screencast: %w", err)
	}
	log.Info("browser painting", "binary", bin, "url", url, "size", fmt.Sprintf("%dx%d", cfg.Width, cfg.Height))

	feed := &ipc.Feed{Config: ipc.ProducerConfig{Socket: cfg.Socket, Picture: pic, Name: "chromium " + filepath.Base(bin)},
		OnConnect: func(p *ipc.Producer) {
			st.Connections.Add(1)
			log.Info("connected", "socket", cfg.Socket, "return_queue", p.Welcome().ReturnQueue)
		},
		OnLost: func(err error) { logLost(log, err) },
	}
	defer feed.Close()
	canvas := image.NewNRGBA(image.Rect(0, 0, cfg.Width, cfg.Height))
	var seq uint64
	for cfg.Frames == 0 || st.Sent.Load() < uint64(cfg.Frames) {
		var f *page.EventScreencastFrame
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(idleLimit):
			return fmt.Errorf("producer: chromium painted nothing for %v: the page is still or the browser died", idleLimit)
		case f = <-frames:
		}
		// Acknowledge first, so the browser paints the next one meanwhile.
		if _, err := chromedp.Call(bctx, page.ScreencastFrameAck, page.ScreencastFrameAckParams{SessionID: f.SessionID}); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("producer: acknowledge frame: %w", err)
		}
		if st.Painted.Add(1) == 1 && cfg.Painting != nil {
			cfg.Painting()
		}
		img, err := png.Decode(bytes.NewReader(f.Data))
		if err != nil {
			return fmt.Errorf("producer: a screencast frame is not a PNG: %w", err)
		}
		b, err := feed.Acquire(time.Second)
		if err != nil {
			var refused *ipc.RefusedError
			if errors.As(err, &refused) {
				return err
			}
			st.Dropped.Add(1)
			continue
		}
		// The page's pixels, as the PNG holds them (premultiplied: see pic), at the picture's size.
		draw.Draw(canvas, canvas.Bounds(), image.Transparent, image.Point{}, draw.Src)
		draw.Draw(canvas, canvas.Bounds(), img, img.Bounds().Min, draw.Src)
		px := b.Pixels()
		for y := 0; y < cfg.Height; y++ {
			copy(px[y*pic.Pitch:y*pic.Pitch+4*cfg.Width], canvas.Pix[y*canvas.Stride:])
		}
		seq++
		if err := feed.Send(b, seq, time.Now().UnixNano()); err != nil {
			st.Dropped.Add(1)
			continue
		}
		st.Sent.Add(1)
	}
	return nil
}

// logLost says why the connection to onair ended: a show that stopped and
// closed it is no warning (nil), a broken connection is.
func logLost(log *slog.Logger, err error) {
	if err == nil {
		log.Info("onair closed the connection (the show stopped); connecting again when it is back")
		return
	}
	log.Warn("onair went away; connecting again", "error", err)
}
