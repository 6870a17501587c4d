package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/onairhq/onair/control"
	"github.com/onairhq/onair/internal/testwait"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
)

// These tests are issue 27's posted plans: a plan for another show or
// backend, a renamed scene, params out of range, a change of 25,000
// scenes, an answer lost on the way, and plans that are not plans, each
// posted to a running show over its real server.

// postedShow has a Program bus fed by source.bars only, an AUX bus fed by
// source.ramp only, and a preview of the Program bus. SCENES is more of
// the show (scenes, a moved block).
const postedShow = `
show {
  name       = "posted"
  size       = "320x180"
  frame_rate = "30"
}
source "test_pattern" "bars" {
  size = "320x180"
}
source "test_pattern" "ramp" {
  pattern = "ramp"
  size    = "320x180"
}
scene "NAME" {
  layer {
    source = source.bars
    rect   = [0, 0, 160, 180]
  }
}
bus "program" "pgm" {
  scene = scene.NAME
}
bus "aux" "b" {
  source = source.ramp
}
output "null" "pgm" {
  bus = bus.pgm
}
output "preview" "pv" {
  bus     = bus.pgm
  quality = 80
}
output "null" "b" {
  bus = bus.b
}
SCENES
`

// postedFile writes postedShow with its first scene called name and more
// appended, and returns its path.
func postedFile(t *testing.T, dir, name, more string) string {
	t.Helper()
	path := filepath.Join(dir, "show.hcl")
	src := strings.NewReplacer("NAME", name, "SCENES", more).Replace(postedShow)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runPosted runs the show at path on the CPU backend and returns its
// server's address; the show is stopped when the test ends.
func runPosted(t *testing.T, path string) string {
	t.Helper()
	bg := runInBackground("run", "-backend", "cpu", "-listen", "127.0.0.1:0", "-quiet", path)
	addr := bg.waitOut(t, `status: http://(\S+)/status`)[1]
	t.Cleanup(func() {
		if rc := bg.interrupt(t); rc != 0 {
			t.Errorf("run: rc=%d\n%s", rc, bg.errs.String())
		}
	})
	return addr
}

// onAir is the plan the show at addr serves, as JSON and read back.
func onAir(t *testing.T, addr string) ([]byte, *plan.Plan) {
	t.Helper()
	c := control.Client{Addr: addr}
	b, err := c.Plan()
	if err != nil {
		t.Fatal(err)
	}
	p, err := loadSavedPlan(b)
	if err != nil {
		t.Fatal(err)
	}
	return b, p
}

// post sends body as POST /plan and returns the status and the error the
// server gave (or its whole answer).
func post(t *testing.T, addr string, body []byte) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://"+addr+"/plan", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var e struct{ Error string }
	if json.Unmarshal(b, &e) == nil && e.Error != "" {
		return resp.StatusCode, e.Error
	}
	return resp.StatusCode, string(b)
}

// waitPgm waits until bus.pgm of the show at addr has scene on air.
func waitPgm(t *testing.T, addr, scene string) {
	t.Helper()
	c := control.Client{Addr: addr}
	var last string
	testwait.Until(t, testwait.Bound, "bus.pgm showing "+scene, func() bool {
		b, err := c.Status()
		var st struct {
			Summary struct{ Buses []show.BusSummary } `json:"summary"`
		}
		if err != nil || json.Unmarshal(b, &st) != nil {
			return false
		}
		for _, bs := range st.Summary.Buses {
			if bs.Address == "bus.pgm" {
				last = bs.OnAir
			}
		}
		return last == scene
	})
}

