package media

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// fileStat returns the size and modification time of an open file without
// allocating (a raw_file checks its file at the start of every pass).
type statBuf = unix.Stat_t

func fileStat(f *os.File, st *statBuf) (int64, time.Time, error) {
	if err := unix.Fstat(int(f.Fd()), st); err != nil {
		return 0, time.Time{}, &os.PathError{Op: "fstat", Path: f.Name(), Err: err}
	}
	return st.Size, time.Unix(st.Mtim.Sec, st.Mtim.Nsec), nil
}

// FreeSpace is the room left for an unprivileged writer on the file system
// holding dir, in bytes; ok is false when it cannot tell.
func FreeSpace(dir string) (free int64, ok bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true
}
