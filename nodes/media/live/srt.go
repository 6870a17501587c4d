package live

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
)

// libsrt is the reference SRT implementation, loaded at run time (as
// cuda/ loads the NVIDIA driver), so that a build needs nothing of it and a
// show without SRT sources runs where it is absent.
var libsrt struct {
	once sync.Once
	err  error

	startup      func() int32
	createSocket func() int32
	setsockflag  func(u, opt int32, val unsafe.Pointer, n int32) int32
	getsockflag  func(u, opt int32, val unsafe.Pointer, n *int32) int32
	bind         func(u int32, addr unsafe.Pointer, n int32) int32
	listen       func(u, backlog int32) int32
	accept       func(u int32, addr unsafe.Pointer, n *int32) int32
	connect      func(u int32, addr unsafe.Pointer, n int32) int32
	recvmsg      func(u int32, buf unsafe.Pointer, n int32) int32
	sendmsg      func(u int32, buf unsafe.Pointer, n, ttl, inorder int32) int32
	close        func(u int32) int32
	lastErrorStr func() string
	lastError    func(errno unsafe.Pointer) int32
	bstats       func(u int32, perf unsafe.Pointer, clear int32) int32
	rejectReason func(u int32) int32
	rejectStr    func(r int32) string
	setLogLevel  func(level int32)
	getsockname  func(u int32, addr unsafe.Pointer, n *int32) int32
}

// The libraries tried, in order: Debian's libsrt1.5-openssl, then its
// GnuTLS build, then an unversioned name.
var srtNames = []string{"libsrt.so.1.5", "libsrt-gnutls.so.1.5", "libsrt.so"}

func loadSRT() error {
	libsrt.once.Do(func() {
		var lib uintptr
		var err error
		for _, name := range srtNames {
			if lib, err = purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL); err == nil {
				break
			}
		}
		if err != nil {
			libsrt.err = fmt.Errorf("SRT needs libsrt (%v): install it (Debian: apt-get install libsrt1.5-openssl)", err)
			return
		}
		for name, fn := range map[string]any{
			"srt_startup": &libsrt.startup, "srt_create_socket": &libsrt.createSocket,
			"srt_setsockflag": &libsrt.setsockflag, "srt_getsockflag": &libsrt.getsockflag,
			"srt_bind": &libsrt.bind, "srt_listen": &libsrt.listen, "srt_accept": &libsrt.accept,
			"srt_connect": &libsrt.connect, "srt_recvmsg": &libsrt.recvmsg, "srt_sendmsg": &libsrt.sendmsg,
			"srt_close": &libsrt.close, "srt_getlasterror_str": &libsrt.lastErrorStr,
			"srt_getlasterror": &libsrt.lastError, "srt_bstats": &libsrt.bstats,
			"srt_getrejectreason": &libsrt.rejectReason, "srt_rejectreason_str": &libsrt.rejectStr,
			"srt_setloglevel": &libsrt.setLogLevel, "srt_getsockname": &libsrt.getsockname,
		} {
			sym, err := purego.Dlsym(lib, name)
			if err != nil {
				libsrt.err = fmt.Errorf("libsrt lacks %s (%v): it is older than 1.5", name, err)
				return
			}
			purego.RegisterFunc(fn, sym)
		}
		if libsrt.startup() < 0 {
			libsrt.err = fmt.Errorf("libsrt: srt_startup: %s", libsrt.lastErrorStr())
			return
		}
		libsrt.setLogLevel(2) // LOG_CRIT: libsrt's own lines stay off onair's stderr; errors come back as values
		fixMalloc()
	})
	return libsrt.err
}

