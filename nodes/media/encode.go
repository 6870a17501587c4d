package media

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/onairhq/onair/audio"
	"github.com/onairhq/onair/frame"
)

// EncodeConfig describes a compressed test clip: frames of a Source piped
// into an external ffmpeg that encodes them with libx265 (HEVC, 8- or
// 10-bit) or libx264 (H.264, 8-bit) into an Annex B elementary stream or an
// MPEG transport stream.
type EncodeConfig struct {
	Bin   string // the ffmpeg binary; "" is "ffmpeg" on $PATH
	Path  string // the file written (replaced if it exists)
	Codec string // "hevc" or "h264"
	// Container is "es" (Annex B: .hevc, .264) or "ts" (MPEG-TS).
	Container string
	Format    frame.Format
	Width     int
	Height    int
	Rate      frame.Rational
	// GOP is the distance between IDR pictures. GOPs are closed and the
	// first picture is an IDR, so a looped clip starts again cleanly.
	GOP int
	// Bitrate, such as "8M", asks for an average bit rate; "" encodes at
	// the encoder's default quality.
	Bitrate string
	// Noise adds moving noise of this strength (ffmpeg's noise filter,
	// 0-100) before encoding, so that the encoder spends a camera's bit
	// rate: a clean test pattern takes a few kbit/s, which says little
	// about a decoder's throughput. The stamps survive it.
	Noise int
	// Audio, in a transport stream, is the codec ("aac", "mp2", "ac3",
	// "opus" or "pcm_s16le"... any ffmpeg audio encoder MPEG-TS carries)
	// of a sound track made of Tone: frame n of the clip carries the tone's
	// samples of frame n, so its blips fall on the frames that flash. ""
	// makes no sound track.
	Audio string
	Tone  *audio.Tone
}

// audioPipe is the descriptor ffmpeg reads the sound track from: the
// first of cmd.ExtraFiles.
const audioPipe = "pipe:3"

// EncodeArgs returns the ffmpeg arguments Encode runs.
func EncodeArgs(cfg EncodeConfig) ([]string, error) {
	if cfg.Codec != "hevc" && cfg.Codec != "h264" {
		return nil, fmt.Errorf("codec %q: use hevc or h264", cfg.Codec)
	}
	if cfg.Codec == "h264" && cfg.Format != frame.NV12 {
		return nil, fmt.Errorf("H.264 clips are 8-bit (nv12): NVDEC decodes no 10-bit H.264; use hevc for p010")
	}
	if cfg.GOP < 1 {
		return nil, fmt.Errorf("GOP %d: must be at least 1", cfg.GOP)
	}
	if err := checkRecord(cfg.Format, cfg.Width, cfg.Height, cfg.Rate); err != nil {
		return nil, err
	}
	in, out := "nv12", "yuv420p"
	if cfg.Format == frame.P010 {
		in, out = "p010le", "yuv420p10le"
	}
	g := strconv.Itoa(cfg.GOP)
	args := []string{"-hide_banner", "-nostdin", "-loglevel", "error", "-y",
		"-f", "rawvideo", "-pix_fmt", in, "-s", strconv.Itoa(cfg.Width) + "x" + strconv.Itoa(cfg.Height),
		"-r", cfg.Rate.String(), "-i", "pipe:0"}
	switch {
	case cfg.Audio == "":
		args = append(args, "-an")
	case cfg.Container != "ts":
		return nil, fmt.Errorf("audio %s: only a transport stream (.ts) carries a sound track", cfg.Audio)
	case cfg.Tone == nil:
		return nil, fmt.Errorf("audio %s: no tone to encode", cfg.Audio)
	default:
		args = append(args, "-f", "f32le", "-ar", strconv.Itoa(audio.Rate), "-ac", strconv.Itoa(audio.Channels), "-i", audioPipe,
			"-map", "0:v:0", "-map", "1:a:0", "-c:a", cfg.Audio)
	}
	args = append(args, "-pix_fmt", out, "-g", g)
	if cfg.Bitrate != "" {
		args = append(args, "-b:v", cfg.Bitrate)
	}
	if cfg.Noise < 0 || cfg.Noise > 100 {
		return nil, fmt.Errorf("noise %d: use 0 to 100", cfg.Noise)
	}
	if cfg.Noise > 0 {
		args = append(args, "-vf", "noise=alls="+strconv.Itoa(cfg.Noise)+":allf=t+u")
	}
	switch cfg.Codec {
	case "hevc":
		args = append(args, "-c:v", "libx265", "-preset", "fast",
			"-x265-params", "log-level=error:keyint="+g+":min-keyint="+g+":scenecut=0:open-gop=0:repeat-headers=1")
	case "h264":
		args = append(args, "-c:v", "libx264", "-preset", "fast", "-keyint_min", g, "-sc_threshold", "0",
			"-x264-params", "open-gop=0")
	}
	switch cfg.Container {
	case "es":
		args = append(args, "-f", cfg.Codec)
	case "ts":
		args = append(args, "-f", "mpegts")
	default:
		return nil, fmt.Errorf("container %q: use es or ts", cfg.Container)
	}
	return append(args, cfg.Path), nil
}

