package live

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/abema/go-mp4"
	"github.com/bluenviron/gortmplib/pkg/amf0"
	"github.com/bluenviron/gortmplib/pkg/message"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h265"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/mpeg4audio"
	"github.com/bluenviron/mediacommon/v2/pkg/formats/mpegts"
	tscodecs "github.com/bluenviron/mediacommon/v2/pkg/formats/mpegts/codecs"
)

// rtmpTS remuxes a publisher's messages to an MPEG-TS: one video track
// (H.264 or HEVC, from a legacy FLV or an Enhanced RTMP sequence header)
// and, when the publisher sends AAC, one sound track, each access unit a
// PES packet stamped with the publisher's timestamps. That is the stream
// an srt or udp source carries, so the pictures' decoder and the sound's
// (media.LiveAudio) read it as they read those, in step on those
// timestamps.
//
// Nothing comes out before the first video sequence header. A transport
// stream's program map lists its tracks from its start, so they are fixed
// at the first picture after that header: an AAC sequence header must
// have come by then. Pictures wait for one that the publisher's metadata
// announces (rtmpSoundWait of the publisher's time at most). The sound
// that comes before the tracks are fixed waits with them (its last
// rtmpSoundWait): its decoder needs the access unit before the first
// picture's to decode the sound at the first picture whole. Sound in
// another codec is left out (noSound says why); the pictures go on.
type rtmpTS struct {
	buf   bytes.Buffer   // what the message at hand added to the stream
	w     *mpegts.Writer // nil until the tracks are fixed
	video *mpegts.Track
	sound *mpegts.Track // nil: the stream carries none (or no more)

	codec  message.FourCC // 0 before the first video sequence header
	length int            // the NAL units' length prefix, in bytes
	params [][]byte       // the last sequence header's parameter sets
	fresh  bool           // a sequence header came since the last picture

	aac       *mpeg4audio.AudioSpecificConfig // the last AAC sequence header's
	announced bool                            // the metadata announces AAC
	held      []heldMessage                   // what waits for the tracks to be fixed
	waitFrom  time.Duration                   // the first picture waiting's timestamp
	waiting   bool                            // a picture waits (for the AAC header announced)
	// noSound is why the stream carries no sound (nil while it does, or
	// when the publisher sends none).
	noSound error
}

// heldMessage is a message waiting for the tracks to be fixed.
type heldMessage struct {
	msg   message.Message
	dts   time.Duration
	sound bool // not a picture: let go once it waited rtmpSoundWait
}

func isPicture(m message.Message) bool {
	switch m.(type) {
	case *message.Video, *message.VideoExCodedFrames, *message.VideoExFramesX:
		return true
	}
	return false
}

// rtmpSoundWait bounds how long, in the publisher's timestamps, the first
// pictures wait for the AAC sequence header its metadata announces, and
// how much sound waits for the first picture.
const rtmpSoundWait = time.Second

// rtmpTSBase is added to every timestamp (90 kHz): the stream's clock
// reference, a little behind its first DTS, is then not below 0 for a
// publisher whose timestamps start at 0.
const rtmpTSBase = 90000

// ts90 is an RTMP timestamp (whole milliseconds) on the transport
// stream's 90 kHz clock.
func ts90(d time.Duration) int64 { return rtmpTSBase + d.Milliseconds()*90 }

