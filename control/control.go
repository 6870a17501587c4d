// Package control serves a running show over HTTP: the operator's page at
// / (a multiviewer and the bus controls, ui/ embedded), GET /status (JSON),
// GET /events (Server-Sent Events: switches, tally, source errors, missed
// deadlines), GET /metrics (Prometheus), GET /plan (the plan being run),
// GET /preview/{output} (a preview output's latest JPEG), GET
// /hls/{output}/{file} (a served HLS output's playlist and segments), GET
// /snapshot/{name} (a bus's or source's tile), POST /buses/{bus}/cut, /fade
// and /wipe to put a scene on a bus, and /preview and /take for the
// preview/program workflow. It also holds the client that `onair status`
// (and -watch) and `onair cut` use.
//
// The server listens on 127.0.0.1 unless told otherwise; on any other
// address it refuses to start without a token of at least MinTokenLen
// characters, and then every request must carry it as "Authorization:
// Bearer TOKEN" (a request without it gets 401 and its connection is
// closed; wrong tokens are logged and limited per client address, see
// logins.go). Every request must name the server in its Host header (the
// listen address, localhost for a loopback one, or a name in
// Options.Hosts), so a web page cannot read it by rebinding its DNS. A
// request that changes something must send Content-Type: application/json
// and, if it sends an Origin, this server's own; its body is exactly one
// JSON object with known fields. The server holds at most DefaultMaxConns
// connections and times out slow and idle ones (see the constants in
// limits.go). Every answer carries the Onair-Version header, which the
// client checks.
//
// control must never import lang/ or compiler/ (it serves a plan as bytes)
// nor a backend: a backend's show implements Show.
package control

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/onairhq/onair/metrics"
	"github.com/onairhq/onair/showerr"
)

// Show is what a running show offers the server.
type Show interface {
	// Status is a JSON-marshalable snapshot of the whole show.
	Status() any
	// Plan is the plan being run, as its JSON bytes.
	Plan() []byte
	// Switch puts scene on bus with a transition of kind ("cut", "fade",
	// "wipe") lasting d. It returns an error wrapping showerr.ErrNotFound when the
	// bus or scene does not exist, showerr.ErrInvalid when the request cannot be
	// carried out as asked.
	Switch(bus, scene, kind string, d time.Duration) error
	// Collect sends the show's metrics (see metrics.Sample).
	Collect(func(metrics.Sample))
}

// Previewer is a Show with preview outputs: GET /preview/{output} serves
// the output's latest JPEG snapshot.
type Previewer interface {
	Preview(output string) ([]byte, bool)
}

// HLSServer is a Show with HLS outputs it serves: GET /hls/{output}/{file}
// serves the output's playlist (index.m3u8) and segments from HLSDir.
type HLSServer interface {
	HLSDir(output string) (string, bool)
}

// The errors a Show returns are package request's, mapped to HTTP status
// codes (operator.go).

// Applier takes a new plan for the show on air: POST /plan, its body the
// plan's JSON (what `onair plan -json` writes).
type Applier interface {
	// Apply carries out the new plan's changes that can be made on air
	// and returns what it did (JSON-marshalable). It changes nothing and
	// returns an error wrapping showerr.ErrInvalid when the plan cannot be read,
	// showerr.ErrConflict when a change needs the show restarted.
	Apply(planJSON []byte) (any, error)
}

// SetApplier has POST /plan hand new plans to a. Call it before Serve.
func (s *Server) SetApplier(a Applier) { s.applier = a }

// Options configures a Server.
type Options struct {
	Addr  string // host:port; "" means 127.0.0.1:7350
	Token string // required when Addr is not a loopback address
	// Hosts are extra names clients may reach the server by, such as a DNS
	// name of the machine: "studio.example" (with the listen port) or
	// "studio.example:8080" (behind a proxy). Blank entries are ignored.
	Hosts []string
	// Version is the tool's version, sent in every answer's Onair-Version
	// header; "" sends "unknown".
	Version string
	// Limits overrides the server's limits (zero fields keep the defaults).
	Limits Limits
	// Log gets the failed logins (logins.go); nil logs nothing.
	Log *slog.Logger
	// Now reads the wall clock for the login limit; nil is time.Now.
	Now func() time.Time
	// TLSCert and TLSKey name PEM files: the server then speaks only
	// HTTPS. A token on an address other than loopback needs them unless
	// InsecureRemoteToken (see CheckTLS).
	TLSCert, TLSKey     string
	InsecureRemoteToken bool
}

