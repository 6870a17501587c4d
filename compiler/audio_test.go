package compiler

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onairhq/onair/lang"
)

const audioShow = `
show {
  name       = "sound"
  size       = "320x180"
  frame_rate = "30"
}
source "test_pattern" "host" {
  tone_hz = 440
  audio {
    mode = "always"
  }
}
source "test_pattern" "guest" {
  audio {
    gain_db  = -6
    delay_ms = 40
  }
}
scene "both" {
  layer {
    source = source.host
  }
  layer {
    source = source.guest
  }
}
bus "program" "pgm" {
  scene = scene.both
  audio {
    master_db = -3
    strip {
      source = source.guest
      pan    = -0.5
    }
  }
}
bus "aux" "ret" {
  scene = scene.both
  audio {
    mix_minus_of = source.guest
  }
}
%s
`

// The show's audio blocks become the compositors' audio params: a source's
// strip on every bus, a bus's own strip over it, the master and the
// mix-minus; and a test pattern's tone its node's.
func TestAudioBlocksBecomeMixerParams(t *testing.T) {
	path := filepath.Join(t.TempDir(), "show.hcl")
	os.WriteFile(path, []byte(fmt.Sprintf(audioShow, "")), 0o644)
	res := compile(t, load(t, path, nil), Options{Target: targets["cpu"]})
	params := map[string]map[string]any{}
	for _, n := range res.Plan.Nodes {
		params[n.ID] = n.Params
	}
	pgm, ret := params["bus.pgm/compositor"], params["bus.ret/compositor"]
	if pgm == nil || ret == nil {
		t.Fatalf("no compositors in %v", slices.Collect(func(yield func(string) bool) {
			for id := range params {
				yield(id)
			}
		}))
	}
	want := []string{"source.host mode=always", "source.guest pan=-0.5"}
	if got, _ := pgm["audio_strips"].([]string); !slices.Equal(got, want) {
		t.Errorf("bus.pgm's strips %q, want %q", got, want)
	}
	if pgm["audio_master_db"] != "-3" {
		t.Errorf("bus.pgm's master %v", pgm["audio_master_db"])
	}
	if got, _ := ret["audio_strips"].([]string); !slices.Equal(got, []string{"source.host mode=always", "source.guest gain_db=-6 delay_ms=40"}) {
		t.Errorf("bus.ret's strips %q: each source's own audio block", got)
	}
	if ret["audio_mix_minus"] != "source.guest" {
		t.Errorf("bus.ret's mix-minus %v", ret["audio_mix_minus"])
	}
	if tp := params["source.host/test_pattern"]; tp == nil || tp["tone_hz"] != 440 || tp["tone_dbfs"] != nil {
		t.Errorf("source.host's tone: %v", tp)
	}
}

// Bad audio: a fader past its range or a mode it lacks is the language's
// error at its line; a strip or a mix-minus of a source the bus does not
// show is the compiler's.
func TestAudioBadInput(t *testing.T) {
	for _, c := range []struct{ extra, says string }{
		{`source "test_pattern" "x" {
  audio {
    gain_db = 200
  }
}`, "gain_db must be between -120 and 12"},
		{`source "test_pattern" "y" {
  audio {
    mode = "loud"
  }
}`, "follow"},
		{`source "test_pattern" "z" {}
bus "aux" "z" {
  source = source.host
  audio {
    mix_minus_of = source.z
  }
}`, "mix_minus_of is source.z, which bus.z does not show"},
		{`source "test_pattern" "w" {}
bus "aux" "w" {
  source = source.host
  audio {
    strip {
      source = source.w
      mute   = true
    }
  }
}`, "a strip for source.w, which bus.w does not show"},
	} {
		path := filepath.Join(t.TempDir(), "show.hcl")
		os.WriteFile(path, []byte(fmt.Sprintf(audioShow, c.extra)), 0o644)
		show, diags := lang.Load([]string{path}, lang.Options{})
		if !diags.HasErrors() {
			_, diags = Compile(show, Options{ToolVersion: "test", Target: targets["cpu"]})
		}
		if !diags.HasErrors() || !strings.Contains(diags.Error(), c.says) || !strings.Contains(diags.Error(), "show.hcl:") {
			t.Errorf("%s:\n%v\nwant an error at its line saying %q", c.extra, diags, c.says)
		}
	}
}
