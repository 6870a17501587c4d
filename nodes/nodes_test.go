package nodes

import (
	"bytes"
	"strings"
	"testing"
)

// The kinds the compiler and runtime rely on, by name, with the roles the
// rules read.
func TestBuiltinKinds(t *testing.T) {
	cases := []struct {
		name     string
		roles    Role
		blocking bool
	}{
		{"input_rec", Source, true},
		{"demux", Routing, true},
		{"dec_video", Decoder, true},
		{"upload", Uploader, true},
		{"raw_video_file_cuda", Source | Uploader, true},
		{"ipc_dmabuf_source", Source, false}, // its receiver runs on the shared browser receivers thread
		{"gpu_import", Importer, true},
		{"realtime", Pacer, false},
		{"smooth_timestamps", Pacer, false},
		{"one_to_many", FanOut, true},
		{"one_to_many_nb", FanOut, false},
		{"compositor", Compositor, true},
		{"output_record", Sink, true},
		{"output_null", Sink, false},
		{"output_ffmpeg", Sink, true},
		{"output_preview", Sink, false},
		{"test_pattern", Source, true},
		{"raw_file_cpu", Source, true},
	}
	for _, c := range cases {
		k, ok := Lookup(c.name)
		if !ok {
			t.Errorf("kind %s is not registered", c.name)
			continue
		}
		if k.Traits.Roles != c.roles || k.Traits.Blocking != c.blocking {
			t.Errorf("%s: roles %s blocking %v, want %s %v", c.name, k.Traits.Roles, k.Traits.Blocking, c.roles, c.blocking)
		}
		if k.Readiness == "" {
			t.Errorf("%s declares no readiness condition", c.name)
		}
	}
	all := All()
	for i := 1; i < len(all); i++ {
		if all[i-1].Name >= all[i].Name {
			t.Fatalf("All is not sorted: %s before %s", all[i-1].Name, all[i].Name)
		}
	}
}

func TestParams(t *testing.T) {
	cases := []struct {
		kind   string
		params map[string]any
		err    string
	}{
		{"dec_video", map[string]any{"mode": "nvdec"}, ""},
		{"dec_video", map[string]any{"mode": "cuvid"}, "mode must be one of nvdec | rawvideo"},
		{"upload", map[string]any{"mode": "pinned"}, ""},
		{"upload", map[string]any{"mode": "direct"}, "must be one of hwupload | pinned"},
		{"raw_video_file_cuda", map[string]any{"mode": "resident"}, ""},
		{"ipc_dmabuf_source", map[string]any{"return_queue": 64}, ""},
		{"ipc_dmabuf_source", map[string]any{"return_queue": 65}, "return_queue must be in 0..64"},
		{"ipc_dmabuf_source", map[string]any{"return_queue": 1.5}, "whole number"},
		{"gpu_import", map[string]any{"import_ttl_ms": 10000, "purge_idle": true}, ""},
		{"realtime", map[string]any{"time_base": "1/120000"}, ""},
		{"realtime", map[string]any{"tick_period": "1/1000"}, ""},
		{"realtime", map[string]any{"time_base": "1/120000", "tick_period": "1/1000"}, "never both"},
		{"realtime", map[string]any{"time_base": "fast"}, "fraction"},
		{"realtime", map[string]any{"frame_rate": "30000/1001"}, ""},
		{"realtime", map[string]any{"frame_rate": "30"}, ""},
		{"realtime", map[string]any{"frame_rate": "0/1"}, "fraction"},
		{"compositor", map[string]any{"bus": "aux", "input_poll_ms": 8}, ""},
		{"compositor", map[string]any{"bus": "preview"}, "program | aux"},
		{"compositor", map[string]any{"poll": 8}, `no parameter "poll"`},
	}
	for _, c := range cases {
		k, _ := Lookup(c.kind)
		err := k.Validate(c.params)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s %v: got %v, want %q", c.kind, c.params, err, c.err)
		}
	}
}

func TestRunsOnThread(t *testing.T) {
	comp, _ := Lookup("compositor")
	if !comp.RunsOnThread(map[string]any{"bus": "program"}) || !comp.RunsOnThread(nil) {
		t.Error("a Program compositor has a thread of its own")
	}
	if comp.RunsOnThread(map[string]any{"bus": "aux"}) {
		t.Error("an AUX compositor is paced by the default loop")
	}
	rt, _ := Lookup("realtime")
	if rt.RunsOnThread(nil) {
		t.Error("realtime is loop-driven")
	}
}

func TestLiveParams(t *testing.T) {
	live := map[string]bool{"compositor.input_poll_ms": true, "gpu_import.import_ttl_ms": true, "output_preview.quality": true}
	notLive := []string{"dec_video.mode", "raw_video_file_cuda.mode", "ipc_dmabuf_source.return_queue"}
	for name := range live {
		kind, param, _ := strings.Cut(name, ".")
		k, _ := Lookup(kind)
		if p, ok := k.Param(param); !ok || !p.Live {
			t.Errorf("%s must be changeable on a running show", name)
		}
	}
	for _, name := range notLive {
		kind, param, _ := strings.Cut(name, ".")
		k, _ := Lookup(kind)
		if p, ok := k.Param(param); !ok || p.Live {
			t.Errorf("%s re-creates the node; it must not be live", name)
		}
	}
}

