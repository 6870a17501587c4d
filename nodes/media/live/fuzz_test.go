package live

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/abema/go-mp4"
	"github.com/bluenviron/gortmplib/pkg/message"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/mpeg4audio"
)

// FuzzContinuity: any bytes, cut anywhere, are counted without a panic,
// and the count does not depend on where the stream was cut.
func FuzzContinuity(f *testing.F) {
	p := make([]byte, 2*tsPacket)
	for i := 0; i < 2; i++ {
		p[i*tsPacket], p[i*tsPacket+3] = 0x47, 0x10|byte(i*2) // payload only; counters 0, 2: one error
	}
	f.Add(p, 100)
	f.Fuzz(func(t *testing.T, b []byte, cut int) {
		var whole, parts continuity
		n := whole.feed(b)
		if cut < 0 || cut > len(b) {
			cut = len(b) / 2
		}
		m := parts.feed(b[:cut]) + parts.feed(b[cut:])
		if n != m {
			t.Fatalf("%d errors whole, %d cut at %d", n, m, cut)
		}
		// Renumbered (as a UDP input does), the same errors are counted,
		// and the stream handed on has none left.
		re := continuity{renumber: true}
		c := append([]byte(nil), b...)
		if r := re.feed(c); r != n {
			t.Fatalf("%d errors renumbering, %d without", r, n)
		}
		var after continuity
		if e := after.feed(c); e != 0 {
			t.Fatalf("%d errors left after renumbering", e)
		}
	})
}

// FuzzReorder: any sequence of sequence numbers is put in order without a
// panic; every packet is handed on once, or counted dropped, and what is
// handed on is in increasing order.
func FuzzReorder(f *testing.F) {
	f.Add([]byte{0, 1, 0, 3, 0, 2, 0, 9, 0, 100, 0, 5})
	f.Fuzz(func(t *testing.T, b []byte) {
		var r reorder
		var out []byte
		pushed := int64(0)
		for i := 0; i+1 < len(b); i += 2 {
			seq := binary.BigEndian.Uint16(b[i:])
			out = r.push(seq, []byte{b[i], b[i+1]}, out)
			pushed++
		}
		for i := 2; i+1 < len(out); i += 2 {
			prev, cur := binary.BigEndian.Uint16(out[i-2:]), binary.BigEndian.Uint16(out[i:])
			if d := cur - prev; d == 0 || d > 1<<15 {
				t.Fatalf("handed on %d after %d", cur, prev)
			}
		}
		held := int64(0)
		for _, h := range r.have {
			if h {
				held++
			}
		}
		if got := int64(len(out)/2) + r.dropped + held; got != pushed {
			t.Fatalf("%d pushed, %d handed on + dropped + held", pushed, got)
		}
	})
}

// FuzzSplitAVCC: any bytes with any length size are split or refused
// without a panic; NAL units cut from the input and prefixed with their
// lengths come out as exactly those units.
func FuzzSplitAVCC(f *testing.F) {
	f.Add([]byte{0, 0, 0, 2, 0x65, 0x88, 0, 0, 0, 1, 0x41}, 4, []byte{0x67, 1, 2, 0x68, 3})
	f.Add([]byte{0, 9, 1}, 2, []byte{})
	f.Fuzz(func(t *testing.T, raw []byte, size int, units []byte) {
		splitAVCC(raw, size)
		for _, size := range []int{1, 2, 4} {
			var avcc []byte
			var want [][]byte
			for rest := units; len(rest) > 0; { // units cut into NAL units of 1 to 8 bytes
				n := min(len(rest), 1+int(rest[0])%8)
				var l [4]byte
				binary.BigEndian.PutUint32(l[:], uint32(n))
				avcc = append(append(avcc, l[4-size:]...), rest[:n]...)
				want = append(want, rest[:n])
				rest = rest[n:]
			}
			got, err := splitAVCC(avcc, size)
			if err != nil || fmt.Sprintf("%x", got) != fmt.Sprintf("%x", want) {
				t.Fatalf("size %d: %x -> %x, %v; want %x", size, avcc, got, err, want)
			}
			if len(avcc) > 0 {
				if _, err := splitAVCC(avcc[:len(avcc)-1], size); err == nil {
					t.Fatalf("size %d: %x cut short was taken", size, avcc)
				}
			}
		}
	})
}

// FuzzRTMPTS: a publisher's pictures and sound of any bytes, after an
// H.264 or HEVC sequence header with any NAL unit length, are remuxed or
// refused without a panic, and the stream written is whole transport
// stream packets.
func FuzzRTMPTS(f *testing.F) {
	f.Add(false, uint8(3), []byte{0, 0, 0, 2, 0x65, 0x88}, []byte{0x21, 0x10})
	f.Add(true, uint8(1), []byte{0, 3, 0x26, 1, 0xaf}, []byte{})
	f.Fuzz(func(t *testing.T, hevc bool, lengthMinusOne uint8, picture, sound []byte) {
		var r rtmpTS
		msgs := []message.Message{
			&message.Audio{Codec: message.CodecMPEG4Audio, AACType: message.AudioAACTypeConfig,
				AACConfig: &mpeg4audio.AudioSpecificConfig{Type: mpeg4audio.ObjectTypeAACLC, SampleRate: 48000, ChannelConfig: 2}},
			&message.Video{Codec: message.CodecH264, Type: message.VideoTypeConfig,
				AVCConfig: &mp4.AVCDecoderConfiguration{LengthSizeMinusOne: lengthMinusOne & 3, SequenceParameterSets: []mp4.AVCParameterSet{{NALUnit: []byte{0x67, 1}}}}},
		}
		if hevc {
			msgs[1] = &message.VideoExSequenceStart{FourCC: message.FourCCHEVC,
				HEVCConfig: &mp4.HvcC{LengthSizeMinusOne: lengthMinusOne & 3, NaluArrays: []mp4.HEVCNaluArray{{NaluType: 33, Nalus: []mp4.HEVCNalu{{NALUnit: []byte{0x42, 1}}}}}}}
		}
		for i := 0; i < 3; i++ {
			msgs = append(msgs, &message.Audio{Codec: message.CodecMPEG4Audio, AACType: message.AudioAACTypeAU, DTS: time.Duration(i) * 21 * time.Millisecond, AU: sound},
				&message.Video{Codec: message.CodecH264, Type: message.VideoTypeAU, DTS: time.Duration(i) * 33 * time.Millisecond, PTSDelta: 33 * time.Millisecond, AU: picture})
		}
		for _, m := range msgs {
			if err := r.message(m); err != nil {
				break
			}
		}
		if r.buf.Len()%188 != 0 {
			t.Fatalf("%d bytes written: not whole transport stream packets", r.buf.Len())
		}
	})
}
