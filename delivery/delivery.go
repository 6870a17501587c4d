// Package delivery is what onair's delivery outputs (output "stream",
// "file" and "hls") ask of ffmpeg: which destinations and containers they
// take, the encoder a codec gets ("auto": NVENC where the GPU has one, the
// software encoder otherwise), and the ffmpeg arguments that encode and
// send a bus. The compiler writes those arguments into the plan, where
// `onair plan` shows them; the runtime starts ffmpeg with the same
// arguments (see Args). The show language checks URLs, paths and bit rates
// with the functions here, so each rule is written once.
//
// It must never import anything of onair's: lang/, compiler/ and
// nodes/show all use it.
package delivery

import (
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Schemes are the URL schemes an output "stream" sends to, and the
// container each carries.
var Schemes = map[string]string{
	"srt":   "mpegts",
	"udp":   "mpegts",
	"rist":  "mpegts",
	"rtmp":  "flv",
	"rtmps": "flv",
}

// Extensions are the file endings an output "file" writes, and the
// container each names.
var Extensions = map[string]string{
	".mp4": "mp4",
	".mov": "mov",
	".mkv": "matroska",
	".ts":  "mpegts",
}

// Codecs are the video codecs, each with its software encoder and its
// NVENC encoder.
var Codecs = map[string]struct{ Software, NVENC string }{
	"h264": {"libx264", "h264_nvenc"},
	"hevc": {"libx265", "hevc_nvenc"},
	"av1":  {"libsvtav1", "av1_nvenc"},
}

// AudioCodecs are the audio codecs and the ffmpeg encoder of each.
var AudioCodecs = map[string]string{"aac": "aac", "opus": "libopus", "mp2": "mp2"}

// fragmented is the MP4/MOV flags that write the file as a series of
// self-contained fragments: a file cut off (onair killed) plays up to
// its last whole fragment.
const fragmented = "+frag_keyframe+empty_moov+default_base_moof"

// fragDuration, in µs, cuts a fragment at least every half second between
// keyframes too: what a kill loses is that and the encoder's lookahead,
// under a second, whatever the GOP.
const fragDuration = "500000"

// Video is an output's video block.
type Video struct {
	Codec   string // h264 | hevc | av1
	Encoder string // "auto" or an ffmpeg encoder name
	Bitrate string // e.g. "6M"
	GOP     int    // frames between keyframes
	Preset  string // "" is the encoder's default (DefaultPreset)
	Profile string // "" is the encoder's default
}

// Audio is an output's audio block.
type Audio struct {
	Codec   string // aac | opus | mp2
	Bitrate string // e.g. "128k"
}

// Output is one delivery output as the plan holds it.
type Output struct {
	Kind string // stream | file | hls
	// Dest is the stream's URL, the file's path or the HLS directory;
	// paths are relative to the show file's directory, where ffmpeg runs.
	Dest string
	// Segment is, for a file, the length of each file it rolls to (0: one
	// file); for HLS, the length of a segment.
	Segment time.Duration
	// ListSize is how many segments an HLS playlist lists; Serve, whether
	// the status server serves the HLS directory too.
	ListSize int
	Serve    bool
	Video    Video
	Audio    Audio
}

// CheckURL says whether u is a URL an output "stream" can send to.
func CheckURL(u string) error {
	p, err := url.Parse(u)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %v", u, err)
	}
	if _, ok := Schemes[p.Scheme]; !ok {
		return fmt.Errorf("%q: unknown scheme %q; a stream goes to %s", u, p.Scheme, strings.Join(sortedKeys(Schemes), "://, ")+"://")
	}
	if p.Host == "" {
		return fmt.Errorf("%q has no host: write %s://HOST:PORT", u, p.Scheme)
	}
	return nil
}

// secretParams are the query parameters of a stream URL that hold
// secrets: SRT's passphrase, RIST's secret, and passwords.
var secretParams = []string{"passphrase", "secret", "password", "pass"}