// mallocTrim, when glibc is there, gives back to the system what
// libsrt freed. libsrt allocates each connection's buffers on threads of
// its own and frees them when the connection is collected; glibc keeps
// what was freed in its heaps (and, by raising its mmap threshold each
// time a large block is freed, puts the next large blocks there too): the
// process grew by some 800 KiB a connection, 800 MB over 1,000
// reconnects (TestSRTReconnectsLeakNothing), all of it free inside malloc.
// The threshold is fixed at its default (128 KiB) when libsrt is loaded,
// so large blocks stay mapped on their own and are unmapped when freed,
// and malloc_trim runs for the rest a few seconds after connections
// close, once libsrt has collected them (its collector runs each second).
// Where there is no glibc, nothing is done.
var mallocTrim = func() {}

var trimPending atomic.Bool

// trimLater runs mallocTrim at each of trimAfter after now, for every
// close until the last of them.
func trimLater() {
	if trimPending.CompareAndSwap(false, true) {
		go func() {
			for _, d := range trimAfter {
				time.Sleep(d) // libsrt's collector's pace, not a wait for anything of ours
				mallocTrim()
			}
			trimPending.Store(false)
		}()
	}
}

// trimAfter: libsrt collects a closed socket a second or more after its
// close, and a caller's own port some seconds after that.
var trimAfter = []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second}

func fixMalloc() {
	libc, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return
	}
	opt, err1 := purego.Dlsym(libc, "mallopt")
	trim, err2 := purego.Dlsym(libc, "malloc_trim")
	if err1 != nil || err2 != nil {
		return
	}
	var mallopt func(param, value int32) int32
	var mtrim func(pad uintptr) int32
	purego.RegisterFunc(&mallopt, opt)
	purego.RegisterFunc(&mtrim, trim)
	const mMmapThreshold = -3
	mallopt(mMmapThreshold, 128<<10)
	mallocTrim = func() { mtrim(0) }
}

// SRT socket options (srt.h's SRT_SOCKOPT) and error codes (SRT_ERRNO).
const (
	srtoRcvSyn     = 2
	srtoSndSyn     = 1
	srtoRcvTimeo   = 14
	srtoSndData    = 19
	srtoLatency    = 23
	srtoPassphrase = 26
	srtoConnTimeo  = 36
	srtoStreamID   = 46
	srtoTransType  = 50

	srtEAsyncRcv  = 6002
	srtEXmTimeout = 6003
)

// srtStats mirrors the start of libsrt's CBytePerfMon (srt.h), up to the
// round-trip time; tail leaves room for the fields after it, which
// srt_bstats writes too.
type srtStats struct {
	msTimeStamp, pktSentTotal, pktRecvTotal                int64
	pktSndLossTotal, pktRcvLossTotal, pktRetransTotal      int32
	pktSentACKTotal, pktRecvACKTotal, pktSentNAKTotal      int32
	pktRecvNAKTotal                                        int32
	usSndDurationTotal                                     int64
	pktSndDropTotal, pktRcvDropTotal, pktRcvUndecryptTotal int32
	byteTotals                                             [7]uint64
	pktSent, pktRecv                                       int64
	pktSndLoss, pktRcvLoss, pktRetrans, pktRcvRetrans      int32
	pktSentACK, pktRecvACK, pktSentNAK, pktRecvNAK         int32
	mbpsSendRate, mbpsRecvRate                             float64
	usSndDuration                                          int64
	pktReorderDistance                                     int32
	pktRcvAvgBelatedTime                                   float64
	pktRcvBelated                                          int64
	pktSndDrop, pktRcvDrop, pktRcvUndecrypt                int32
	byteLocal                                              [7]uint64
	usPktSndPeriod                                         float64
	pktFlowWindow, pktCongestionWindow, pktFlightSize      int32
	msRTT                                                  float64
	tail                                                   [1024]byte
}

// SRTConfig is an SRT input (or, for Send, output).
type SRTConfig struct {
	Config
	// Listener waits for callers on Address:Port (loopback unless an
	// address is given); otherwise the input calls Address:Port, again
	// with backoff after each failure or loss.
	Listener   bool
	LatencyMs  int
	Passphrase string // "" for none; 10 to 79 characters (AES)
	StreamID   string // a caller sends it; a listener takes only callers that send it ("" takes any)
}

