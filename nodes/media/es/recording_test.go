package es

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// pass reads one pass of s, each access unit copied.
func pass(t *testing.T, s *Stream) []AccessUnit {
	t.Helper()
	var out []AccessUnit
	for {
		au, err := s.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		checkNALs(t, au)
		au.Data = bytes.Clone(au.Data)
		au.NALs = slices.Clone(au.NALs)
		out = append(out, au)
	}
}

// fileUnits is the access units a plain Reader splits path into.
func fileUnits(t *testing.T, path string, c Codec) []AccessUnit {
	t.Helper()
	r, err := Open(path, c)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return readAll(t, r)
}

func samePass(t *testing.T, what string, got, want []AccessUnit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d access units, want %d", what, len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if !bytes.Equal(g.Data, w.Data) || !slices.Equal(g.NALs, w.NALs) || g.Index != w.Index || g.Offset != w.Offset ||
			g.Key != w.Key || g.Pictures != w.Pictures || g.PTS != w.PTS || g.HasPTS != w.HasPTS || (g.Info == nil) != (w.Info == nil) ||
			(g.Info != nil && *g.Info != *w.Info) {
			t.Fatalf("%s: access unit %d differs from the file's", what, i)
		}
	}
}

// A looping file is read from disk once: its second pass, and a second
// source of it, play the same access units from memory.
func TestRecordingsPlayWhatTheFileHolds(t *testing.T) {
	for _, c := range clips {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), c.name)
			data, err := os.ReadFile(filepath.Join("testdata", c.name))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			want := fileUnits(t, path, 0)

			var rs Recordings
			a, err := rs.Open(path, 0, true)
			if err != nil {
				t.Fatal(err)
			}
			if a.Recorded() {
				t.Fatal("the first pass of a file nobody read yet came from memory")
			}
			samePass(t, "first pass", pass(t, a), want)
			if err := a.Rewind(); err != nil {
				t.Fatal(err)
			}
			if !a.Recorded() {
				t.Fatal("the second pass is read from the file again")
			}
			samePass(t, "second pass", pass(t, a), want)

			b, err := rs.Open(path, 0, true)
			if err != nil {
				t.Fatal(err)
			}
			if !b.Recorded() || b.Codec() != c.codec {
				t.Fatalf("a second source of the file: recorded %v codec %v", b.Recorded(), b.Codec())
			}
			if info, ok := b.Info(); !ok || info.Width != 640 || info.BitDepth != c.depth {
				t.Errorf("a recording's Info %+v %v", info, ok)
			}
			samePass(t, "a second source", pass(t, b), want)

			a.Close()
			b.Close()
			if len(rs.m) != 0 {
				t.Errorf("%d recordings kept after every stream closed", len(rs.m))
			}
		})
	}
}

