package control

import (
	"net"
	"sync"
	"time"
)

// The server's limits. Every response is small (a status snapshot, a plan,
// a JPEG, a Prometheus scrape) except the event stream, which has limits of
// its own, so each bound is far above what an honest client needs and far
// below what lets a hostile one hold descriptors the show needs for its own
// files. Options.Limits overrides them (tests use short timeouts).
const (
	// DefaultReadHeaderTimeout is how long a connection may take to send a
	// request's headers, counting from its first byte (or, on a kept-alive
	// connection, from when the request starts): a connection that sends
	// nothing, or trickles its headers, is closed after it.
	DefaultReadHeaderTimeout = 5 * time.Second
	// DefaultReadTimeout is how long reading a whole request may take,
	// headers and body (at most MaxBodyBytes) together.
	DefaultReadTimeout = 10 * time.Second
	// DefaultWriteTimeout is how long handling and writing one response may
	// take once its headers were read. A streaming endpoint added later must
	// extend its own deadline (http.ResponseController.SetWriteDeadline).
	DefaultWriteTimeout = 30 * time.Second
	// DefaultIdleTimeout is how long a kept-alive connection may wait for
	// its next request.
	DefaultIdleTimeout = 30 * time.Second
	// DefaultMaxConns is how many connections the server holds at once. One
	// more is closed as soon as it is accepted, not queued: the server never
	// holds more descriptors than this, whatever clients do.
	DefaultMaxConns = 256
	// MaxHeaderBytes bounds a request's headers (browsers on localhost may
	// send cookies that other local servers set, hence not less).
	MaxHeaderBytes = 64 << 10
	// MaxBodyBytes bounds a request's body; a switch request is a few dozen
	// bytes.
	MaxBodyBytes = 64 << 10
	// MaxPlanBytes bounds a plan's JSON, the largest thing a client and
	// the server exchange: the body of POST /plan, the answer to GET /plan
	// (a show puts on air no plan larger) and so every answer the client
	// reads (MaxResponseBytes). A few hundred bytes a node or scene.
	MaxPlanBytes = 16 << 20
	// MinTokenLen is the shortest token a server on a non-loopback address
	// accepts.
	MinTokenLen = 16
	// MaxResponseBytes is the most the client reads of one answer: the
	// largest is the plan on air.
	MaxResponseBytes = MaxPlanBytes
	// DefaultClientTimeout is how long the client waits for an answer,
	// but to POST /plan.
	DefaultClientTimeout = 5 * time.Second
	// ApplyWait is how long the client waits for the answer to POST
	// /plan: as long as the server may take to read the request's headers
	// and then read it, carry it out and answer (past that the server
	// closes the connection, whatever its applier still does), and the
	// client's own timeout for the answer to travel.
	ApplyWait = DefaultReadHeaderTimeout + DefaultWriteTimeout + DefaultClientTimeout
	// DefaultMaxEventClients is how many GET /events streams the server
	// holds at once; one more is answered 503 with Retry-After. Each is a
	// connection, counted in DefaultMaxConns too.
	DefaultMaxEventClients = 64
	// DefaultEventWriteTimeout is how long one write to an event stream may
	// block: a client that stops reading is cut off once its socket's
	// buffer has been full this long.
	DefaultEventWriteTimeout = 10 * time.Second
	// DefaultEventKeepAlive is how often an idle event stream gets a
	// comment line, so that proxies keep it and dead clients are found.
	DefaultEventKeepAlive = 15 * time.Second
	// MaxSessions is how many page logins (session cookies) the server
	// keeps; the oldest goes first.
	MaxSessions = 64
	// SessionTTL is how long a page login lasts.
	SessionTTL = 12 * time.Hour
)

// Limits overrides the server's limits; a zero field keeps its default
// (the Default* constants).
type Limits struct {
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	MaxConns          int
	MaxEventClients   int
	EventWriteTimeout time.Duration
	EventKeepAlive    time.Duration
}

// withDefaults fills the zero fields of l.
func (l Limits) withDefaults() Limits {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&l.ReadTimeout, DefaultReadTimeout)
	def(&l.WriteTimeout, DefaultWriteTimeout)
	def(&l.IdleTimeout, DefaultIdleTimeout)
	def(&l.EventWriteTimeout, DefaultEventWriteTimeout)
	def(&l.EventKeepAlive, DefaultEventKeepAlive)
	if l.MaxConns <= 0 {
		l.MaxConns = DefaultMaxConns
	}
	if l.MaxEventClients <= 0 {
		l.MaxEventClients = DefaultMaxEventClients
	}
	return l
}

// limitListener hands out at most cap(slots) connections at once and
// closes any beyond that as soon as it accepts them.
type limitListener struct {
	net.Listener
	slots chan struct{}
}

func newLimitListener(ln net.Listener, n int) *limitListener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, n)}
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
		default:
			c.Close() // full: refuse now rather than queue
		}
	}
}

// limitConn gives its slot back when it is closed (once, however often
// Close is called).
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