// VersionHeader is the response header by which a client knows it talks
// to an onair show.
const VersionHeader = "Onair-Version"

// DefaultAddr is where the status server listens unless told otherwise.
const DefaultAddr = "127.0.0.1:7350"

// Server is a running status and control server.
type Server struct {
	srv     *http.Server
	ln      net.Listener
	token   string
	version string
	limits  Limits
	own     hosts
	show    Show
	applier Applier // POST /plan; nil: 404
	done    chan error

	events   eventSlots    // GET /events clients
	sessions sessions      // the page's logins
	logins   loginLimiter  // failed logins by client address
	closing  chan struct{} // closed by Close: event streams end

	tls     bool                        // the server speaks HTTPS
	cross   *http.CrossOriginProtection // state changes from other origins
	onAir   atomic.Bool                 // Serve was called: show is set
	probing bool                        // ServeProbes started the HTTP server
}

// CheckListen reports whether a server may listen on addr with token: a
// well-formed host:port, a token clients can send (no surrounding spaces
// or control characters), and unless the host is a loopback address a
// token of at least MinTokenLen characters.
func CheckListen(addr, token string) error {
	if addr == "" {
		addr = DefaultAddr
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %v (write host:port, e.g. 127.0.0.1:7350)", addr, err)
	}
	if token != "" && (strings.TrimSpace(token) != token || strings.IndexFunc(token, unwanted) >= 0) {
		return fmt.Errorf("the token has surrounding spaces or control characters, which no client can send in a header; choose one of letters and digits, e.g. from `openssl rand -hex 16`")
	}
	if isLoopback(host) {
		return nil
	}
	if token == "" {
		return fmt.Errorf("listen address %q is not a loopback address: anyone who reaches it could cut your show; set a token of at least %d characters (-token or ONAIR_TOKEN, e.g. from `openssl rand -hex 16`) to listen there", addr, MinTokenLen)
	}
	if n := len([]rune(token)); n < MinTokenLen {
		return fmt.Errorf("listen address %q is not a loopback address and the token has only %d characters: anyone who reaches it could guess it and cut your show; use at least %d (e.g. from `openssl rand -hex 16`)", addr, n, MinTokenLen)
	}
	return nil
}

// Start listens and serves show in the background.
func Start(show Show, opts Options) (*Server, error) {
	s, err := Bind(opts)
	if err != nil {
		return nil, err
	}
	s.Serve(show)
	return s, nil
}

// Bind checks the address and takes the socket, serving nothing yet: a show
// that cannot have its status server finds out before it goes on air.
// Serve starts serving; Close releases the socket either way.
func Bind(opts Options) (*Server, error) {
	addr := opts.Addr
	if addr == "" {
		addr = DefaultAddr
	}
	if err := CheckListen(addr, opts.Token); err != nil {
		return nil, err
	}
	if err := CheckTLS(addr, opts.Token, opts.TLSCert, opts.TLSKey, opts.InsecureRemoteToken); err != nil {
		return nil, err
	}
	names, err := parseNames(opts.Hosts)
	if err != nil {
		return nil, err
	}
	var tlsConf *tls.Config
	if opts.TLSCert != "" {
		if tlsConf, err = loadServerTLS(opts.TLSCert, opts.TLSKey); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %v", addr, err)
	}
	version := opts.Version
	if version == "" {
		version = "unknown"
	}
	limits := opts.Limits.withDefaults()
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	own := ownHosts(ln.Addr(), names)
	var served net.Listener = newLimitListener(ln, limits.MaxConns)
	if tlsConf != nil {
		served = tls.NewListener(served, tlsConf)
	}
	return &Server{
		logins:  loginLimiter{now: now, log: opts.Log},
		ln:      served,
		tls:     tlsConf != nil,
		cross:   crossOrigin(own),
		token:   opts.Token,
		version: version,
		limits:  limits,
		own:     own,
		done:    make(chan error, 1),
		closing: make(chan struct{}),
	}, nil
}

// Serve serves show on the bound socket, in the background (after
// ServeProbes: from now on, every route).
func (s *Server) Serve(show Show) {
	s.show = show
	s.onAir.Store(true)
	if s.probing {
		return
	}
	s.start()
}

// start starts the HTTP server on the bound socket.
func (s *Server) start() {
	s.srv = &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: s.limits.ReadHeaderTimeout,
		ReadTimeout:       s.limits.ReadTimeout,
		WriteTimeout:      s.limits.WriteTimeout,
		IdleTimeout:       s.limits.IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
	go func() { s.done <- s.srv.Serve(s.ln) }()
}

