package ipc

// Unix socket and shared-memory plumbing: SOCK_SEQPACKET sockets with
// descriptors passed as SCM_RIGHTS, eventfd wake-ups, sealed memfds.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// DefaultSocketMode is the mode a receiver's socket is created with when
// its config names none: the show's own user may connect, nobody else
// (root aside). The umask plays no part.
const DefaultSocketMode os.FileMode = 0o600

// listen binds a SOCK_SEQPACKET socket at path, with mode (the umask plays
// no part: the mode is set before the socket listens, so no connection is
// taken under another). A socket file left by a process that is gone is
// replaced; one that a live socket of any type holds is refused, and so is
// one that cannot be told apart (a probe refused permission).
func listen(path string, mode os.FileMode) (int, error) {
	if path == "" {
		return -1, errors.New("no socket path: set the browser source's socket")
	}
	if len(path) >= len(unix.RawSockaddrUnix{}.Path) {
		return -1, fmt.Errorf("socket path %s is %d bytes, over the %d a Unix socket allows: use a shorter path", path, len(path), len(unix.RawSockaddrUnix{}.Path)-1)
	}
	if dir := filepath.Dir(path); dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return -1, fmt.Errorf("socket %s: directory %s does not exist: create it, or point the source's socket elsewhere", path, dir)
		}
	}
	if st, err := os.Lstat(path); err == nil {
		if st.Mode()&os.ModeSocket == 0 {
			return -1, fmt.Errorf("socket %s: a file that is not a socket is in the way: remove it or choose another path", path)
		}
		if why := inUse(path); why != "" {
			return -1, fmt.Errorf("socket %s is in use: %s", path, why)
		}
		os.Remove(path) // stale: no socket holds it
	}
	if mode == 0 {
		mode = DefaultSocketMode
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return -1, fmt.Errorf("socket %s: %w", path, err)
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("socket %s: bind: %w", path, err)
	}
	// Until Listen, a connection is refused: the mode is in place first.
	if err := os.Chmod(path, mode.Perm()); err != nil {
		unix.Close(fd)
		os.Remove(path)
		return -1, fmt.Errorf("socket %s: mode %04o: %w", path, mode.Perm(), err)
	}
	if err := unix.Listen(fd, 4); err != nil {
		unix.Close(fd)
		os.Remove(path)
		return -1, fmt.Errorf("socket %s: listen: %w", path, err)
	}
	return fd, nil
}

// inUse says why the socket file at path is not stale ("" when it is):
// a socket of any type answers there (the probe dials each type without
// blocking: a listener whose backlog is full is live too), or one is bound
// there without listening (/proc/net/unix lists it), or the probe was
// refused permission, so it cannot tell.
func inUse(path string) string {
	for _, typ := range []struct {
		t    int
		name string
	}{{unix.SOCK_SEQPACKET, "SOCK_SEQPACKET"}, {unix.SOCK_STREAM, "SOCK_STREAM"}, {unix.SOCK_DGRAM, "SOCK_DGRAM"}} {
		fd, err := unix.Socket(unix.AF_UNIX, typ.t|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
		if err != nil {
			return fmt.Sprintf("cannot probe it (%v); remove it yourself if no program uses it", err)
		}
		err = unix.Connect(fd, &unix.SockaddrUnix{Name: path})
		unix.Close(fd)
		switch err {
		case nil, unix.EAGAIN, unix.EINPROGRESS:
			if typ.t == unix.SOCK_SEQPACKET {
				return "another process listens on it (another onair running the same show?)"
			}
			return fmt.Sprintf("another program's %s socket listens on it: point the source's socket elsewhere", typ.name)
		case unix.EPROTOTYPE, unix.ECONNREFUSED, unix.ENOENT:
			// another type, or nobody listening with this one
		case unix.EACCES, unix.EPERM:
			return fmt.Sprintf("cannot probe it (%v): it may belong to another user; remove it yourself if no program uses it", err)
		default:
			return fmt.Sprintf("cannot probe it (%v); remove it yourself if no program uses it", err)
		}
	}
	if boundInProc(path) {
		return "a socket is bound there (listed in /proc/net/unix) without listening: point the source's socket elsewhere"
	}
	return ""
}

// boundInProc reports whether /proc/net/unix lists a socket bound at path
// (as given, or absolute).
func boundInProc(path string) bool {
	b, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		return false
	}
	abs, _ := filepath.Abs(path)
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) >= 8 && (f[7] == path || f[7] == abs) {
			return true
		}
	}
	return false
}

