package control

import (
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Failed logins are counted per client address: a wrong token in POST
// /login or in an Authorization header. An address may fail
// MaxLoginFailures times in a row; after that each further attempt waits
// for LoginFailureWindow/MaxLoginFailures more (a bucket that refills
// MaxLoginFailures every LoginFailureWindow), and while it waits every
// request of its that carries a token is answered 429 with Retry-After,
// whether the token is right or not (an answer that told would let the
// guessing go on). Each failure is logged with the address, at most
// MaxLoginFailures a window per address, and the limit's start once.
const (
	MaxLoginFailures   = 10
	LoginFailureWindow = time.Minute
	// maxLoginAddrs bounds the addresses the server remembers failures
	// of; past it the one whose bucket is fullest (longest forgiven) goes.
	maxLoginAddrs = 4096
)

// loginLimiter is the failure buckets by client address.
type loginLimiter struct {
	now func() time.Time
	log *slog.Logger

	mu    sync.Mutex
	addrs map[string]*loginBucket
}

// loginBucket: failures is how many failures are held against the
// address as of at (each LoginFailureWindow/MaxLoginFailures forgives
// one); limited is set while its attempts are refused (logged once).
type loginBucket struct {
	failures float64
	at       time.Time
	limited  bool
}

// drained brings the bucket to now.
func (b *loginBucket) drained(now time.Time) {
	per := LoginFailureWindow / MaxLoginFailures
	b.failures -= float64(now.Sub(b.at)) / float64(per)
	if b.failures < 0 {
		b.failures = 0
	}
	b.at = now
}

// wait is how long addr must wait before its next attempt; 0: it may try.
func (l *loginLimiter) wait(addr string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.addrs[addr]
	if b == nil {
		return 0
	}
	b.drained(l.now())
	if b.failures <= MaxLoginFailures-1 {
		b.limited = false
		return 0
	}
	if !b.limited && l.log != nil {
		l.log.Warn("wrong tokens: refusing this client's logins for a while", "client", addr, "failures", MaxLoginFailures, "window", LoginFailureWindow.String())
	}
	b.limited = true
	per := LoginFailureWindow / MaxLoginFailures
	return time.Duration((b.failures - (MaxLoginFailures - 1)) * float64(per))
}

// failed counts a failure of addr, on path, and logs it.
func (l *loginLimiter) failed(addr, path string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.addrs == nil {
		l.addrs = map[string]*loginBucket{}
	}
	now := l.now()
	b := l.addrs[addr]
	if b == nil {
		if len(l.addrs) >= maxLoginAddrs {
			var least string
			low := -1.0
			for a, o := range l.addrs {
				o.drained(now)
				if low < 0 || o.failures < low {
					least, low = a, o.failures
				}
			}
			delete(l.addrs, least)
		}
		b = &loginBucket{at: now}
		l.addrs[addr] = b
	}
	b.drained(now)
	b.failures++
	if l.log != nil && b.failures <= MaxLoginFailures {
		l.log.Warn("wrong token", "client", addr, "path", path)
	}
}

// clientAddr is the address a request came from: its peer's, or, when the
// peer is a proxy on this machine (a loopback address), the last address
// in the X-Forwarded-For the proxy set.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if fromLocalProxy(r) {
		if xff := r.Header.Values("X-Forwarded-For"); len(xff) > 0 {
			parts := strings.Split(xff[len(xff)-1], ",")
			if ip := net.ParseIP(strings.TrimSpace(parts[len(parts)-1])); ip != nil {
				return ip.String()
			}
		}
	}
	return host
}

// fromLocalProxy reports whether r's peer is on this machine: a proxy
// there is trusted to say how the request reached it.
func fromLocalProxy(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	return err == nil && isLoopback(host)
}

// overTLS reports whether the request reached the server over TLS: its
// own connection, or a proxy on this machine that says so with
// X-Forwarded-Proto: https.
func overTLS(r *http.Request) bool {
	return r.TLS != nil || fromLocalProxy(r) && strings.EqualFold(strings.TrimSpace(r.Header.Get("X-Forwarded-Proto")), "https")
}