// marshal is p's JSON.
func marshal(t *testing.T, p *plan.Plan) []byte {
	t.Helper()
	b, err := plan.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// nodeOf is p's node of kind at addr.
func nodeOf(t *testing.T, p *plan.Plan, addr, kind string) *plan.Node {
	t.Helper()
	for i := range p.Nodes {
		if p.Nodes[i].Address == addr && p.Nodes[i].Kind == kind {
			return &p.Nodes[i]
		}
	}
	t.Fatalf("the plan has no %s node at %s", kind, addr)
	return nil
}

// TestApplyRefusesAPlanForAnotherShowOrBackend is item 5: a plan compiled
// for the cuda backend, for another show, or against another capacity
// profile, with one scene edit, was answered "applied", after which GET
// /plan said cuda and every onair apply of the right show was refused.
// Now each is refused whole with 409, the plan on air stays, and onair
// apply of the show file goes on working.
func TestApplyRefusesAPlanForAnotherShowOrBackend(t *testing.T) {
	dir := t.TempDir()
	path := postedFile(t, dir, "half", "")
	addr := runPosted(t, path)
	was, _ := onAir(t, addr)
	for _, c := range []struct {
		name, want string
		edit       func(*plan.Plan)
	}{
		{"the cuda backend", `compiled for the "cuda" backend, the show on air runs on "cpu"`, func(p *plan.Plan) { p.Backend = "cuda" }},
		{"another show", `it is show "other", the show on air is "posted"`, func(p *plan.Plan) { p.Show, p.ShowHash = "other", "0123" }},
		{"another profile", `capacity profile "h200"`, func(p *plan.Plan) { p.Profile = "h200" }},
	} {
		_, p := onAir(t, addr)
		p.Scenes[0].Layers[0].Rect[0] = 100
		c.edit(p)
		code, msg := post(t, addr, marshal(t, p))
		if code != http.StatusConflict || !strings.Contains(msg, "not for the show on air") || !strings.Contains(msg, c.want) {
			t.Errorf("a plan for %s: %d %s, want 409 saying %q", c.name, code, msg, c.want)
		}
		if now, _ := onAir(t, addr); string(now) != string(was) {
			t.Fatalf("after a plan for %s was refused the show serves another plan", c.name)
		}
	}
	postedFile(t, dir, "half", "")
	b, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strings.Replace(string(b), "[0, 0, 160, 180]", "[100, 0, 160, 180]", 1)), 0o644)
	if rc, out, errs := runCLI(t, "apply", "-addr", addr, path); rc != 0 || !strings.Contains(out, "applied on air: scene.half") {
		t.Fatalf("onair apply of the show after the refusals: rc=%d\n%s%s", rc, out, errs)
	}
	if _, p := onAir(t, addr); p.Backend != "cpu" || p.Scenes[0].Layers[0].Rect[0] != 100 {
		t.Errorf("the plan on air: backend %q, rect %v", p.Backend, p.Scenes[0].Layers[0].Rect)
	}
}

// TestApplyRenamesASceneWhole is item 7: a scene renamed with a moved
// block was reported applied while nothing changed (a cut to the new name
// was 404, GET /plan claimed it), and the rename skipped the check that
// the scene's sources feed the bus. Now the bus shows the scene under its
// new name (a cut takes it, the old name is gone), and a rename whose
// scene shows a source the bus is not fed is refused whole.
func TestApplyRenamesASceneWhole(t *testing.T) {
	dir := t.TempDir()
	path := postedFile(t, dir, "half", "")
	addr := runPosted(t, path)
	postedFile(t, dir, "left", "moved {\n  from = scene.half\n  to   = scene.left\n}\n")
	if rc, out, errs := runCLI(t, "apply", "-addr", addr, path); rc != 0 || !strings.Contains(out, "applied on air: scene.left") {
		t.Fatalf("onair apply of a renamed scene: rc=%d\n%s%s", rc, out, errs)
	}
	if rc, out, errs := runCLI(t, "cut", "-addr", addr, "bus.pgm", "scene.left"); rc != 0 {
		t.Fatalf("a cut to the renamed scene: rc=%d\n%s%s", rc, out, errs)
	}
	waitPgm(t, addr, "scene.left")
	if rc, _, errs := runCLI(t, "cut", "-addr", addr, "bus.pgm", "scene.half"); rc == 0 || !strings.Contains(errs, "scene.left") {
		t.Errorf("a cut to the old name: rc=%d, want a refusal listing scene.left\n%s", rc, errs)
	}
	if rc, out, errs := runCLI(t, "apply", "-addr", addr, path); rc != 0 || !strings.Contains(out, "No changes") {
		t.Errorf("onair apply of the renamed show again: rc=%d\n%s%s", rc, out, errs)
	}

	// Renamed again, now showing source.ramp, which feeds only bus.b.
	was, p := onAir(t, addr)
	p.Scenes[0].Address = "scene.wide"
	p.Scenes[0].Layers[0].Source = "source.ramp"
	p.Moved = []plan.Moved{{From: "scene.left", To: "scene.wide"}}
	comp := nodeOf(t, p, "bus.pgm", "compositor")
	comp.Params["scene"], comp.Params["scenes"] = "scene.wide", []string{"scene.wide"}
	code, msg := post(t, addr, marshal(t, p))
	if code != http.StatusBadRequest || !strings.Contains(msg, "scene.wide layer 0 shows source.ramp, which does not feed bus.pgm") {
		t.Errorf("a rename to a scene of a source the bus is not fed: %d %s", code, msg)
	}
	if now, _ := onAir(t, addr); string(now) != string(was) {
		t.Error("a refused rename changed the plan on air")
	}
	if rc, _, errs := runCLI(t, "cut", "-addr", addr, "bus.pgm", "scene.wide"); rc == 0 {
		t.Errorf("a cut to a scene whose rename was refused: rc=0\n%s", errs)
	}
	if rc, out, errs := runCLI(t, "cut", "-addr", addr, "bus.pgm", "scene.left"); rc != 0 {
		t.Errorf("a cut to the scene after a refused rename: rc=%d\n%s%s", rc, out, errs)
	}
}

