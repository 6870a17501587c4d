package show

import (
	"fmt"
	"slices"

	"github.com/onairhq/onair/internal/value"
	"github.com/onairhq/onair/nodes"
)

// liveHook applies one live param of a kind on air (nodes.Update): it
// says why u cannot change the show on air, wrapping ErrNotFound for an
// element the show lacks, or returns what applies it once every part of
// the change has passed (nil: the scene step applies it, through c). The
// registry has checked u's value against the param's declaration first.
type liveHook func(b *State, u nodes.Update, c *liveScenes) (apply func(), err error)

// liveHooks are the live params of the kinds every backend runs, by kind
// and param: marking a param Live in nodes/ and adding its hook here is
// all a new live param needs (a test holds the two together).
var liveHooks = map[[2]string]liveHook{
	{"compositor", "input_poll_ms"}: func(b *State, u nodes.Update, _ *liveScenes) (func(), error) {
		bs, ms, err := liveBus(b, u)
		return func() { bs.pollNs.Store(int64(ms) * 1_000_000) }, err
	},
	{"compositor", "scenes"}: addScenes,
	// The scene on air at start: on air a cut says what a bus shows.
	{"compositor", "scene"}: func(b *State, u nodes.Update, _ *liveScenes) (func(), error) {
		_, _, err := liveBus(b, u)
		return nil, err
	},
	{"compositor", "audio_strips"}:    liveAudio,
	{"compositor", "audio_master_db"}: liveAudio,
	{"compositor", "audio_mix_minus"}: liveAudio,
	{"gpu_import", "import_ttl_ms"}: func(b *State, u nodes.Update, _ *liveScenes) (func(), error) {
		src := b.sourceMap()[u.Address]
		if src == nil || src.browser.Load() == nil {
			return nil, fmt.Errorf("%s: the show on air has no such browser source: %w", u.Address, ErrNotFound)
		}
		ms := liveInt(u)
		return func() { src.Browser().SetImportTTL(ms) }, nil
	},
	{"output_preview", "interval_ms"}: func(b *State, u nodes.Update, _ *liveScenes) (func(), error) {
		o, err := livePreview(b, u)
		return func() { o.previewInterval.Store(int64(liveInt(u))) }, err
	},
	{"output_preview", "quality"}: func(b *State, u nodes.Update, _ *liveScenes) (func(), error) {
		o, err := livePreview(b, u)
		return func() { o.previewQuality.Store(int64(liveInt(u))) }, err
	},
}

// liveScenes is what the scene step of ApplyLive takes from the updates:
// the scenes each bus adds at the end of its list.
type liveScenes struct {
	add     map[string][]string
	renames map[string]string // the change's scene renames, old → new
}

// addScenes is the hook of a compositor's scenes: a list that grows at
// its end (the registry checked that against the plan's old list; here
// against the bus on air, its renames applied).
func addScenes(b *State, u nodes.Update, c *liveScenes) (func(), error) {
	bs, _, err := liveBus(b, u)
	if err != nil {
		return nil, err
	}
	now, _ := value.Normalize(u.Value)
	list, _ := now.([]string)
	cur := slices.Clone(bs.Scenes())
	for i, sc := range cur {
		if to, ok := c.renames[sc]; ok {
			cur[i] = to
		}
	}
	if len(list) < len(cur) || !slices.Equal(list[:len(cur)], cur) {
		return nil, fmt.Errorf("%s: scenes %v is not the %v on air with scenes added at the end", u.Address, list, cur)
	}
	if more := list[len(cur):]; len(more) > 0 {
		c.add[u.Address] = slices.Clone(more)
	}
	return nil, nil
}

// liveBus is the bus u changes and u's value as a whole number.
func liveBus(b *State, u nodes.Update) (*BusState, int, error) {
	bs := b.buses[u.Address]
	if bs == nil {
		return nil, 0, fmt.Errorf("%s: the show on air has no such bus: %w", u.Address, ErrNotFound)
	}
	return bs, liveInt(u), nil
}

// livePreview is the preview output u changes.
func livePreview(b *State, u nodes.Update) (*OutputState, error) {
	o := b.outputs[u.Address]
	if o == nil || o.Kind != "preview" {
		return nil, fmt.Errorf("%s: the show on air has no such preview output: %w", u.Address, ErrNotFound)
	}
	return o, nil
}

// liveInt is u's value as a whole number (checked by the registry).
func liveInt(u nodes.Update) int {
	v, _ := value.Normalize(u.Value)
	n, _ := v.(int)
	return n
}
