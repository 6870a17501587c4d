package cli

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/onairhq/onair/control"
	"github.com/onairhq/onair/internal/testwait"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// onairBinary builds the onair binary once for the tests that run it as
// a process (signals, environment).
func onairBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: builds the onair binary")
	}
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "onair-bin")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "onair")
		if out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// process is onair running as a child process.
type process struct {
	cmd       *exec.Cmd
	out, errs liveOutput
	ended     chan struct{}
	err       error
}

func startOnair(t *testing.T, env []string, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(onairBinary(t), args...), ended: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.errs
	p.cmd.Env = append(os.Environ(), env...)
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.cmd.Process.Kill(); <-p.ended })
	go func() { p.err = p.cmd.Wait(); close(p.ended) }()
	return p
}

// stop sends sig and waits for the process to end; it fails the test on
// an exit other than 0.
func (p *process) stop(t *testing.T, sig syscall.Signal) {
	t.Helper()
	p.cmd.Process.Signal(sig)
	select {
	case <-p.ended:
	case <-time.After(eventBound):
		t.Fatalf("still running %v after %v:\n%s\n%s", eventBound, sig, p.out.String(), p.errs.String())
	}
	if p.err != nil {
		t.Fatalf("exit after %v: %v\n%s\n%s", sig, p.err, p.out.String(), p.errs.String())
	}
}

// probe GETs a probe of the show at base and returns its code and body.
func probe(t *testing.T, hc *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := hc.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	n, _ := resp.Body.Read(buf)
	b.Write(buf[:n])
	return resp.StatusCode, b.String()
}

// jsonLines checks that every line of log is a JSON object with a level
// and a msg, and returns them.
func jsonLines(t *testing.T, log string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(log), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Errorf("a log line is not JSON (%v): %q", err, l)
			continue
		}
		if _, ok := m["level"].(string); !ok {
			t.Errorf("a log line has no level: %q", l)
		}
		if _, ok := m["msg"].(string); !ok {
			t.Errorf("a log line has no msg: %q", l)
		}
		out = append(out, m)
	}
	return out
}

// TestSIGHUPAppliesTheShowFileLive runs onair as systemd would reload it:
// the show file is edited (its layer moved) and SIGHUP applies it on air,
// as onair apply does; then an edit that needs a restart is refused in
// the log and the show stays on air; SIGTERM stops it, and the log (JSON,
// a line each) and the summary say why.
func TestSIGHUPAppliesTheShowFileLive(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "show.hcl")
	write := func(pattern, rect string) {
		src := strings.NewReplacer("PATTERN", pattern, "RECT", rect).Replace(applyShow)
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("bars", "[0, 0, 320, 360]")
	p := startOnair(t, nil, "run", "-backend", "cpu", "-listen", "127.0.0.1:0", "-log-format", "json", path)
	addr := waitOutput(t, &p.out, `status: http://(\S+)/status`, p.ended)[1]
	hc := &http.Client{Timeout: 5 * time.Second}
	testwait.Until(t, eventBound, "GET /readyz 200", func() bool { code, _ := probe(t, hc, "http://"+addr+"/readyz"); return code == 200 })
	client := control.Client{Addr: addr}
	rectOnAir := func() string {
		js, err := client.Plan()
		if err != nil {
			t.Fatal(err)
		}
		var pl struct {
			Scenes []struct {
				Layers []struct {
					Rect []int `json:"rect"`
				} `json:"layers"`
			} `json:"scenes"`
		}
		if err := json.Unmarshal(js, &pl); err != nil || len(pl.Scenes) != 1 || len(pl.Scenes[0].Layers) != 1 {
			t.Fatalf("GET /plan: %v\n%.400s", err, js)
		}
		return fmt.Sprint(pl.Scenes[0].Layers[0].Rect)
	}
	if r := rectOnAir(); r != "[0 0 320 360]" {
		t.Fatalf("the layer on air is at %s before the edit", r)
	}

	write("bars", "[320, 0, 320, 360]")
	p.cmd.Process.Signal(syscall.SIGHUP)
	waitOutput(t, &p.errs, `"msg":"reloaded: applied on air".*"applied":"scene.half"`, p.ended)
	if r := rectOnAir(); r != "[320 0 320 360]" {
		t.Errorf("after SIGHUP the layer on air is at %s, want the file's [320 0 320 360]", r)
	}

	// A new pattern re-creates the source: refused, logged, still on air.
	write("checker", "[320, 0, 320, 360]")
	p.cmd.Process.Signal(syscall.SIGHUP)
	waitOutput(t, &p.errs, `"msg":"reload refused: the changes need a restart[^"]*".*source.bars replace`, p.ended)
	var before busStatus
	if js, err := client.Status(); err != nil || json.Unmarshal(js, &before) != nil || len(before.Summary.Buses) == 0 {
		t.Fatalf("GET /status after the refused reload: %v", err)
	}
	waitStatus(t, addr, "ten more ticks after the refused reload", func(ticks uint64, _ string) bool { return ticks >= before.Summary.Buses[0].Ticks+10 })
	if code, body := probe(t, hc, "http://"+addr+"/readyz"); code != 200 {
		t.Errorf("GET /readyz after the refused reload: %d %s", code, body)
	}
	if r := rectOnAir(); r != "[320 0 320 360]" {
		t.Errorf("the refused reload changed the plan on air: the layer is at %s", r)
	}

	p.stop(t, syscall.SIGTERM)
	if !strings.Contains(p.out.String(), "Stopped: SIGTERM received.") {
		t.Errorf("the summary does not say why the show stopped:\n%s", p.out.String())
	}
	var stopping bool
	for _, l := range jsonLines(t, p.errs.String()) {
		if l["msg"] == "stopping" && l["reason"] == "SIGTERM received" {
			stopping = true
		}
	}
	if !stopping {
		t.Errorf("no log line says the show stops for SIGTERM:\n%s", p.errs.String())
	}
}

