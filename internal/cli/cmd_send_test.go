package cli

import (
	"bytes"
	"net"
	"path/filepath"
	"strings"
	"testing"
)

// TestSendSpeed: onair send -speed out of its range is refused with what
// to give; within it the file goes out whole (every byte of it arrives
// on a UDP socket here).
func TestSendSpeed(t *testing.T) {
	var out, errb bytes.Buffer
	if rc := runSend([]string{"-speed", "3", "udp://127.0.0.1:9", "x.ts"}, &out, &errb); rc != 2 || !strings.Contains(errb.String(), "from 0.5 to 2") {
		t.Fatalf("-speed 3: rc %d, %q", rc, errb.String())
	}
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	clip := filepath.Join("nodes", "media", "es", "testdata", "h264.ts") // TestMain runs in the repository root
	errb.Reset()
	if rc := runSend([]string{"-speed", "1.999", "udp://" + c.LocalAddr().String(), clip}, &out, &errb); rc != 0 {
		t.Fatalf("rc %d: %s", rc, errb.String())
	}
	n, buf := 0, make([]byte, 65536)
	for n < 23876 { // the clip's size
		m, err := c.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		n += m
	}
}
