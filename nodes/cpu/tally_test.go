package cpu

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/onairhq/onair/tsl5"
)

// tallyShow's scenes put sources where tally by visibility matters: pip
// draws one full frame, two as a picture-in-picture and three fully
// transparent; covered draws four under an opaque full-frame one, and five
// as a picture-in-picture.
const tallyShow = `
show {
  name       = "tally"
  size       = "320x180"
  frame_rate = "30"
}
canvas {
  pacing_loops = 2
}
tally "tsl5" "desk" {
  address = "127.0.0.1"
  port    = %d
  screen  = 7
}
tally "tsl5" "monitors" {
  address   = "127.0.0.1"
  port      = %d
  transport = "tcp"
  screen    = 8
}
source "test_pattern" "one" {}
source "test_pattern" "two" {
  count = 1
}
source "test_pattern" "three" {}
source "test_pattern" "four" {}
source "test_pattern" "five" {}
scene "pip" {
  layer {
    source = source.one
  }
  layer {
    source = source.two[0]
    rect   = [220, 10, 80, 45]
    z      = 1
  }
  layer {
    source  = source.three
    opacity = 0
  }
}
scene "covered" {
  layer {
    source = source.four
  }
  layer {
    source = source.one
    z      = 1
  }
  layer {
    source = source.five
    rect   = [10, 10, 80, 45]
    z      = 2
  }
}
bus "program" "pgm" {
  scene = scene.pip
}
output "null" "pgm" {
  bus = bus.pgm
}
`

// lamps is a packet's tally as "label=colour" in index order.
func lamps(p *tsl5.Packet) string {
	var s []string
	for _, d := range p.Displays {
		if d.RH != d.LH || d.RH != d.Text {
			return fmt.Sprintf("display %d's lamps differ: %+v", d.Index, d)
		}
		s = append(s, fmt.Sprintf("%d:%s=%s", d.Index, d.Label, d.RH))
	}
	return strings.Join(s, " ")
}

// TestTallyOverTSL5 runs a show whose two tally blocks send to a UDP and a
// TCP listener of the test's, decodes what arrives as TSL 5.0 and follows
// it through a preview and a take: a source is red while it is visible on
// Program (a picture-in-picture too, not a transparent layer nor one
// hidden under an opaque one), green while visible on preview; both
// transports carry the same displays, labelled with the show's names
// (two[0]), each on its block's screen.
func TestTallyOverTSL5(t *testing.T) {
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	got := map[string]chan string{"udp": make(chan string, 256), "tcp": make(chan string, 256)}
	bad := make(chan string, 16)
	screens := map[string]uint16{"udp": 7, "tcp": 8}
	check := func(tr string, p *tsl5.Packet, err error) {
		switch {
		case err != nil:
			bad <- fmt.Sprintf("%s: %v", tr, err)
		case p.Screen != screens[tr] || p.Version != 0:
			bad <- fmt.Sprintf("%s: screen %d, version %d", tr, p.Screen, p.Version)
		default:
			select {
			case got[tr] <- lamps(p):
			default: // the test reads the latest only
			}
		}
	}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, _, err := udp.ReadFrom(buf)
			if err != nil {
				return
			}
			p, err := tsl5.Decode(buf[:n])
			check("udp", p, err)
		}
	}()
	go func() {
		c, err := tcp.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		var u tsl5.Unwrapper
		buf := make([]byte, 4096)
		for {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			for _, b := range u.Feed(buf[:n]) {
				p, err := tsl5.Decode(b)
				check("tcp", p, err)
			}
		}
	}()
	p := compile(t, writeShow(t, fmt.Sprintf(tallyShow, udp.LocalAddr().(*net.UDPAddr).Port, tcp.Addr().(*net.TCPAddr).Port)), nil)
	s := startShow(t, p)
	defer s.Stop()
	// wait reads both transports until each carries want.
	wait := func(what, want string) {
		t.Helper()
		for tr, ch := range got {
			deadline := time.After(generous)
			last := ""
			for last != want {
				select {
				case last = <-ch:
				case b := <-bad:
					t.Fatal(b)
				case <-deadline:
					t.Fatalf("%s over %s: the last packet said %q, want %q", what, tr, last, want)
				}
			}
		}
	}
	wait("scene.pip on air", "0:five=off 1:four=off 2:one=red 3:three=off 4:two[0]=red")
	if err := s.SetPreview("pgm", "covered"); err != nil {
		t.Fatal(err)
	}
	wait("scene.covered on preview (four hidden under one)", "0:five=green 1:four=off 2:one=red 3:three=off 4:two[0]=red")
	if err := s.Take("pgm", "cut", 0); err != nil {
		t.Fatal(err)
	}
	wait("scene.covered on air, scene.pip on preview", "0:five=red 1:four=off 2:one=red 3:three=off 4:two[0]=green")
	if tl := s.State.Operator().Tally; !tl["source.two[0]"].Preview || tl["source.two[0]"].Program || tl["source.four"].Program || tl["source.three"].Preview {
		t.Errorf("/status's tally disagrees with TSL: %+v", tl)
	}
}