func TestRegisterRefusesBrokenDeclarations(t *testing.T) {
	cases := []struct {
		name string
		k    *Kind
		want string
	}{
		{"duplicate", &Kind{Name: "demux", Doc: "again"}, "registered twice"},
		{"no doc", &Kind{Name: "x_nodoc"}, "needs a doc"},
		{"bad default", &Kind{Name: "x_bad", Doc: "d", Params: []Param{{Name: "n", Type: Int, Default: "three"}}}, "whole number"},
		{"empty enum", &Kind{Name: "x_enum", Doc: "d", Params: []Param{{Name: "m", Type: Enum}}}, "lists no values"},
		{"exclusive unknown", &Kind{Name: "x_ex", Doc: "d", Exclusive: [][]string{{"a", "b"}}}, "unknown parameter"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(r.(string), c.want) {
					t.Fatalf("got %v, want a panic containing %q", r, c.want)
				}
			}()
			Register(c.k)
		})
	}
}

// Registering a kind is one call, and it shows up everywhere at once.
func TestRegisterOneCall(t *testing.T) {
	Register(&Kind{Name: "zz_test_probe", Doc: "A probe.", Traits: Traits{Roles: Sink, Takes: []string{FormatNV12}}, Readiness: "a first frame has been taken"})
	// The registry is the process's: take the probe out again, so that the
	// test can run again (go test -count=N) and no other test sees it.
	t.Cleanup(func() {
		mu.Lock()
		delete(kinds, "zz_test_probe")
		mu.Unlock()
	})
	if _, ok := Lookup("zz_test_probe"); !ok {
		t.Fatal("not found after Register")
	}
	var buf bytes.Buffer
	if err := WriteReference(&buf, true, noBackends); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "## zz_test_probe") {
		t.Error("the reference does not list the new kind")
	}
}

func TestReference(t *testing.T) {
	for _, md := range []bool{false, true} {
		var buf bytes.Buffer
		if err := WriteReference(&buf, md, noBackends); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		for _, k := range []string{"input_rec", "one_to_many_nb", "raw_video_file_cuda"} {
			if !strings.Contains(out, k) {
				t.Errorf("reference (markdown %v) lacks %s", md, k)
			}
		}
		if md && !strings.Contains(out, "| `return_queue` | int | 0 | 0..64 |") {
			t.Errorf("markdown reference lacks the return_queue row:\n%s", out)
		}
		if !md && !strings.Contains(out, "import_ttl_ms") {
			t.Error("text reference lacks import_ttl_ms")
		}
	}
}

func noBackends(string) []string { return nil }

// TestCheckLive: what may change on a running node is the registry's
// say: a Live param, a value its declaration takes, a list grown at its
// end, read alike from the compiler and from a saved plan's JSON.
func TestCheckLive(t *testing.T) {
	comp, _ := Lookup("compositor")
	for _, c := range []struct {
		param    string
		old, new any
		want     string // "" for live
	}{
		{"input_poll_ms", 8, 0, ""},
		{"input_poll_ms", 8.0, 4.0, ""},
		{"input_poll_ms", 8, 5000, "must be in 0..1000"},
		{"scenes", []string{"scene.a"}, []string{"scene.a", "scene.b"}, ""},
		{"scenes", []any{"scene.a"}, []any{"scene.a", "scene.b"}, ""},
		{"scenes", []string{"scene.a", "scene.b"}, []string{"scene.b"}, "only by growing at its end"},
		{"scenes", []string{"scene.a"}, []string{"scene.b", "scene.a"}, "only by growing at its end"},
		{"bus", "program", "aux", "compositor.bus is not live"},
		{"nope", 1, 2, "has no param nope"},
	} {
		err := comp.CheckLive(c.param, c.old, c.new)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s %v → %v: %v, want %q", c.param, c.old, c.new, err, c.want)
		}
	}
	for setting, want := range map[string]string{"input_poll_ms": "compositor.input_poll_ms", "aux_input_poll_ms": "compositor.input_poll_ms", "import_ttl_ms": "gpu_import.import_ttl_ms", "raw_upload": ""} {
		k, p, ok := LiveCanvas(setting)
		got := ""
		if ok {
			got = k.Name + "." + p.Name
		}
		if got != want {
			t.Errorf("canvas %s reaches the show on air through %q, want %q", setting, got, want)
		}
	}
}

// TestCheckLiveDefault: a live param the new plan leaves out goes back to
// its default on air.
func TestCheckLiveDefault(t *testing.T) {
	prev, _ := Lookup("output_preview")
	if err := prev.CheckLive("interval_ms", 500, nil); err != nil {
		t.Errorf("interval_ms 500 → left out: %v, want live (its default)", err)
	}
	if v := prev.Value(map[string]any{}, "interval_ms"); v != 1000 {
		t.Errorf("interval_ms left out is %v, want its default 1000", v)
	}
}