// message takes one message of the publisher's; what it adds to the
// stream is in t.buf. An error ends the publisher's stream.
func (t *rtmpTS) message(msg message.Message) error {
	switch m := msg.(type) {
	case *message.DataAMF0:
		t.metadata(m.Payload)
	case *message.Video:
		switch m.Type {
		case message.VideoTypeConfig:
			return t.sequenceStart(m.AVCConfig, m.HEVCConfig)
		case message.VideoTypeAU:
			return t.picture(msg, m.DTS, m.PTSDelta, m.AU)
		}
	case *message.VideoExSequenceStart:
		if m.AVCConfig == nil && m.HEVCConfig == nil {
			return fmt.Errorf("the publisher sends %s video: onair decodes H.264 or HEVC (set the encoder to one)", fourCC(m.FourCC))
		}
		return t.sequenceStart(m.AVCConfig, m.HEVCConfig)
	case *message.VideoExCodedFrames:
		return t.picture(msg, m.DTS, m.PTSDelta, m.Payload)
	case *message.VideoExFramesX:
		return t.picture(msg, m.DTS, 0, m.Payload)
	case *message.Audio:
		switch {
		case m.Codec != message.CodecMPEG4Audio:
			t.notAAC(flvSoundCodec(m.Codec))
		case m.AACType == message.AudioAACTypeConfig:
			t.soundHeader(m.AACConfig)
		default:
			t.soundUnit(msg, m.DTS, m.AU)
		}
	case *message.AudioExSequenceStart:
		if m.FourCC != message.FourCCMP4A {
			t.notAAC(fourCC(m.FourCC))
			return nil
		}
		t.soundHeader(m.AACConfig)
	case *message.AudioExCodedFrames:
		if m.FourCC != message.FourCCMP4A {
			t.notAAC(fourCC(m.FourCC))
			return nil
		}
		t.soundUnit(msg, m.DTS, m.Payload)
	}
	return nil
}

// metadata notes whether the publisher's onMetaData announces AAC sound.
func (t *rtmpTS) metadata(d amf0.Data) {
	for _, v := range d {
		var o amf0.Object
		switch v := v.(type) {
		case amf0.Object:
			o = v
		case amf0.ECMAArray:
			o = amf0.Object(v)
		default:
			continue
		}
		switch id, _ := o.Get("audiocodecid"); id := id.(type) {
		case float64:
			t.announced = id == message.CodecMPEG4Audio || id == float64(message.FourCCMP4A)
		case string:
			t.announced = id == "mp4a"
		}
	}
}

// sequenceStart starts (or repeats) the stream's parameter sets, from an
// H.264 or an HEVC sequence header: a change of codec mid-stream is
// refused.
func (t *rtmpTS) sequenceStart(avc *mp4.AVCDecoderConfiguration, hevc *mp4.HvcC) error {
	codec, lengthMinusOne := message.FourCCAVC, uint8(0)
	switch {
	case avc != nil:
		lengthMinusOne = avc.LengthSizeMinusOne
	case hevc != nil:
		codec, lengthMinusOne = message.FourCCHEVC, hevc.LengthSizeMinusOne
	default:
		return errors.New("a video sequence header of neither H.264 nor HEVC: onair decodes those two (set the encoder to one)")
	}
	if t.codec != 0 && t.codec != codec {
		return fmt.Errorf("the publisher changed its codec mid-stream (to %s): refused; publish again to start anew", fourCC(codec))
	}
	t.codec, t.length, t.params, t.fresh = codec, int(lengthMinusOne)+1, t.params[:0], true
	if avc != nil {
		for _, p := range avc.SequenceParameterSets {
			t.params = appendNAL(t.params, p.NALUnit)
		}
		for _, p := range avc.PictureParameterSets {
			t.params = appendNAL(t.params, p.NALUnit)
		}
		return nil
	}
	for _, typ := range []uint8{32, 33, 34} { // VPS, SPS, PPS: in the order a decoder needs them
		for _, a := range hevc.NaluArrays {
			if a.NaluType == typ {
				for _, n := range a.Nalus {
					t.params = appendNAL(t.params, n.NALUnit)
				}
			}
		}
	}
	return nil
}

func appendNAL(nals [][]byte, nal []byte) [][]byte {
	if len(nal) == 0 {
		return nals
	}
	return append(nals, nal)
}

