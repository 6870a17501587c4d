// Package control serves a running show over HTTP: GET /status (JSON),
// GET /metrics (Prometheus), GET /plan (the plan being run), GET
// /preview/{output} (a preview output's latest JPEG), and POST
// /buses/{bus}/cut, /fade and /wipe to put a scene on a bus. It also holds
// the client that `onair status` and `onair cut` use.
//
// The server listens on 127.0.0.1 unless told otherwise; on any other
// address it refuses to start without a token, and then every request must
// carry it as "Authorization: Bearer TOKEN".
//
// control must never import lang/ or compiler/ (it serves a plan as bytes)
// nor a backend: a backend's show implements Show.
package control

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Show is what a running show offers the server.
type Show interface {
	// Status is a JSON-marshalable snapshot of the whole show.
	Status() any
	// Plan is the plan being run, as its JSON bytes.
	Plan() []byte
	// Switch puts scene on bus with a transition of kind ("cut", "fade",
	// "wipe") lasting d. It returns an error wrapping ErrNotFound when the
	// bus or scene does not exist, ErrInvalid when the request cannot be
	// carried out as asked.
	Switch(bus, scene, kind string, d time.Duration) error
	// Collect sends the show's metrics (see Sample).
	Collect(func(Sample))
}

// Previewer is a Show with preview outputs: GET /preview/{output} serves
// the output's latest JPEG snapshot.
type Previewer interface {
	Preview(output string) ([]byte, bool)
}

// Errors a Show returns, mapped to HTTP status codes.
var (
	ErrNotFound = errors.New("not found")
	ErrInvalid  = errors.New("invalid request")
)

// SampleKind says how Prometheus treats a sample.
type SampleKind int

const (
	Counter SampleKind = iota
	Gauge
	Histogram // Buckets and Sum, Count set; Value unused
)

// Sample is one metric value with its labels.
type Sample struct {
	Name   string // onair_* metric name
	Help   string
	Kind   SampleKind
	Labels [][2]string // label name, value; the same names for every sample of a metric
	Value  float64
	// Histograms: upper bounds (seconds) with cumulative counts, sum and count.
	Buckets map[float64]uint64
	Sum     float64
	Count   uint64
}

// Options configures a Server.
type Options struct {
	Addr  string // host:port; "" means 127.0.0.1:7350
	Token string // required when Addr is not a loopback address
}

// DefaultAddr is where the status server listens unless told otherwise.
const DefaultAddr = "127.0.0.1:7350"

// Server is a running status and control server.
type Server struct {
	srv   *http.Server
	ln    net.Listener
	token string
	show  Show
	done  chan error
}

// CheckListen reports whether a server may listen on addr with token: a
// well-formed host:port, and a token unless the host is a loopback address.
func CheckListen(addr, token string) error {
	if addr == "" {
		addr = DefaultAddr
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %v (write host:port, e.g. 127.0.0.1:7350)", addr, err)
	}
	if !isLoopback(host) && token == "" {
		return fmt.Errorf("listen address %q is not a loopback address: anyone who reaches it could cut your show; set a token (-token or ONAIR_TOKEN) to listen there", addr)
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
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %v", addr, err)
	}
	return &Server{ln: ln, token: opts.Token, done: make(chan error, 1)}, nil
}

// Serve serves show on the bound socket, in the background.
func (s *Server) Serve(show Show) {
	s.show = show
	s.srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { s.done <- s.srv.Serve(s.ln) }()
}

// Addr is the address the server listens on (with the real port when the
// requested one was 0).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server and waits for it (or only releases the socket of
// a server that never served).
func (s *Server) Close() error {
	if s.srv == nil {
		return s.ln.Close()
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
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector{s.show})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.show.Status())
	})
	mux.HandleFunc("GET /plan", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(s.show.Plan())
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
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
	for _, kind := range []string{"cut", "fade", "wipe"} {
		mux.HandleFunc("POST /buses/{bus}/"+kind, s.switchHandler(kind))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no such endpoint %s %s; try GET /status, GET /metrics, GET /plan or POST /buses/BUS/cut", r.Method, r.URL.Path))
	})
	return s.auth(mux)
}

func (s *Server) auth(next http.Handler) http.Handler {
	if s.token == "" {
		return next
	}
	want := []byte("Bearer " + s.token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			writeError(w, http.StatusUnauthorized, "missing or wrong token: send Authorization: Bearer TOKEN")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// SwitchRequest is the body of POST /buses/{bus}/{cut,fade,wipe}.
type SwitchRequest struct {
	Scene    string `json:"scene"`              // "scene.grid" or "grid"
	Duration string `json:"duration,omitempty"` // fade and wipe: "500ms", "1s"
}

func (s *Server) switchHandler(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req SwitchRequest
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<16))
		if err != nil {
			writeError(w, http.StatusBadRequest, "cannot read the request body: "+err.Error())
			return
		}
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf(`malformed request body: %v; send {"scene": "scene.NAME", "duration": "500ms"}`, err))
			return
		}
		if req.Scene == "" {
			writeError(w, http.StatusBadRequest, `the request names no scene; send {"scene": "scene.NAME"}`)
			return
		}
		var d time.Duration
		if req.Duration != "" {
			d, err = time.ParseDuration(req.Duration)
			if err != nil || d < 0 || d > time.Minute {
				writeError(w, http.StatusBadRequest, fmt.Sprintf("duration %q: write a Go duration between 0 and 1m, such as 500ms", req.Duration))
				return
			}
		} else if kind != "cut" {
			d = time.Second
		}
		if kind == "cut" && d != 0 {
			writeError(w, http.StatusBadRequest, "a cut has no duration; use fade or wipe")
			return
		}
		bus := r.PathValue("bus")
		if err := s.show.Switch(bus, req.Scene, kind, d); err != nil {
			code := http.StatusInternalServerError
			switch {
			case errors.Is(err, ErrNotFound):
				code = http.StatusNotFound
			case errors.Is(err, ErrInvalid):
				code = http.StatusBadRequest
			}
			writeError(w, code, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"bus": bus, "scene": req.Scene, "transition": kind, "duration": d.String()})
	}
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

// collector turns the show's samples into Prometheus metrics at scrape time.
type collector struct{ show Show }

func (collector) Describe(chan<- *prometheus.Desc) {} // unchecked: the set of buses and sources is the show's

func (c collector) Collect(ch chan<- prometheus.Metric) {
	c.show.Collect(func(s Sample) {
		names := make([]string, len(s.Labels))
		values := make([]string, len(s.Labels))
		for i, l := range s.Labels {
			names[i], values[i] = l[0], l[1]
		}
		desc := prometheus.NewDesc(s.Name, s.Help, names, nil)
		var m prometheus.Metric
		var err error
		switch s.Kind {
		case Counter:
			m, err = prometheus.NewConstMetric(desc, prometheus.CounterValue, s.Value, values...)
		case Gauge:
			m, err = prometheus.NewConstMetric(desc, prometheus.GaugeValue, s.Value, values...)
		case Histogram:
			m, err = prometheus.NewConstHistogram(desc, s.Count, s.Sum, s.Buckets, values...)
		}
		if err != nil {
			m = prometheus.NewInvalidMetric(desc, err)
		}
		ch <- m
	})
}
