package cuda

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/onairhq/onair/cuda/hevc"
)

// nvidiaHeader is Debian's copy of NVIDIA's decode API header (package
// libffmpeg-nvenc-dev / nv-codec-headers), where there is one.
const nvidiaHeader = "/usr/include/ffnvcodec/dynlink_cuviddec.h"

// Our CUVIDPICPARAMS and CUVIDHEVCPICPARAMS (nvdec.h) lie field for field
// where NVIDIA's header puts them: a C program built against that header
// prints every field's offset and size, and they must be ours.
func TestNVDECPicParamsLayout(t *testing.T) {
	if _, err := os.Stat(nvidiaHeader); err != nil {
		t.Skipf("no NVIDIA header to check against: %v", err)
	}
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc")
	}
	pic, hevcPic, picSize, hevcSize := nvdecPicLayout()
	var src strings.Builder
	src.WriteString("#include <stddef.h>\n#include <stdio.h>\n#include <ffnvcodec/dynlink_cuda.h>\n#include <ffnvcodec/dynlink_cuviddec.h>\n")
	src.WriteString("#define F(T, f) printf(\"%s %s %zu %zu\\n\", #T, #f, offsetof(T, f), sizeof(((T *)0)->f));\nint main(void) {\n")
	src.WriteString("\tprintf(\"CUVIDPICPARAMS - 0 %zu\\n\", sizeof(CUVIDPICPARAMS));\n\tprintf(\"CUVIDHEVCPICPARAMS - 0 %zu\\n\", sizeof(CUVIDHEVCPICPARAMS));\n")
	for _, f := range pic {
		fmt.Fprintf(&src, "\tF(CUVIDPICPARAMS, %s)\n", f.Name)
	}
	for _, f := range hevcPic {
		fmt.Fprintf(&src, "\tF(CUVIDHEVCPICPARAMS, %s)\n", f.Name)
	}
	src.WriteString("\treturn 0;\n}\n")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "layout.c"), []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "layout")
	if out, err := exec.Command(cc, "-o", bin, filepath.Join(dir, "layout.c")).CombinedOutput(); err != nil {
		t.Fatalf("building against %s: %v\n%s", nvidiaHeader, err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	theirs := map[string][2]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var typ, name string
		var off, size int
		if _, err := fmt.Sscan(line, &typ, &name, &off, &size); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		theirs[typ+"."+name] = [2]int{off, size}
	}
	check := func(typ string, ours []nvdecField, size int) {
		if got := theirs[typ+".-"][1]; got != size {
			t.Errorf("sizeof(%s): NVIDIA's %d, ours %d", typ, got, size)
		}
		for _, f := range ours {
			if th := theirs[typ+"."+f.Name]; th != [2]int{f.Offset, f.Size} {
				t.Errorf("%s.%s: NVIDIA's at %d, %d bytes; ours at %d, %d bytes", typ, f.Name, th[0], th[1], f.Offset, f.Size)
			}
		}
	}
	check("CUVIDPICPARAMS", pic, picSize)
	check("CUVIDHEVCPICPARAMS", hevcPic, hevcSize)

	// And we declare every field NVIDIA's HEVC parameters have, in order.
	hdr, err := os.ReadFile(nvidiaHeader)
	if err != nil {
		t.Fatal(err)
	}
	body := regexp.MustCompile(`(?s)typedef struct _CUVIDHEVCPICPARAMS\s*\{(.*?)\}\s*CUVIDHEVCPICPARAMS;`).FindSubmatch(hdr)
	if body == nil {
		t.Fatal("no CUVIDHEVCPICPARAMS in the header")
	}
	var names []string
	for _, m := range regexp.MustCompile(`(\w+)\s*(?:\[[^\]]*\])*\s*;`).FindAllSubmatch(regexp.MustCompile(`//[^\n]*|/\*.*?\*/`).ReplaceAll(body[1], nil), -1) {
		names = append(names, string(m[1]))
	}
	var ourNames []string
	for _, f := range hevcPic {
		ourNames = append(ourNames, f.Name)
	}
	if !reflect.DeepEqual(names, ourNames) {
		t.Errorf("CUVIDHEVCPICPARAMS's fields:\nNVIDIA's %v\nours     %v", names, ourNames)
	}
}

// randomPicture is a Picture with every field set to something, for the
// round trip through C.
func randomPicture(rng *rand.Rand) *hevc.Picture {
	p := &hevc.Picture{}
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				fill(v.Field(i))
			}
		case reflect.Array:
			for i := 0; i < v.Len(); i++ {
				fill(v.Index(i))
			}
		case reflect.Bool:
			v.SetBool(rng.Intn(2) == 1)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			v.SetInt(int64(rng.Intn(120)) - 60)
		case reflect.Uint8, reflect.Uint16, reflect.Uint32:
			v.SetUint(uint64(rng.Intn(250)))
		}
	}
	fill(reflect.ValueOf(p).Elem())
	p.Data = make([]byte, 100+rng.Intn(1000))
	rng.Read(p.Data)
	p.SliceOffsets = []uint32{0, 40, 77}
	p.PicWidthInLumaSamples, p.PicHeightInLumaSamples = 1920, 1080
	return p
}

// A picture written into our CUVIDPICPARAMS and read back is the same
// picture, field for field (those NVDEC has).
func TestNVDECPicParamsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 20; i++ {
		p := randomPicture(rng)
		back, common := picParamsRoundTrip(p)
		want := *p
		want.Output, want.Index, want.ChromaFormatIDC = false, 0, 0
		want.POC = p.CurrPicOrderCntVal
		if diffs := pictureFields(&want, back, nil); len(diffs) > 0 {
			t.Fatalf("round trip %d: %v", i, diffs[:min(len(diffs), 10)])
		}
		if common != (nvdecCommon{PicWidthInMbs: 120, FrameHeightInMbs: 68}) {
			t.Errorf("common part %+v", common)
		}
	}
}

// pictureFields lists the fields in which a and b differ, by name with
// both values, skipping those in skip.
func pictureFields(a, b *hevc.Picture, skip map[string]bool) []string {
	var diffs []string
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	for i := 0; i < va.NumField(); i++ {
		name := va.Type().Field(i).Name
		if skip[name] {
			continue
		}
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			diffs = append(diffs, fmt.Sprintf("%s: %v vs %v", name, short(va.Field(i)), short(vb.Field(i))))
		}
	}
	return diffs
}

// short prints a value, a long byte slice by its length and first bytes.
func short(v reflect.Value) string {
	if b, ok := v.Interface().([]byte); ok && len(b) > 24 {
		return fmt.Sprintf("%d bytes % x ...", len(b), b[:24])
	}
	return fmt.Sprint(v.Interface())
}
