package cuda

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// useFakeDriver builds testdata/fake_cuda.c and the other stand-ins given
// (C files of testdata, each its own translation unit), with a stub
// returning CUDA_SUCCESS for every other entry point of driver.h's table,
// and makes the library the process's driver until the test ends: what
// onair does around the driver, tested on any machine. It returns the
// library's path.
func useFakeDriver(t *testing.T, more ...string) string {
	t.Helper()
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc to build the driver stand-in")
	}
	hdr, err := os.ReadFile("driver.h")
	if err != nil {
		t.Fatal(err)
	}
	sources := append([]string{"testdata/fake_cuda.c"}, more...)
	var all strings.Builder
	for _, f := range sources {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(src)
	}
	var stubs strings.Builder
	for _, m := range regexp.MustCompile(`\{"(cu\w+)", offsetof`).FindAllStringSubmatch(string(hdr), -1) {
		if !strings.Contains(all.String(), " "+m[1]+"(") {
			fmt.Fprintf(&stubs, "int %s() { return 0; }\n", m[1])
		}
	}
	dir := t.TempDir()
	c, lib := filepath.Join(dir, "fake_stubs.c"), filepath.Join(dir, "libfakecuda.so")
	if err := os.WriteFile(c, []byte(stubs.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-shared", "-fPIC", "-O1", "-std=gnu11", "-o", lib, c}, sources...)
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("building the driver stand-in: %v\n%s", err, out)
	}
	fake, err := loadDriver(lib)
	if err != nil {
		t.Fatalf("loading the driver stand-in: %v", err)
	}
	realDriver, realErr := load() // settles the once, so that restoring is exact
	theDriver, driverErr = fake, nil
	t.Cleanup(func() { theDriver, driverErr = realDriver, realErr })
	return lib
}

// Page-locked host memory is counted as onair allocates and frees it, from
// any goroutine; a failed allocation and a second Free count nothing.
func TestPageLockedBytesCountsHostAllocations(t *testing.T) {
	useFakeDriver(t)
	c, err := NewContext(SchedBlockingSync)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before := PageLockedBytes()
	const frame = 1920 * 1080 * 3 / 2
	var wg sync.WaitGroup
	blocks := make([]*HostMemory, 8)
	for i := range blocks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := c.HostAlloc(frame*(i+1), 0)
			if err != nil {
				t.Error(err)
				return
			}
			h.Bytes()[frame*(i+1)-1] = 1 // the memory is there, all of it
			blocks[i] = h
		}()
	}
	wg.Wait()
	if got, want := PageLockedBytes()-before, int64(frame*36); got != want {
		t.Fatalf("after 8 allocations of 1..8 frames: %d bytes counted, want %d", got, want)
	}
	if _, err := c.HostAlloc(12345, 0); err == nil || !IsOutOfMemory(err) {
		t.Fatalf("the stand-in's refused allocation: %v", err)
	}
	if got, want := PageLockedBytes()-before, int64(frame*36); got != want {
		t.Fatalf("a refused allocation counted: %d bytes, want %d", got, want)
	}
	for i, h := range blocks[:4] {
		if err := h.Free(); err != nil {
			t.Fatalf("free %d: %v", i, err)
		}
		h.Free() // a second Free frees and counts nothing
	}
	if got, want := PageLockedBytes()-before, int64(frame*(5+6+7+8)); got != want {
		t.Fatalf("after freeing the first four: %d bytes counted, want %d", got, want)
	}
	for _, h := range blocks[4:] {
		h.Free()
	}
	if got := PageLockedBytes() - before; got != 0 {
		t.Fatalf("after freeing everything: %d bytes still counted", got)
	}
}