// TestRunSaysWhyItStopped: a run that ends at -duration says so in its log
// and its summary; one interrupted as Ctrl-C does names SIGINT.
func TestRunSaysWhyItStopped(t *testing.T) {
	show := writeRunShow(t)
	rc, out, errs := runCLI(t, "run", "-listen", "", "-duration", "1s", show)
	if rc != 0 || !strings.Contains(out, "Stopped: -duration reached (1s).") || !strings.Contains(errs, `msg=stopping reason="-duration reached (1s)"`) {
		t.Errorf("a run for 1s: rc=%d\n%s\n%s", rc, out, errs)
	}
	bg := runInBackground("run", "-listen", "", show)
	bg.waitOut(t, "on air: cli")
	if rc := bg.interrupt(t); rc != 0 || !strings.Contains(bg.out.String(), "Stopped: SIGINT received.") || !strings.Contains(bg.errs.String(), `msg=stopping reason="SIGINT received"`) {
		t.Errorf("an interrupted run: rc=%d\n%s\n%s", rc, bg.out.String(), bg.errs.String())
	}
	if rc, _, errs := runCLI(t, "run", "-log-format", "yaml", show); rc != 2 || !strings.Contains(errs, `-log-format "yaml": use text or json`) {
		t.Errorf("-log-format yaml: rc=%d %s", rc, errs)
	}
}

// TestProbesOfARunningShow: /healthz answers 200 while the process
// serves, /readyz 503 with the reason until every bus draws, then 200;
// both in JSON, or text when asked.
func TestProbesOfARunningShow(t *testing.T) {
	show := writeRunShow(t)
	bg := runInBackground("run", "-listen", "127.0.0.1:0", "-quiet", show)
	addr := bg.waitOut(t, `status: http://(\S+)/status`)[1]
	hc := &http.Client{Timeout: 5 * time.Second}
	if code, body := probe(t, hc, "http://"+addr+"/healthz"); code != 200 || !strings.Contains(body, `"ok": true`) {
		t.Errorf("GET /healthz: %d %s", code, body)
	}
	var code int
	var body string
	testwait.Until(t, eventBound, "GET /readyz 200", func() bool {
		code, body = probe(t, hc, "http://"+addr+"/readyz")
		if code != 200 && (code != 503 || !strings.Contains(body, "bus.pgm")) {
			t.Fatalf("GET /readyz before the bus draws: %d %s, want 503 naming bus.pgm", code, body)
		}
		return code == 200
	})
	if !strings.Contains(body, `"status": "on air"`) {
		t.Errorf("GET /readyz on air: %s", body)
	}
	req, _ := http.NewRequest("GET", "http://"+addr+"/readyz", nil)
	req.Header.Set("Accept", "text/plain")
	if resp, err := hc.Do(req); err != nil || resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("GET /readyz as text: %v %v", resp, err)
	}
	if rc := bg.interrupt(t); rc != 0 {
		t.Fatalf("rc=%d %s", rc, bg.errs.String())
	}
}