// Redact replaces, in s, the secrets of the stream URL u (its password
// and secretParams' values) with "REDACTED", for the plan's text, logs
// and /status: a URL's credentials are the show's to use, not to show.
func Redact(s, u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return s
	}
	var secrets []string
	if pw, ok := p.User.Password(); ok && pw != "" {
		secrets = append(secrets, pw)
	}
	q := p.Query()
	for _, k := range secretParams {
		for _, v := range q[k] {
			if v != "" {
				secrets = append(secrets, v, url.QueryEscape(v))
			}
		}
	}
	for _, v := range secrets {
		s = strings.ReplaceAll(s, v, "REDACTED")
	}
	return s
}

// CheckCodec says whether the container of o carries its video codec:
// FLV (RTMP) carries H.264 alone (HEVC and AV1 in FLV are an extension
// ffmpeg before 6.1 does not write).
func CheckCodec(o Output) error {
	if o.Kind == "stream" && Schemes[scheme(o.Dest)] == "flv" && o.Video.Codec != "h264" {
		return fmt.Errorf("RTMP carries H.264 only (FLV); %s needs srt://, udp:// or rist:// (MPEG-TS)", o.Video.Codec)
	}
	return nil
}

// CheckPath says whether a file output can write path.
func CheckPath(path string) error {
	ext := strings.ToLower(filepath.Ext(path))
	if _, ok := Extensions[ext]; !ok {
		return fmt.Errorf("%q: a file output writes %s; the ending names the container", path, strings.Join(sortedKeys(Extensions), ", "))
	}
	return nil
}

// Bit rates an encoder is asked for: below 16 kbit/s nothing is
// watchable; above 1 Gbit/s is a typo.
const minBitrate, maxBitrate = 16_000, 1_000_000_000

// ParseBitrate reads a bit rate such as "6M", "800k" or "128000" in bits
// per second and checks it is one an encoder can be asked for.
func ParseBitrate(s string) (int64, error) {
	mult := 1.0
	num := s
	switch {
	case strings.HasSuffix(s, "k"), strings.HasSuffix(s, "K"):
		mult, num = 1e3, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mult, num = 1e6, s[:len(s)-1]
	case strings.HasSuffix(s, "G"):
		mult, num = 1e9, s[:len(s)-1]
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("bit rate %q is not a number of bits per second such as \"6M\", \"800k\" or \"128000\"", s)
	}
	bps := v * mult
	if bps < minBitrate || bps > maxBitrate {
		return 0, fmt.Errorf("bit rate %q is out of range: between 16k and 1G bits per second", s)
	}
	return int64(bps), nil
}

// ParseDuration reads a segment length: "1h", "30m", "10s", "1h30m".
func ParseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d < time.Second || d%time.Second != 0 {
		return 0, fmt.Errorf("%q is not a whole number of seconds such as \"1h\", \"30m\" or \"10s\"", s)
	}
	return d, nil
}

// DefaultPreset is the preset an encoder gets when the video block names
// none: fast enough for live work on a few cores.
func DefaultPreset(encoder string) string {
	switch {
	case strings.HasSuffix(encoder, "_nvenc"):
		return "p4"
	case encoder == "libx264", encoder == "libx265":
		return "veryfast"
	case encoder == "libsvtav1":
		return "10"
	}
	return ""
}

// PlannedEncoder is the encoder the plan writes for v: the named one, or
// for "auto" the codec's software encoder (Resolve swaps in NVENC when the
// machine that runs the show has it).
func PlannedEncoder(v Video) string {
	if v.Encoder == "" || v.Encoder == "auto" {
		return Codecs[v.Codec].Software
	}
	return v.Encoder
}

