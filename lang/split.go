package lang

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// SplitShows groups command-line paths into shows for commands that check
// many shows at once (validate, lint): each path is its own show, except a
// directory in which every .hcl file declares its own show block (such as
// shows/), whose files are separate shows. A directory of files that
// together make one show (one show block among them) stays one show.
func SplitShows(paths []string) [][]string {
	var out [][]string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil || !fi.IsDir() {
			out = append(out, []string{p})
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			out = append(out, []string{p})
			continue
		}
		var files []string
		withShow := 0
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".hcl") {
				continue
			}
			f := filepath.Join(p, e.Name())
			files = append(files, f)
			if declaresShow(f) {
				withShow++
			}
		}
		if withShow >= 2 && withShow == len(files) {
			for _, f := range files {
				out = append(out, []string{f})
			}
			continue
		}
		out = append(out, []string{p})
	}
	return out
}

// declaresShow reports whether a file has a top-level show block.
func declaresShow(path string) bool {
	data, d := readRegular(path) // never blocks on a FIFO
	if d != nil {
		return false
	}
	if CheckText(data, path) != nil {
		return false // Load says why
	}
	f, _ := hclsyntax.ParseConfig(data, path, hcl.InitialPos)
	if f == nil {
		return false
	}
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		return false
	}
	for _, b := range body.Blocks {
		if b.Type == "show" {
			return true
		}
	}
	return false
}
