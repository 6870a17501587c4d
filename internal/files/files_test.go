package files

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func write(t *testing.T, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
}

func TestReadRegularReadsAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "show.hcl")
	write(t, path, []byte("show {}\n"), 0o644)
	got, err := ReadRegular(path, 8)
	if err != nil || string(got) != "show {}\n" {
		t.Fatalf("ReadRegular = %q, %v", got, err)
	}
	// Through a link, too.
	link := filepath.Join(t.TempDir(), "link.hcl")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadRegular(link, 8); err != nil || string(got) != "show {}\n" {
		t.Fatalf("ReadRegular(link) = %q, %v", got, err)
	}
}

// A file one byte over the cap is refused with its size and the cap.
func TestReadRegularRefusesALargeFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.hcl")
	write(t, path, bytes.Repeat([]byte("x"), 101), 0o644)
	_, err := ReadRegular(path, 100)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Size != 101 || tl.Max != 100 {
		t.Fatalf("ReadRegular(101 bytes, max 100) = %v", err)
	}
	if want := path + " is 101 bytes, more than the 100 allowed"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
}

// notRegular asserts ReadRegular refuses path as what.
func notRegular(t *testing.T, path, what string) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := ReadRegular(path, 1<<20)
		done <- err
	}()
	err := <-done // a FIFO read would block here forever: the test times out
	var nr *NotRegularError
	if !errors.As(err, &nr) || nr.What != what || nr.Path != path {
		t.Fatalf("ReadRegular(%s) = %v, want it refused as %s", path, err, what)
	}
	if !strings.Contains(err.Error(), path+" is "+what+", not a regular file") {
		t.Errorf("message %q does not name the path and what it is", err)
	}
}

func TestReadRegularRefusesAFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo.hcl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	notRegular(t, fifo, "a named pipe (FIFO)")
}

// A link to /dev/zero is what it points to: a device, never read (reading
// it would never end).
func TestReadRegularRefusesALinkToDevZero(t *testing.T) {
	link := filepath.Join(t.TempDir(), "zero.hcl")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	notRegular(t, link, "a character device")
}

func TestReadRegularRefusesADirectory(t *testing.T) {
	notRegular(t, t.TempDir(), "a directory")
}

func TestReadRegularRefusesASocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	notRegular(t, path, "a socket")
}

func TestReadRegularMissingFile(t *testing.T) {
	_, err := ReadRegular(filepath.Join(t.TempDir(), "none.hcl"), 10)
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

// leftovers lists the directory's entries other than want.
func leftovers(t *testing.T, dir string, want ...string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		keep := false
		for _, w := range want {
			keep = keep || e.Name() == w
		}
		if !keep {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestWriteAtomicCreatesAndReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "show.hcl")
	if err := WriteAtomic(path, []byte("one"), 0o640); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("new file: %v, mode %v; want 0640", err, fi.Mode())
	}
	// The existing file's mode wins over the mode given.
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(path, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	fi, _ = os.Stat(path)
	if string(got) != "two" || fi.Mode().Perm() != 0o600 {
		t.Fatalf("replaced file: %q mode %v; want \"two\" 0600", got, fi.Mode())
	}
	if l := leftovers(t, dir, "show.hcl"); len(l) != 0 {
		t.Errorf("temporary files left: %v", l)
	}
}

// Writing through a link replaces the file it points to and keeps the link.
func TestWriteAtomicThroughALink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.hcl")
	write(t, target, []byte("old"), 0o644)
	link := filepath.Join(dir, "link.hcl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(link, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v", err)
	}
	if got, _ := os.ReadFile(target); string(got) != "new" {
		t.Fatalf("target holds %q", got)
	}
}

// fullDisk fails the write after n bytes with ENOSPC, as a full disk does.
type fullDisk struct {
	w io.Writer
	n int
}

func (f *fullDisk) Write(p []byte) (int, error) {
	if len(p) <= f.n {
		f.n -= len(p)
		return f.w.Write(p)
	}
	k, _ := f.w.Write(p[:f.n])
	f.n = 0
	return k, syscall.ENOSPC
}

// checkUntouched asserts a failed WriteAtomic left the original and no
// temporary file.
func checkUntouched(t *testing.T, err error, path string, old []byte) {
	t.Helper()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write on a full disk: %v, want ENOSPC", err)
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "unchanged") {
		t.Errorf("message %q should name the file and say it is unchanged", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, old) {
		t.Errorf("original changed: %d bytes, want %d", len(got), len(old))
	}
	if l := leftovers(t, filepath.Dir(path), filepath.Base(path)); len(l) != 0 {
		t.Errorf("temporary files left: %v", l)
	}
}

func TestWriteAtomicFullDiskInjected(t *testing.T) {
	path := filepath.Join(t.TempDir(), "show.hcl")
	old := []byte("show { name = \"old\" }\n")
	write(t, path, old, 0o644)
	err := writeAtomic(path, bytes.Repeat([]byte("n"), 4096), 0o644, func(w io.Writer) io.Writer { return &fullDisk{w: w, n: 1000} })
	checkUntouched(t, err, path, old)
}

// On a real full disk: a 64 KiB tmpfs. Mounting needs root and a system
// that allows it (a container may not); the injected test above covers the
// same path everywhere.
func TestWriteAtomicFullDiskTmpfs(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v); TestWriteAtomicFullDiskInjected covers a full disk", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	path := filepath.Join(dir, "show.hcl")
	old := bytes.Repeat([]byte("o"), 16<<10)
	write(t, path, old, 0o644)
	err := WriteAtomic(path, bytes.Repeat([]byte("n"), 128<<10), 0o644)
	checkUntouched(t, err, path, old)
}

// The package is a leaf: it imports nothing of onair's.
func TestImportsNothingOfOnair(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/onairhq/onair/") && dep != "github.com/onairhq/onair/internal/files" {
			t.Errorf("internal/files imports %s; it must import nothing of onair's", dep)
		}
	}
}