// dial connects a blocking SOCK_SEQPACKET socket to path.
func dial(path string) (int, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// oobSpace is room for the control data of one message: up to four
// descriptors (a message carries at most one; extras are closed and
// refused).
var oobSpace = unix.CmsgSpace(4 * 4)

// recv reads one message and the descriptors that came with it. With
// nonblock it returns unix.EAGAIN when nothing waits. n == 0 and no error
// means the peer closed the connection.
func recv(fd int, buf, oob []byte, nonblock bool) (n int, fds []int, err error) {
	flags := unix.MSG_CMSG_CLOEXEC
	if nonblock {
		flags |= unix.MSG_DONTWAIT
	}
	for {
		var oobn, rflags int
		n, oobn, rflags, err = recvmsg(fd, buf, oob, flags)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, nil, err
		}
		if oobn > 0 {
			fds = parseRights(oob[:oobn])
		}
		switch {
		case rflags&unix.MSG_CTRUNC != 0:
			closeAll(fds)
			return 0, nil, errors.New("a message carried more file descriptors than one: send one descriptor a message")
		case rflags&unix.MSG_TRUNC != 0:
			closeAll(fds)
			return 0, nil, fmt.Errorf("a message longer than %d bytes", len(buf))
		}
		return n, fds, nil
	}
}

// recvmsg is recvmsg(2) without the sender's address (unix.Recvmsg
// allocates one for every message; a Unix socket's peer is known).
func recvmsg(fd int, buf, oob []byte, flags int) (n, oobn, rflags int, err error) {
	var msg unix.Msghdr
	var iov unix.Iovec
	if len(buf) > 0 {
		iov.Base = &buf[0]
		iov.SetLen(len(buf))
	}
	msg.Iov = &iov
	msg.SetIovlen(1)
	if len(oob) > 0 {
		msg.Control = &oob[0]
		msg.SetControllen(len(oob))
	}
	r, _, e := unix.Syscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&msg)), uintptr(flags))
	if e != 0 {
		return 0, 0, 0, e
	}
	return int(r), int(msg.Controllen), int(msg.Flags), nil
}

func parseRights(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_RIGHTS {
			if r, err := unix.ParseUnixRights(&m); err == nil {
				fds = append(fds, r...)
			}
		}
	}
	return fds
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// send writes one message, with fd attached when fd >= 0. With nonblock it
// returns unix.EAGAIN when the socket's buffer is full.
func send(fd int, b []byte, attach int, nonblock bool) error {
	var oob []byte
	if attach >= 0 {
		oob = unix.UnixRights(attach)
	}
	flags := unix.MSG_NOSIGNAL
	if nonblock {
		flags |= unix.MSG_DONTWAIT
	}
	for {
		_, err := unix.SendmsgN(fd, b, oob, nil, flags)
		if err == unix.EINTR {
			continue
		}
		return err
	}
}

// pollOut waits until fd is writable or the deadline passes.
func pollOut(fd int, deadline time.Time) bool {
	for {
		ms := int(time.Until(deadline).Milliseconds())
		if ms <= 0 {
			return false
		}
		p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		n, err := unix.Poll(p, ms)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return false
		}
		return p[0].Revents&unix.POLLOUT != 0
	}
}

// newWake makes a non-blocking eventfd for waking a poll.
func newWake() (int, error) {
	return unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
}

func wake(fd int) {
	var one = [8]byte{1}
	unix.Write(fd, one[:])
}

func drainWake(fd int) {
	var b [8]byte
	unix.Read(fd, b[:])
}

// NewMemfd makes a sealed shared-memory buffer of size bytes and maps it
// for writing: the buffer a producer paints into and hands over. The seals
// (shrink, grow, seal) promise the receiver that the size it maps stays.
func NewMemfd(name string, size int) (fd int, mem []byte, err error) {
	fd, err = unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return -1, nil, fmt.Errorf("memfd %s: %w", name, err)
	}
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		unix.Close(fd)
		return -1, nil, fmt.Errorf("memfd %s: size %d: %w", name, size, err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_SEAL); err != nil {
		unix.Close(fd)
		return -1, nil, fmt.Errorf("memfd %s: seal: %w", name, err)
	}
	mem, err = unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Close(fd)
		return -1, nil, fmt.Errorf("memfd %s: map: %w", name, err)
	}
	return fd, mem, nil
}

// CheckShared reports whether fd can be mapped for size bytes without the
// risk of the producer shrinking it under the mapping (which would kill
// the process with SIGBUS): a memfd sealed against shrinking, at least
// size bytes long.
func CheckShared(fd, size int) error {
	seals, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0)
	if err != nil {
		return fmt.Errorf("the descriptor is not a memfd (%v): the CPU backend maps sealed shared memory only (memfd_create with MFD_ALLOW_SEALING, then F_SEAL_SHRINK)", err)
	}
	if seals&unix.F_SEAL_SHRINK == 0 {
		return errors.New("the memfd is not sealed against shrinking: add F_SEAL_SHRINK (and F_SEAL_GROW) before sending it")
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("fstat: %w", err)
	}
	if st.Size < int64(size) {
		return fmt.Errorf("the memfd holds %d bytes, the picture needs %d", st.Size, size)
	}
	return nil
}

// monotonic reads CLOCK_MONOTONIC in nanoseconds.
func monotonic() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}