// Addr is the address the server listens on (with the real port when the
// requested one was 0).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is the server's base address: https://ADDR with TLS, else
// http://ADDR.
func (s *Server) URL() string {
	if s.tls {
		return "https://" + s.Addr()
	}
	return "http://" + s.Addr()
}

// Close stops the server and waits for it (or only releases the socket of
// a server that never served).
func (s *Server) Close() error {
	if s.srv == nil {
		return s.ln.Close()
	}
	select {
	case <-s.closing:
	default:
		close(s.closing)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Handler is the server's routes, usable on its own in tests.
func (s *Server) Handler() http.Handler {

	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.healthzHandler)
	mux.HandleFunc("GET /readyz", s.readyzHandler)
	// The registry holds the show: made at the first scrape, which comes
	// once the show is on air (while only the probes serve, every other
	// route answers 503), not here, where a server that served its probes
	// first has no show yet (and its /metrics had none of the show's).
	var metricsOnce sync.Once
	var metricsHandler http.Handler
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		metricsOnce.Do(func() {
			metricsHandler = promhttp.HandlerFor(s.registry(), promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
		})
		metricsHandler.ServeHTTP(w, r)
	})
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.show.Status())
	})
	mux.HandleFunc("GET /plan", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(s.show.Plan())
	})
	mux.HandleFunc("POST /plan", s.applyHandler)
	mux.HandleFunc("GET /preview/{output}", func(w http.ResponseWriter, r *http.Request) {
		pv, ok := s.show.(Previewer)
		var jpg []byte
		if ok {
			jpg, ok = pv.Preview(r.PathValue("output"))
		}
		if !ok {
			writeError(w, http.StatusNotFound, fmt.Sprintf("no snapshot of %q: name a preview output of the show (output \"preview\" \"NAME\"); it has one once its bus drew a frame", r.PathValue("output")))
			return
		}
		w.Header().Set("Content-Type", "image/jpeg")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(jpg)
	})
	mux.HandleFunc("GET /hls/{output}/{file}", s.hlsHandler) // hls.go
	for _, kind := range []string{"cut", "fade", "wipe"} {
		mux.HandleFunc("POST /buses/{bus}/"+kind, s.switchHandler(kind))
	}
	mux.HandleFunc("POST /buses/{bus}/preview", s.previewHandler)
	mux.HandleFunc("POST /buses/{bus}/take", s.takeHandler)
	mux.HandleFunc("POST /buses/{bus}/audio", s.audioHandler)
	mux.HandleFunc("GET /snapshot/{name}", s.snapshotHandler)
	mux.HandleFunc("GET /events", s.eventsHandler)
	mux.HandleFunc("POST /login", s.loginHandler)
	mux.HandleFunc("POST /logout", s.logoutHandler)
	ui := uiHandler()
	mux.Handle("GET /ui/", http.StripPrefix("/ui", ui))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/"
		ui.ServeHTTP(w, r2)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no such endpoint %s %s; try GET / (the page), GET /status, GET /events, GET /metrics, GET /plan or POST /buses/BUS/cut", r.Method, r.URL.Path))
	})
	return s.guard(s.untilOnAir(mux))
}

func (s *Server) applyHandler(w http.ResponseWriter, r *http.Request) {
	if s.applier == nil {
		writeError(w, http.StatusNotFound, "this show takes no new plans")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxPlanBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the plan is larger than %d bytes", MaxPlanBytes))
			return
		}
		writeError(w, http.StatusBadRequest, "cannot read the request body: "+err.Error())
		return
	}
	done, err := s.applier.Apply(body)
	if err != nil {
		showError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, done)
}

// SwitchRequest is the body of POST /buses/{bus}/{cut,fade,wipe}.
type SwitchRequest struct {
	Scene    string `json:"scene"`              // "scene.grid" or "grid"
	Duration string `json:"duration,omitempty"` // fade and wipe: "500ms", "1s", "15f" or "15" (frames)
	// At is the timecode of the tick the switch starts on, HH:MM:SS:FF
	// (HH:MM:SS;FF at drop-frame rates); "" is the next tick.
	At string `json:"at,omitempty"`
}

