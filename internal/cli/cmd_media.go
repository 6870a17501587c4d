package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/onairhq/onair/audio"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/nodes/media"
)

func init() {
	register(&command{
		name:    "media",
		summary: "Generate test media (raw NV12/P010, Y4M, or HEVC/H.264 through ffmpeg; moving and frame-numbered) for shows and tests; no downloads.",
		usage:   "[-size WxH] [-rate R] [-frames N] [-format nv12|p010] [-kind raw|y4m|hevc|h264|ts] [-codec hevc|h264] [-gop N] [-bitrate B] [-noise N] [-pattern bars|ramp|checker|solid] [-id N] -o FILE",
		run:     runMedia,
	})
}

func runMedia(args []string, stdout, stderr io.Writer) int {
	fs := newFlags(commands["media"], stderr)
	size := fs.String("size", "640x360", "picture size `WxH` (even numbers, 2 to 16384, as shows accept)")
	rate := fs.String("rate", "30", "frame `rate`: 25, 30, 30000/1001, 50, 60...")
	frames := fs.Int("frames", 0, "number of frames (0: two seconds' worth)")
	format := fs.String("format", "nv12", "pixel format: nv12 or p010")
	kind := fs.String("kind", "", "file kind: raw (frames back to back, as raw_file reads), y4m, hevc or h264 (Annex B elementary streams) or ts (MPEG-TS); default from the extension of -o (.y4m: y4m; .nv12, .p010, .yuv, .raw: raw; .hevc, .h265: hevc; .264, .h264: h264; .ts: ts), which it must agree with")
	codec := fs.String("codec", "", "video coding of a .ts file: hevc (default) or h264; an elementary stream's name says it (encoded by ffmpeg with libx265 or libx264)")
	gop := fs.Int("gop", 0, "frames from one IDR picture to the next in an encoded file (0: one second's worth, at most -frames); GOPs are closed, so a looped clip starts cleanly")
	bitrate := fs.String("bitrate", "", "average bit rate of an encoded file, such as 8M (default: the encoder's default quality)")
	noise := fs.Int("noise", 0, "moving noise (0-100) added before encoding, so the encoder spends a camera's bit rate (a clean pattern takes a few kbit/s); for decoder measurements")
	pattern := fs.String("pattern", "bars", "picture: bars, ramp, checker or solid")
	sound := fs.String("audio", "", "sound track of a .ts file: aac (the default), mp2, ac3 or opus (any ffmpeg audio encoder MPEG-TS carries), or none; the line-up tone (1 kHz, -18 dBFS) with a blip on the frame that flashes each second (a white box in the middle of the picture)")
	id := fs.Int("id", 1, "source number drawn into every frame with its frame number (0-65535)")
	out := fs.String("o", "", "output `FILE` (required): .nv12, .p010, .yuv or .raw for raw frames, .y4m for Y4M, .hevc/.h265/.264/.h264/.ts for encoded video")
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
	// No rate a show would refuse (the language's limits).
	if _, msg := lang.ParseRate(r.String()); msg != "" {
		return usage("-rate %s Shows play no other rate.", msg)
	}
	f, err := frame.ParseFormat(*format)
	if err != nil {
		return usage("-format: %v", err)
	}
	if ext := strings.ToLower(filepath.Ext(*out)); (ext == ".nv12" || ext == ".p010") && ext[1:] != f.String() {
		return usage("-format %s disagrees with -o %s: name the file .%s, or use -format %s", f, *out, f, ext[1:])
	}
	p, err := media.ParsePattern(*pattern)
	if err != nil {
		return usage("-pattern: %v", err)
	}
	if *id < 0 || *id > 65535 {
		return usage("-id %d: must be 0..65535", *id)
	}
	if _, ok := kindExts[*kind]; *kind != "" && !ok {
		return usage("-kind %q: use raw, y4m, hevc, h264 or ts", *kind)
	}
	extKind, ok := mediaKinds[strings.ToLower(filepath.Ext(*out))]
	if !ok {
		return usage("-o %s: the name must end in %s (raw frames back to back), .y4m (Y4M), %s (encoded video); onair media writes no other kind of file", *out, rawExts, codedExts)
	}
	if *kind == "" {
		*kind = extKind
	} else if *kind != extKind {
		return usage("-kind %s disagrees with -o %s, the name of a %s file: name it %s, or leave -kind out", *kind, *out, extKind, kindExts[*kind])
	}
	switch {
	case *codec != "" && *codec != "hevc" && *codec != "h264":
		return usage("-codec %q: use hevc or h264", *codec)
	case *codec != "" && (*kind == "raw" || *kind == "y4m"):
		return usage("-codec %s: a %s file is not encoded; name the file .hevc, .264 or .ts", *codec, *kind)
	case *codec != "" && *kind != "ts" && *codec != *kind:
		return usage("-codec %s disagrees with -o %s, the name of a %s stream: name it %s, or leave -codec out", *codec, *out, *kind, kindExts[*codec])
	}
	encoded := *kind == "hevc" || *kind == "h264" || *kind == "ts"
	if *codec == "" && encoded {
		*codec = *kind
		if *kind == "ts" {
			*codec = "hevc"
		}
	}
	if !encoded && (*gop != 0 || *bitrate != "" || *noise != 0) {
		return usage("-gop, -bitrate and -noise are for encoded files (.hevc, .264, .ts), not %s files", *kind)
	}
	if *noise < 0 || *noise > 100 {
		return usage("-noise %d: use 0 to 100", *noise)
	}
	if *gop < 0 {
		return usage("-gop %d: must be positive (or 0 for one second's worth)", *gop)
	}
	if *codec == "h264" && f != frame.NV12 {
		return usage("-codec h264 -format %s: H.264 clips are 8-bit nv12 (NVDEC decodes no 10-bit H.264); use hevc for p010", f)
	}
	n := *frames
	if n < 0 {
		return usage("-frames %d: must be positive", n)
	}
	if n == 0 {
		n = int((2*r.Num + r.Den - 1) / r.Den)
	}
	if err := mediaFits(*out, *kind, f, w, h, r, n); err != nil {
		fmt.Fprintf(stderr, "onair media: %v\n", err)
		return 1
	}
	switch {
	case *sound != "" && *kind != "ts":
		return usage("-audio %s: only a .ts file carries a sound track", *sound)
	case *sound == "" && *kind == "ts":
		*sound = "aac"
	case *sound == "none":
		*sound = ""
	}
	var tone *audio.Tone
	if *sound != "" {
		cad, err := audio.NewCadence(r.Num, r.Den)
		if err != nil {
			return usage("%v", err)
		}
		t, err := audio.NewTone(audio.ToneHz, audio.ToneDBFS, cad)
		if err != nil {
			return usage("%v", err)
		}
		tone = &t
	}
	tp, err := media.NewTestPattern(media.TestPatternConfig{ID: *out, StampID: uint16(*id), Pattern: p, Format: f, Width: w, Height: h, Rate: r,
		Solid: [3]uint8{128, 90, 160}, Tone: tone})
	if err != nil {
		return usage("%v", err)
	}
	// Ctrl-C or a SIGTERM stops the work (and ffmpeg) and leaves nothing.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	prog := newProgress(stderr, "onair media: "+*out, n)
	if encoded {
		g := *gop
		if g == 0 {
			g = min(n, max(1, int((r.Num+r.Den/2)/r.Den)))
		}
		container := "es"
		if *kind == "ts" {
			container = "ts"
		}
		err := replaceFile(ctx, *out, func(path string) error {
			cfg := media.EncodeConfig{Path: path, Codec: *codec, Container: container, Format: f, Width: w, Height: h, Rate: r, GOP: g, Bitrate: *bitrate, Noise: *noise,
				Audio: *sound, Tone: tone}
			return media.EncodeContext(ctx, cfg, tp, n, prog.frame)
		})
		prog.done()
		if err != nil {
			fmt.Fprintf(stderr, "onair media: %v\n", mediaErr(ctx, *out, err))
			return 1
		}
		what := ""
		if *sound != "" {
			what = fmt.Sprintf(", %s line-up tone", *sound)
		}
		fmt.Fprintf(stdout, "%s: %d frames %dx%d %v at %v fps (%s %s, IDR every %d, %s%s)\n", *out, n, w, h, f, r, *codec, container, g, p, what)
		return 0
	}
	err = replaceFile(ctx, *out, func(path string) error { return writeMedia(ctx, path, *kind, tp, f, w, h, r, n, prog.frame) })
	prog.done()
	if err != nil {
		fmt.Fprintf(stderr, "onair media: %v\n", mediaErr(ctx, *out, err))
		return 1
	}
	fmt.Fprintf(stdout, "%s: %d frames %dx%d %v at %v fps (%s, %s)\n", *out, n, w, h, f, r, *kind, p)
	return 0
}