// A file changed on disk is read afresh at the next pass; a file removed
// plays on from memory; a pass cut short records nothing.
func TestRecordingsFollowTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "clip.hevc")
	first, _ := os.ReadFile("testdata/hevc8.hevc")
	second, _ := os.ReadFile("testdata/hevc10.hevc")
	if err := os.WriteFile(path, first, 0o644); err != nil {
		t.Fatal(err)
	}
	var rs Recordings
	s, err := rs.Open(path, HEVC, true)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 3 { // cut short: nothing recorded
		if _, err := s.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Rewind(); err != nil {
		t.Fatal(err)
	}
	if s.Recorded() || len(rs.m) != 1 {
		t.Fatalf("a pass cut short: recorded %v, %d recordings (want the file read again, recording anew)", s.Recorded(), len(rs.m))
	}
	whole := pass(t, s)
	if err := s.Rewind(); err != nil {
		t.Fatal(err)
	}
	if !s.Recorded() {
		t.Fatal("a whole pass was not recorded")
	}

	// Another file in its place (a later modification time, as an
	// editor's save would leave): the next pass reads it.
	if err := os.WriteFile(path, second, 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	pass(t, s)
	if err := s.Rewind(); err != nil {
		t.Fatal(err)
	}
	if s.Recorded() {
		t.Fatal("the file changed on disk, yet the next pass came from memory")
	}
	if info, _ := s.Info(); info.BitDepth != 10 {
		t.Fatalf("after the change the stream says %+v, want the new file's 10-bit", info)
	}
	changed := pass(t, s)
	if bytes.Equal(changed[0].Data, whole[0].Data) {
		t.Fatal("the pass after the change played the old file")
	}
	if err := s.Rewind(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	pass(t, s)
	if err := s.Rewind(); err != nil {
		t.Fatalf("the file removed: %v", err)
	}
	samePass(t, "after the file was removed", pass(t, s), changed)
}

// Streams of one file on several goroutines (a show's decode loops) record
// it once and play it alike.
func TestRecordingsAreShared(t *testing.T) {
	path := filepath.Join("testdata", "hevc8.ts")
	want := fileUnits(t, path, 0)
	var rs Recordings
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := rs.Open(path, HEVC, true)
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			for p := range 3 {
				for i := 0; ; i++ {
					au, err := s.Next()
					if err == io.EOF {
						if i != len(want) {
							t.Errorf("pass %d: %d access units, want %d", p, i, len(want))
						}
						break
					}
					if err != nil {
						errs <- err
						return
					}
					if !bytes.Equal(au.Data, want[i].Data) || au.PTS != want[i].PTS {
						t.Errorf("pass %d access unit %d differs", p, i)
						return
					}
				}
				if err := s.Rewind(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(rs.m) != 0 {
		t.Errorf("%d recordings kept after every stream closed", len(rs.m))
	}
}

// What would go over the budget is read from its file on every pass, and
// Held counts what is kept.
func TestRecordingsKeepToTheirBudget(t *testing.T) {
	small, _ := os.Stat("testdata/hevc8.hevc")
	large, _ := os.Stat("testdata/hevc10.hevc")
	rs := Recordings{Budget: small.Size() + large.Size() - 1}
	var streams []*Stream
	for _, name := range []string{"hevc8.hevc", "hevc10.hevc"} {
		s, err := rs.Open(filepath.Join("testdata", name), HEVC, true)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		pass(t, s)
		if err := s.Rewind(); err != nil {
			t.Fatal(err)
		}
		streams = append(streams, s)
	}
	if !streams[0].Recorded() || streams[1].Recorded() {
		t.Fatalf("recorded: %v and %v; want the first file kept, the second over the budget", streams[0].Recorded(), streams[1].Recorded())
	}
	if files, bytes := rs.Held(); files != 1 || bytes != small.Size() {
		t.Errorf("Held: %d files, %d bytes; want 1, %d", files, bytes, small.Size())
	}
	streams[0].Close()
	if files, bytes := rs.Held(); files != 0 || bytes != 0 {
		t.Errorf("Held after the stream closed: %d files, %d bytes", files, bytes)
	}
	// Room again: the second file's next pass is recorded.
	pass(t, streams[1])
	if err := streams[1].Rewind(); err != nil {
		t.Fatal(err)
	}
	pass(t, streams[1])
	if err := streams[1].Rewind(); err != nil {
		t.Fatal(err)
	}
	if !streams[1].Recorded() {
		t.Error("with room again, the second file is still read from disk")
	}
}

// A damaged file (cut mid access unit, bytes overwritten) is played from
// memory exactly as its reader splits it.
func TestRecordingsOfDamagedFiles(t *testing.T) {
	data, err := os.ReadFile("testdata/hevc8.hevc")
	if err != nil {
		t.Fatal(err)
	}
	garbled := bytes.Clone(data)
	for i := 1000; i < len(garbled); i += 20 { // every 20th byte past the parameter sets
		garbled[i] ^= 0x5a
	}
	for name, content := range map[string][]byte{"cut": data[:len(data)*3/5], "garbled": garbled} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name+".hevc")
			if err := os.WriteFile(path, content, 0o644); err != nil {
				t.Fatal(err)
			}
			want := fileUnits(t, path, HEVC)
			var rs Recordings
			s, err := rs.Open(path, HEVC, true)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			samePass(t, "from the file", pass(t, s), want)
			if err := s.Rewind(); err != nil {
				t.Fatal(err)
			}
			if !s.Recorded() {
				t.Fatal("a whole pass of the damaged file was not recorded")
			}
			samePass(t, "from memory", pass(t, s), want)
		})
	}
}

// A stream that does not loop plays a recording that is there but makes
// none: it reads its file once.
func TestRecordingsOnlyForLoops(t *testing.T) {
	path := filepath.Join("testdata", "hevc8.hevc")
	var rs Recordings
	once, err := rs.Open(path, HEVC, false)
	if err != nil {
		t.Fatal(err)
	}
	defer once.Close()
	pass(t, once)
	if files, _ := rs.Held(); files != 0 {
		t.Fatalf("a stream that does not loop recorded its file (%d held)", files)
	}
	looping, err := rs.Open(path, HEVC, true)
	if err != nil {
		t.Fatal(err)
	}
	defer looping.Close()
	pass(t, looping)
	if err := looping.Rewind(); err != nil {
		t.Fatal(err)
	}
	again, err := rs.Open(path, HEVC, false)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if !again.Recorded() {
		t.Error("a stream that does not loop read the file although it was recorded")
	}
	samePass(t, "a stream that does not loop, from memory", pass(t, again), fileUnits(t, path, HEVC))
}
