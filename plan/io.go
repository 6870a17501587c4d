package plan

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"github.com/onairhq/onair/internal/value"
)

// Marshal encodes a plan as indented JSON ending in a newline. The same plan
// gives the same bytes: struct fields in declaration order, map keys sorted
// by encoding/json, and every slice already ordered by the compiler.
func Marshal(p *Plan) ([]byte, error) {
	if p == nil {
		return nil, errors.New("plan: nothing to marshal")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Save writes a plan's JSON to w.
func Save(w io.Writer, p *Plan) error {
	b, err := Marshal(p)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// VersionError says a saved plan was written by another format or tool
// version than the one reading it.
type VersionError struct {
	What      string // "format_version" or "tool_version"
	Got, Want string
}

func (e *VersionError) Error() string {
	if e.What == "format_version" && e.older() {
		return fmt.Sprintf("plan: saved in plan format %s, older than this onair's format %s (which types the plan's sizes, rates, formats and colours): re-run onair plan to write it again (onair plan -out FILE SHOW)", e.Got, e.Want)
	}
	if e.What == "format_version" {
		return fmt.Sprintf("plan: saved in plan format %s, but this onair reads format %s; compile the show again with this onair (onair plan -out FILE SHOW)", e.Got, e.Want)
	}
	if e.Got == `""` {
		return fmt.Sprintf("plan: not a plan this onair (%s) can use: it names no tool_version, so it is corrupt or was not written by onair plan -out; compile the show again (onair plan -out FILE SHOW)", e.Want)
	}
	return fmt.Sprintf("plan: written by onair %s, but this is onair %s; a plan runs only with the onair that compiled it: compile the show again (onair plan -out FILE SHOW)", e.Got, e.Want)
}

// older says whether the plan's format version is before this onair's.
func (e *VersionError) older() bool {
	got, err1 := strconv.Atoi(e.Got)
	want, err2 := strconv.Atoi(e.Want)
	return err1 == nil && err2 == nil && got < want
}

// ToolVersion is the running onair's version, which Load requires of a
// saved plan. The CLI sets it at start; "" skips the tool-version check.
var ToolVersion string

// Load reads a saved plan written by this tool version (ToolVersion). It
// refuses corrupt JSON, unknown fields, trailing data, another format
// version and another tool version, saying which versions and what to do.
func Load(r io.Reader) (*Plan, error) { return LoadVersion(r, ToolVersion) }

// LoadVersion is Load against an explicit tool version ("" skips the check).
func LoadVersion(r io.Reader, toolVersion string) (*Plan, error) {
	data, err := io.ReadAll(io.LimitReader(r, 1<<30))
	if err != nil {
		return nil, fmt.Errorf("plan: reading: %w", err)
	}
	// Read the version first, so that a plan of another format is refused
	// for its version, not for a field it does not share with this one.
	var head struct {
		FormatVersion *int   `json:"format_version"`
		ToolVersion   string `json:"tool_version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("plan: not a saved plan (%s); write one with onair plan -out FILE SHOW", jsonProblem(err))
	}
	if head.FormatVersion == nil {
		return nil, errors.New("plan: not a saved plan: no format_version; write one with onair plan -out FILE SHOW")
	}
	if *head.FormatVersion != FormatVersion {
		return nil, &VersionError{What: "format_version", Got: fmt.Sprint(*head.FormatVersion), Want: fmt.Sprint(FormatVersion)}
	}
	if toolVersion != "" && head.ToolVersion != toolVersion {
		return nil, &VersionError{What: "tool_version", Got: fmt.Sprintf("%q", head.ToolVersion), Want: fmt.Sprintf("%q", toolVersion)}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Plan
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("plan: corrupt plan: %s; compile the show again (onair plan -out FILE SHOW)", jsonProblem(err))
	}
	if dec.More() {
		return nil, errors.New("plan: corrupt plan: data after the plan's JSON object")
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("plan: corrupt plan: %v", err)
	}
	return &p, nil
}

// jsonProblem says what is wrong with a plan's JSON in the plan's terms:
// where a value of the wrong JSON type is and what the plan holds there,
// rather than the Go types it is decoded into.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		where := "the plan"
		if te.Field != "" {
			where = "field " + te.Field
		}
		return fmt.Sprintf("%s is a JSON %s (at byte %d), where a plan has %s", where, te.Value, te.Offset, jsonKind(te.Type))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("corrupt JSON at byte %d: %v", se.Offset, err)
	}
	if strings.HasPrefix(err.Error(), "json: ") {
		return "corrupt JSON: " + err.Error()
	}
	return err.Error() // a typed value spelt wrong: a size, a rate, a format
}

// jsonKind names the JSON value a Go type is decoded from.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		if reflect.PointerTo(t).Implements(reflect.TypeFor[encoding.TextUnmarshaler]()) {
			return "a string" // a size, a rate, a format: spelt as text
		}
		return "an object"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "another value"
}

// OpacityRange is a layer's opacity range, the show language's
// (compiler's TestPlanAndLanguageAgree holds the two together: this
// package may not import lang).
var OpacityRange = [2]float64{0, 1}

// Validate checks a plan's internal consistency: a show name and at least
// one node (the compiler never writes a plan without them, so a plan
// lacking them is not one of its plans), unique node ids, edges between
// known nodes with positive capacity, loops and groups that name known
// nodes, a canvas and pictures within the geometry limits, a frame rate
// and a pixel format, and scenes
// whose layers the show language would take (CheckScene). Whether
// the node kinds exist is CheckKinds' question: this package does not know
// the node registry.
func (p *Plan) Validate() error {
	if p.Show == "" {
		return errors.New("it names no show")
	}
	if len(p.Nodes) == 0 {
		return errors.New("it has no nodes")
	}
	ids := make(map[string]bool, len(p.Nodes))
	for _, n := range p.Nodes {
		if n.ID == "" || n.Kind == "" {
			return fmt.Errorf("a node has no id or kind")
		}
		if ids[n.ID] {
			return fmt.Errorf("node %q appears twice", n.ID)
		}
		ids[n.ID] = true
		if n.Placement.Thread == (n.Placement.Loop != "") {
			return fmt.Errorf("node %q must run on a loop or on a thread of its own", n.ID)
		}
	}
	for _, e := range p.Edges {
		if !ids[e.From] || !ids[e.To] {
			return fmt.Errorf("edge %s -> %s names an unknown node", e.From, e.To)
		}
		if e.Capacity < 1 {
			return fmt.Errorf("edge %s -> %s has capacity %d", e.From, e.To, e.Capacity)
		}
	}
	loops := map[string]bool{}
	for _, l := range p.Loops {
		loops[l.Name] = true
		for _, id := range l.Nodes {
			if !ids[id] {
				return fmt.Errorf("loop %s names unknown node %q", l.Name, id)
			}
		}
	}
	for _, n := range p.Nodes {
		if n.Placement.Loop != "" && !loops[n.Placement.Loop] {
			return fmt.Errorf("node %q is placed on unknown loop %q", n.ID, n.Placement.Loop)
		}
	}
	// The canvas and every picture within the geometry limits, and scenes
	// as the show language allows them: a running show draws a saved
	// plan's, and onair apply sends them to a show on air.
	if _, err := p.CanvasSize(); err != nil {
		return err
	}
	if p.FrameRate.Num <= 0 || p.FrameRate.Den <= 0 {
		return errors.New("the plan names no frame_rate")
	}
	if p.Format != value.NV12 && p.Format != value.P010 {
		return errors.New("the plan names no pixel format (format: nv12 or p010)")
	}
	for _, n := range p.Nodes {
		if n.Size == (value.Size{}) {
			continue
		}
		if err := value.CheckSize(n.Size); err != nil {
			return fmt.Errorf("node %q: %v", n.ID, err)
		}
	}
	for _, sc := range p.Scenes {
		if err := p.CheckScene(sc); err != nil {
			return err
		}
	}
	return nil
}

// CanvasSize is the plan's canvas size, refused when it is not one or is
// past the geometry limits.
func (p *Plan) CanvasSize() (value.Size, error) {
	if err := value.CheckSize(p.Size); err != nil {
		return value.Size{}, fmt.Errorf("the canvas: %v", err)
	}
	return p.Size, nil
}

// SourceSize is the size of the pictures the source at addr makes, as
// its nodes say; false when no node of it does.
func (p *Plan) SourceSize(addr string) (value.Size, bool) {
	for _, n := range p.Nodes {
		if n.Address == addr && n.Size != (value.Size{}) {
			return n.Size, true
		}
	}
	return value.Size{}, false
}

// CheckScene refuses a scene the show language would not take on p's
// canvas from p's sources: a layer whose rect or crop goes past the
// geometry limits (internal/value), or whose opacity is out of range.
// A running show checks a scene changed on air against the plan it
// started with, whose canvas and sources do not change while it runs.
func (p *Plan) CheckScene(sc Scene) error {
	canvas, err := p.CanvasSize()
	if err != nil {
		return err
	}
	for i, l := range sc.Layers {
		if err := value.CheckRect(canvas, l.Rect); err != nil {
			return fmt.Errorf("%s layer %d: %v", sc.Address, i, err)
		}
		if l.Crop != nil {
			src, ok := p.SourceSize(l.Source)
			if !ok { // not a source of this plan: bounded by the largest picture
				src = value.Size{W: value.MaxSide, H: value.MaxSide}
			}
			if err := value.CheckCrop(src, *l.Crop); err != nil {
				return fmt.Errorf("%s layer %d: %v", sc.Address, i, err)
			}
		}
		if !(l.Opacity >= OpacityRange[0] && l.Opacity <= OpacityRange[1]) {
			return fmt.Errorf("%s layer %d: opacity %v is outside %v to %v", sc.Address, i, l.Opacity, OpacityRange[0], OpacityRange[1])
		}
	}
	return nil
}

// CheckKinds refuses a plan with a node whose kind known says does not
// exist (the caller passes the node registry's lookup; this package must
// not import nodes/). The error names the unknown kinds, a node of each,
// and what to do.
func (p *Plan) CheckKinds(known func(kind string) bool) error {
	var bad []string
	seen := map[string]bool{}
	for _, n := range p.Nodes {
		if known(n.Kind) || seen[n.Kind] {
			continue
		}
		seen[n.Kind] = true
		bad = append(bad, fmt.Sprintf("%q (node %s)", n.Kind, n.ID))
	}
	if len(bad) == 0 {
		return nil
	}
	what := "an unknown node kind"
	if len(bad) > 1 {
		what = "unknown node kinds"
	}
	return fmt.Errorf("plan: corrupt plan or one from another onair: %s %s, which this onair (tool version %q) does not have; compile the show again (onair plan -out FILE SHOW)", what, strings.Join(bad, ", "), p.ToolVersion)
}

// CheckShow refuses a plan compiled from another show (or other variable
// values): showHash is lang.Show.Hash of the show about to run.
func CheckShow(p *Plan, showHash string) error {
	if p.ShowHash != showHash {
		return fmt.Errorf("plan: compiled from another show (plan's show hash %s, this show's %s): the show or its variables changed since; compile it again (onair plan -out FILE SHOW)", short(p.ShowHash), short(showHash))
	}
	return nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return "(none)"
	}
	return h
}