// replaceFile has write make final's content at a temporary name beside
// it, renamed over final once write returns without error: a full disk, a
// failure or an interrupt never leaves a clip cut short under its name,
// and the temporary file is removed.
func replaceFile(ctx context.Context, final string, write func(path string) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(final), "."+filepath.Base(final)+".*.tmp")
	if err != nil {
		return fmt.Errorf("%w (check that the directory exists)", err)
	}
	path := tmp.Name()
	tmp.Close()
	defer func() {
		if err == nil {
			err = ctx.Err()
		}
		if err == nil {
			if err = os.Chmod(path, 0o644); err == nil {
				err = os.Rename(path, final)
			}
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	return write(path)
}

// mediaErr says what an interrupt left: nothing.
func mediaErr(ctx context.Context, final string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted: %s was not written (nothing is left behind)", final)
	}
	return err
}

func writeMedia(ctx context.Context, path, kind string, tp *media.TestPattern, f frame.Format, w, h int, r frame.Rational, n int, progress func(int)) (err error) {
	fr, err := frame.New(f, w, h)
	if err != nil {
		return err
	}
	if kind == "y4m" {
		rec, err := media.CreateRecord(path, f, w, h, r)
		if err != nil {
			return err
		}
		for i := 0; i < n && ctx.Err() == nil; i++ {
			if err := tp.Next(fr); err != nil {
				rec.Close()
				return err
			}
			if err := rec.Write(fr); err != nil {
				rec.Close()
				return err
			}
			progress(i + 1)
		}
		return rec.Close()
	}
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := file.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	bw := bufio.NewWriterSize(file, 4<<20)
	for i := 0; i < n && ctx.Err() == nil; i++ {
		if err := tp.Next(fr); err != nil {
			return err
		}
		if _, err := fr.WriteTo(bw); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		progress(i + 1)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// mediaFits refuses a file that will not fit on its disk: n frames (and,
// for Y4M, the header and the FRAME lines) against the free space of the
// file system holding it, plus what a file it replaces holds. Where the
// free space cannot be read, it says nothing.
func mediaFits(path, kind string, f frame.Format, w, h int, r frame.Rational, n int) error {
	need := int64(n) * int64(f.Size(w, h))
	if kind == "y4m" {
		need += 64 + 6*int64(n)
	}
	dir := filepath.Dir(path)
	free, ok := media.FreeSpace(dir)
	if !ok {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		free += fi.Size() // truncated before writing
	}
	if need <= free {
		return nil
	}
	return fmt.Errorf("-o %s: %d frames of %dx%d %v need %s, and the file system holding %s has %s free: use fewer -frames (%d fit), a smaller -size or -rate, or another directory",
		path, n, w, h, f, mediaBytes(need), dir, mediaBytes(free), free/max(need/int64(max(n, 1)), 1))
}

// mediaBytes writes a size in bytes for a person: 20.7 MB, 691.2 GB.
func mediaBytes(b int64) string {
	switch {
	case b >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(b)/1e9)
	case b >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(b)/1e6)
	case b >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(b)/1e3)
	}
	return fmt.Sprintf("%d bytes", b)
}

// mediaKinds maps the extensions onair media writes to the kind of file:
// raw frames back to back (as raw_file reads them) or Y4M.
var mediaKinds = map[string]string{".nv12": "raw", ".p010": "raw", ".yuv": "raw", ".raw": "raw", ".y4m": "y4m",
	".hevc": "hevc", ".h265": "hevc", ".264": "h264", ".h264": "h264", ".ts": "ts"}

// kindExts names the extensions of each kind, for messages.
var kindExts = map[string]string{"raw": rawExts, "y4m": ".y4m", "hevc": ".hevc or .h265", "h264": ".264 or .h264", "ts": ".ts"}

const (
	rawExts   = ".nv12, .p010, .yuv or .raw"
	codedExts = ".hevc, .h265, .264, .h264 or .ts"
)

// mediaSize reads "WxH" as shows do (lang.ParseSize): both even, 2 to
// 16384, so that no size is written that no show could play.
func mediaSize(s string) (int, int, error) {
	sz, msg := lang.ParseSize(s)
	if msg != "" {
		return 0, 0, fmt.Errorf("%s Shows accept even widths and heights from 2 to 16384, for example 640x360", msg)
	}
	return sz.W, sz.H, nil
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
