package live

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abema/go-mp4"
	"github.com/asticode/go-astits"
	"github.com/bluenviron/gortmplib/pkg/amf0"
	"github.com/bluenviron/gortmplib/pkg/bytecounter"
	"github.com/bluenviron/gortmplib/pkg/message"
	"github.com/bluenviron/gortmplib/pkg/rawmessage"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/mpeg4audio"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/peer"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/media/es"
)

// TestRTMPCarriesAACAndSaysOtherSound: ffmpeg publishes the H.264 clip
// with a tone as FLV: in AAC, the connection's transport stream carries
// both (ffmpeg decodes the tone from it, of the clip's length), and every
// frame decodes; in MP3 (which gortmplib reads) or Speex (which it does
// not), every frame decodes all the same, the stream lists no sound, and
// the connection says why.
func TestRTMPCarriesAACAndSaysOtherSound(t *testing.T) {
	peer.NeedFFmpeg(t)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"AAC", []string{"-c:a", "aac", "-ar", "48000"}},
		{"MP3", []string{"-c:a", "libmp3lame", "-ar", "44100"}},
		{"Speex", []string{"-c:a", "libspeex", "-ar", "16000", "-ac", "1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, url := newRTMPTest(t, "cam1")
			args := []string{"-hide_banner", "-nostdin", "-loglevel", "error", "-i", filepath.Join(clipDir, "h264.ts"),
				"-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000", "-map", "0:v", "-map", "1:a", "-shortest", "-c:v", "copy"}
			pub := exec.Command("ffmpeg", append(append(args, c.args...), "-f", "flv", url+"cam1")...)
			var stderr strings.Builder
			pub.Stderr = &stderr
			if err := pub.Start(); err != nil {
				t.Fatal(err)
			}
			conn, err := in.Connect()
			if err != nil {
				t.Fatal(err)
			}
			ts, _ := io.ReadAll(conn)
			conn.Close()
			if err := pub.Wait(); err != nil {
				t.Fatalf("publisher: %v: %s", err, stderr.String())
			}
			why := conn.(media.NoSound).NoSound()
			dec, err := media.OpenDecoder(media.DecodeConfig{Path: "remuxed", Live: bytes.NewReader(ts), Format: frame.NV12, Width: 640, Height: 360})
			if err != nil {
				t.Fatal(err)
			}
			defer dec.Close()
			f, _ := frame.New(frame.NV12, 640, 360)
			var sums []string
			for dec.Next(f) == nil {
				s := md5.Sum(f.Bytes())
				sums = append(sums, hex.EncodeToString(s[:]))
			}
			checkFrames(t, "h264.ts", 0, sums)
			if c.name != "AAC" {
				if dec.Start().Audio || why == nil || !strings.Contains(why.Error(), c.name+" sound") || !strings.Contains(why.Error(), "AAC") {
					t.Errorf("%s sound: the stream lists sound %v; the connection says %v", c.name, dec.Start().Audio, why)
				}
				return
			}
			if !dec.Start().Audio || why != nil {
				t.Fatalf("AAC: the stream lists sound %v; the connection says %v", dec.Start().Audio, why)
			}
			cmd := exec.Command("ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-f", "mpegts", "-i", "pipe:0", "-map", "0:a:0", "-f", "f32le", "-ac", "1", "pipe:1")
			cmd.Stdin = bytes.NewReader(ts)
			pcm, err := cmd.Output()
			if err != nil {
				t.Fatalf("ffmpeg decoding the remuxed sound: %v", err)
			}
			var peak float64
			for i := 0; i+4 <= len(pcm); i += 4 {
				peak = max(peak, math.Abs(float64(math.Float32frombits(binary.LittleEndian.Uint32(pcm[i:])))))
			}
			secs := float64(len(pcm)/4) / 48000
			if want := float64(len(sums)) / 30; peak < 0.1 || secs < want-0.1 || secs > want+0.1 {
				t.Errorf("the remuxed sound: %.3f s peaking at %.3f; the clip is %.3f s of a tone", secs, peak, want)
			}
		})
	}
}