// TestApplyRefusesParamsOutOfRange is item 9: input_poll_ms -1, preview
// quality 0 and interval_ms 0 posted as plans were answered "applied",
// changed nothing, and the plan on air recorded them. Every param is now
// checked against the range its kind declares when a plan is read, and a
// change of one preview setting keeps the other.
func TestApplyRefusesParamsOutOfRange(t *testing.T) {
	dir := t.TempDir()
	path := postedFile(t, dir, "half", "")
	addr := runPosted(t, path)
	was, _ := onAir(t, addr)
	for _, c := range []struct {
		name, want string
		edit       func(*plan.Plan)
	}{
		{"input_poll_ms -1", "input_poll_ms must be in", func(p *plan.Plan) { nodeOf(t, p, "bus.pgm", "compositor").Params["input_poll_ms"] = -1 }},
		{"preview quality 0", "quality must be in", func(p *plan.Plan) { nodeOf(t, p, "output.pv", "output_preview").Params["quality"] = 0 }},
		{"preview interval_ms 0", "interval_ms must be in", func(p *plan.Plan) { nodeOf(t, p, "output.pv", "output_preview").Params["interval_ms"] = 0 }},
		{"canvas input_poll_ms -1", "canvas.input_poll_ms: input_poll_ms must be in", func(p *plan.Plan) { p.Canvas["input_poll_ms"] = -1 }},
	} {
		_, p := onAir(t, addr)
		c.edit(p)
		code, msg := post(t, addr, marshal(t, p))
		if code != http.StatusBadRequest || !strings.Contains(msg, c.want) {
			t.Errorf("%s: %d %s, want 400 saying %q", c.name, code, msg, c.want)
		}
		if now, _ := onAir(t, addr); string(now) != string(was) {
			t.Fatalf("after %s was refused the show serves another plan", c.name)
		}
	}
	b, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strings.Replace(string(b), "quality = 80", "quality = 40", 1)), 0o644)
	if rc, out, errs := runCLI(t, "apply", "-addr", addr, path); rc != 0 || !strings.Contains(out, "applied on air: output.pv") {
		t.Fatalf("onair apply of preview quality 40: rc=%d\n%s%s", rc, out, errs)
	}
	if _, p := onAir(t, addr); fmt.Sprint(nodeOf(t, p, "output.pv", "output_preview").Params) != "map[interval_ms:1000 quality:40]" {
		t.Errorf("the preview on air: %v", nodeOf(t, p, "output.pv", "output_preview").Params)
	}
}

// manyScenes are n scenes more, in blocks of at most 10,000 (the
// language's count limit).
func manyScenes(n int) string {
	var b strings.Builder
	for i := 0; n > 0; i++ {
		k := min(n, 10_000)
		fmt.Fprintf(&b, "scene \"s%d\" {\n  count = %d\n  layer {\n    source = source.bars\n    rect   = [count.index %% 160, 0, 160, 180]\n  }\n}\n", i, k)
		n -= k
	}
	return b.String()
}

// TestApplyOfManyScenesLands is items 8 and 10: onair apply of a show
// with 25,000 more scenes exited 1 with "cannot reach the show" after 5 s
// while the show applied them (apply was quadratic in the scenes added,
// and the client waited less than the server may work); and once a plan
// over 8 MiB was on air every onair apply failed, the client reading 8 MiB
// of a server that takes 16. Now the apply lands and says so, the plan on
// air is read back whole, and a cut takes the last scene.
func TestApplyOfManyScenesLands(t *testing.T) {
	dir := t.TempDir()
	path := postedFile(t, dir, "half", "")
	addr := runPosted(t, path)
	postedFile(t, dir, "half", manyScenes(25_000))
	if rc, out, errs := runCLI(t, "apply", "-addr", addr, path); rc != 0 || !strings.Contains(out, "applied on air: scene.s0[0], ") {
		t.Fatalf("onair apply of 25,000 more scenes: rc=%d\n%.300s\n%s", rc, out[max(0, len(out)-300):], errs)
	}
	if b, _ := onAir(t, addr); len(b) <= 8<<20 {
		t.Errorf("the plan on air is %d bytes: the test needs one over 8 MiB", len(b))
	}
	if rc, out, errs := runCLI(t, "apply", "-addr", addr, path); rc != 0 || !strings.Contains(out, "No changes") {
		t.Errorf("onair apply with a plan over 8 MiB on air: rc=%d\n%.300s\n%s", rc, out, errs)
	}
	if rc, out, errs := runCLI(t, "cut", "-addr", addr, "bus.pgm", "scene.s2[4999]"); rc != 0 {
		t.Fatalf("a cut to the last scene added: rc=%d\n%s%s", rc, out, errs)
	}
	waitPgm(t, addr, "scene.s2[4999]")
}

