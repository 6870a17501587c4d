package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/onairhq/onair/cpu"
	"github.com/onairhq/onair/frame"
)

func init() {
	register(&command{
		name:    "media",
		summary: "Generate test media (raw NV12/P010 or Y4M, moving and frame-numbered) for shows and tests; no downloads.",
		usage:   "[-size WxH] [-rate R] [-frames N] [-format nv12|p010] [-kind raw|y4m] [-pattern bars|ramp|checker|solid] [-id N] -o FILE",
		run:     runMedia,
	})
}

func runMedia(args []string, stdout, stderr io.Writer) int {
	fs := newFlags(commands["media"], stderr)
	size := fs.String("size", "640x360", "picture size `WxH` (even numbers)")
	rate := fs.String("rate", "30", "frame `rate`: 25, 30, 30000/1001, 50, 60...")
	frames := fs.Int("frames", 0, "number of frames (0: two seconds' worth)")
	format := fs.String("format", "nv12", "pixel format: nv12 or p010")
	kind := fs.String("kind", "", "file kind: raw (frames back to back, as raw_file reads) or y4m; default from the extension of -o (.y4m: y4m, else raw)")
	pattern := fs.String("pattern", "bars", "picture: bars, ramp, checker or solid")
	id := fs.Int("id", 1, "source number drawn into every frame with its frame number (0-65535)")
	out := fs.String("o", "", "output `FILE` (required)")
	if rc := parseFlags(fs, args); rc >= 0 {
		return rc
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "onair media: "+format+"\n", a...)
		return 2
	}
	if fs.NArg() > 0 {
		return usage("unexpected argument %q: the output goes in -o FILE", fs.Arg(0))
	}
	if *out == "" {
		return usage("-o FILE is required (for example -o media/clip0.nv12)")
	}
	w, h, err := mediaSize(*size)
	if err != nil {
		return usage("-size: %v", err)
	}
	r, err := mediaRate(*rate)
	if err != nil {
		return usage("-rate: %v", err)
	}
	f, err := frame.ParseFormat(*format)
	if err != nil {
		return usage("-format: %v", err)
	}
	p, err := cpu.ParsePattern(*pattern)
	if err != nil {
		return usage("-pattern: %v", err)
	}
	if *id < 0 || *id > 65535 {
		return usage("-id %d: must be 0..65535", *id)
	}
	if *kind == "" {
		*kind = "raw"
		if strings.HasSuffix(strings.ToLower(*out), ".y4m") {
			*kind = "y4m"
		}
	}
	if *kind != "raw" && *kind != "y4m" {
		return usage("-kind %q: use raw or y4m", *kind)
	}
	n := *frames
	if n < 0 {
		return usage("-frames %d: must be positive", n)
	}
	if n == 0 {
		n = int((2*r.Num + r.Den - 1) / r.Den)
	}
	tp, err := cpu.NewTestPattern(cpu.TestPatternConfig{ID: *out, StampID: uint16(*id), Pattern: p, Format: f, Width: w, Height: h, Rate: r,
		Solid: [3]uint8{128, 90, 160}})
	if err != nil {
		return usage("%v", err)
	}
	if err := writeMedia(*out, *kind, tp, f, w, h, r, n); err != nil {
		fmt.Fprintf(stderr, "onair media: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: %d frames %dx%d %v at %v fps (%s, %s)\n", *out, n, w, h, f, r, *kind, p)
	return 0
}

func writeMedia(path, kind string, tp *cpu.TestPattern, f frame.Format, w, h int, r frame.Rational, n int) (err error) {
	fr, err := frame.New(f, w, h)
	if err != nil {
		return err
	}
	if kind == "y4m" {
		rec, err := cpu.CreateRecord(path, f, w, h, r)
		if err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			if err := tp.Next(fr); err != nil {
				rec.Close()
				return err
			}
			if err := rec.Write(fr); err != nil {
				rec.Close()
				return err
			}
		}
		return rec.Close()
	}
	file, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("%w (check that the directory exists)", err)
	}
	defer func() {
		if cerr := file.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	bw := bufio.NewWriterSize(file, 4<<20)
	for i := 0; i < n; i++ {
		if err := tp.Next(fr); err != nil {
			return err
		}
		if _, err := fr.WriteTo(bw); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// mediaSize reads "WxH".
func mediaSize(s string) (int, int, error) {
	ws, hs, ok := strings.Cut(s, "x")
	w, e1 := strconv.Atoi(ws)
	h, e2 := strconv.Atoi(hs)
	if !ok || e1 != nil || e2 != nil || w <= 0 || h <= 0 || w%2 != 0 || h%2 != 0 {
		return 0, 0, fmt.Errorf("%q is not WxH with even positive numbers (for example 640x360)", s)
	}
	return w, h, nil
}

// mediaRate reads "30", "30000/1001" or "29.97" as a reduced rational.
func mediaRate(s string) (frame.Rational, error) {
	bad := fmt.Errorf("%q is not a frame rate (for example 30, 25, 30000/1001)", s)
	var num, den int64 = 0, 1
	if a, b, ok := strings.Cut(s, "/"); ok {
		var e1, e2 error
		num, e1 = strconv.ParseInt(a, 10, 64)
		den, e2 = strconv.ParseInt(b, 10, 64)
		if e1 != nil || e2 != nil {
			return frame.Rational{}, bad
		}
	} else if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		num = v
	} else if fl, err := strconv.ParseFloat(s, 64); err == nil && fl > 0 && fl < 1000 {
		num, den = int64(fl*1000+0.5), 1000
	} else {
		return frame.Rational{}, bad
	}
	if num <= 0 || den <= 0 {
		return frame.Rational{}, bad
	}
	g := mediaGCD(num, den)
	return frame.Rational{Num: num / g, Den: den / g}, nil
}

func mediaGCD(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