// String describes the input without its passphrase.
func (c SRTConfig) String() string {
	mode := "caller to"
	if c.Listener {
		mode = "listener on"
	}
	s := fmt.Sprintf("srt %s %s", mode, net.JoinHostPort(c.Address, fmt.Sprint(c.Port)))
	if c.Passphrase != "" {
		s += " (encrypted)"
	}
	return s
}

type srtInput struct {
	cfg    SRTConfig
	stats  Stats
	lsock  int32 // the listening socket; -1 for a caller
	closed chan struct{}
	once   sync.Once
	tries  int // a caller's failed dials since its last connection

	mu  sync.Mutex
	cur *srtConn
}

// NewSRT loads libsrt and, for a listener, binds its socket.
func NewSRT(cfg SRTConfig) (Input, error) {
	if err := loadSRT(); err != nil {
		return nil, err
	}
	if cfg.Passphrase != "" && (len(cfg.Passphrase) < 10 || len(cfg.Passphrase) > 79) {
		return nil, fmt.Errorf("%v: a passphrase has 10 to 79 characters, this one %d", cfg, len(cfg.Passphrase))
	}
	in := &srtInput{cfg: cfg, lsock: -1, closed: make(chan struct{})}
	if !cfg.Listener {
		return in, nil
	}
	s, err := newSRTSocket(cfg)
	if err != nil {
		return nil, err
	}
	sa, err := sockaddr(cfg.listenAddr())
	if err != nil {
		libsrt.close(s)
		return nil, fmt.Errorf("%v: %w", cfg, err)
	}
	if libsrt.bind(s, unsafe.Pointer(&sa[0]), int32(len(sa))) < 0 {
		err := srtError("binding")
		libsrt.close(s)
		return nil, fmt.Errorf("%v: %w", cfg, err)
	}
	if libsrt.listen(s, 4) < 0 {
		err := srtError("listening")
		libsrt.close(s)
		return nil, fmt.Errorf("%v: %w", cfg, err)
	}
	in.lsock = s
	return in, nil
}

// newSRTSocket makes a socket with the options both sides set: live
// transmission, the latency and the passphrase (a listener's accepted
// sockets inherit them).
func newSRTSocket(cfg SRTConfig) (int32, error) {
	s := libsrt.createSocket()
	if s < 0 {
		return -1, fmt.Errorf("%v: %w", cfg, srtError("creating a socket"))
	}
	set := func(opt int32, v int32) bool { return libsrt.setsockflag(s, opt, unsafe.Pointer(&v), 4) >= 0 }
	setStr := func(opt int32, v string) bool {
		b := []byte(v)
		return libsrt.setsockflag(s, opt, unsafe.Pointer(unsafe.SliceData(b)), int32(len(b))) >= 0
	}
	ok := set(srtoTransType, 0) && set(srtoRcvTimeo, int32(cfg.lossTimeout()/time.Millisecond))
	if cfg.LatencyMs > 0 {
		ok = ok && set(srtoLatency, int32(cfg.LatencyMs))
	}
	if cfg.Passphrase != "" {
		ok = ok && setStr(srtoPassphrase, cfg.Passphrase)
	}
	if cfg.StreamID != "" && !cfg.Listener {
		ok = ok && setStr(srtoStreamID, cfg.StreamID)
	}
	if !ok {
		err := srtError("setting its options") // never holds the passphrase: libsrt names the option, not its value
		libsrt.close(s)
		return -1, fmt.Errorf("%v: %w", cfg, err)
	}
	return s, nil
}

func srtError(what string) error {
	return fmt.Errorf("%s: %s", what, libsrt.lastErrorStr())
}

