package lang

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// diagLines renders diagnostics as "LINE:COL Summary" for comparison.
func diagLines(diags hcl.Diagnostics, sev hcl.DiagnosticSeverity) []string {
	var out []string
	for _, d := range diags {
		if d.Severity != sev {
			continue
		}
		pos := "-"
		if d.Subject != nil {
			pos = fmt.Sprintf("%d:%d", d.Subject.Start.Line, d.Subject.Start.Column)
		}
		out = append(out, pos+" "+d.Summary)
	}
	return out
}

// diagRanges renders each diagnostic of severity sev as its whole subject
// range, "line:col-line:col Summary".
func diagRanges(diags hcl.Diagnostics, sev hcl.DiagnosticSeverity) []string {
	var out []string
	for _, d := range diags {
		if d.Severity != sev {
			continue
		}
		pos := "-"
		if r := d.Subject; r != nil {
			pos = fmt.Sprintf("%d:%d-%d:%d", r.Start.Line, r.Start.Column, r.End.Line, r.End.Column)
		}
		out = append(out, pos+" "+d.Summary)
	}
	return out
}

// TestMalformedShows loads every show in testdata/bad and asserts the exact
// errors: summary and the line:col where each one points.
func TestMalformedShows(t *testing.T) {
	cases := map[string][]string{
		"aux_both":              {"15:3-15:19 Invalid combination of arguments"},
		"tally_canvas":          {"7:3-7:13 Unsupported argument"},
		"tally_dest":            {"7:13-7:28 Invalid tally address", "12:15-12:20 Value out of range", "13:15-13:21 Invalid value", "15:7-15:13 Unknown tally kind", "19:24-19:24 Missing required argument"},
		"aux_routes":            {"15:12-15:30 Duplicate route", "19:12-19:23 Invalid reference", "23:12-23:21 Invalid reference"},
		"bad_colour":            {"9:17-9:24 Invalid value"},
		"bad_enum":              {"8:13-8:18 Invalid value"},
		"bad_fit":               {"11:14-11:23 Invalid value", "12:15-12:18 Value out of range"},
		"bad_rect":              {"11:14-11:28 Invalid rect"},
		"count_without_count":   {"8:13-8:24 Reference to \"count\" in non-counted context"},
		"cycle":                 {"8:3-8:14 Reference cycle"},
		"cycle_blocks":          {"8:3-8:21 Reference cycle", "9:3-9:18 Reference cycle"},
		"decimal_rate":          {"4:16-4:23 Invalid frame rate"},
		"dropped_timecode":      {"8:3-8:33 Invalid timecode_start"},
		"duplicate_source":      {"8:1-8:21 Duplicate source \"a\""},
		"delivery":              {"13:3-13:26 Invalid path", "14:3-14:25 Invalid segment length", "15:11-15:26 Invalid bit rate", "19:3-19:32 Invalid stream URL", "21:13-21:18 Invalid value", "22:13-22:14 Value out of range", "24:3-24:8 Duplicate video block", "29:11-29:24 Invalid bit rate", "34:11-34:25 Codec not carried"},
		"dynamic_bad":           {"14:26-14:39 Invalid index"},
		"dynamic_misuse":        {"9:11-9:17 Unsupported dynamic block type", "15:3-15:18 Missing content block", "19:16-19:17 Invalid dynamic for_each value", "26:10-26:18 Unknown reference"},
		"each_without_for_each": {"8:12-8:22 Reference to \"each\" in context without for_each"},
		"for_each_list":         {"8:14-8:24 Invalid for_each"},
		"frame_metadata":        {"8:20-8:49 Invalid value"},
		"index_out_of_range":    {"11:22-11:25 Invalid index"},
		"key_typo":              {"12:20-12:29 Invalid index"},
		"missing_required":      {"7:24-7:24 Missing required argument"},
		"moved_bad":             {"8:10-8:20 Invalid address"},
		"multi_errors":          {"8:25-8:26 Value out of range", "9:25-9:27 Value out of range", "10:25-10:32 Invalid value"},
		"negative_count":        {"8:11-8:13 Invalid count"},
		"no_show":               {"1:1-1:1 Missing show block"},
		"odd_size":              {"3:16-3:27 Invalid size"},
		"out_of_range":          {"8:18-8:20 Value out of range"},
		"record_ext":            {"18:10-18:21 Invalid path"},
		"required_var":          {"7:1-7:13 No value for required variable"},
		"scene_wrong_ref":       {"14:11-14:21 Invalid reference"},
		"show_refs_source":      {"2:16-2:29 Invalid reference"},
		"string_ref":            {"9:12-9:24 Invalid reference"},
		"syntax_error":          {"8:13-9:1 Invalid expression"},
		"too_big":               {"11:16-11:27 Show too large"},
		"two_shows":             {"7:1-7:5 Duplicate show block"},
		"unknown_attr":          {"8:3-8:9 Unsupported argument"},
		"unknown_block":         {"7:1-7:6 Unsupported block type"},
		"unknown_kind":          {"7:8-7:18 Unknown source kind"},
		"unknown_ref":           {"10:14-10:24 Unknown reference"},
		"unknown_root":          {"8:13-8:18 Unknown reference"},
		"unknown_var":           {"11:10-11:18 Unknown reference"},
		"validation":            {"9:13-9:16 Invalid value for variable"},
		"var_type":              {"9:13-9:19 Invalid value for variable"},
		"whole_collection":      {"11:12-11:22 Invalid reference"},
		"wrong_type":            {"8:18-8:24 Incorrect attribute value type"},
		// "ok" stays inside through its "..", "meant" says allow_outside.
		"delivery_outside": {"13:3-13:32 Path outside the show's directory", "17:3-17:24 Path outside the show's directory", "21:3-21:24 Path outside the show's directory"},
	}
	files, _ := filepath.Glob("testdata/bad/*.hcl")
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".hcl")
		if _, ok := cases[name]; !ok && name != "binary_garbage" {
			t.Errorf("testdata/bad/%s.hcl has no expectation in the table", name)
		}
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			_, diags := Load([]string{"testdata/bad/" + name + ".hcl"}, Options{})
			got := diagRanges(diags, hcl.DiagError)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("errors:\n got  %q\n want %q\nall: %v", got, want, diags)
			}
		})
	}
}