// Args are the ffmpeg arguments after the raw video input (the bus's
// frames on pipe:0, tagged with the show's colour): the encoder, its
// settings, the container and the destination. With audio set, the
// bus's sound is ffmpeg's second input (input 1) and is mapped and
// encoded too; AudioInputArgs are that input's options.
func Args(o Output, encoder string, audio bool) []string {
	v := o.Video
	a := []string{"-map", "0:v:0"}
	if audio {
		a = append(a, "-map", "1:a:0")
	}
	a = append(a, "-c:v", encoder)
	if preset := cmp(v.Preset, DefaultPreset(encoder)); preset != "" {
		a = append(a, "-preset", preset)
	}
	if v.Profile != "" {
		a = append(a, "-profile:v", v.Profile)
	}
	if bps, err := ParseBitrate(v.Bitrate); err == nil {
		b := strconv.FormatInt(bps, 10)
		a = append(a, "-b:v", b, "-maxrate", b, "-bufsize", strconv.FormatInt(2*bps, 10))
	}
	if v.GOP > 0 {
		g := strconv.Itoa(v.GOP)
		a = append(a, "-g", g, "-keyint_min", g)
		if encoder == "libx264" || encoder == "libx265" {
			a = append(a, "-sc_threshold", "0") // keyframes where the GOP says: segments cut on them
		}
	}
	if audio {
		a = append(a, "-c:a", AudioCodecs[o.Audio.Codec])
		if bps, err := ParseBitrate(o.Audio.Bitrate); err == nil {
			a = append(a, "-b:a", strconv.FormatInt(bps, 10))
		}
	}
	switch o.Kind {
	case "stream":
		mux := Schemes[scheme(o.Dest)]
		a = append(a, "-f", mux, "-flush_packets", "1")
		if mux == "mpegts" {
			a = append(a, "-mpegts_flags", "+resend_headers") // a receiver joining late finds the tables
		}
		return append(a, o.Dest)
	case "hls":
		seg := strconv.Itoa(int(o.Segment / time.Second))
		return append(a, "-f", "hls", "-hls_time", seg, "-hls_list_size", strconv.Itoa(o.ListSize),
			"-hls_flags", "independent_segments+delete_segments+program_date_time+temp_file",
			"-hls_segment_filename", filepath.Join(o.Dest, "segment_%06d.ts"), filepath.Join(o.Dest, "index.m3u8"))
	}
	ext := strings.ToLower(filepath.Ext(o.Dest))
	mux := Extensions[ext]
	if v.Codec == "hevc" && (mux == "mp4" || mux == "mov") {
		a = append(a, "-tag:v", "hvc1") // the tag players look for
	}
	if o.Segment > 0 {
		a = append(a, "-f", "segment", "-segment_time", strconv.Itoa(int(o.Segment/time.Second)), "-segment_format", mux,
			"-reset_timestamps", "1", "-flush_packets", "1")
		if mux == "mp4" || mux == "mov" {
			a = append(a, "-segment_format_options", "movflags="+fragmented+":frag_duration="+fragDuration)
		}
		return append(a, SegmentPattern(o.Dest, ""))
	}
	// Each fragment goes to the file as it is made, not when ffmpeg's
	// buffer fills: a recording cut off holds what was encoded.
	a = append(a, "-f", mux, "-flush_packets", "1")
	if mux == "mp4" || mux == "mov" {
		a = append(a, "-movflags", fragmented, "-frag_duration", fragDuration)
	}
	return append(a, o.Dest)
}

// SegmentPattern is the name of a rolled file's segments: PATH-%03d.EXT,
// numbered from 0, with start (a process's start time, which keeps a
// restart from overwriting) before the number when set:
// PATH-START-%03d.EXT.
func SegmentPattern(path, start string) string {
	ext := filepath.Ext(path)
	base := strings.TrimSuffix(path, ext)
	if start != "" {
		base += "-" + start
	}
	return base + "-%03d" + ext
}

// AudioInputArgs are the input options of a bus's sound when it joins the
// encoder: 48 kHz stereo float PCM on the process's file descriptor fd
// (the video is pipe:0; the sound comes on its own pipe so that neither
// waits for the other inside one stream).
func AudioInputArgs(fd int) []string {
	return []string{"-f", "f32le", "-ar", "48000", "-ac", "2", "-i", "pipe:" + strconv.Itoa(fd)}
}

func scheme(u string) string {
	if i := strings.Index(u, "://"); i > 0 {
		return u[:i]
	}
	return ""
}

func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