// h264Messages are the H.264 clip as a publisher sends it: its sequence
// header and each access unit's NAL units behind 4-byte lengths, with
// its parameter sets left out (they are the header's).
func h264Messages(t *testing.T) (*message.Video, [][]byte) {
	t.Helper()
	rd, err := es.Open(filepath.Join(clipDir, "h264.264"), es.H264)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	cfg := &mp4.AVCDecoderConfiguration{LengthSizeMinusOne: 3}
	var aus [][]byte
	for {
		au, err := rd.Next()
		if err != nil {
			break
		}
		var avcc []byte
		for i, at := range au.NALs {
			end := len(au.Data)
			if i+1 < len(au.NALs) {
				end = int(au.NALs[i+1]) - 3
			}
			nal := bytes.TrimRight(au.Data[at:end], "\x00")
			switch nal[0] & 0x1f {
			case 7:
				if len(cfg.SequenceParameterSets) == 0 {
					cfg.SequenceParameterSets = []mp4.AVCParameterSet{{Length: uint16(len(nal)), NALUnit: append([]byte(nil), nal...)}}
				}
				continue
			case 8:
				if len(cfg.PictureParameterSets) == 0 {
					cfg.PictureParameterSets = []mp4.AVCParameterSet{{Length: uint16(len(nal)), NALUnit: append([]byte(nil), nal...)}}
				}
				continue
			}
			avcc = binary.BigEndian.AppendUint32(avcc, uint32(len(nal)))
			avcc = append(avcc, nal...)
		}
		aus = append(aus, avcc)
	}
	return &message.Video{Codec: message.CodecH264, Type: message.VideoTypeConfig, AVCConfig: cfg}, aus
}

// TestRTMPTracksFixedAtTheFirstPicture feeds the remuxer a publisher's
// messages in the orders an encoder may send them: the pictures of the
// clip all come out, each first with the parameter sets a decoder needs
// (es.NewLive starts at the first), and the stream lists sound only when
// its AAC header came before the first picture, or within rtmpSoundWait
// of it when the metadata announced it (the pictures waiting for it come
// out at the publisher's end, if it comes first); otherwise the remuxer
// says why.
func TestRTMPTracksFixedAtTheFirstPicture(t *testing.T) {
	header, aus := h264Messages(t)
	meta := &message.DataAMF0{Payload: amf0.Data{"@setDataFrame", "onMetaData", amf0.ECMAArray{{Key: "audiocodecid", Value: float64(10)}}}}
	aac := &message.Audio{Codec: message.CodecMPEG4Audio, Rate: message.AudioRate44100, Depth: message.AudioDepth16, IsStereo: true,
		AACType: message.AudioAACTypeConfig, AACConfig: &mpeg4audio.AudioSpecificConfig{Type: mpeg4audio.ObjectTypeAACLC, SampleRate: 48000, ChannelConfig: 2}}
	for _, c := range []struct {
		name     string
		meta     bool
		headerAt int // the AAC header comes before this picture (-1: never)
		sound    bool
		why      string
	}{
		{"header first", false, 0, true, ""},
		{"announced, header within a second", true, 10, true, ""},
		{"announced, no header in a second", true, -1, false, "no AAC sequence header in its first"},
		{"announced, no header before the end", true, -1, false, "no AAC sequence header before it ended"},
		{"header after the first picture", false, 1, false, "after its first pictures"},
		{"no sound", false, -1, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var r rtmpTS
			var out []byte
			feed := func(m message.Message) {
				if err := r.message(m); err != nil {
					t.Fatal(err)
				}
				out = append(out, r.buf.Bytes()...)
				r.buf.Reset()
			}
			if c.meta {
				feed(meta)
			}
			feed(header)
			sent := aus
			if !strings.Contains(c.name, "the end") {
				sent = append(aus[:len(aus):len(aus)], aus...) // 2 s
			}
			for i, au := range sent {
				dts := time.Duration(i) * time.Second / 30
				if i == c.headerAt {
					feed(aac)
				}
				if i >= c.headerAt && c.headerAt >= 0 {
					feed(&message.Audio{Codec: message.CodecMPEG4Audio, AACType: message.AudioAACTypeAU, DTS: dts, AU: []byte{0x21, 0x10, 0x04}})
				}
				feed(&message.Video{Codec: message.CodecH264, Type: message.VideoTypeAU, DTS: dts, AU: au})
			}
			if err := r.end(); err != nil {
				t.Fatal(err)
			}
			out = append(out, r.buf.Bytes()...)
			rd, err := es.NewLive(bytes.NewReader(out), "remuxed", 0)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for {
				if _, err := rd.Next(); err != nil {
					break
				}
				n++
			}
			if n != len(sent) {
				t.Errorf("%d access units out of %d", n, len(sent))
			}
			if rd.Start().Audio != c.sound {
				t.Errorf("the stream lists sound: %v, want %v", rd.Start().Audio, c.sound)
			}
			if got := r.noSound; c.why == "" && got != nil || c.why != "" && (got == nil || !strings.Contains(got.Error(), c.why)) {
				t.Errorf("the remuxer says %v, want %q", got, c.why)
			}
		})
	}
}