// Encode writes frames pictures of src (of cfg's format and size) into
// cfg.Path through ffmpeg. The error carries ffmpeg's last lines.
func Encode(cfg EncodeConfig, src Source, frames int) error {
	return EncodeContext(context.Background(), cfg, src, frames, nil)
}

// EncodeContext is Encode until ctx ends: then ffmpeg is killed (it runs
// in a process group of its own, so a terminal's Ctrl-C reaches only its
// parent, which decides) and the error is ctx's. progress, when set, is
// told the frames handed to ffmpeg so far, after each.
func EncodeContext(ctx context.Context, cfg EncodeConfig, src Source, frames int, progress func(done int)) error {
	args, err := EncodeArgs(cfg)
	if err != nil {
		return err
	}
	if src.Format() != cfg.Format || src.Width() != cfg.Width || src.Height() != cfg.Height {
		return fmt.Errorf("encode: the source makes %v %dx%d frames, the clip is %v %dx%d", src.Format(), src.Width(), src.Height(), cfg.Format, cfg.Width, cfg.Height)
	}
	bin := cfg.Bin
	if bin == "" {
		bin = "ffmpeg"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return fmt.Errorf("encoding needs ffmpeg with libx265/libx264: %w", err)
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = time.Second
	var stderr tailBuffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	var sound *os.File
	if cfg.Audio != "" {
		r, w, err := os.Pipe()
		if err != nil {
			return err
		}
		cmd.ExtraFiles = []*os.File{r}
		sound = w
		defer r.Close()
	}
	if err := cmd.Start(); err != nil {
		if sound != nil {
			sound.Close()
		}
		return fmt.Errorf("starting ffmpeg: %w", err)
	}
	if sound != nil {
		// The sound track on its own pipe, from a goroutine: ffmpeg
		// reads both inputs as it needs them.
		go func() {
			defer sound.Close()
			bw := bufio.NewWriterSize(sound, 1<<20)
			var buf []byte
			for n := int64(0); n < int64(frames); n++ {
				buf = audio.AppendF32LE(buf[:0], cfg.Tone.Block(nil, n))
				if _, err := bw.Write(buf); err != nil {
					return
				}
			}
			bw.Flush()
		}()
	}
	fr, err := frame.New(cfg.Format, cfg.Width, cfg.Height)
	if err != nil {
		stdin.Close()
		cmd.Wait()
		return err
	}
	bw := bufio.NewWriterSize(stdin, 4<<20)
	var werr error
	for i := 0; i < frames && werr == nil; i++ {
		if werr = ctx.Err(); werr != nil {
			break
		}
		if werr = src.Next(fr); werr == nil {
			_, werr = fr.WriteTo(bw)
		}
		if progress != nil {
			progress(i + 1)
		}
	}
	if werr == nil {
		werr = bw.Flush()
	}
	stdin.Close()
	err = cmd.Wait()
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("ffmpeg encoding %s: %w (ffmpeg stopped)", cfg.Path, cerr)
	}
	if err != nil || werr != nil {
		msg := strings.TrimSpace(lastLines(stderr.String(), 5))
		if msg == "" && werr != nil {
			msg = werr.Error()
		}
		if bytes.Contains([]byte(msg), []byte("Unknown encoder")) {
			msg += " (this ffmpeg lacks libx265/libx264)"
		}
		return fmt.Errorf("ffmpeg encoding %s: %v: %s", cfg.Path, err, msg)
	}
	return nil
}