func (s *Server) switchHandler(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req SwitchRequest
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf(`the request body is larger than %d bytes; send {"scene": "scene.NAME", "duration": "500ms"}`, MaxBodyBytes))
				return
			}
			writeError(w, http.StatusBadRequest, "cannot read the request body: "+err.Error())
			return
		}
		if err := decodeOne(body, &req); err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf(`malformed request body: %v; send one JSON object, {"scene": "scene.NAME", "duration": "500ms"}`, err))
			return
		}
		if req.Scene == "" {
			writeError(w, http.StatusBadRequest, `the request names no scene; send {"scene": "scene.NAME"}`)
			return
		}
		d, msg := s.parseDuration(kind, req.Duration)
		if msg != "" {
			writeError(w, http.StatusBadRequest, msg)
			return
		}
		bus := r.PathValue("bus")
		if ts, ok := s.show.(TimedSwitcher); ok {
			err = ts.SwitchAt(bus, req.Scene, kind, d, req.At, origin(r))
		} else if req.At != "" {
			err = fmt.Errorf("this show cannot switch at a timecode: %w", showerr.ErrInvalid)
		} else {
			err = s.show.Switch(bus, req.Scene, kind, d)
		}
		if err != nil {
			showError(w, err)
			return
		}
		ans := map[string]any{"bus": bus, "scene": req.Scene, "transition": kind, "duration": d.String()}
		if req.At != "" {
			ans["at"] = req.At
		}
		writeJSON(w, http.StatusOK, ans)
	}
}

// decodeOne decodes body, which must hold exactly one JSON value with only
// the fields v has (white space may follow it, nothing else).
func decodeOne(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	off := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		rest := bytes.TrimLeft(body[off:], " \t\r\n")
		return fmt.Errorf("trailing data after the JSON object: %q at byte %d", clip(rest, 16), len(body)-len(rest))
	}
	return nil
}

// clip is b, cut to at most n bytes.
func clip(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
	}
	return string(b)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		writeError(w, http.StatusInternalServerError, "cannot encode the response: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

func writeError(w http.ResponseWriter, code int, msg string) {
	b, _ := json.Marshal(map[string]string{"error": msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

// Collectors is a Show with metrics of its own kept by client_golang
// (histograms observed as the show runs), registered beside its samples.
type Collectors interface {
	Collectors() []prometheus.Collector
}

// registry is what GET /metrics serves: the show's samples and
// collectors, onair_build_info, and the Go runtime's and the process's
// standard metrics (go_*, process_*).
func (s *Server) registry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector{s.show},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	info := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "onair_build_info",
		Help:        "Always 1: the onair build serving this show, by its version and the Go version it was built with.",
		ConstLabels: prometheus.Labels{"version": s.version, "goversion": goruntime.Version()},
	})
	info.Set(1)
	reg.MustRegister(info)
	if c, ok := s.show.(Collectors); ok {
		for _, col := range c.Collectors() {
			if err := reg.Register(col); err != nil {
				reg.MustRegister(invalid{err})
			}
		}
	}
	return reg
}

// invalid reports a collector that could not be registered on every
// scrape, rather than failing the server.
type invalid struct{ err error }

func (i invalid) Describe(chan<- *prometheus.Desc) {}
func (i invalid) Collect(ch chan<- prometheus.Metric) {
	d := prometheus.NewDesc("onair_metrics_error", "A collector of the show could not be registered.", nil, nil)
	ch <- prometheus.NewInvalidMetric(d, i.err)
}

// collector turns the show's samples into Prometheus metrics at scrape time.
type collector struct{ show Show }

func (collector) Describe(chan<- *prometheus.Desc) {} // unchecked: the set of buses and sources is the show's

func (c collector) Collect(ch chan<- prometheus.Metric) {
	c.show.Collect(func(s metrics.Sample) {
		names := make([]string, len(s.Labels))
		values := make([]string, len(s.Labels))
		for i, l := range s.Labels {
			names[i], values[i] = l[0], l[1]
		}
		desc := prometheus.NewDesc(s.Name, s.Help, names, nil)
		var m prometheus.Metric
		var err error
		switch s.Kind {
		case metrics.Counter:
			m, err = prometheus.NewConstMetric(desc, prometheus.CounterValue, s.Value, values...)
		case metrics.Gauge:
			m, err = prometheus.NewConstMetric(desc, prometheus.GaugeValue, s.Value, values...)
		case metrics.Histogram:
			m, err = prometheus.NewConstHistogram(desc, s.Count, s.Sum, s.Buckets, values...)
		}
		if err != nil {
			m = prometheus.NewInvalidMetric(desc, err)
		}
		ch <- m
	})
}
