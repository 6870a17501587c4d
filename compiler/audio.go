package compiler

import (
	"slices"
	"strconv"

	"github.com/onairhq/onair/audio"
	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/nodes"
)

// busAudio gives a bus's element its mix (audio_strips, audio_master_db,
// audio_mix_minus, as the compositor's params hold them): each input's
// strip from its source's audio block, over which the bus's own strip
// block for it wins; strips at their defaults are left out. A strip or a
// mix-minus of a source the bus does not carry is an error at its line.
func (st *state) busAudio(e *nodes.Element, bus *lang.Bus, inputs []*lang.Source) {
	strip := func(s *lang.AudioStrip) audio.Strip {
		m, _ := audio.ParseMode(s.Mode) // the language checked the enum
		return audio.Strip{GainDB: s.GainDB, Mute: s.Mute, Pan: s.Pan, Mode: m, DelayMs: s.DelayMs}
	}
	own := map[*lang.Source]*lang.AudioStrip{}
	if a := bus.Audio; a != nil {
		for _, s := range a.Strips {
			if !slices.Contains(inputs, s.Source) {
				rng := s.DeclRange
				st.errorf(&rng, "Strip of a source not on the bus", "%s's audio has a strip for %s, which %s does not show: the bus mixes only the sources of its scenes.", bus.Address(), s.Source.Address(), bus.Address())
				continue
			}
			own[s.Source] = s
		}
		if m := a.MixMinusOf; m != nil {
			if !slices.Contains(inputs, m) {
				rng := a.MixMinusAt
				st.errorf(&rng, "Mix-minus of a source not on the bus", "%s's mix_minus_of is %s, which %s does not show: name one of the sources of its scenes.", bus.Address(), m.Address(), bus.Address())
			} else {
				e.Attrs["audio_mix_minus"] = m.Address()
			}
		}
		if a.MasterDB != 0 {
			e.Attrs["audio_master_db"] = strconv.FormatFloat(a.MasterDB, 'g', -1, 64)
		}
	}
	var strips []string
	for _, src := range inputs {
		s := own[src]
		if s == nil {
			s = src.Audio
		}
		if s == nil {
			continue
		}
		if v := strip(s); v != (audio.Strip{}) {
			strips = append(strips, v.Format(src.Address()))
		}
	}
	if strips != nil {
		e.Attrs["audio_strips"] = strips
	}
}
