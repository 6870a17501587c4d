package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/onairhq/onair/control"
)

func init() {
	register(&command{
		name:    "audio",
		summary: "Change a bus's mix on a running show: a source's fader, mute, pan or mode, or the bus's master.",
		usage:   "[-addr HOST:PORT|https://HOST:PORT] [-token TOKEN] [-tls-ca FILE] BUS SOURCE|master CHANGE...   (CHANGE: -6dB, mute, unmute, follow, always, off, pan=-0.5)",
		run:     runAudio,
	})
}

// parseAudioChange reads the words after BUS: a source (or "master") and
// what changes.
func parseAudioChange(words []string) (control.AudioRequest, error) {
	var req control.AudioRequest
	if len(words) < 2 {
		return req, fmt.Errorf("name a source (or master) and a change, for example: onair audio bus.pgm source.cam -6dB mute")
	}
	master := words[0] == "master"
	if !master {
		req.Source = words[0]
	}
	for _, w := range words[1:] {
		lw := strings.ToLower(w)
		switch {
		case strings.HasSuffix(lw, "db"):
			db, err := strconv.ParseFloat(strings.TrimSuffix(lw, "db"), 64)
			if err != nil {
				return req, fmt.Errorf("%q: a level is a number of dB, such as -6dB", w)
			}
			if master {
				req.MasterDB = &db
			} else {
				req.GainDB = &db
			}
		case master:
			return req, fmt.Errorf("%q: the master takes a level only, such as -3dB", w)
		case lw == "mute" || lw == "unmute":
			m := lw == "mute"
			req.Mute = &m
		case lw == "follow" || lw == "always" || lw == "off":
			req.Mode = lw
		case strings.HasPrefix(lw, "pan="):
			p, err := strconv.ParseFloat(strings.TrimPrefix(lw, "pan="), 64)
			if err != nil {
				return req, fmt.Errorf("%q: pan is a number from -1 to 1, such as pan=-0.5", w)
			}
			req.Pan = &p
		default:
			return req, fmt.Errorf("%q: use a level (-6dB), mute, unmute, follow, always, off or pan=N", w)
		}
	}
	return req, nil
}

func runAudio(args []string, stdout, stderr io.Writer) int {
	cc := newControlCLI(commands["audio"], stderr)
	if rc := parseFlags(cc.fs, args); rc >= 0 {
		return rc
	}
	a := cc.fs.Args()
	if len(a) < 3 {
		fmt.Fprintln(stderr, "usage: onair audio BUS SOURCE|master CHANGE...   (for example: onair audio bus.pgm source.cam -6dB)")
		return 2
	}
	req, err := parseAudioChange(a[1:])
	if err != nil {
		fmt.Fprintf(stderr, "onair audio: %v\n", err)
		return 2
	}
	if err := cc.client.SetAudio(a[0], req); err != nil {
		fmt.Fprintf(stderr, "onair audio: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s %s: %s\n", a[0], a[1], strings.Join(a[2:], " "))
	return 0
}
