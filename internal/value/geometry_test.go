package value

import (
	"strings"
	"testing"
)

// The bounds a show's rects and crops are held to, at their edges: what
// reaches exactly rect_reach canvas sides past the canvas passes, a pixel
// more is refused with the limit's name, and numbers far out of range
// (2^40, 2^62) are refused without overflowing.
func TestGeometryBounds(t *testing.T) {
	c := Size{W: 640, H: 360}
	ok := [][4]int{
		{0, 0, 640, 360},
		{-2560, -1440, 5760, 3240}, // the largest: 4 canvas sides past every edge
		{3198, 1798, 2, 2},
		{-2560, 0, 2, 2},
	}
	for _, r := range ok {
		if err := CheckRect(c, r); err != nil {
			t.Errorf("rect %v on %v: %v", r, c, err)
		}
	}
	bad := [][4]int{
		{0, 0, 1099511627776, 120},
		{-2561, 0, 640, 360},
		{0, -1441, 640, 360},
		{-2560, 0, 5761, 360},
		{3199, 0, 2, 2},
		{0, 1799, 2, 2},
		{1 << 62, 1 << 62, 1 << 62, 1 << 62},
		{-(1 << 62), 0, 1 << 62, 2},
		{0, 0, 1 << 30, 1 << 30},
		{0, 0, 0, 360},
		{0, 0, 640, -1},
	}
	for _, r := range bad {
		err := CheckRect(c, r)
		if err == nil {
			t.Errorf("rect %v on %v passed", r, c)
			continue
		}
		if r[2] > 0 && r[3] > 0 && !strings.Contains(err.Error(), "rect_reach") {
			t.Errorf("rect %v: %v does not name the limit", r, err)
		}
	}
	src := Size{W: 1920, H: 1080}
	if err := CheckCrop(src, [4]int{480, 0, 1440, 1080}); err != nil {
		t.Errorf("crop inside the source: %v", err)
	}
	for _, r := range [][4]int{{-2, 0, 100, 100}, {1000, 0, 1000, 100}, {0, 0, 1920, 1082}, {0, 0, 1 << 40, 2}} {
		if err := CheckCrop(src, r); err == nil || !strings.Contains(err.Error(), "crop_reach") {
			t.Errorf("crop %v of %v: %v, want a crop_reach error", r, src, err)
		}
	}
	for _, s := range []Size{{16386, 2}, {0, 2}, {2, 1 << 40}, {3, 2}} {
		if err := CheckSize(s); err == nil {
			t.Errorf("size %v passed", s)
		}
	}
	if err := CheckSize(Size{MaxSide, MaxSide}); err != nil {
		t.Errorf("the largest size: %v", err)
	}
}
