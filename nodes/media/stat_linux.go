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
