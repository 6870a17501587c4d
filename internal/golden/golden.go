// Package golden compares what a test produces with a file kept in the
// repository, and rewrites the file when the tests run with -update: the one
// golden helper and the one -update flag of every package's tests.
//
// It is for tests; it must never import anything of onair's.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files from what the tests produce")

// Updating reports whether the tests run with -update.
func Updating() bool { return *update }

// Check fails t when got differs from the file at path, naming the first
// line that differs; with -update it writes got to path instead.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what the test produced (go test -update rewrites it):\n%s", path, FirstDiff(string(want), string(got)))
	}
}

// FirstDiff describes the first line where want and got differ.
func FirstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var x, y string
		if i < len(wl) {
			x = wl[i]
		}
		if i < len(gl) {
			y = gl[i]
		}
		if x != y {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + x + "\n  got:  " + y
		}
	}
	return ""
}