// TestApplyReportsTheOutcomeWhenTheAnswerIsLost is item 8's "the client
// is told it failed while the change lands": a proxy between onair apply
// and the show drops the answer to POST /plan. onair apply reads the plan
// on air and says whether the show took the change: applied when it did,
// nothing applied when the plan never reached the show.
func TestApplyReportsTheOutcomeWhenTheAnswerIsLost(t *testing.T) {
	dir := t.TempDir()
	path := postedFile(t, dir, "half", "")
	addr := runPosted(t, path)
	target, _ := url.Parse("http://" + addr)
	var forward atomic.Bool // POST /plan reaches the show
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "POST" || r.URL.Path != "/plan" {
			rp.ServeHTTP(w, r)
			return
		}
		if forward.Load() {
			req, _ := http.NewRequest("POST", target.String()+"/plan", r.Body)
			req.Header.Set("Content-Type", "application/json")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.(*net.TCPConn).SetLinger(0)
			conn.Close() // the answer is lost
		}
	}))
	defer proxy.Close()
	via := proxy.Listener.Addr().String()

	b, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strings.Replace(string(b), "[0, 0, 160, 180]", "[100, 0, 160, 180]", 1)), 0o644)
	forward.Store(false)
	if rc, out, errs := runCLI(t, "apply", "-addr", via, path); rc != 1 || !strings.Contains(errs, "the plan on air is not the one sent: nothing was applied") {
		t.Errorf("onair apply whose plan was lost: rc=%d, want 1 and nothing applied\n%s%s", rc, out, errs)
	}
	if _, p := onAir(t, addr); p.Scenes[0].Layers[0].Rect[0] != 0 {
		t.Fatalf("the lost plan is on air: %v", p.Scenes[0].Layers[0].Rect)
	}
	forward.Store(true)
	if rc, out, errs := runCLI(t, "apply", "-addr", via, path); rc != 0 || !strings.Contains(out, "applied on air: the plan on air is the one sent (the show's answer was lost") {
		t.Errorf("onair apply whose answer was lost: rc=%d, want 0 and applied\n%s%s", rc, out, errs)
	}
	if _, p := onAir(t, addr); p.Scenes[0].Layers[0].Rect[0] != 100 {
		t.Errorf("the plan on air after the lost answer: %v", p.Scenes[0].Layers[0].Rect)
	}
}

// TestPostedNonPlansAreRefusedClearly is item 15's "POST /plan with [1,2]
// prints a Go type": a body that is JSON but not a plan's shape is refused
// with what is wrong in the plan's terms.
func TestPostedNonPlansAreRefusedClearly(t *testing.T) {
	dir := t.TempDir()
	addr := runPosted(t, postedFile(t, dir, "half", ""))
	_, p := onAir(t, addr)
	head := fmt.Sprintf(`{"format_version": %d, "tool_version": %q, `, p.FormatVersion, p.ToolVersion)
	for _, c := range []struct{ body, want string }{
		{`[1,2]`, "the plan is a JSON array (at byte 1), where a plan has an object"},
		{`"plan"`, "the plan is a JSON string"},
		{head + `"show": "posted", "nodes": 5}`, "field nodes is a JSON number"},
		{head + `"show": "posted", "scenes": [{"layers": {}}]}`, "field scenes.layers is a JSON object"},
	} {
		code, msg := post(t, addr, []byte(c.body))
		if code != http.StatusBadRequest || !strings.Contains(msg, c.want) || strings.Contains(msg, "Go ") || strings.Contains(msg, "plan.") {
			t.Errorf("POST /plan %s: %d %s, want 400 saying %q and no Go type", c.body, code, msg, c.want)
		}
	}
}