// sockaddr is a struct sockaddr_in or sockaddr_in6 for host:port.
func sockaddr(hostport string) ([]byte, error) {
	a, err := net.ResolveUDPAddr("udp", hostport)
	if err != nil {
		return nil, err
	}
	if ip4 := a.IP.To4(); ip4 != nil {
		b := make([]byte, 16)
		binary.LittleEndian.PutUint16(b, 2) // AF_INET, in the host's order
		binary.BigEndian.PutUint16(b[2:], uint16(a.Port))
		copy(b[4:], ip4)
		return b, nil
	}
	b := make([]byte, 28)
	binary.LittleEndian.PutUint16(b, 10) // AF_INET6
	binary.BigEndian.PutUint16(b[2:], uint16(a.Port))
	copy(b[8:], a.IP.To16())
	return b, nil
}

func (s *srtInput) Stats() *Stats { return &s.stats }

// Addr is where a listener is bound (the port the system chose for 0);
// nil for a caller.
func (s *srtInput) Addr() net.Addr {
	if s.lsock < 0 {
		return nil
	}
	var sa [28]byte
	n := int32(len(sa))
	if libsrt.getsockname(s.lsock, unsafe.Pointer(&sa[0]), &n) < 0 {
		return nil
	}
	a := &net.UDPAddr{Port: int(binary.BigEndian.Uint16(sa[2:]))}
	if binary.LittleEndian.Uint16(sa[:]) == 2 {
		a.IP = net.IP(append([]byte(nil), sa[4:8]...))
	} else {
		a.IP = net.IP(append([]byte(nil), sa[8:24]...))
	}
	return a
}

// backoff is the wait before a caller's next dial after tries failures:
// 250 ms, doubling, at most 4 s.
func backoff(tries int) time.Duration {
	if tries <= 0 {
		return 0
	}
	return min(250*time.Millisecond<<min(tries-1, 4), 4*time.Second)
}

func (s *srtInput) Connect() (io.ReadCloser, error) {
	for {
		select {
		case <-s.closed:
			return nil, ErrClosed
		default:
		}
		var sock int32
		var err error
		if s.cfg.Listener {
			s.stats.Await()
			sock, err = s.accept()
		} else {
			s.stats.SetState(Connecting)
			select {
			case <-s.closed:
				return nil, ErrClosed
			case <-time.After(backoff(s.tries)):
			}
			sock, err = s.dial()
		}
		if err != nil {
			select {
			case <-s.closed:
				return nil, ErrClosed
			default:
			}
			s.tries++
			s.stats.SetErr(err)
			if s.cfg.Listener && sock == -2 { // a caller refused (stream id): wait for the next
				continue
			}
			if !s.cfg.Listener {
				continue
			}
			return nil, err
		}
		s.tries = 0
		c := &srtConn{in: s, sock: sock, buf: make([]byte, 1500), cc: continuity{stamps: &s.stats.stamps}}
		s.mu.Lock()
		s.cur = c
		s.mu.Unlock()
		s.stats.Connections.Add(1)
		s.stats.SetState(Live)
		s.stats.SetErr(nil)
		return c, nil
	}
}

func (s *srtInput) accept() (int32, error) {
	var sa [28]byte
	n := int32(len(sa))
	c := libsrt.accept(s.lsock, unsafe.Pointer(&sa[0]), &n)
	if c < 0 {
		return -1, fmt.Errorf("%v: %w", s.cfg, srtError("accepting"))
	}
	if s.cfg.StreamID != "" {
		var id [512]byte
		l := int32(len(id))
		libsrt.getsockflag(c, srtoStreamID, unsafe.Pointer(&id[0]), &l)
		if got := string(id[:max(0, min(int(l), len(id)))]); got != s.cfg.StreamID {
			libsrt.close(c)
			return -2, fmt.Errorf("%v: refused a caller with stream id %q: the source takes %q", s.cfg, got, s.cfg.StreamID)
		}
	}
	return c, nil
}