// TestNotifiesSystemd runs onair as systemd's Type=notify service does,
// with NOTIFY_SOCKET a datagram socket the test listens on (a path, then
// an abstract name) and WATCHDOG_USEC set: READY=1 with a STATUS once on
// air, WATCHDOG=1 keep-alives, STOPPING=1 on SIGTERM.
func TestNotifiesSystemd(t *testing.T) {
	dir, err := os.MkdirTemp("", "sd") // short: a socket path has at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	show := writeRunShow(t)
	for _, name := range []string{filepath.Join(dir, "notify"), fmt.Sprintf("@onair-test-%d", os.Getpid())} {
		conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
		if err != nil {
			t.Fatal(err)
		}
		msgs := make(chan string, 100)
		go func() {
			buf := make([]byte, 4096)
			for {
				n, _, err := conn.ReadFromUnix(buf)
				if err != nil {
					close(msgs)
					return
				}
				msgs <- string(buf[:n])
			}
		}()
		p := startOnair(t, []string{"NOTIFY_SOCKET=" + name, "WATCHDOG_USEC=200000"}, "run", "-listen", "", show)
		next := func(want string) string {
			t.Helper()
			timeout := time.After(eventBound)
			for {
				select {
				case m := <-msgs:
					if strings.Contains(m, want) {
						return m
					}
				case <-timeout:
					t.Fatalf("%s: no %q in %v:\n%s", name, want, eventBound, p.errs.String())
				}
			}
		}
		if m := next("READY=1"); !strings.Contains(m, "STATUS=on air: cli,") || !strings.Contains(m, fmt.Sprintf("MAINPID=%d", p.cmd.Process.Pid)) {
			t.Errorf("%s: READY=1 without the status and pid: %q", name, m)
		}
		next("WATCHDOG=1")
		next("WATCHDOG=1")
		p.cmd.Process.Signal(syscall.SIGTERM)
		if m := next("STOPPING=1"); !strings.Contains(m, "STATUS=stopping: SIGTERM received") {
			t.Errorf("%s: STOPPING=1 without the reason: %q", name, m)
		}
		p.stop(t, syscall.SIGTERM)
		conn.Close()
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key
// as PEM files in dir, and returns their paths.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "onair test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	return certFile, keyFile
}

// TestControlServerOverTLS: with -tls-cert and -tls-key the server speaks
// HTTPS; status, cut and apply reach it at https:// trusting -tls-ca, and
// refuse a certificate they cannot trust; a token off loopback without
// TLS is refused unless -insecure-remote-token says otherwise.
func TestControlServerOverTLS(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	show := writeRunShow(t)
	const token = "0123456789abcdef0123"
	bg := runInBackground("run", "-listen", "127.0.0.1:0", "-token", token, "-tls-cert", cert, "-tls-key", key, "-quiet", show)
	addr := bg.waitOut(t, `status: https://(\S+)/status`)[1]
	base := "https://" + addr
	if rc, out, errs := runCLI(t, "status", "-addr", base, "-tls-ca", cert, "-token", token); rc != 0 || !strings.Contains(out, "cli on the cpu backend") {
		t.Errorf("onair status over TLS: rc=%d %s %s", rc, out, errs)
	}
	if rc, out, errs := runCLI(t, "cut", "-addr", base, "-tls-ca", cert, "-token", token, "bus.pgm", "scene.b"); rc != 0 || !strings.Contains(out, "cut bus.pgm to scene.b") {
		t.Errorf("onair cut over TLS: rc=%d %s %s", rc, out, errs)
	}
	if rc, out, errs := runCLI(t, "apply", "-dry-run", "-addr", base, "-tls-ca", cert, "-token", token, show); rc != 0 || !strings.Contains(out, "No changes") {
		t.Errorf("onair apply over TLS: rc=%d %s %s", rc, out, errs)
	}
	if rc, _, errs := runCLI(t, "status", "-addr", base, "-token", token); rc != 1 || !strings.Contains(errs, "certificate") {
		t.Errorf("onair status without the CA: rc=%d %s, want a certificate error", rc, errs)
	}
	if rc, _, errs := runCLI(t, "status", "-addr", addr, "-token", token); rc != 1 {
		t.Errorf("onair status over plain HTTP to the TLS server: rc=%d %s", rc, errs)
	}
	if rc := bg.interrupt(t); rc != 0 {
		t.Fatalf("rc=%d %s", rc, bg.errs.String())
	}

	if rc, _, errs := runCLI(t, "run", "-listen", "0.0.0.0:0", "-token", token, "-duration", "200ms", show); rc != 2 || !strings.Contains(errs, "the token would travel in clear") || !strings.Contains(errs, "-insecure-remote-token") {
		t.Errorf("a token off loopback without TLS: rc=%d %s", rc, errs)
	}
	if rc, _, errs := runCLI(t, "run", "-listen", "127.0.0.1:0", "-tls-cert", cert, "-duration", "200ms", show); rc != 2 || !strings.Contains(errs, "both a certificate and its key") {
		t.Errorf("-tls-cert without -tls-key: rc=%d %s", rc, errs)
	}
	if rc, out, errs := runCLI(t, "run", "-listen", "0.0.0.0:0", "-token", token, "-insecure-remote-token", "-duration", "500ms", show); rc != 0 || !strings.Contains(out, "Ran cli") {
		t.Errorf("-insecure-remote-token: rc=%d %s %s", rc, out, errs)
	}
	if rc, out, errs := runCLI(t, "run", "-listen", "0.0.0.0:0", "-token", token, "-tls-cert", cert, "-tls-key", key, "-duration", "500ms", show); rc != 0 || !strings.Contains(out, "status: https://") {
		t.Errorf("a token off loopback over TLS: rc=%d %s %s", rc, out, errs)
	}
}

func TestBucketBoundsPrintAsBounds(t *testing.T) {
	for ns, want := range map[int64]string{8388607: "≤ 8.4 ms", 131071: "≤ 131 µs", 1023: "≤ 1.0 µs", 511: "≤ 511 ns", 0: "0", 2147483647: "≤ 2.1 s"} {
		if got := bucketBound(ns); got != want {
			t.Errorf("bucketBound(%d) = %q, want %q", ns, got, want)
		}
	}
}
