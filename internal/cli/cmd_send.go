package cli

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/onairhq/onair/nodes/media/live"
)

func init() {
	register(&command{
		name:    "send",
		summary: "Send an MPEG-TS file over SRT or UDP at its own rate (by its PCR), as a camera or an encoder would: to feed a live source where there is no ffmpeg, or to test a path.",
		usage:   "[-loop] [-speed X] [-stamp=false] [-rtp] [-listen] [-latency MS] [-passphrase-env VAR] [-stream-id ID] srt://HOST:PORT|udp://HOST:PORT FILE.ts",
		run:     runSend,
	})
}

func runSend(args []string, stdout, stderr io.Writer) int {
	fs := newFlags(commands["send"], stderr)
	loop := fs.Bool("loop", false, "send the file again from its start after its end, until interrupted")
	withRTP := fs.Bool("rtp", false, "udp: wrap each datagram in RTP (a source with rtp = true)")
	listen := fs.Bool("listen", false, "srt: wait for the source to call (a source with mode = \"caller\"); otherwise dial its listener")
	latency := fs.Int("latency", 120, "srt: latency in ms")
	passEnv := fs.String("passphrase-env", "", "srt: the environment `VARIABLE` holding the passphrase (never given on the command line, where ps would show it)")
	streamID := fs.String("stream-id", "", "srt: the stream id to send")
	speed := fs.Float64("speed", 1, "scale the file's clock: 1.001 sends 0.1 % fast, 0.999 0.1 % slow (a sender whose clock is not the show's, to test a source's frame synchroniser)")
	stamp := fs.Bool("stamp", true, "stamp each video frame's send time in the stream (a TS packet on PID 0x1FF0, which no PMT lists and other receivers drop), so an onair source reports the end-to-end latency; -stamp=false sends the file's packets only")
	if rc := parseFlags(fs, args); rc >= 0 {
		return rc
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "onair send: "+format+"\n", a...)
		return code
	}
	if fs.NArg() != 2 {
		return fail(2, "want a destination and a file: onair send srt://127.0.0.1:9000 clip.ts")
	}
	if *speed < 0.5 || *speed > 2 {
		return fail(2, "-speed %v: give a scale from 0.5 to 2 (1.001 is 0.1 %% fast)", *speed)
	}
	w, err := openDestination(fs.Arg(0), *withRTP, *listen, *latency, *passEnv, *streamID)
	if err != nil {
		return fail(1, "%v", err)
	}
	defer w.Close()
	p := &live.Pacer{Sleep: time.Sleep, Now: time.Now, Speed: *speed, Stamp: *stamp}
	for pass := 1; ; pass++ {
		f, err := os.Open(fs.Arg(1))
		if err != nil {
			return fail(1, "%v", err)
		}
		err = p.Send(w, f)
		f.Close()
		if err != nil {
			return fail(1, "%s, pass %d: %v", fs.Arg(1), pass, err)
		}
		if !*loop {
			return 0
		}
	}
}

func openDestination(dest string, withRTP, listen bool, latency int, passEnv, streamID string) (io.WriteCloser, error) {
	u, err := url.Parse(dest)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("destination %q: want srt://HOST:PORT or udp://HOST:PORT", dest)
	}
	switch u.Scheme {
	case "udp":
		return live.DialUDP(u.Host, withRTP)
	case "srt":
		host, port, err := net.SplitHostPort(u.Host)
		if err != nil {
			return nil, fmt.Errorf("destination %q: %w", dest, err)
		}
		n, err := strconv.Atoi(port)
		if err != nil {
			return nil, fmt.Errorf("destination %q: port %q is not a number", dest, port)
		}
		cfg := live.SRTConfig{Config: live.Config{Address: host, Port: n}, Listener: listen, LatencyMs: latency, StreamID: streamID}
		if passEnv != "" {
			if cfg.Passphrase = os.Getenv(passEnv); cfg.Passphrase == "" {
				return nil, fmt.Errorf("-passphrase-env %s: the variable is not set", passEnv)
			}
		}
		return live.OpenSRT(cfg)
	}
	return nil, fmt.Errorf("destination %q: onair sends over srt:// or udp://", dest)
}