// TestRTMPReadsPastSoundItCannotParse: gortmplib fails to read a Speex
// message and an AAC sequence header it cannot parse, but reads them
// whole: the remuxer takes both for sound left out (and says why), and the
// message after them is read as it was sent.
func TestRTMPReadsPastSoundItCannotParse(t *testing.T) {
	for _, c := range []struct {
		name string
		body []byte
		why  string
	}{
		{"Speex", []byte{11<<4 | 0x06, 1, 2, 3}, "sends Speex sound"},
		{"an AAC header unread", []byte{10<<4 | 0x0f, 0, 0, 0}, "AAC sequence header cannot be read"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var raw bytes.Buffer
			w := rawmessage.NewWriter(&raw, bytecounter.NewWriter(&raw), false)
			for _, m := range []*rawmessage.Message{
				{ChunkStreamID: 4, Type: uint8(message.TypeAudio), MessageStreamID: 1, Body: c.body},
				{ChunkStreamID: 6, Type: uint8(message.TypeVideo), MessageStreamID: 1, Body: []byte{0x17, 1, 0, 0, 0, 0, 0, 0, 1, 0x65}},
			} {
				if err := w.Write(m); err != nil {
					t.Fatal(err)
				}
			}
			rd := message.NewReader(&raw, bytecounter.NewReader(&raw), func(uint32) error { return nil })
			var r rtmpTS
			if _, err := rd.Read(); err == nil || !r.unreadSound(err) {
				t.Fatalf("the sound message: %v, not taken for sound left out", err)
			}
			if r.noSound == nil || !strings.Contains(r.noSound.Error(), c.why) {
				t.Errorf("the remuxer says %v, want %q", r.noSound, c.why)
			}
			if m, err := rd.Read(); err != nil {
				t.Fatalf("the message after it: %v", err)
			} else if v, ok := m.(*message.Video); !ok || !bytes.Equal(v.AU, []byte{0, 0, 0, 1, 0x65}) {
				t.Fatalf("the message after it: %#v", m)
			}
		})
	}
	if (&rtmpTS{}).unreadSound(errors.New("invalid message type: 99")) {
		t.Error("an error of another message was taken for sound left out")
	}
}

// BenchmarkRTMPRemux: what remuxing one RTMP source costs, one op a
// picture at 30 fps with 47 AAC access units a second (48 kHz, 1024
// samples each, 400 bytes) through rtmpTS: the H.264 clip's pictures
// (640x360, about 0.5 Mb/s), and pictures of one NAL unit of 25 000
// bytes (6 Mb/s, a 1080p stream's; an IDR each second). %core@30fps is
// one source's share of a core.
func BenchmarkRTMPRemux(b *testing.B) {
	header, clip := h264Messages(&testing.T{})
	if len(clip) == 0 {
		b.Fatal("no access units")
	}
	big := make([][]byte, 30)
	for i := range big {
		nal := bytes.Repeat([]byte{0x5a}, 25000)
		nal[0] = 0x41
		if i == 0 {
			nal[0] = 0x65
		}
		big[i] = binary.BigEndian.AppendUint32(nil, uint32(len(nal)))
		big[i] = append(big[i], nal...)
	}
	for _, c := range []struct {
		name string
		aus  [][]byte
	}{{"clip_640x360", clip}, {"6Mbps", big}} {
		b.Run(c.name, func(b *testing.B) { benchRemux(b, header, c.aus) })
	}
}

