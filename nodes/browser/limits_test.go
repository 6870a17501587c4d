package browser_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/onairhq/onair/nodes/media/ipc"
)

// TestAPictureLargerThanTheSourceIsRefused is issue 27's fourth item: a
// producer's picture size was not tied to its source's, so an 8192x8192
// producer into a 320x180 source was mapped and converted at full size
// (3 GB, Program at 2 fps). A picture larger than the source's declared
// size is refused at HELLO with ERROR (format) saying both sizes; one at
// the source's size is taken.
func TestAPictureLargerThanTheSourceIsRefused(t *testing.T) {
	dir, start := compileShow(t, patternShow)
	socket := filepath.Join(dir, "gfx.sock")
	connected := make(chan *ipc.Producer, 1)
	go func() {
		p := patternProducer(t, socket)
		if p != nil && !sendPattern(t, p, 1) {
			p = nil
		}
		connected <- p
	}()
	s := start()
	defer s.Stop()
	p := <-connected
	if p == nil {
		t.FailNow()
	}
	p.Close() // BYE: the next producer is not refused as busy
	for _, size := range [][2]int{{8192, 8192}, {640, 180}, {320, 360}} {
		_, err := ipc.DialWait(ipc.ProducerConfig{Socket: socket, Picture: ipc.NewPicture(ipc.BGRA, ipc.AlphaPremultiplied, size[0], size[1])}, wait)
		var refused *ipc.RefusedError
		if !errors.As(err, &refused) || refused.Code != ipc.CodeFormat || !strings.Contains(refused.Text, "larger than the source's 320x180") {
			t.Errorf("a %dx%d producer into a 320x180 source: %v, want ERROR format naming both sizes", size[0], size[1], err)
		}
	}
	p = patternProducer(t, socket)
	if p == nil {
		t.FailNow()
	}
	if !sendPattern(t, p, 2) {
		t.FailNow()
	}
	p.Close()
	if got := s.State.Summary().Sources[0].Browser.Refused; got != 3 {
		t.Errorf("%d connections refused, want 3", got)
	}
}

// TestTheShowsSocketIsTheShowUsersOnly (issue 27, item 12): a browser
// source's socket is 0600 even under umask 000, unless the show's canvas
// sets browser_socket_mode.
func TestTheShowsSocketIsTheShowUsersOnly(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	for _, c := range []struct {
		canvas string
		want   os.FileMode
	}{{"", 0o600}, {"canvas {\n  browser_socket_mode = \"0660\"\n}\n", 0o660}} {
		dir, start := compileShow(t, patternShow+c.canvas)
		socket := filepath.Join(dir, "gfx.sock")
		connected := make(chan *ipc.Producer, 1)
		go func() {
			p := patternProducer(t, socket)
			if p != nil && !sendPattern(t, p, 1) {
				p = nil
			}
			connected <- p
		}()
		s := start()
		p := <-connected
		st, err := os.Stat(socket)
		if p != nil {
			p.Close()
		}
		s.Stop()
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != c.want {
			t.Errorf("canvas %q under umask 000: the socket is %04o, want %04o", c.canvas, st.Mode().Perm(), c.want)
		}
	}
}

// TestAProducerWhoseBufferFailsImportIsTold is issue 27's fifteenth item,
// the producer's part: a buffer onair could not import (here a memfd not
// sealed against shrinking, which the CPU refuses to map) was reported in
// the log and /status only; the producer went on sending into the void.
// It now gets ERROR (code import) naming the buffer and the reason, and
// its connection is retired; the show goes on.
func TestAProducerWhoseBufferFailsImportIsTold(t *testing.T) {
	dir, start := compileShow(t, patternShow)
	socket := filepath.Join(dir, "gfx.sock")
	connected := make(chan *ipc.Producer, 1)
	go func() {
		p := patternProducer(t, socket)
		if p != nil && !sendPattern(t, p, 1) {
			p = nil
		}
		connected <- p
	}()
	s := start()
	defer s.Stop()
	good := <-connected
	if good == nil {
		t.FailNow()
	}
	good.Close()
	unsealed := func(size int) (ipc.BufferMemory, error) {
		fd, err := unix.MemfdCreate("onair-producer-unsealed", unix.MFD_CLOEXEC)
		if err != nil {
			return ipc.BufferMemory{}, err
		}
		unix.Ftruncate(fd, int64(size))
		mem, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		if err != nil {
			unix.Close(fd)
			return ipc.BufferMemory{}, err
		}
		return ipc.BufferMemory{Fd: fd, Pixels: mem, Free: func() { unix.Munmap(mem); unix.Close(fd) }}, nil
	}
	p, err := ipc.DialWait(ipc.ProducerConfig{Socket: socket, Picture: ipc.NewPicture(ipc.BGRA, ipc.AlphaPremultiplied, 320, 180), Alloc: unsealed}, wait)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if !sendPattern(t, p, 2) {
		t.FailNow()
	}
	select {
	case <-p.Done():
	case <-time.After(wait):
		t.Fatal("the producer was never told its buffer could not be imported")
	}
	var refused *ipc.RefusedError
	if err := p.Err(); !errors.As(err, &refused) || refused.Code != ipc.CodeImport || !strings.Contains(refused.Text, "F_SEAL_SHRINK") {
		t.Fatalf("the producer of an unsealed buffer: %v, want ERROR import saying what to seal", err)
	}
	if d, ok := p.Drained(); !ok || d.Reason != ipc.DrainError {
		t.Errorf("drain %+v %v, want one after the ERROR", d, ok)
	}
	src := s.State.Summary().Sources[0]
	if src.Browser.Refused != 1 || !strings.Contains(src.LastError, "F_SEAL_SHRINK") {
		t.Errorf("/status: %d refused, last error %q", src.Browser.Refused, src.LastError)
	}
}
