package cli

import (
	"encoding/json"
	"fmt"
	"io"
	goruntime "runtime"
	"runtime/debug"
)

// The module's version as `go install github.com/onairhq/onair@VERSION`
// records it replaces the default version: a binary installed from a
// release names it without -ldflags.
func init() {
	if bi, ok := debug.ReadBuildInfo(); ok && version == defaultVersion && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		version = bi.Main.Version
	}
	register(&command{
		name:    "version",
		summary: "Print onair's version, module version, commit and Go version (-json for CI).",
		usage:   "[-json]",
		run:     runVersion,
	})
}

const defaultVersion = "0.1.0-dev"

// buildInfo is what `onair version` prints.
type buildInfo struct {
	Version       string `json:"version"`
	Module        string `json:"module"`
	ModuleVersion string `json:"module_version"`
	Commit        string `json:"commit,omitempty"`
	Modified      bool   `json:"modified,omitempty"` // built from a work tree with changes
	Go            string `json:"go"`
	Platform      string `json:"platform"`
}

func readBuildInfo() buildInfo {
	b := buildInfo{Version: version, Module: "github.com/onairhq/onair", ModuleVersion: "(devel)", Go: goruntime.Version(), Platform: goruntime.GOOS + "/" + goruntime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Path != "" {
			b.Module = bi.Main.Path
		}
		if bi.Main.Version != "" {
			b.ModuleVersion = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Commit = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	return b
}

func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := newFlags(commands["version"], stderr)
	asJSON := fs.Bool("json", false, "print the version as one JSON object")
	if rc := parseFlags(fs, args); rc >= 0 {
		return rc
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "onair version: unexpected arguments %v\n", fs.Args())
		return 2
	}
	b := readBuildInfo()
	if *asJSON {
		out, _ := json.Marshal(b)
		fmt.Fprintf(stdout, "%s\n", out)
		return 0
	}
	fmt.Fprintf(stdout, "onair %s\nmodule %s %s\n", b.Version, b.Module, b.ModuleVersion)
	if b.Commit != "" {
		mod := ""
		if b.Modified {
			mod = " (modified)"
		}
		fmt.Fprintf(stdout, "commit %s%s\n", b.Commit, mod)
	}
	fmt.Fprintf(stdout, "%s %s\n", b.Go, b.Platform)
	return 0
}