// TestDiagnosticDetails checks the words a user reads: did-you-mean, the
// allowed range, every element of a cycle, the rational to write.
func TestDiagnosticDetails(t *testing.T) {
	cases := []struct{ file, want string }{
		{"unknown_attr", `Did you mean "pattern"?`},
		{"unknown_block", `Did you mean "source"?`},
		{"unknown_kind", `Did you mean "hevc_file"?`},
		{"bad_enum", `Did you mean "bars"?`},
		{"unknown_ref", `Did you mean "cam"?`},
		{"unknown_var", `Did you mean "clips"?`},
		{"out_of_range", "between 1 and 64; got 65"},
		{"delivery_outside", `set allow_outside = true on this output`},
		{"cycle", "local.a → local.b → local.c → local.a"},
		{"cycle_blocks", "local.feeds → source.a → local.p → local.feeds"},
		{"decimal_rate", `write "30000/1001"`},
		{"validation", "At most 192 sources fit on one L4."},
		{"whole_collection", "pick one"},
		{"index_out_of_range", "source.cam has 2 elements, indexes 0 to 1; the index is 2."},
		{"key_typo", `source.g has the keys left, right. Did you mean "left"?`},
		{"duplicate_source", "already declared at testdata/bad/duplicate_source.hcl:7"},
		{"dropped_timecode", `timecode "00:01:00;00": 00:01:00;00 does not exist at 30000/1001 drop-frame: frames 00 to 01 of every minute not divisible by ten are dropped; the next timecode is 00:01:00;02`},
	}
	for _, c := range cases {
		_, diags := Load([]string{"testdata/bad/" + c.file + ".hcl"}, Options{})
		var all []string
		for _, d := range diags {
			all = append(all, d.Detail)
		}
		if !strings.Contains(strings.Join(all, "\n"), c.want) {
			t.Errorf("%s: no diagnostic detail contains %q; got %q", c.file, c.want, all)
		}
	}
}

// TestBadInputNeverPanics covers garbage, empty directories and unreadable
// paths: diagnostics, each error with a range when it is about a file.
func TestBadInputNeverPanics(t *testing.T) {
	empty := t.TempDir()
	unreadable := filepath.Join(t.TempDir(), "x.hcl")
	os.WriteFile(unreadable, []byte("show {}"), 0o000)
	cases := []struct {
		name    string
		paths   []string
		summary string
	}{
		{"garbage", []string{"testdata/bad/binary_garbage.hcl"}, "Invalid character"},
		{"empty dir", []string{empty}, "No show files in directory"},
		{"missing", []string{"testdata/nope.hcl"}, "Cannot read show file"},
		{"no paths", nil, "No show files"},
	}
	if os.Geteuid() != 0 {
		cases = append(cases, struct {
			name    string
			paths   []string
			summary string
		}{"unreadable", []string{unreadable}, "Cannot read show file"})
	}
	for _, c := range cases {
		_, diags := Load(c.paths, Options{})
		if !diags.HasErrors() || diags[0].Summary != c.summary {
			t.Errorf("%s: got %v, want first error %q", c.name, diags, c.summary)
		}
	}
}

// TestCanvasTallyKeysSayWhatReplacedThem: a show written for the onair
// that read canvas tally_tsl5 is told to write tally blocks.
func TestCanvasTallyKeysSayWhatReplacedThem(t *testing.T) {
	_, diags := Load([]string{"testdata/bad/tally_canvas.hcl"}, Options{})
	if len(diags) != 1 || !strings.Contains(diags[0].Detail, `tally "tsl5" "NAME"`) || !strings.Contains(diags[0].Detail, "address, port, transport") {
		t.Errorf("diagnostics: %v", diags)
	}
}