func benchRemux(b *testing.B, header *message.Video, aus [][]byte) {
	aac := &message.Audio{Codec: message.CodecMPEG4Audio, AACType: message.AudioAACTypeConfig,
		AACConfig: &mpeg4audio.AudioSpecificConfig{Type: mpeg4audio.ObjectTypeAACLC, SampleRate: 48000, ChannelConfig: 2}}
	unit := make([]byte, 400)
	var r rtmpTS
	for _, m := range []message.Message{aac, header} {
		if err := r.message(m); err != nil {
			b.Fatal(err)
		}
	}
	var out int64
	sound := int64(0) // AAC units sent
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dts := time.Duration(i) * time.Second / 30
		for ; sound*1024*30 < int64(i+1)*48000; sound++ {
			r.message(&message.Audio{Codec: message.CodecMPEG4Audio, AACType: message.AudioAACTypeAU, DTS: time.Duration(sound) * 1024 * time.Second / 48000, AU: unit})
		}
		if err := r.message(&message.Video{Codec: message.CodecH264, Type: message.VideoTypeAU, DTS: dts, AU: aus[i%len(aus)]}); err != nil {
			b.Fatal(err)
		}
		out += int64(r.buf.Len())
		r.buf.Reset()
	}
	b.StopTimer()
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(ns*30/1e9*100, "%core@30fps")
	b.ReportMetric(float64(out)/float64(b.N), "TSbytes/picture")
}

// TestRTMPSoundBeforeThePicturesWaitsASecond: a publisher that sends 3 s
// of AAC before its first picture: the last second of it (and the unit
// before) comes out with the picture, the rest is let go.
func TestRTMPSoundBeforeThePicturesWaitsASecond(t *testing.T) {
	header, aus := h264Messages(t)
	var r rtmpTS
	msgs := []message.Message{&message.Audio{Codec: message.CodecMPEG4Audio, AACType: message.AudioAACTypeConfig,
		AACConfig: &mpeg4audio.AudioSpecificConfig{Type: mpeg4audio.ObjectTypeAACLC, SampleRate: 48000, ChannelConfig: 2}}}
	const units = 141 // 3 s of 1024 samples at 48 kHz
	unit := func(i int) time.Duration { return time.Duration(i) * 1024 * time.Second / 48000 }
	for i := 0; i < units; i++ {
		msgs = append(msgs, &message.Audio{Codec: message.CodecMPEG4Audio, AACType: message.AudioAACTypeAU, DTS: unit(i), AU: []byte{0x21, 0x10, 0x04}})
	}
	msgs = append(msgs, header, &message.Video{Codec: message.CodecH264, Type: message.VideoTypeAU, DTS: unit(units), AU: aus[0]})
	for _, m := range msgs {
		if err := r.message(m); err != nil {
			t.Fatal(err)
		}
	}
	dmx := astits.NewDemuxer(context.Background(), bytes.NewReader(r.buf.Bytes()))
	var first, n int64 = -1, 0
	for {
		d, err := dmx.NextData()
		if err != nil {
			break
		}
		if d.PES != nil && d.PID == r.sound.PID {
			if first < 0 {
				first = d.PES.Header.OptionalHeader.PTS.Base
			}
			n++
		}
	}
	last := ts90(unit(units - 1))
	if want := int64(units) - int64(unit(units-1)-time.Second)/int64(unit(1)); n < want-1 || n > want+1 || last-first > 90000+1920 {
		t.Errorf("%d access units of sound came out, from %d to %d (90 kHz); want the last second's, about %d", n, first, last, want)
	}
}
