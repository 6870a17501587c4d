// Package files reads and writes the files onair is given and writes back,
// safely: ReadRegular reads a file whole only when it is a regular file no
// larger than a cap (a FIFO, a device such as /dev/zero, a directory or a
// socket is refused by name, never read), and WriteAtomic replaces a file so
// that a reader, a crash or a full disk sees the old contents or the new,
// never a torn mix.
//
// It is a leaf: it must never import lang, compiler, runtime or a backend
// (nodes and everything under it, cuda), so that every one of them may use it.
package files

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// NotRegularError is ReadRegular's error for a path that is not a regular
// file once links are followed.
type NotRegularError struct {
	Path string
	What string // "a named pipe (FIFO)", "a directory", ...
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, e.What)
}

// TooLargeError is ReadRegular's error for a file over the cap.
type TooLargeError struct {
	Path string
	Size int64 // the size seen: at least Max+1
	Max  int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is %d bytes, more than the %d allowed", e.Path, e.Size, e.Max)
}

// Describe names what a file mode is, for messages: "a named pipe (FIFO)",
// "a socket", "a character device", "a device", "a directory", "a regular
// file" or "not a regular file".
func Describe(mode os.FileMode) string {
	switch {
	case mode.IsRegular():
		return "a regular file"
	case mode.IsDir():
		return "a directory"
	case mode&os.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case mode&os.ModeSocket != 0:
		return "a socket"
	case mode&os.ModeCharDevice != 0:
		return "a character device"
	case mode&os.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// ReadRegular reads the file at path whole. It follows symbolic links and
// refuses (with a *NotRegularError) anything that is then not a regular
// file, and refuses (with a *TooLargeError) a file of more than max bytes.
// It never reads more than max+1 bytes, so a file that grows while it is
// read is refused too, and the file is opened without blocking and checked
// once open, so a FIFO put in a file's place cannot hang it.
func ReadRegular(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		// A socket cannot be opened at all: say what it is.
		if fi, serr := os.Stat(path); serr == nil && !fi.Mode().IsRegular() {
			return nil, &NotRegularError{Path: path, What: Describe(fi.Mode())}
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, What: Describe(fi.Mode())}
	}
	if fi.Size() > max {
		return nil, &TooLargeError{Path: path, Size: fi.Size(), Max: max}
	}
	// The size is a hint (the file may grow): read at most max+1 bytes and
	// refuse when the last one arrives.
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(data)) > max {
		return nil, &TooLargeError{Path: path, Size: int64(len(data)), Max: max}
	}
	return data, nil
}

// WriteAtomic replaces the file at path with data: it writes a temporary
// file in the same directory, syncs it to disk, gives it the mode of the
// file it replaces (mode when there is none), renames it over path and
// syncs the directory. When path is a symbolic link, the file it points to
// is replaced and the link kept. On any error (a full disk, say) the
// original file is untouched and the temporary file is removed.
func WriteAtomic(path string, data []byte, mode os.FileMode) error {
	return writeAtomic(path, data, mode, nil)
}

// writeAtomic is WriteAtomic with the write step open to tests: wrap, when
// not nil, wraps the temporary file's writer (to fail as a full disk does).
func writeAtomic(path string, data []byte, mode os.FileMode, wrap func(io.Writer) io.Writer) error {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	if fi, err := os.Stat(path); err == nil {
		if !fi.Mode().IsRegular() {
			return &NotRegularError{Path: path, What: Describe(fi.Mode())}
		}
		mode = fi.Mode().Perm()
	}
	dir := filepath.Dir(path)
	tmp, err := writeTemp(dir, filepath.Base(path), data, mode, wrap)
	if err != nil {
		return fmt.Errorf("cannot write %s (the file is unchanged): %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("cannot write %s (the file is unchanged): %w", path, err)
	}
	// The rename is durable once the directory is synced. The new file is
	// in place either way, so a failing sync is reported, nothing undone.
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("wrote %s but cannot sync its directory: %w", path, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("wrote %s but cannot sync its directory: %w", path, err)
	}
	return nil
}

// writeTemp writes data to a new temporary file in dir, with mode, synced
// and closed, and returns its name; on error the file is removed.
func writeTemp(dir, base string, data []byte, mode os.FileMode, wrap func(io.Writer) io.Writer) (name string, err error) {
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	var w io.Writer = f
	if wrap != nil {
		w = wrap(f)
	}
	if _, err := w.Write(data); err != nil {
		return "", err
	}
	if err := f.Chmod(mode); err != nil {
		return "", err
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return f.Name(), nil
}
