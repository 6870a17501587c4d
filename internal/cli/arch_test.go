package cli

import (
	"fmt"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/lang"
	"os/exec"
	"strings"
	"testing"
)

// forbidden is ARCHITECTURE.md's table of imports each package must never
// make (directly or through another package). Keep the two in step.
var forbidden = map[string][]string{
	"lang":                   {"compiler", "runtime", "nodes", "cuda", "frame", "control", "playout", "internal/cli", "internal/backends"},
	"nodes":                  {"lang", "compiler", "runtime", "nodes/show", "nodes/cpu", "nodes/cuda", "nodes/media", "cuda", "internal/cli", "internal/backends"},
	"compiler":               {"runtime", "nodes/show", "nodes/cpu", "nodes/cuda", "nodes/media", "cuda", "frame", "control", "internal/cli", "internal/backends"},
	"compiler/plan":          {"lang", "compiler", "runtime", "nodes"},
	"runtime":                {"lang", "compiler", "nodes", "cuda", "frame", "control", "playout", "internal/cli", "internal/backends"},
	"playout":                {"runtime", "lang", "compiler", "nodes", "cuda", "frame"},
	"frame":                  {"runtime", "lang", "compiler", "nodes", "cuda"},
	"cuda":                   {"runtime", "lang", "compiler", "nodes", "control", "playout"},
	"control":                {"lang", "compiler", "nodes", "cuda", "frame", "internal/cli", "internal/backends"},
	"nodes/media":            {"runtime", "lang", "compiler", "nodes/show", "nodes/cpu", "nodes/cuda", "cuda", "control"},
	"nodes/media/ipc":        {"runtime", "lang", "compiler", "nodes/show", "nodes/cpu", "nodes/cuda", "cuda", "control", "frame"},
	"nodes/browser":          {"lang", "compiler", "nodes/cpu", "nodes/cuda", "cuda", "internal/cli", "internal/backends"},
	"nodes/browser/chromium": {"runtime", "lang", "compiler", "nodes/show", "nodes/cpu", "nodes/cuda", "cuda", "control", "frame"},
	"cuda/hevc":              {"runtime", "lang", "compiler", "nodes", "control", "playout", "frame", "internal/cli", "internal/backends", "internal/files", "internal/golden", "internal/peer", "internal/testwait", "internal/value"},
	"nodes/media/es":         {"runtime", "lang", "compiler", "nodes", "cuda", "control", "playout", "frame", "internal/cli", "internal/backends", "internal/files", "internal/golden", "internal/peer", "internal/testwait", "internal/value"},
	"internal/bitstream":     {"lang", "compiler", "runtime", "nodes", "cuda", "frame", "control", "playout", "internal/cli", "internal/backends", "internal/files", "internal/value"},
	"nodes/show":             {"lang", "compiler", "nodes/cpu", "nodes/cuda", "cuda", "internal/cli", "internal/backends"},
	"nodes/cpu":              {"lang", "compiler", "nodes/cuda", "cuda", "internal/cli", "internal/backends"},
	"nodes/cuda":             {"lang", "compiler", "nodes/cpu", "internal/cli", "internal/backends"},
	"internal/backends":      {"lang", "compiler"},
	"internal/files":         {"lang", "compiler", "runtime", "nodes", "cuda", "frame", "control", "playout", "internal/cli", "internal/backends"},
	"internal/panics":        {"lang", "compiler", "runtime", "nodes", "cuda", "frame", "control", "playout", "internal"},
	"timecode":               {"lang", "compiler", "runtime", "nodes", "cuda", "frame", "control", "playout", "internal"},
	"audio":                  {"lang", "compiler", "runtime", "nodes", "cuda", "frame", "control", "playout", "internal"},
	"internal/value":         {"lang", "compiler", "runtime", "nodes", "cuda", "frame", "control", "playout", "internal"},
}

const module = "github.com/onairhq/onair/"

func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || !strings.HasPrefix(fields[0], module) {
			continue
		}
		pkg := strings.TrimPrefix(fields[0], module)
		bans, ok := forbidden[pkg]
		if !ok {
			continue
		}
		for _, dep := range fields[1:] {
			if !strings.HasPrefix(dep, module) {
				continue
			}
			d := strings.TrimPrefix(dep, module)
			for _, ban := range bans {
				// compiler/plan is the one part of compiler others may use.
				if (d == ban || strings.HasPrefix(d, ban+"/")) && d != "compiler/plan" {
					t.Errorf("%s imports %s (through its dependencies); ARCHITECTURE.md forbids %s", pkg, d, ban)
				}
			}
		}
	}
}

// The show language's frame_metadata keys are the stamps frames carry:
// lang must not import frame, so the two lists are held together here.
func TestFrameMetadataKeysAgree(t *testing.T) {
	if fmt.Sprint(lang.FrameMetadataKeys) != fmt.Sprint(frame.StampKeys[:]) {
		t.Errorf("lang.FrameMetadataKeys %v, frame.StampKeys %v", lang.FrameMetadataKeys, frame.StampKeys)
	}
}