// picture writes one access unit (its DTS, and its PTS less its DTS):
// length-prefixed NAL units (AVCC). The sequence header's parameter sets
// go before the first after a header and before each random access point
// that does not carry its own. Before any sequence header it is let go (a
// decoder could not start there).
func (t *rtmpTS) picture(msg message.Message, dts, delta time.Duration, au []byte) error {
	if t.codec == 0 {
		return nil
	}
	if t.w == nil {
		if t.aac == nil && t.noSound == nil && t.announced && (!t.waiting || dts-t.waitFrom < rtmpSoundWait) {
			if !t.waiting {
				t.waiting, t.waitFrom = true, dts
			}
			t.hold(msg, dts)
			return nil
		}
		if err := t.fix(); err != nil {
			return err
		}
		held := t.held
		t.held = nil
		for _, h := range held {
			if err := t.message(h.msg); err != nil {
				return err
			}
		}
	}
	nals, err := splitAVCC(au, t.length)
	if err != nil || len(nals) == 0 {
		return err
	}
	hevc := t.codec == message.FourCCHEVC
	if !carriesSPS(nals, hevc) && (t.fresh || hevc && h265.IsRandomAccess(nals) || !hevc && h264.IsRandomAccess(nals)) {
		nals = append(t.params[:len(t.params):len(t.params)], nals...)
	}
	t.fresh = false
	if hevc {
		return t.w.WriteH265(t.video, ts90(dts+delta), ts90(dts), nals)
	}
	return t.w.WriteH264(t.video, ts90(dts+delta), ts90(dts), nals)
}

// end writes the pictures still waiting for the AAC header announced,
// at the publisher's end.
func (t *rtmpTS) end() error {
	if t.w != nil || !t.waiting {
		return nil
	}
	t.announced = false // no longer waited for
	if t.noSound == nil {
		t.noSound = fmt.Errorf("the publisher announced AAC sound but sent no AAC sequence header before it ended: the source was silent")
	}
	held := t.held
	t.held = nil
	for _, h := range held {
		if err := t.message(h.msg); err != nil {
			return err
		}
	}
	return nil
}

// fix fixes the stream's tracks (its program map): the video, and the
// sound if an AAC sequence header came.
func (t *rtmpTS) fix() error {
	t.video = &mpegts.Track{Codec: &tscodecs.H264{}}
	if t.codec == message.FourCCHEVC {
		t.video.Codec = &tscodecs.H265{}
	}
	tracks := []*mpegts.Track{t.video}
	switch {
	case t.aac != nil:
		t.sound = &mpegts.Track{Codec: &tscodecs.MPEG4Audio{Config: *t.aac}}
		tracks = append(tracks, t.sound)
	case t.announced && t.noSound == nil:
		t.noSound = fmt.Errorf("the publisher announced AAC sound but sent no AAC sequence header in its first %v: the source is silent (publish again)", rtmpSoundWait)
	}
	t.w = &mpegts.Writer{W: &t.buf, Tracks: tracks}
	return t.w.Initialize()
}

// soundHeader takes an AAC sequence header: the sound's from the first
// picture on when it comes before, its next access units' when it
// changes.
func (t *rtmpTS) soundHeader(c *mpeg4audio.AudioSpecificConfig) {
	if c == nil {
		return
	}
	t.aac = c
	switch {
	case t.sound != nil:
		t.sound.Codec.(*tscodecs.MPEG4Audio).Config = *c
	case t.w != nil && t.noSound == nil:
		t.noSound = errors.New("the publisher's AAC sequence header came after its first pictures: the source is silent (publish again, or have the encoder send its headers first)")
	}
}

// hold keeps msg until the tracks are fixed, and lets go of the sound
// held longer than rtmpSoundWait before it (a picture waiting is kept).
func (t *rtmpTS) hold(msg message.Message, dts time.Duration) {
	t.held = append(t.held, heldMessage{msg, dts, !isPicture(msg)})
	n := 0
	for n < len(t.held)-1 && t.held[n].sound && dts-t.held[n].dts > rtmpSoundWait {
		n++
	}
	t.held = append(t.held[:0], t.held[n:]...)
}

