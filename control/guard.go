package control

import (
	"crypto/subtle"
	"fmt"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// hosts is what a request may call the server: in its Host header, and in
// the Origin of a page that sends it a state change.
type hosts struct {
	ip       net.IP // the listen address
	port     string // the listen port
	wildcard bool   // listening on every address (0.0.0.0, ::)
	names    []name // Options.Hosts
}

// name is one of Options.Hosts; port "" means the listen port.
type name struct{ host, port string }

// parseNames reads Options.Hosts.
func parseNames(list []string) ([]name, error) {
	var out []name
	for _, raw := range list {
		s := strings.TrimSpace(raw)
		if s == "" {
			continue
		}
		if strings.ContainsAny(s, "/@?# \t") {
			return nil, fmt.Errorf("server name %q: write a host name or host:port, such as studio.example or studio.example:8080 (no scheme or path)", raw)
		}
		n := name{host: s}
		if h, p, err := net.SplitHostPort(s); err == nil {
			if v, err := strconv.Atoi(p); err != nil || v < 1 || v > 65535 {
				return nil, fmt.Errorf("server name %q: the port must be a number from 1 to 65535", raw)
			}
			n = name{host: h, port: p}
		}
		n.host = strings.ToLower(strings.Trim(n.host, "[]"))
		out = append(out, n)
	}
	return out, nil
}

func ownHosts(addr net.Addr, names []name) hosts {
	h := hosts{names: names}
	if a, ok := addr.(*net.TCPAddr); ok {
		h.ip, h.port, h.wildcard = a.IP, strconv.Itoa(a.Port), a.IP.IsUnspecified()
	}
	return h
}

// allows reports whether hostport (from a Host header or an Origin, whose
// port defaults to defPort) names this server. On a wildcard address any
// IP literal with the listen port does: DNS rebinding needs a name.
func (h hosts) allows(hostport, defPort string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, ""
	}
	if port == "" {
		port = defPort
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	for _, n := range h.names {
		if host == n.host && (port == n.port || n.port == "" && port == h.port) {
			return true
		}
	}
	if port != h.port || host == "" {
		return false
	}
	if host == "localhost" {
		return h.wildcard || h.ip.IsLoopback()
	}
	ip := net.ParseIP(host)
	return ip != nil && (h.wildcard || ip.Equal(h.ip))
}

// String says how to name the server, for messages.
func (h hosts) String() string {
	var s []string
	switch {
	case h.wildcard:
		s = append(s, "an IP address of this machine with port "+h.port, "localhost:"+h.port)
	case h.ip.IsLoopback():
		s = append(s, net.JoinHostPort(h.ip.String(), h.port), "localhost:"+h.port)
	default:
		s = append(s, net.JoinHostPort(h.ip.String(), h.port))
	}
	for _, n := range h.names {
		p := n.port
		if p == "" {
			p = h.port
		}
		s = append(s, net.JoinHostPort(n.host, p))
	}
	return strings.Join(s, " or ")
}

// crossOrigin is the check of a state change's origin
// (net/http.CrossOriginProtection: a browser's Sec-Fetch-Site, else an
// Origin naming the request's Host), trusting the pages of this server's
// other names too: localhost for a loopback or wildcard address, and
// Options.Hosts, over http and https (behind a proxy that terminates TLS).
func crossOrigin(h hosts) *http.CrossOriginProtection {
	c := http.NewCrossOriginProtection()
	trust := func(host, port string) {
		for _, scheme := range []string{"http", "https"} {
			c.AddTrustedOrigin(scheme + "://" + net.JoinHostPort(host, port))
		}
	}
	if h.wildcard || h.ip.IsLoopback() {
		trust("localhost", h.port)
	}
	if h.ip != nil && !h.wildcard {
		trust(h.ip.String(), h.port)
	}
	for _, n := range h.names {
		p := n.port
		if p == "" {
			p = h.port
		}
		trust(n.host, p)
	}
	return c
}

// public reports whether r asks for what needs no token: the page's files
// (which hold no show data) and the login itself.
func public(r *http.Request) bool {
	switch {
	case r.Method == http.MethodGet && (r.URL.Path == "/" || strings.HasPrefix(r.URL.Path, "/ui/")):
		return true
	case r.Method == http.MethodPost && r.URL.Path == "/login":
		return true
	}
	return false
}

// guard runs every request past the server's checks before next: the Host
// names this server (else 421), the token if there is one (else 401), and
// for a request that changes something a JSON content type (else 415) and
// no foreign Origin (else 403). The token is an Authorization header or
// the session cookie of a page login (SameSite=Strict, so another site's
// page cannot send it; its requests still pass the same checks). A request
// refused for its Host or its token closes its connection.
func (s *Server) guard(next http.Handler) http.Handler {
	want := []byte("Bearer " + s.token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set(VersionHeader, s.version)
		h.Set("X-Content-Type-Options", "nosniff")
		if !s.own.allows(r.Host, "80") {
			h.Set("Connection", "close")
			writeError(w, http.StatusMisdirectedRequest, fmt.Sprintf("Host %q does not name this server: ask for %s (the server answers only to its own names, so that a web page cannot read it by rebinding a DNS name to it; onair run -listen-name adds a name)", r.Host, s.own))
			return
		}
		if s.token != "" && (r.Header.Get("Authorization") != "" || r.URL.Path == "/login" && r.Method == http.MethodPost) {
			if wait := s.logins.wait(clientAddr(r)); wait > 0 {
				h.Set("Connection", "close")
				h.Set("Retry-After", fmt.Sprint(int((wait+time.Second-1)/time.Second)))
				writeError(w, http.StatusTooManyRequests, fmt.Sprintf("too many wrong tokens from %s: try again in %v (at most %d wrong tokens a client in %v)", clientAddr(r), wait.Round(time.Second), MaxLoginFailures, LoginFailureWindow))
				return
			}
		}
		if s.token != "" && !public(r) && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 && !s.sessions.valid(r) {
			if r.Header.Get("Authorization") != "" {
				s.logins.failed(clientAddr(r), r.URL.Path)
			}
			h.Set("Connection", "close")
			writeError(w, http.StatusUnauthorized, "missing or wrong token: send Authorization: Bearer TOKEN (onair status and onair cut take -token or $ONAIR_TOKEN), or log in on the page at /")
			return
		}
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
		default:
			ct := r.Header.Get("Content-Type")
			if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
				writeError(w, http.StatusUnsupportedMediaType, fmt.Sprintf("%s %s takes a JSON body: send Content-Type: application/json (got %q)", r.Method, r.URL.Path, ct))
				return
			}
			if err := s.cross.Check(r); err != nil {
				writeError(w, http.StatusForbidden, fmt.Sprintf("Origin %q is not this server (%s): changes are accepted only from this server's own pages and from clients that send no Origin, so that another web site cannot switch the show", r.Header.Get("Origin"), s.own))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
