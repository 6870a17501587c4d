package ipc

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSocketModeIsNotTheUmasks (issue 27, item 12): the socket took its
// mode from the umask, world-writable under umask 000. It is 0600 unless
// the config says otherwise, whatever the umask.
func TestSocketModeIsNotTheUmasks(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	for _, c := range []struct {
		mode, want os.FileMode
	}{{0, 0o600}, {0o660, 0o660}} {
		path := socketPath(t)
		r, err := Listen(ReceiverConfig{Path: path, Mode: c.mode})
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Mode().Perm(); got != c.want {
			t.Errorf("mode %04o asked under umask 000: the socket is %04o, want %04o", c.mode, got, c.want)
		}
	}
}

// TestAProducerOfAnotherUserIsRefused (issue 27, item 12): with PeerUIDs
// set, the peer's uid (SO_PEERCRED) decides; a producer of another user is
// told why with ERROR, counted, and never welcomed.
func TestAProducerOfAnotherUserIsRefused(t *testing.T) {
	me := os.Getuid()
	path := socketPath(t)
	counters := &Counters{}
	r, err := Listen(ReceiverConfig{Path: path, PeerUIDs: []int{me + 1}, Counters: counters})
	if err != nil {
		t.Fatal(err)
	}
	go r.Serve(func(f *Frame) { f.Release() })
	defer r.Close()
	_, err = Dial(ProducerConfig{Socket: path, Picture: NewPicture(BGRA, AlphaPremultiplied, 16, 8)})
	var refused *RefusedError
	if !errors.As(err, &refused) || refused.Code != CodePermission || !strings.Contains(refused.Text, "runs as user "+strconv.Itoa(me)) {
		t.Fatalf("a producer of user %d to a source for user %d: %v, want ERROR permission naming the user", me, me+1, err)
	}
	if counters.Refused.Load() != 1 || counters.Connections.Load() != 0 {
		t.Errorf("%d refused, %d welcomed", counters.Refused.Load(), counters.Connections.Load())
	}
	r.Close()

	// Its own user is let in.
	r, err = Listen(ReceiverConfig{Path: path, PeerUIDs: []int{me}})
	if err != nil {
		t.Fatal(err)
	}
	go r.Serve(func(f *Frame) { f.Release() })
	defer r.Close()
	p, err := Dial(ProducerConfig{Socket: path, Picture: NewPicture(BGRA, AlphaPremultiplied, 16, 8)})
	if err != nil {
		t.Fatalf("a producer of the show's own user: %v", err)
	}
	p.Close()
}

// TestListenLeavesAnotherProgramsSocketAlone (issue 27, item 6): a live
// SOCK_STREAM listener at the path was taken for stale (the probe dialled
// SOCK_SEQPACKET and read EPROTOTYPE as nobody there), removed and
// replaced. A socket of any type that is live there is refused, and keeps
// working; only a file no socket holds is replaced.
func TestListenLeavesAnotherProgramsSocketAlone(t *testing.T) {
	dir := filepath.Dir(socketPath(t))
	stream := filepath.Join(dir, "stream.sock")
	ln, err := net.Listen("unix", stream)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dgram := filepath.Join(dir, "dgram.sock")
	dc, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: dgram, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer dc.Close()
	bound := filepath.Join(dir, "bound.sock")
	bfd, _ := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err := unix.Bind(bfd, &unix.SockaddrUnix{Name: bound}); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(bfd)
	for _, c := range []struct{ path, want string }{
		{stream, "SOCK_STREAM socket listens on it"},
		{dgram, "SOCK_DGRAM socket listens on it"},
		{bound, "bound there"},
	} {
		r, err := Listen(ReceiverConfig{Path: c.path})
		if err == nil {
			r.Close()
			t.Errorf("%s: taken over", filepath.Base(c.path))
			continue
		}
		if !strings.Contains(err.Error(), "in use: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", filepath.Base(c.path), err, c.want)
		}
		if _, err := os.Stat(c.path); err != nil {
			t.Errorf("%s: the other program's socket is gone: %v", filepath.Base(c.path), err)
		}
	}
	// The stream listener still answers.
	conn, err := net.Dial("unix", stream)
	if err != nil {
		t.Fatalf("the stream listener no longer answers: %v", err)
	}
	conn.Close()
}

// TestAnotherUserCannotReachTheSocket (issue 27, item 12): as a user that
// is not the show's, a producer cannot connect to a socket of the default
// mode (0600) even under umask 000. It needs root to run as another user.
func TestAnotherUserCannotReachTheSocket(t *testing.T) {
	if os.Getenv("ONAIR_IPC_DIAL") != "" {
		_, err := Dial(ProducerConfig{Socket: os.Getenv("ONAIR_IPC_DIAL"), Picture: NewPicture(BGRA, AlphaPremultiplied, 16, 8)})
		if err == nil {
			os.Stdout.WriteString("CONNECTED\n")
		} else {
			os.Stdout.WriteString("REFUSED " + err.Error() + "\n")
		}
		return
	}
	if os.Getuid() != 0 {
		t.Skip("needs root to run a producer as another user")
	}
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	dir, err := os.MkdirTemp("", "oair")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "ipc.test")
	self, _ := os.ReadFile("/proc/self/exe")
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		mode os.FileMode
		want string
	}{{0, "REFUSED"}, {0o666, "CONNECTED"}} {
		path := filepath.Join(dir, "s.sock")
		r, err := Listen(ReceiverConfig{Path: path, Mode: c.mode})
		if err != nil {
			t.Fatal(err)
		}
		go r.Serve(func(f *Frame) { f.Release() })
		cmd := exec.Command(bin, "-test.run", "^TestAnotherUserCannotReachTheSocket$")
		cmd.Env = append(os.Environ(), "ONAIR_IPC_DIAL="+path)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		r.Close()
		if err != nil {
			t.Fatalf("the producer as user 65534: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), c.want) {
			t.Errorf("mode %04o, a producer of user 65534: %s, want %s", c.mode, out, c.want)
		}
	}
}
