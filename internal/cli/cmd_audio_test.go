package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// onair audio changes a running show's mix: a source's fader and mute and
// the master, as onair status -json then reads them; a source not on the
// bus and a word it does not know are refused, saying what to write.
func TestAudioCommand(t *testing.T) {
	show := writeRunShow(t)
	bg := runInBackground("run", "-listen", "127.0.0.1:0", "-quiet", show)
	addr := bg.waitOut(t, `status: http://(\S+)/status`)[1]
	defer bg.interrupt(t)
	if rc, msg, errs := runCLI(t, "audio", "-addr", addr, "bus.pgm", "source.a", "-6dB", "mute", "pan=0.5"); rc != 0 || !strings.Contains(msg, "bus.pgm source.a: -6dB mute pan=0.5") {
		t.Errorf("onair audio: rc=%d %s %s", rc, msg, errs)
	}
	if rc, _, errs := runCLI(t, "audio", "-addr", addr, "pgm", "master", "-3dB"); rc != 0 {
		t.Errorf("onair audio master: rc=%d %s", rc, errs)
	}
	_, js, _ := runCLI(t, "status", "-json", "-addr", addr)
	var st struct {
		Summary struct {
			Buses []struct {
				Address string
				Audio   struct {
					Strips map[string]struct {
						GainDB float64 `json:"gain_db"`
						Mute   bool
						Pan    float64
					}
					MasterDB float64 `json:"master_db"`
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(js), &st); err != nil || len(st.Summary.Buses) != 1 {
		t.Fatalf("status: %v", err)
	}
	a := st.Summary.Buses[0].Audio
	if s := a.Strips["source.a"]; s.GainDB != -6 || !s.Mute || s.Pan != 0.5 || a.MasterDB != -3 {
		t.Errorf("after onair audio: %+v", a)
	}
	for _, c := range []struct {
		args []string
		rc   int
		says string
	}{
		{[]string{"bus.pgm", "source.zz", "mute"}, 1, "source.a"},
		{[]string{"bus.pgm", "source.a", "loud"}, 2, "use a level"},
		{[]string{"bus.pgm", "master", "mute"}, 2, "master takes a level only"},
		{[]string{"bus.pgm", "source.a", "+40dB"}, 1, "from -120 to 12 dB"},
	} {
		rc, _, errs := runCLI(t, append([]string{"audio", "-addr", addr}, c.args...)...)
		if rc != c.rc || !strings.Contains(errs, c.says) {
			t.Errorf("onair audio %v: rc=%d %s, want %d saying %q", c.args, rc, errs, c.rc, c.says)
		}
	}
}
