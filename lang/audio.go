package lang

import "github.com/hashicorp/hcl/v2"

// nestedBlock returns a decoder of d's one nested block of type typ, or nil
// when there is none (a second is an error).
func (d *dec) nestedBlock(typ string) (*dec, *hcl.Block) {
	spec := d.spec.Block(typ)
	if spec == nil || d.content == nil {
		return nil, nil
	}
	var blk *hcl.Block
	for _, b := range d.content.Blocks {
		if b.Type != typ {
			continue
		}
		if blk != nil {
			d.l.errorf(b.DefRange, "Duplicate "+typ+" block", "A block has at most one %s block; the first is at %s.", typ, blk.DefRange.String())
			continue
		}
		blk = b
	}
	if blk == nil {
		return nil, nil
	}
	return d.child(spec, d.l.blockContent(blk, spec)), blk
}

func (d *dec) child(spec *Block, content *hcl.BodyContent) *dec {
	return &dec{l: d.l, spec: spec, content: content, ctx: d.ctx, dir: d.dir, attrs: Attrs{}}
}

// strip decodes a strip's attributes (a source's audio block, a bus's
// strip block).
func (d *dec) strip(rng hcl.Range) *AudioStrip {
	return &AudioStrip{GainDB: d.number("gain_db"), Mute: d.boolean("mute"), Pan: d.number("pan"), Mode: d.str("mode"), DelayMs: d.integer("delay_ms"), DeclRange: rng}
}

// sourceAudio is a source's audio block; nil without one.
func (d *dec) sourceAudio() *AudioStrip {
	ad, blk := d.nestedBlock("audio")
	if ad == nil {
		return nil
	}
	return ad.strip(blk.DefRange)
}

// busAudio is a bus's audio block, its source references resolved; nil
// without one.
func (d *dec) busAudio() *BusAudio {
	ad, blk := d.nestedBlock("audio")
	if ad == nil {
		return nil
	}
	a := &BusAudio{MasterDB: ad.number("master_db"), DeclRange: blk.DefRange}
	if addr, ok := ad.ref("mix_minus_of", "source"); ok {
		a.MixMinusOf = d.l.srcByAddr[addr]
		a.MixMinusAt = ad.content.Attributes["mix_minus_of"].Expr.Range()
	}
	spec := ad.spec.Block("strip")
	for _, b := range ad.content.Blocks {
		if b.Type != "strip" {
			continue
		}
		sd := ad.child(spec, d.l.blockContent(b, spec))
		s := sd.strip(b.DefRange)
		if addr, ok := sd.ref("source", "source"); ok {
			s.Source = d.l.srcByAddr[addr]
		}
		if s.Source != nil {
			a.Strips = append(a.Strips, s)
		}
	}
	return a
}
