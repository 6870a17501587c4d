package media

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os/exec"
	"strconv"
	"sync"
	"unsafe"

	"github.com/onairhq/onair/audio"
)

// AudioInfo is what ffprobe says of a file's first audio track, and where
// it starts against the first video track.
type AudioInfo struct {
	Codec      string // ffmpeg's name: aac, mp2, ac3, opus, pcm_s16le...
	Channels   int
	SampleRate int
	// Offset is how many 48 kHz sample frames after the video's first
	// picture the audio starts (negative: before it).
	Offset int64
}

// MaxAudioChannels is the most channels a track may have: ffmpeg's
// downmix to stereo knows the layouts up to 7.1.
const MaxAudioChannels = 8

// ProbeAudio reads a file's first audio track with ffprobe. A file with no
// audio track returns ok false and no error; a track onair cannot use (no
// channels, more than MaxAudioChannels, no decoder) is an error saying so.
// A sample rate other than 48 kHz is resampled by the decoder.
func ProbeAudio(bin, path string) (AudioInfo, bool, error) {
	if bin == "" {
		bin = "ffprobe"
	}
	out, err := exec.Command(bin, "-v", "error", "-show_entries", "stream=index,codec_type,codec_name,channels,sample_rate,start_time",
		"-of", "json", path).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return AudioInfo{}, false, fmt.Errorf("ffprobe %s: %v: %s", path, err, bytes.TrimSpace(ee.Stderr))
		}
		return AudioInfo{}, false, fmt.Errorf("ffprobe %s: %w", path, err)
	}
	var probe struct {
		Streams []struct {
			Type       string `json:"codec_type"`
			Codec      string `json:"codec_name"`
			Channels   int    `json:"channels"`
			SampleRate string `json:"sample_rate"`
			Start      string `json:"start_time"`
		} `json:"streams"`
	}
	if err := json.Unmarshal(out, &probe); err != nil {
		return AudioInfo{}, false, fmt.Errorf("ffprobe %s: %w", path, err)
	}
	var info AudioInfo
	var found bool
	var vStart, aStart float64
	var vFound bool
	for _, s := range probe.Streams {
		switch {
		case s.Type == "video" && !vFound:
			vFound = true
			vStart, _ = strconv.ParseFloat(s.Start, 64)
		case s.Type == "audio" && !found:
			found = true
			info.Codec, info.Channels = s.Codec, s.Channels
			info.SampleRate, _ = strconv.Atoi(s.SampleRate)
			aStart, _ = strconv.ParseFloat(s.Start, 64)
		}
	}
	if !found {
		return AudioInfo{}, false, nil
	}
	switch {
	case info.Codec == "" || info.Codec == "unknown" || info.Codec == "none":
		return info, true, fmt.Errorf("%s: its audio track's codec is unknown to ffmpeg: use AAC, MP2, AC-3, Opus or PCM", path)
	case info.Channels < 1:
		return info, true, fmt.Errorf("%s: its audio track (%s) has no channels", path, info.Codec)
	case info.Channels > MaxAudioChannels:
		return info, true, fmt.Errorf("%s: its audio track (%s) has %d channels; onair mixes tracks of up to %d (7.1) in stereo: pick a track of fewer", path, info.Codec, info.Channels, MaxAudioChannels)
	case info.SampleRate <= 0:
		return info, true, fmt.Errorf("%s: its audio track (%s) has no sample rate", path, info.Codec)
	}
	if vFound {
		info.Offset = int64(math.Round((aStart - vStart) * audio.Rate))
	}
	return info, true, nil
}

// AudioDecoder decodes a file's first audio track with an ffmpeg process
// into 48 kHz stereo float (resampled and downmixed by ffmpeg where the
// track is not), aligned to the video's first picture: Read(n) returns the
// next n sample frames, the audio's lead or lag against the picture made
// up by silence at the start or samples dropped.
type AudioDecoder struct {
	cmd    *exec.Cmd
	out    *bufio.Reader
	skip   int64 // sample frames still to drop (audio starting before the picture)
	pad    int64 // sample frames of silence still to give (audio starting after it)
	eof    bool
	raw    []byte
	stderr *lockedBuffer
}

