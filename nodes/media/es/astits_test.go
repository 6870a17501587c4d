package es

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/asticode/go-astits"
)

// astitsSource is the transport stream reader tsSource replaced: the same
// choice of stream, through go-astits, which copies the PES gathered so far
// at every packet to see whether it is complete (quadratic in a PES's
// size). Kept as the peer the new reader's payloads are compared with, and
// as the benchmark's baseline.
type astitsSource struct {
	f      io.Reader // an io.Seeker too, unless the stream is live
	live   bool      // read on from the program map: nothing is read twice
	want   Codec
	dmx    *astits.Demuxer
	pid    uint16
	pmtPID uint16
	codec  Codec
	chosen bool
	audio  bool // the program map lists a stream that may be sound (astitsAudioTypes)
}

// astitsAudioTypes are the stream types of a program map that carry sound, or
// may (0x06, private PES: DVB's AC-3, E-AC-3 and Opus; also subtitles
// and teletext, which the sound's decoder then finds are not).
var astitsAudioTypes = map[astits.StreamType]bool{
	0x03: true, 0x04: true, 0x0f: true, 0x11: true, 0x81: true, 0x87: true, 0x06: true,
}

// astitsMaxData bounds the tables and payloads read before the
// program map: a file with none is not a transport stream with video.
const astitsMaxData = 4096

func newAstitsSource(f io.Reader, live bool, want Codec) (*astitsSource, Codec, error) {
	t := &astitsSource{f: f, live: live, want: want}
	t.reset()
	var found []string
	type stream struct {
		pid uint16 // of the program map that lists it
		typ astits.StreamType
	}
	var others []stream // the program map's streams that are no video onair decodes
	for i := 0; i < astitsMaxData; i++ {
		d, err := t.dmx.NextData()
		if errors.Is(err, astits.ErrNoMorePackets) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return nil, 0, fmt.Errorf("transport stream: %w", err)
		}
		if d.PMT == nil {
			continue
		}
		if len(found) > 0 || len(others) > 0 && d.PID == others[0].pid {
			break // the program map again: the wanted codec is not in it
		}
		for _, s := range d.PMT.ElementaryStreams {
			var c Codec
			switch s.StreamType {
			case astits.StreamTypeH264Video:
				c = H264
			case astits.StreamTypeHEVCVideo:
				c = HEVC
			default:
				others = append(others, stream{d.PID, s.StreamType})
				continue
			}
			found = append(found, c.String())
			if want == 0 || c == want {
				t.pid, t.pmtPID, t.codec, t.chosen = s.ElementaryPID, d.PID, c, true
				for _, a := range d.PMT.ElementaryStreams {
					t.audio = t.audio || astitsAudioTypes[a.StreamType]
				}
				if live {
					return t, c, nil
				}
				if err := t.rewind(); err != nil {
					return nil, 0, err
				}
				return t, c, nil
			}
		}
	}
	if len(found) > 0 {
		return nil, 0, fmt.Errorf("transport stream carries %v video, no %s: %w", found, want, ErrNoStream)
	}
	if len(others) > 0 {
		types := make([]string, len(others))
		for i, o := range others {
			types[i] = fmt.Sprintf("0x%02x", uint8(o.typ))
		}
		return nil, 0, fmt.Errorf("transport stream whose program map lists no H.264 or HEVC stream, only stream types %s (audio, data or a video codec onair does not decode): %w", strings.Join(types, ", "), ErrNoStream)
	}
	return nil, 0, fmt.Errorf("transport stream with no H.264 or HEVC stream in a program map: %w", ErrNoStream)
}

func (t *astitsSource) reset() {
	opts := []func(*astits.Demuxer){astits.DemuxerOptPacketSize(tsPacket)}
	if t.chosen {
		opts = append(opts, astits.DemuxerOptPacketSkipper(func(p *astits.Packet) bool {
			pid := p.Header.PID
			return pid != t.pid && pid != astits.PIDPAT && pid != t.pmtPID
		}))
	}
	t.dmx = astits.NewDemuxer(context.Background(), t.f, opts...)
}

func (t *astitsSource) rewind() error {
	s, ok := t.f.(io.Seeker)
	if !ok || t.live {
		return errors.New("a live transport stream cannot be rewound")
	}
	if _, err := s.Seek(0, io.SeekStart); err != nil {
		return err
	}
	t.reset()
	return nil
}

// next returns the payload of the next PES packet of the video PID and its
// PTS (90 kHz).
func (t *astitsSource) next() ([]byte, int64, bool, error) {
	for {
		d, err := t.dmx.NextData()
		if errors.Is(err, astits.ErrNoMorePackets) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, 0, false, io.EOF
		}
		if err != nil {
			return nil, 0, false, err
		}
		if d.PES == nil || d.PID != t.pid || len(d.PES.Data) == 0 {
			continue
		}
		if h := d.PES.Header.OptionalHeader; h != nil && h.PTS != nil {
			return d.PES.Data, h.PTS.Base, true, nil
		}
		return d.PES.Data, 0, false, nil
	}
}
