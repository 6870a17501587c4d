package nodes

import (
	"strings"
	"testing"

	"github.com/onairhq/onair/internal/value"
)

// A colour param is read into its typed value where a node reads its
// params: the tags the plan spells, none when it spells none, and an
// error naming the kind, the param and the bad tag when it spells one
// wrong (it once became BT.709 without a word).
func TestDecodeReadsColourTags(t *testing.T) {
	var prm struct {
		Colour value.Colour `param:"colour"`
	}
	if err := Decode("compositor", map[string]any{"colour": "bt2020/pq/bt2020nc/full"}, &prm); err != nil {
		t.Fatal(err)
	}
	if want := (value.Colour{Primaries: "bt2020", Transfer: "pq", Matrix: "bt2020nc", Range: "full"}); prm.Colour != want {
		t.Errorf("read %+v, want %+v", prm.Colour, want)
	}
	prm.Colour = value.Colour{}
	if err := Decode("compositor", map[string]any{}, &prm); err != nil || prm.Colour != (value.Colour{}) {
		t.Errorf("no colour param: %+v, %v; want no tags", prm.Colour, err)
	}
	for bad, want := range map[string]string{
		"bt709/bt709/bt709":         `compositor: param colour: colour "bt709/bt709/bt709": want primaries/transfer/matrix/range`,
		"bt709/bt709/bt709/limitd":  `range "limitd" is none of limited, full`,
		"bt709/gamma22/bt709/full":  `transfer "gamma22" is none of bt709, pq, hlg, srgb`,
		"bt709//bt709/limited":      `transfer "" is none of`,
		"BT709/bt709/bt709/limited": `primaries "BT709" is none of bt709, bt2020, bt601`,
	} {
		if err := Decode("compositor", map[string]any{"colour": bad}, &prm); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("colour %q: %v, want an error containing %q", bad, err, want)
		}
	}
	if err := Decode("compositor", map[string]any{"colour": 709}, &prm); err == nil || !strings.Contains(err.Error(), "colour must be a string") {
		t.Errorf("a colour that is a number: %v", err)
	}
}