// OpenAudio starts decoding path's first audio track (info from
// ProbeAudio). bin is the ffmpeg binary ("" is ffmpeg on $PATH).
func OpenAudio(bin, path string, info AudioInfo) (*AudioDecoder, error) {
	if bin == "" {
		bin = "ffmpeg"
	}
	cmd := exec.Command(bin, "-nostdin", "-hide_banner", "-loglevel", "error", "-i", path, "-map", "0:a:0", "-vn",
		"-ac", strconv.Itoa(audio.Channels), "-ar", strconv.Itoa(audio.Rate), "-f", "f32le", "pipe:1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	d := &AudioDecoder{cmd: cmd, out: bufio.NewReaderSize(out, 64<<10), stderr: &lockedBuffer{}}
	cmd.Stderr = d.stderr
	if info.Offset > 0 {
		d.pad = info.Offset
	} else {
		d.skip = -info.Offset
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting ffmpeg to decode %s's audio: %w", path, err)
	}
	return d, nil
}

// Read returns the next count sample frames (a new slice, interleaved
// stereo). After the track ends it returns silence and io.EOF.
func (d *AudioDecoder) Read(count int) ([]float32, error) {
	b := make([]float32, count*audio.Channels)
	return b, d.ReadInto(b)
}

// ReadInto fills b (interleaved stereo, whole sample frames) with the next
// samples, as Read does, into the caller's storage.
func (d *AudioDecoder) ReadInto(b []float32) error {
	clear(b)
	count := len(b) / audio.Channels
	i := 0
	for ; i < count && d.pad > 0; i++ {
		d.pad--
	}
	for d.skip > 0 && !d.eof {
		n := min(d.skip, 4096)
		if _, err := d.read(int(n)); err != nil {
			break
		}
		d.skip -= n
	}
	if d.eof {
		return io.EOF
	}
	if err := d.readInto(b[i*audio.Channels : count*audio.Channels]); err != nil {
		return io.EOF
	}
	return nil
}

// littleEndian is whether this machine's float32s are f32le's bytes.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// readInto fills dst with the next samples: on a little-endian machine
// ffmpeg's bytes are read straight into it (no copy, no conversion: the
// decoder's pass over every source's sound). At the end of the track it
// marks eof, keeps the whole sample frames there were and leaves the rest
// silent.
func (d *AudioDecoder) readInto(dst []float32) error {
	if !littleEndian {
		raw, err := d.read(len(dst) / audio.Channels)
		for j := range len(raw) / 4 {
			dst[j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:]))
		}
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	bs := unsafe.Slice((*byte)(unsafe.Pointer(&dst[0])), 4*len(dst))
	got, err := io.ReadFull(d.out, bs)
	if err != nil {
		d.eof = true
		clear(bs[got-got%(audio.Channels*4) : got])
		return io.EOF
	}
	return nil
}

// read reads up to n sample frames of raw f32le; at the end of the track
// it marks eof and returns what there was.
func (d *AudioDecoder) read(n int) ([]byte, error) {
	want := n * audio.Channels * 4
	if cap(d.raw) < want {
		d.raw = make([]byte, want)
	}
	got, err := io.ReadFull(d.out, d.raw[:want])
	if err != nil {
		d.eof = true
		return d.raw[:got-got%(audio.Channels*4)], io.EOF
	}
	return d.raw[:got], nil
}

// Close ends the ffmpeg process and says why it failed, if it did.
func (d *AudioDecoder) Close() error {
	if !d.eof && d.cmd.Process != nil {
		d.cmd.Process.Kill()
	}
	err := d.cmd.Wait()
	if d.eof && err != nil {
		return fmt.Errorf("ffmpeg decoding audio: %v: %s", err, bytes.TrimSpace(d.stderr.Bytes()))
	}
	return nil
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 4096 {
		return len(p), nil
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]byte(nil), l.b.Bytes()...)
}