// soundUnit writes one AAC access unit msg (its DTS and data), once the
// tracks are fixed and the stream carries sound; before, it waits with
// them. One the muxer refuses ends the sound, not the pictures.
func (t *rtmpTS) soundUnit(msg message.Message, dts time.Duration, au []byte) {
	if t.w == nil && t.noSound == nil {
		t.hold(msg, dts)
		return
	}
	if t.sound == nil || len(au) == 0 {
		return
	}
	if err := t.w.WriteMPEG4Audio(t.sound, ts90(dts), [][]byte{au}); err != nil {
		t.sound = nil
		t.noSound = fmt.Errorf("the publisher's AAC sound cannot be carried (%v): the source is silent from here", err)
	}
}

// notAAC notes sound in a codec other than AAC: left out, and said once.
func (t *rtmpTS) notAAC(codec string) {
	if t.noSound == nil && t.sound == nil {
		t.noSound = fmt.Errorf("the publisher sends %s sound: onair takes AAC sound from RTMP, so the source is silent (set the encoder's audio codec to AAC; the pictures go on)", codec)
	}
}

// unreadSound says whether err is gortmplib's for an audio message it
// does not parse, read whole (the stream goes on), and notes why there is
// no sound: a codec it does not parse (Speex, Nellymoser, ADPCM...), or
// an AAC sequence header it cannot read.
func (t *rtmpTS) unreadSound(err error) bool {
	msg := err.Error()
	if id, ok := strings.CutPrefix(msg, "unsupported audio codec: "); ok {
		n, perr := strconv.Atoi(id)
		if perr != nil {
			return false
		}
		t.notAAC(flvSoundCodec(uint8(n)))
		return true
	}
	if strings.HasPrefix(msg, "unable to parse MPEG4 audio config") {
		if t.noSound == nil {
			t.noSound = fmt.Errorf("the publisher's AAC sequence header cannot be read (%s): the source is silent (set the encoder to AAC-LC or HE-AAC)", msg)
		}
		return true
	}
	return false
}

// flvSoundCodec names an FLV audio tag's SoundFormat.
func flvSoundCodec(id uint8) string {
	switch id {
	case 0, 3:
		return "linear PCM"
	case 1:
		return "ADPCM"
	case 2, 14:
		return "MP3"
	case 4, 5, 6:
		return "Nellymoser"
	case 7:
		return "G.711 A-law"
	case 8:
		return "G.711 µ-law"
	case 10:
		return "AAC"
	case 11:
		return "Speex"
	}
	return fmt.Sprintf("FLV sound format %d", id)
}

// fourCC is an Enhanced RTMP codec's name, as its four characters.
func fourCC(c message.FourCC) string {
	return strconv.Quote(string([]byte{byte(c >> 24), byte(c >> 16), byte(c >> 8), byte(c)}))
}

// splitAVCC splits b into its NAL units, each behind a big-endian length
// of size bytes (1, 2 or 4).
func splitAVCC(b []byte, size int) ([][]byte, error) {
	if size != 1 && size != 2 && size != 4 {
		return nil, fmt.Errorf("a NAL unit length of %d bytes (the sequence header's): want 1, 2 or 4", size)
	}
	var nals [][]byte
	for off := 0; off < len(b); {
		if len(b)-off < size {
			return nil, fmt.Errorf("an access unit cut inside a NAL unit's length (byte %d of %d)", off, len(b))
		}
		n := 0
		for _, c := range b[off : off+size] {
			n = n<<8 | int(c)
		}
		off += size
		if n > len(b)-off {
			return nil, fmt.Errorf("a NAL unit of %d bytes at byte %d of a %d-byte access unit", n, off, len(b))
		}
		nals = appendNAL(nals, b[off:off+n])
		off += n
	}
	return nals, nil
}

// carriesSPS says whether an access unit carries a sequence parameter set.
func carriesSPS(nals [][]byte, hevc bool) bool {
	for _, n := range nals {
		if hevc && n[0]>>1&0x3f == 33 || !hevc && n[0]&0x1f == 7 {
			return true
		}
	}
	return false
}
