package lang

import (
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/onairhq/onair/delivery"
)

// decodeDelivery reads an output "stream", "file" or "hls": its
// destination and its video and audio blocks, each checked by package
// delivery's rules at the attribute that breaks them.
func (l *loader) decodeDelivery(d *dec, o *Output) {
	out := &delivery.Output{Kind: o.Kind}
	at := func(name string) hcl.Range {
		if r, ok := o.Attrs[name]; ok {
			return r
		}
		return o.DeclRange
	}
	switch o.Kind {
	case "stream":
		out.Dest = d.str("url")
		if out.Dest != "" {
			if err := delivery.CheckURL(out.Dest); err != nil {
				l.errorf(at("url"), "Invalid stream URL", "%v.", err)
			}
		}
	case "file":
		o.Path = d.path("path")
		out.Dest = o.Path
		if o.Path != "" {
			if err := delivery.CheckPath(o.Path); err != nil {
				l.errorf(at("path"), "Invalid path", "%v.", err)
			}
			l.inside(d, at("path"), "path", o.Path)
		}
		if s := d.str("segment"); s != "" {
			out.Segment = l.segment(at("segment"), s)
		}
	case "hls":
		o.Path = d.path("dir")
		out.Dest = o.Path
		if o.Path != "" {
			l.inside(d, at("dir"), "dir", o.Path)
		}
		out.Segment = l.segment(at("segment"), d.str("segment"))
		out.ListSize = d.integer("list_size")
		out.Serve = d.boolean("serve")
	}
	v := d.nested("video")
	out.Video = delivery.Video{Codec: v.str("codec"), Encoder: v.str("encoder"), Bitrate: v.str("bitrate"),
		GOP: v.integer("gop"), Preset: v.str("preset"), Profile: v.str("profile")}
	if r := l.show.FrameRate; out.Video.GOP == 0 && r.Den > 0 { // two seconds of frames, rounded up
		out.Video.GOP = int((2*r.Num + r.Den - 1) / r.Den)
	}
	if out.Video.Encoder == "" {
		l.errorf(at("video.encoder"), "Invalid encoder", "encoder must be \"auto\" or the name of an ffmpeg encoder, such as %q.", delivery.Codecs[out.Video.Codec].Software)
	}
	if err := delivery.CheckCodec(*out); err != nil {
		l.errorf(at("video.codec"), "Codec not carried", "%v.", err)
	}
	a := d.nested("audio")
	out.Audio = delivery.Audio{Codec: a.str("codec"), Bitrate: a.str("bitrate")}
	for name, rate := range map[string]string{"video.bitrate": out.Video.Bitrate, "audio.bitrate": out.Audio.Bitrate} {
		if _, err := delivery.ParseBitrate(rate); err != nil {
			l.errorf(at(name), "Invalid bit rate", "%v.", err)
		}
	}
	o.Delivery = out
}

// inside refuses a file or HLS output's path (attribute name; path
// as resolved against the show file's directory) that lies outside that
// directory, unless the output says allow_outside = true.
func (l *loader) inside(d *dec, rng hcl.Range, name, path string) {
	if d.boolean("allow_outside") {
		return
	}
	raw := d.str(name)
	dir, err1 := filepath.Abs(d.dir)
	p, err2 := filepath.Abs(path)
	rel, err3 := filepath.Rel(dir, p)
	if err1 == nil && err2 == nil && err3 == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return
	}
	l.errorf(rng, "Path outside the show's directory", "%s %q lies outside %s, the show file's directory; write a path inside it, or set allow_outside = true on this output to write there on purpose.", name, raw, dir)
}

func (l *loader) segment(rng hcl.Range, s string) time.Duration {
	d, err := delivery.ParseDuration(s)
	if err != nil {
		l.errorf(rng, "Invalid segment length", "segment: %v.", err)
	}
	return d
}

// nested is a decoder of the one nested block called name (a second is an
// error); absent, its attributes take their defaults.
func (d *dec) nested(name string) *dec {
	spec := d.spec.Block(name)
	var blk *hcl.Block
	for _, b := range d.content.Blocks {
		if b.Type != name {
			continue
		}
		if blk != nil {
			d.l.errorf(b.DefRange, "Duplicate "+name+" block", "An output has at most one %s block; the first is at %s.", name, blk.DefRange.String())
			continue
		}
		blk = b
	}
	var content *hcl.BodyContent
	if blk != nil {
		content = d.l.blockContent(blk, spec)
	}
	return d.l.newDec(spec, content, d.ctx, d.dir, d.attrs)
}
