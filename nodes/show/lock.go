package show

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/onairhq/onair/plan"
)

// OutputLocks are the exclusive locks a show holds on the files its outputs
// write, from before anything opens a file until the show stops.
type OutputLocks struct {
	files   []*os.File
	created []string // files the locking created, removed if the show never starts
}

// LockOutputs locks every file the plan's outputs write (each output node's
// path, relative to baseDir; two outputs of the plan on one file are
// refused), creating a missing file empty (and its
// directory) without truncating one that exists: flock(LOCK_EX|LOCK_NB) on
// it, held until Release. A file another show holds — in another onair or
// in this process — is refused with the holder's pid, read from /proc/locks,
// and nothing is locked. Run it before any source or output opens a file,
// so that a second show writing the same recording never truncates it.
func LockOutputs(p *plan.Plan, baseDir string) (*OutputLocks, error) {
	l := &OutputLocks{}
	seen := map[string]string{} // file → the output writing it
	for i := range p.Nodes {
		n := &p.Nodes[i]
		if !strings.HasPrefix(n.Kind, "output_") {
			continue
		}
		path := n.Params.String("path")
		if _, rolled := n.Params["segment_s"]; path == "" || rolled {
			continue // a rolled recording writes files of its own names (nodes/show/delivery.go)
		}
		full := path
		if !filepath.IsAbs(full) && baseDir != "" {
			full = filepath.Join(baseDir, full)
		}
		if abs, err := filepath.Abs(full); err == nil {
			full = abs
		}
		if other, dup := seen[full]; dup {
			l.discard()
			return nil, fmt.Errorf("%s: %s is written by %s of this show too: give each output its own path (lint: shared-output-path)", n.Address, path, other)
		}
		seen[full] = n.Address
		if err := l.lock(n.Address, path, full); err != nil {
			l.discard()
			return nil, err
		}
	}
	return l, nil
}

func (l *OutputLocks) lock(address, path, full string) error {
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return fmt.Errorf("%s: cannot make the directory of %s: %v (check that it is writable)", address, path, err)
	}
	created := true
	f, err := os.OpenFile(full, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		created = false
		f, err = os.OpenFile(full, os.O_RDWR, 0)
	}
	if err != nil {
		return fmt.Errorf("%s: cannot open %s to lock it: %v (check that it is writable)", address, path, err)
	}
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if err == nil {
		l.files = append(l.files, f)
		if created {
			l.created = append(l.created, full)
		}
		return nil
	}
	defer f.Close()
	if !errors.Is(err, unix.EWOULDBLOCK) {
		return fmt.Errorf("%s: cannot lock %s: %v", address, path, err)
	}
	who := "another onair (its pid is not in /proc/locks)"
	if pid := lockHolder(f); pid == os.Getpid() {
		who = fmt.Sprintf("another show in this onair (pid %d)", pid)
	} else if pid > 0 {
		who = fmt.Sprintf("another onair (pid %d)", pid)
	}
	return fmt.Errorf("%s: %s is being written by %s; stop it or choose another path", address, path, who)
}

// lockHolder returns the pid holding a flock on f, from /proc/locks; 0
// when it cannot tell.
func lockHolder(f *os.File) int {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return 0
	}
	locks, err := os.Open("/proc/locks")
	if err != nil {
		return 0
	}
	defer locks.Close()
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)
	sc := bufio.NewScanner(locks)
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 1234 fe:00:9978577 0 EOF"; waiters
		// have "->" after the number.
		fs := strings.Fields(sc.Text())
		if len(fs) < 6 || fs[1] != "FLOCK" || fs[5] != want {
			continue
		}
		if pid, err := strconv.Atoi(fs[4]); err == nil && pid > 0 {
			return pid
		}
	}
	return 0
}

// Release unlocks every file. Only the show that took the locks calls it,
// once its outputs have closed their files.
func (l *OutputLocks) Release() {
	if l == nil {
		return
	}
	for _, f := range l.files {
		f.Close() // closing the last descriptor drops the flock
	}
	l.files, l.created = nil, nil
}

// discard releases the locks of a show that never went on air, and removes
// the files the locking created that are still empty.
func (l *OutputLocks) discard() {
	if l == nil {
		return
	}
	for _, p := range l.created {
		if fi, err := os.Stat(p); err == nil && fi.Size() == 0 {
			os.Remove(p)
		}
	}
	l.Release()
}
