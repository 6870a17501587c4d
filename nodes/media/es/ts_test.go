package es

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pes is one PES payload a transport stream reader handed on.
type pes struct {
	data   []byte
	pts    int64
	hasPTS bool
}

// payloads reads every PES payload of src to its end.
func payloads(t testing.TB, src payloadSource) []pes {
	t.Helper()
	var out []pes
	for {
		data, pts, has, err := src.next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, pes{append([]byte(nil), data...), pts, has})
	}
}

func equalPayloads(t *testing.T, what string, got, want []pes) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d PES payloads, want %d", what, len(got), len(want))
	}
	for i := range got {
		if !bytes.Equal(got[i].data, want[i].data) || got[i].pts != want[i].pts || got[i].hasPTS != want[i].hasPTS {
			t.Fatalf("%s: PES %d: %d bytes PTS %d (%v), want %d bytes PTS %d (%v)", what, i,
				len(got[i].data), got[i].pts, got[i].hasPTS, len(want[i].data), want[i].pts, want[i].hasPTS)
		}
	}
}

func tsClip(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func openTS(t *testing.T, data []byte, live bool) *tsSource {
	t.Helper()
	src, _, err := newTSSource(bytes.NewReader(data), live, 0)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// The clips' PES payloads and PTS are go-astits's (the reader onair had
// before), read as a file and as a live stream, and each is a PES of the
// video PID as the packets hold it.
func TestTSReadsWhatAstitsRead(t *testing.T) {
	for _, c := range clips {
		if !c.ts {
			continue
		}
		data := tsClip(t, c.name)
		old, oc, err := newAstitsSource(bytes.NewReader(data), false, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := payloads(t, old)
		src, nc, err := newTSSource(bytes.NewReader(data), false, 0)
		if err != nil {
			t.Fatal(err)
		}
		if nc != oc || src.pid != old.pid || src.audio != old.audio {
			t.Fatalf("%s: %s PID %d audio %v, go-astits %s PID %d audio %v", c.name, nc, src.pid, src.audio, oc, old.pid, old.audio)
		}
		if len(want) != 30 {
			t.Fatalf("%s: go-astits read %d PES, want 30", c.name, len(want))
		}
		equalPayloads(t, c.name, payloads(t, src), want)
		if err := src.rewind(); err != nil {
			t.Fatal(err)
		}
		equalPayloads(t, c.name+" rewound", payloads(t, src), want)
		equalPayloads(t, c.name+" live", payloads(t, openTS(t, data, true)), want)
	}
}

// videoPackets are the indexes of the packets of the video PID in a clip,
// and for each the PES it belongs to (counted from 0).
func videoPackets(t *testing.T, data []byte) (idx, of []int) {
	src := openTS(t, data, false)
	n := -1
	for i := 0; i+tsPacket <= len(data); i += tsPacket {
		p := data[i : i+tsPacket]
		if uint16(p[1]&0x1f)<<8|uint16(p[2]) != src.pid || p[3]&0x10 == 0 {
			continue
		}
		if p[1]&0x40 != 0 {
			n++
		}
		idx, of = append(idx, i/tsPacket), append(of, n)
	}
	return idx, of
}

func without(p []pes, i int) []pes { return append(append([]pes(nil), p[:i]...), p[i+1:]...) }

func packetsOf(data []byte, i int) []byte { return data[i*tsPacket : (i+1)*tsPacket] }

// Damage loses the PES it is in and nothing else: a repeated packet is
// dropped, a lost packet (a gap in the continuity counter) drops its PES,
// bytes lost or garbage inserted (the sync byte lost) drop the PES being
// gathered and the reader finds the packets again.
func TestTSDamageLosesOnlyItsPES(t *testing.T) {
	data := tsClip(t, "hevc8.ts")
	clean := payloads(t, openTS(t, data, false))
	idx, of := videoPackets(t, data)
	mid := len(idx) / 2 // a packet inside a PES, neither its first nor its last
	for of[mid-1] != of[mid] || of[mid+1] != of[mid] {
		mid++
	}
	k, hit := idx[mid], of[mid]
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	head, pkt, tail := data[:k*tsPacket], packetsOf(data, k), data[(k+1)*tsPacket:]
	for _, tc := range []struct {
		name string
		data []byte
		want []pes
	}{
		{"every video packet twice", func() []byte {
			var b []byte
			j := 0
			for i := 0; i*tsPacket < len(data); i++ {
				b = append(b, packetsOf(data, i)...)
				if j < len(idx) && idx[j] == i {
					b = append(b, packetsOf(data, i)...)
					j++
				}
			}
			return b
		}(), clean},
		{"a packet lost", cat(head, tail), without(clean, hit)},
		{"garbage between packets", cat(head, bytes.Repeat([]byte{0x47, 0}, 150), pkt, tail), without(clean, hit)},
		{"half a packet lost", cat(head, pkt[:100], tail), without(clean, hit)},
		{"a packet's sync byte lost", cat(head, []byte{0x46}, pkt[1:], tail), without(clean, hit)},
	} {
		for _, live := range []bool{false, true} {
			equalPayloads(t, tc.name, payloads(t, openTS(t, tc.data, live)), tc.want)
		}
	}
}

// failAfter reads its bytes, then fails: a stream whose next bytes have
// not come.
type failAfter struct{ r io.Reader }

var errNotYet = errors.New("the next bytes have not come")

func (f *failAfter) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		err = errNotYet
	}
	return n, err
}

// A PES whose PES_packet_length says where it ends is handed on when its
// last packet comes, not at the next PES (a live stream's picture is not
// held back one picture); one with 0 waits for the next.
func TestTSHandsOnAPESAtItsLength(t *testing.T) {
	data := tsClip(t, "h264.ts")
	idx, of := videoPackets(t, data)
	first := append([]byte(nil), data[:(idx[0]+1)*tsPacket]...)
	n := 0
	for i, k := range idx {
		if of[i] != 0 {
			break
		}
		p := packetsOf(data, k)
		h, _ := parseTSHeader(p)
		n += tsPacket - h.payload
		if i > 0 {
			first = append(first, p...)
		}
	}
	lenAt := (idx[0]*tsPacket + 4)
	if first[idx[0]*tsPacket+3]&0x20 != 0 {
		lenAt += 1 + int(first[idx[0]*tsPacket+4])
	}
	if first[lenAt+4] != 0 || first[lenAt+5] != 0 || n-6 > 0xffff {
		t.Fatalf("the clip's first video PES has a PES_packet_length, or is too long for one (%d bytes)", n)
	}
	want := payloads(t, openTS(t, data, false))[0]
	src := openTS(t, first, true)
	src.f = &failAfter{bytes.NewReader(first[src.off+int64(src.r):])}
	src.r, src.w = 0, 0
	if _, _, _, err := src.next(); !errors.Is(err, errNotYet) {
		t.Fatalf("a PES of PES_packet_length 0 was handed on before the next began: %v", err)
	}
	first[lenAt+4], first[lenAt+5] = byte((n-6)>>8), byte(n-6)
	src = openTS(t, first, true)
	src.f = &failAfter{bytes.NewReader(first[src.off+int64(src.r):])}
	src.r, src.w = 0, 0
	got, pts, has, err := src.next()
	if err != nil {
		t.Fatalf("the PES whose length says it is whole: %v", err)
	}
	if !bytes.Equal(got, want.data) || pts != want.pts || has != want.hasPTS {
		t.Fatalf("the PES handed on at its length: %d bytes PTS %d, want %d bytes PTS %d", len(got), pts, len(want.data), want.pts)
	}
}

// endless is a transport stream's tables (a clip's packets before its
// first video packet) and then one PES of the video PID that never ends.
type endless struct {
	head []byte
	pkt  [tsPacket]byte
	cc   byte
	n    int // packets of the PES made
}

func (e *endless) Read(p []byte) (int, error) {
	if len(e.head) > 0 {
		n := copy(p, e.head)
		e.head = e.head[n:]
		return n, nil
	}
	if len(p) < tsPacket {
		return 0, errors.New("short read")
	}
	e.pkt[1] &^= 0x40
	if e.n == 0 {
		e.pkt[1] |= 0x40
		copy(e.pkt[4:], []byte{0, 0, 1, 0xe0, 0, 0, 0x80, 0, 0})
	} else {
		for i := 4; i < 13; i++ {
			e.pkt[i] = 0xaa
		}
	}
	e.pkt[3] = 0x10 | e.cc
	e.cc = (e.cc + 1) & 0xf
	e.n++
	return copy(p, e.pkt[:]), nil
}

// A PES past maxPES is an error, and the buffer never held more.
func TestTSRefusesAPESPastTheLimit(t *testing.T) {
	data := tsClip(t, "hevc8.ts")
	idx, _ := videoPackets(t, data)
	e := &endless{head: data[:idx[0]*tsPacket]}
	copy(e.pkt[:], packetsOf(data, idx[0])[:4])
	for i := 4; i < tsPacket; i++ {
		e.pkt[i] = 0xaa
	}
	src, _, err := newTSSource(e, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, err = src.next()
	if err == nil || !strings.Contains(err.Error(), "runs past 64 MiB") || !strings.Contains(err.Error(), "PES packet of PID") {
		t.Fatalf("a PES that never ends: %v", err)
	}
	if cap(src.pes) > maxPES {
		t.Errorf("the PES buffer grew to %d bytes, past %d", cap(src.pes), maxPES)
	}
	if e.n*(tsPacket-4) > maxPES+2*tsPacket+tsReadSize {
		t.Errorf("%d packets read past the limit", e.n-maxPES/(tsPacket-4))
	}
}