func (s *srtInput) dial() (int32, error) {
	sock, err := newSRTSocket(s.cfg)
	if err != nil {
		return -1, err
	}
	sa, err := sockaddr(net.JoinHostPort(s.cfg.Address, fmt.Sprint(s.cfg.Port)))
	if err != nil {
		libsrt.close(sock)
		return -1, fmt.Errorf("%v: %w", s.cfg, err)
	}
	if libsrt.connect(sock, unsafe.Pointer(&sa[0]), int32(len(sa))) < 0 {
		err := srtError("connecting")
		if r := libsrt.rejectReason(sock); r > 1 { // beyond SRT_REJ_UNKNOWN and SRT_REJ_SYSTEM: say why the peer refused
			err = fmt.Errorf("%w (%s)", err, libsrt.rejectStr(r))
		}
		libsrt.close(sock)
		return -1, fmt.Errorf("%v: %w", s.cfg, err)
	}
	return sock, nil
}

// Close ends the input: a listener's socket closes, so a waiting accept
// returns, and the connection in use closes, so a waiting read does.
func (s *srtInput) Close() error {
	s.once.Do(func() {
		close(s.closed)
		if s.lsock >= 0 {
			libsrt.close(s.lsock)
		}
		closeCurrent(&s.mu, &s.cur)
	})
	return nil
}

// srtConn is one SRT connection's messages: each a datagram of whole TS
// packets, delivered in order at the sender's time plus the latency.
type srtConn struct {
	in      *srtInput
	sock    int32
	buf     []byte
	pending []byte
	cc      continuity
	closed  atomic.Bool
	got     bool // a message arrived on this connection
	statsAt time.Time
	last    srtStats // the counters last added to the input's
}

func (c *srtConn) Read(p []byte) (int, error) {
	st := &c.in.stats
	for len(c.pending) == 0 {
		if c.closed.Load() {
			return 0, io.EOF
		}
		n := libsrt.recvmsg(c.sock, unsafe.Pointer(&c.buf[0]), int32(len(c.buf)))
		now := time.Now()
		if now.Sub(c.statsAt) >= time.Second || n < 0 {
			c.readStats()
			c.statsAt = now
		}
		if n < 0 {
			var errno int32
			code := libsrt.lastError(unsafe.Pointer(&errno))
			if code == srtEAsyncRcv || code == srtEXmTimeout {
				st.SetState(Lost)
				if !c.got {
					st.SetErr(fmt.Errorf("%v: a sender connected but sent nothing for %v", c.in.cfg, c.in.cfg.lossTimeout()))
				}
				return 0, ErrLost
			}
			if c.closed.Load() {
				return 0, io.EOF
			}
			st.SetState(Lost)
			return 0, fmt.Errorf("%v: connection ended: %s", c.in.cfg, libsrt.lastErrorStr())
		}
		st.received(int(n), now)
		c.got = true
		c.pending = c.buf[:n]
		st.Continuity.Add(c.cc.feed(c.pending))
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

// readStats adds what libsrt counted since the last reading to the input's
// counters.
func (c *srtConn) readStats() {
	var s srtStats
	if libsrt.bstats(c.sock, unsafe.Pointer(&s), 0) < 0 {
		return
	}
	st := &c.in.stats
	st.Lost.Add(int64(s.pktRcvLossTotal - c.last.pktRcvLossTotal))
	st.Recovered.Add(int64(s.pktRcvRetrans - c.last.pktRcvRetrans))
	st.Retransmits.Add(int64(s.pktRcvRetrans - c.last.pktRcvRetrans))
	st.Dropped.Add(int64(s.pktRcvDropTotal - c.last.pktRcvDropTotal))
	st.RTTMicros.Store(int64(s.msRTT * 1000))
	c.last = s
}

func (c *srtConn) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		libsrt.close(c.sock)
		trimLater()
	}
	return nil
}
