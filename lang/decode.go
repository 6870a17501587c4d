package lang

import (
	"fmt"
	"github.com/onairhq/onair/internal/value"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// dec decodes one block instance's attributes by its schema.
type dec struct {
	l       *loader
	spec    *Block
	content *hcl.BodyContent
	ctx     *hcl.EvalContext
	dir     string
	attrs   Attrs
	read    map[string]bool // the attributes a typed decoder read (value)
}

func (l *loader) newDec(spec *Block, content *hcl.BodyContent, ctx *hcl.EvalContext, dir string, attrs Attrs) *dec {
	if content == nil {
		content = &hcl.BodyContent{Attributes: hcl.Attributes{}}
	}
	return &dec{l: l, spec: spec, content: content, ctx: ctx, dir: dir, attrs: attrs}
}

// value evaluates the named attribute: ok is false when it is absent, failed
// to evaluate (already reported) or is unknown because something it depends
// on failed.
func (d *dec) value(name string) (cty.Value, *hcl.Attribute, bool) {
	if d.read == nil {
		d.read = map[string]bool{}
	}
	d.read[name] = true
	a := d.content.Attributes[name]
	if a == nil {
		return cty.NilVal, nil, false
	}
	v, diags := a.Expr.Value(d.ctx)
	d.l.diags = append(d.l.diags, diags...)
	// Only the top level is checked here (IsWhollyKnown walks the value);
	// the decoders below skip unknown elements silently: an unknown value
	// comes from something that failed and was reported already.
	if diags.HasErrors() || !v.IsKnown() {
		return cty.NilVal, a, false
	}
	if v.IsNull() {
		return cty.NilVal, a, false // null means "take the default", as in Terraform
	}
	return v, a, true
}

// extra decodes, by the schema's types, the attributes the show wrote that
// no typed decoder read: those a kind's schema declares for its node
// kinds alone (Source.Extra, Output.Extra).
func (d *dec) extra() value.Settings {
	var out value.Settings
	for _, a := range d.spec.Attrs {
		if d.read[a.Name] || d.content.Attributes[a.Name] == nil {
			continue
		}
		var v any
		switch a.Type {
		case TypeString, TypeEnum:
			v = d.str(a.Name)
		case TypeInt:
			v = d.integer(a.Name)
		case TypeBool:
			v = d.boolean(a.Name)
		case TypeStringList, TypeEnumList:
			v = d.stringList(a.Name)
		case TypePath:
			v = d.path(a.Name)
		default:
			continue
		}
		if out == nil {
			out = value.Settings{}
		}
		out[a.Name] = v
	}
	return out
}

func (d *dec) typeErr(a *hcl.Attribute, want string, v cty.Value) {
	d.l.errorf(a.Expr.Range(), "Incorrect attribute value type", "%s must be %s; got %s.", a.Name, want, showValue(v))
}

func (d *dec) attrSpec(name string) *Attr {
	s := d.spec.Attr(name)
	if s == nil {
		panic("lang: schema has no attribute " + name + " in " + d.spec.Type + " " + d.spec.Kind)
	}
	return s
}

func (d *dec) str(name string) string {
	s := d.attrSpec(name)
	def, _ := s.Default.(string)
	v, a, ok := d.value(name)
	if !ok {
		return def
	}
	cv, err := convert.Convert(v, cty.String)
	if err != nil {
		d.typeErr(a, "a string", v)
		return def
	}
	out := cv.AsString()
	if s.Type == TypeEnum && !contains(s.Enum, out) {
		d.l.errorf(a.Expr.Range(), "Invalid value", "%s must be one of %s; got %q.%s", name, strings.Join(s.Enum, ", "), out, didYouMean(out, s.Enum))
		return def
	}
	return out
}

func (d *dec) integer(name string) int {
	s := d.attrSpec(name)
	def, _ := s.Default.(int)
	v, a, ok := d.value(name)
	if !ok {
		return def
	}
	cv, err := convert.Convert(v, cty.Number)
	if err != nil {
		d.typeErr(a, "a whole number", v)
		return def
	}
	i, whole := wholeNumber(cv)
	if !whole {
		d.typeErr(a, "a whole number", v)
		return def
	}
	if s.Range != nil && (int64(i) < s.Range[0] || int64(i) > s.Range[1]) {
		d.l.errorf(a.Expr.Range(), "Value out of range", "%s must be between %d and %d; got %d.", name, s.Range[0], s.Range[1], i)
		return def
	}
	return i
}

func (d *dec) number(name string) float64 {
	s := d.attrSpec(name)
	def, _ := s.Default.(float64)
	v, a, ok := d.value(name)
	if !ok {
		return def
	}
	cv, err := convert.Convert(v, cty.Number)
	if err != nil {
		d.typeErr(a, "a number", v)
		return def
	}
	f, _ := cv.AsBigFloat().Float64()
	if s.Range != nil && (f < float64(s.Range[0]) || f > float64(s.Range[1])) {
		d.l.errorf(a.Expr.Range(), "Value out of range", "%s must be between %d and %d; got %s.", name, s.Range[0], s.Range[1], showValue(cv))
		return def
	}
	return f
}

func (d *dec) boolean(name string) bool {
	s := d.attrSpec(name)
	def, _ := s.Default.(bool)
	v, a, ok := d.value(name)
	if !ok {
		return def
	}
	cv, err := convert.Convert(v, cty.Bool)
	if err != nil {
		d.typeErr(a, "true or false", v)
		return def
	}
	return cv.True()
}

func (d *dec) stringList(name string) []string {
	s := d.attrSpec(name)
	def, _ := s.Default.([]string)
	v, a, ok := d.value(name)
	if !ok {
		return append([]string(nil), def...)
	}
	ty := v.Type()
	if !(ty.IsTupleType() || ty.IsListType() || ty.IsSetType()) {
		d.typeErr(a, "a list of strings", v)
		return def
	}
	out := []string{}
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if !e.IsKnown() {
			return def
		}
		if e.Type() != cty.String {
			if c, err := convert.Convert(e, cty.String); err == nil {
				e = c
			} else {
				d.typeErr(a, "a list of strings", v)
				return def
			}
		}
		if e.IsNull() {
			d.typeErr(a, "a list of strings without nulls", v)
			return def
		}
		str := e.AsString()
		if s.Type == TypeEnumList && !contains(s.Enum, str) {
			d.l.errorf(a.Expr.Range(), "Invalid value", "every element of %s must be one of %s; got %q.%s", name, strings.Join(s.Enum, ", "), str, didYouMean(str, s.Enum))
			continue
		}
		out = append(out, str)
	}
	return out
}

// size decodes "WxH".
func (d *dec) size(name string, def Size) Size {
	v, a, ok := d.value(name)
	if !ok {
		return def
	}
	if v.Type() != cty.String {
		d.typeErr(a, `a string "WIDTHxHEIGHT" such as "1920x1080"`, v)
		return def
	}
	sz, msg := ParseSize(v.AsString())
	if msg != "" {
		d.l.errorf(a.Expr.Range(), "Invalid size", "%s", msg)
		return def
	}
	return sz
}

// ParseSize parses "1920x1080"; the message says what is wrong, or is "".
func ParseSize(s string) (Size, string) {
	w, h, ok := strings.Cut(strings.TrimSpace(s), "x")
	if !ok {
		return Size{}, fmt.Sprintf("%q is not a size; write \"WIDTHxHEIGHT\", e.g. \"1920x1080\".", s)
	}
	wi, err1 := strconv.Atoi(w)
	hi, err2 := strconv.Atoi(h)
	if err1 != nil || err2 != nil {
		return Size{}, fmt.Sprintf("%q is not a size; write \"WIDTHxHEIGHT\" in whole pixels, e.g. \"1920x1080\".", s)
	}
	if wi <= 0 || hi <= 0 || wi > value.MaxSide || hi > value.MaxSide {
		return Size{}, fmt.Sprintf("%q: width and height must be between 2 and %d (the picture_side limit).", s, value.MaxSide)
	}
	if wi%2 != 0 || hi%2 != 0 {
		return Size{}, fmt.Sprintf("%q: width and height must be even (4:2:0 chroma is subsampled by two).", s)
	}
	return Size{W: wi, H: hi}, ""
}

// rate decodes an exact frame rate.
func (d *dec) rate(name string, def Rational) Rational {
	v, a, ok := d.value(name)
	if !ok {
		return def
	}
	var text string
	switch v.Type() {
	case cty.String:
		text = v.AsString()
	case cty.Number:
		text = v.AsBigFloat().Text('f', -1)
	default:
		d.typeErr(a, `a frame rate such as "30" or "30000/1001"`, v)
		return def
	}
	r, msg := ParseRate(text)
	if msg != "" {
		d.l.errorf(a.Expr.Range(), "Invalid frame rate", "%s", msg)
		return def
	}
	return r
}

// ParseRate parses an exact frame rate: "30", "30000/1001". A decimal such
// as "29.97" is refused with the rational to write instead.
func ParseRate(s string) (Rational, string) {
	s = strings.TrimSpace(s)
	num, den, frac := strings.Cut(s, "/")
	if !frac {
		if strings.Contains(s, ".") {
			if f, err := strconv.ParseFloat(s, 64); err == nil {
				hint := ""
				for _, base := range []int64{24, 30, 60, 120} {
					if f > 0 && abs(f-float64(base)*1000/1001) < 0.01 {
						hint = fmt.Sprintf(" For NTSC rates write \"%d/1001\".", base*1000)
					}
				}
				if f == float64(int64(f)) && hint == "" {
					hint = fmt.Sprintf(" Write \"%d\".", int64(f))
				}
				return Rational{}, fmt.Sprintf("%q is not exact; a frame rate is a whole number or a fraction N/D.%s", s, hint)
			}
		}
		den = "1"
	}
	n, err1 := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	dd, err2 := strconv.ParseInt(strings.TrimSpace(den), 10, 64)
	if err1 != nil || err2 != nil {
		return Rational{}, fmt.Sprintf("%q is not a frame rate; write a whole number (\"30\") or a fraction (\"30000/1001\").", s)
	}
	if n <= 0 || dd <= 0 {
		return Rational{}, fmt.Sprintf("%q: a frame rate must be positive.", s)
	}
	g := new(big.Int).GCD(nil, nil, big.NewInt(n), big.NewInt(dd)).Int64()
	r := Rational{Num: n / g, Den: dd / g}
	if fps := float64(r.Num) / float64(r.Den); fps > 1000 || fps < 1 {
		return Rational{}, fmt.Sprintf("%q: a frame rate is between 1 and 1000 frames per second.", s)
	}
	return r, ""
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// rect decodes [x, y, w, h]; nil when absent or wrong.
func (d *dec) rect(name string) *Rect {
	v, a, ok := d.value(name)
	if !ok {
		return nil
	}
	ty := v.Type()
	if !(ty.IsTupleType() || ty.IsListType()) || v.LengthInt() != 4 {
		d.l.errorf(a.Expr.Range(), "Invalid rect", "%s must be a list of four whole numbers [x, y, width, height]; got %s.", name, showValue(v))
		return nil
	}
	var n [4]int
	for i := 0; i < 4; i++ {
		e := v.Index(cty.NumberIntVal(int64(i)))
		if !e.IsKnown() {
			return nil
		}
		if e.Type() == cty.String {
			if c, err := convert.Convert(e, cty.Number); err == nil {
				e = c
			}
		}
		x, whole := wholeNumber(e)
		if !whole {
			d.l.errorf(a.Expr.Range(), "Invalid rect", "%s must be four whole numbers [x, y, width, height]; element %d is %s.", name, i, showValue(e))
			return nil
		}
		n[i] = x
	}
	if n[2] <= 0 || n[3] <= 0 {
		d.l.errorf(a.Expr.Range(), "Invalid rect", "%s: width and height must be positive; got %dx%d.", name, n[2], n[3])
		return nil
	}
	return &Rect{X: n[0], Y: n[1], W: n[2], H: n[3]}
}

// path resolves a path relative to the show file's directory.
func (d *dec) path(name string) string {
	v, a, ok := d.value(name)
	if !ok {
		return ""
	}
	if v.Type() != cty.String {
		d.typeErr(a, "a path string", v)
		return ""
	}
	p := v.AsString()
	if p == "" {
		d.l.errorf(a.Expr.Range(), "Invalid path", "%s must not be empty.", name)
		return ""
	}
	if !filepath.IsAbs(p) {
		return filepath.Clean(filepath.Join(d.dir, p))
	}
	p = filepath.Clean(p)
	d.l.markWritten(p)
	return p
}

// ref decodes a reference to one instance of typ (source, scene or bus) and
// returns its address.
func (d *dec) ref(name, typ string) (string, bool) {
	v, a, ok := d.value(name)
	if !ok {
		return "", false
	}
	ty := v.Type()
	if ty.IsObjectType() && ty.HasAttribute("address") && ty.AttributeType("address") == cty.String {
		av := v.GetAttr("address")
		if !av.IsKnown() || av.IsNull() {
			return "", false
		}
		addr := av.AsString()
		if !strings.HasPrefix(addr, typ+".") {
			d.l.errorf(a.Expr.Range(), "Invalid reference", "%s takes a %s, but this refers to %s.", name, typ, addr)
			return "", false
		}
		return addr, true
	}
	switch {
	case ty.IsTupleType() || ty.IsListType() || ty.IsObjectType() || ty.IsMapType():
		d.l.errorf(a.Expr.Range(), "Invalid reference", "%s takes one %s instance, but this is a collection of %d; pick one, e.g. %s.NAME[0] or %s.NAME[\"key\"].", name, typ, v.LengthInt(), typ, typ)
	case ty == cty.String:
		d.l.errorf(a.Expr.Range(), "Invalid reference", "%s takes a reference such as %s.NAME, not the string %q; remove the quotes.", name, typ, v.AsString())
	default:
		d.l.errorf(a.Expr.Range(), "Invalid reference", "%s takes a reference such as %s.NAME; got %s.", name, typ, showValue(v))
	}
	return "", false
}

// routes decodes a list of source and scene references, each one instance
// or a whole block's instances (source.cam), into their addresses in the
// order written, each once.
func (d *dec) routes(name string) []string {
	v, a, ok := d.value(name)
	if !ok {
		return nil
	}
	if ty := v.Type(); !(ty.IsTupleType() || ty.IsListType()) {
		d.typeErr(a, "a list of source and scene references, e.g. [source.cam[1], scene.quad]", v)
		return nil
	}
	var out []string
	seen := map[string]bool{}
	var add func(e cty.Value, top bool)
	add = func(e cty.Value, top bool) {
		if !e.IsKnown() || e.IsNull() {
			return
		}
		ty := e.Type()
		if ty.IsObjectType() && ty.HasAttribute("address") && ty.AttributeType("address") == cty.String {
			av := e.GetAttr("address")
			if !av.IsKnown() || av.IsNull() {
				return
			}
			addr := av.AsString()
			switch {
			case !strings.HasPrefix(addr, "source.") && !strings.HasPrefix(addr, "scene."):
				d.l.errorf(a.Expr.Range(), "Invalid reference", "%s takes sources and scenes, but this list refers to %s.", name, addr)
			case seen[addr]:
				d.l.errorf(a.Expr.Range(), "Duplicate route", "%s names %s twice.", name, addr)
			default:
				seen[addr] = true
				out = append(out, addr)
			}
			return
		}
		if top && (ty.IsTupleType() || ty.IsListType() || ty.IsObjectType() || ty.IsMapType()) {
			for it := e.ElementIterator(); it.Next(); {
				_, x := it.Element()
				add(x, false)
			}
			return
		}
		d.l.errorf(a.Expr.Range(), "Invalid reference", "%s takes references such as source.NAME[0] or scene.NAME; got %s.", name, showValue(e))
	}
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		add(e, true)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (d *dec) colour() Colour {
	spec := d.spec.Block("colour")
	c := Colour{Primaries: "bt709", Transfer: "bt709", Matrix: "bt709", Range: "limited"}
	if spec == nil {
		return c
	}
	var blk *hcl.Block
	for _, b := range d.content.Blocks {
		if b.Type == "colour" {
			if blk != nil {
				d.l.errorf(b.DefRange, "Duplicate colour block", "A block has at most one colour block; the first is at %s.", blk.DefRange.String())
				continue
			}
			blk = b
		}
	}
	if blk == nil {
		return c
	}
	content := d.l.blockContent(blk, spec)
	cd := &dec{l: d.l, spec: spec, content: content, ctx: d.ctx, dir: d.dir, attrs: d.attrs}
	c.Primaries = cd.str("primaries")
	c.Transfer = cd.str("transfer")
	c.Matrix = cd.str("matrix")
	c.Range = cd.str("range")
	return c
}

// blockContent reads a nested block's body once per Load, however many
// instances share it.
func (l *loader) blockContent(blk *hcl.Block, spec *Block) *hcl.BodyContent {
	if c, ok := l.nested[blk]; ok {
		return c
	}
	c, diags := blk.Body.Content(spec.bodySchemaRequired())
	l.diags = append(l.diags, diags...)
	l.nested[blk] = c
	return c
}

// attrsFor returns the Attrs of a body: the range of every attribute
// written, and of a colour block and its attributes ("colour.range").
// Instances of one block share one map: the ranges are the same.
func (l *loader) attrsFor(content *hcl.BodyContent, spec *Block) Attrs {
	if content == nil {
		return Attrs{}
	}
	if a, ok := l.attrs[content]; ok {
		return a
	}
	a := make(Attrs, len(content.Attributes)+1)
	for name, at := range content.Attributes {
		a[name] = at.Range
	}
	for _, nested := range []string{"colour", "video", "audio"} {
		cs := spec.Block(nested)
		if cs == nil {
			continue
		}
		for _, b := range content.Blocks {
			if b.Type != nested {
				continue
			}
			a[nested] = b.DefRange
			for name, at := range l.blockContent(b, cs).Attributes {
				a[nested+"."+name] = at.Range
			}
			break
		}
	}
	l.attrs[content] = a
	return a
}

// exists reports whether a media file exists, asking the file system once
// per path (counted sources often share a few clips).
func (l *loader) exists(path string) bool {
	if ok, seen := l.statCache[path]; seen {
		return ok
	}
	_, err := os.Stat(path)
	l.statCache[path] = err == nil
	return err == nil
}

func (l *loader) showDefaults() (Size, Rational, PixelFormat) {
	return l.show.Size, l.show.FrameRate, l.show.Format
}

func (l *loader) evalShow(n *node) {
	ctx := l.ctxFor(n)
	s := l.show
	s.DeclRange = n.rng
	s.Attrs = l.attrsFor(n.content, n.spec)
	d := l.newDec(n.spec, n.content, ctx, n.dir, s.Attrs)
	s.Name = d.str("name")
	s.Size = d.size("size", Size{})
	s.FrameRate = d.rate("frame_rate", Rational{})
	s.Format = PixelFormat(d.str("format"))
	s.Profile = d.str("profile")
	s.Colour = d.colour()
}

func (l *loader) evalCanvas(n *node) {
	c := &l.show.Canvas
	c.DeclRange = n.rng
	l.decodeCanvas(l.newDec(n.spec, n.content, l.ctxFor(n), n.dir, l.attrsFor(n.content, n.spec)))
}

// decodeCanvas fills the canvas from d; with an empty body it applies the
// defaults.
func (l *loader) decodeCanvas(d *dec) {
	c := &l.show.Canvas
	c.Attrs = d.attrs
	c.Settings = value.Settings{}
	for _, a := range d.spec.Attrs {
		switch a.Type {
		case TypeInt:
			c.Settings[a.Name] = d.integer(a.Name)
		case TypeEnumList, TypeStringList:
			c.Settings[a.Name] = d.stringList(a.Name)
		case TypeBool:
			c.Settings[a.Name] = d.boolean(a.Name)
		default:
			c.Settings[a.Name] = d.str(a.Name)
		}
	}
	l.earlierCanvasKeys(d)
}

func (l *loader) decodeSource(n *node, ctx *hcl.EvalContext, key Key) *Source {
	s := &Source{Kind: n.spec.Kind, Name: n.name, Key: key, DeclRange: n.rng, Attrs: l.attrsFor(n.content, n.spec)}
	d := l.newDec(n.spec, n.content, ctx, n.dir, s.Attrs)
	size, rate, format := l.showDefaults()
	s.Size = d.size("size", size)
	s.FrameRate = d.rate("frame_rate", rate)
	s.Format = format
	if n.spec.Attr("format") != nil {
		if f := d.str("format"); f != "" {
			s.Format = PixelFormat(f)
		}
	}
	s.Colour = d.colour()
	switch s.Kind {
	case "hevc_file", "h264_file", "raw_file":
		s.Path = d.path("path")
		s.Loop = d.boolean("loop")
		s.OnError = d.str("on_error")
		if s.Path != "" {
			if !l.exists(s.Path) {
				n.missing = append(n.missing, s)
			}
		}
		if s.Kind != "raw_file" {
			s.Streams = d.integer("streams")
		}
	case "srt", "udp", "stream", "rtmp":
		s.OnError = d.str("on_error")
	case "browser":
		s.Socket = d.path("socket")
		s.Keying = d.str("key")
	case "test_pattern":
		s.Pattern = d.str("pattern")
	}
	s.Audio = d.sourceAudio()
	s.Extra = d.extra()
	return s
}

func (l *loader) decodeScene(n *node, ctx *hcl.EvalContext, key Key) *Scene {
	sc := &Scene{Name: n.name, Key: key, DeclRange: n.rng, Attrs: Attrs{}}
	if n.content != nil {
		for _, name := range []string{"count", "for_each"} {
			if a := n.content.Attributes[name]; a != nil {
				sc.Attrs[name] = a.Range
			}
		}
	}
	for _, it := range n.items {
		if it.dyn == nil {
			sc.Layers = append(sc.Layers, l.decodeLayer(n, it.layer.DefRange, it.content, ctx))
			continue
		}
		if l.tooBig {
			continue // the show is too large already: build no more
		}
		v, diags := it.forEach.Value(ctx)
		l.diags = append(l.diags, diags...)
		if diags.HasErrors() || !v.IsKnown() || !l.checkedExpr(v, it.forEach, it.forEach.Range()) {
			continue
		}
		ty := v.Type()
		if v.IsNull() || !(ty.IsCollectionType() || ty.IsTupleType() || ty.IsObjectType()) {
			l.errorf(it.forEach.Range(), "Invalid dynamic for_each value", "for_each of a dynamic block takes a list, set, map or object; got %s.", showValue(v))
			continue
		}
		if int64(v.LengthInt()) > l.lim[limitInstances] {
			l.errorf(it.forEach.Range(), "Invalid dynamic for_each value", "for_each has %d elements; at most %s layers are allowed (the %s limit).", v.LengthInt(), thousands(l.lim[limitInstances]), limitTable[limitInstances].Name)
			continue
		}
		if !l.spend(v.LengthInt(), l.bodyWeight(it.contentBlock), it.forEach.Range()) {
			continue
		}
		// One child context serves every iteration: a layer's expressions
		// are evaluated before the next iteration replaces the iterator.
		child := ctx.NewChild()
		child.Variables = map[string]cty.Value{}
		for iter := v.ElementIterator(); iter.Next(); {
			k, ev := iter.Element()
			if ty.IsSetType() {
				k = ev
			}
			child.Variables[it.iter] = cty.ObjectVal(map[string]cty.Value{"key": k, "value": ev})
			sc.Layers = append(sc.Layers, l.decodeLayer(n, it.dyn.DefRange, it.content, child))
		}
	}
	sort.SliceStable(sc.Layers, func(i, j int) bool { return sc.Layers[i].Z < sc.Layers[j].Z })
	return sc
}

func (l *loader) decodeLayer(n *node, rng hcl.Range, lc *hcl.BodyContent, ctx *hcl.EvalContext) *Layer {
	spec := n.spec.Block("layer")
	ly := &Layer{DeclRange: rng, Attrs: l.attrsFor(lc, spec)}
	d := l.newDec(spec, lc, ctx, n.dir, ly.Attrs)
	if addr, ok := d.ref("source", "source"); ok {
		ly.Source = l.srcByAddr[addr]
		if ly.Source == nil {
			l.errorf(lc.Attributes["source"].Expr.Range(), "Unknown reference", "There is no source instance %s.", addr)
		}
	}
	ly.Rect = Rect{W: l.show.Size.W, H: l.show.Size.H}
	if r := d.rect("rect"); r != nil {
		ly.Rect = *r
		// Against the canvas, once it has a size (an invalid one has its
		// own error).
		if err := value.CheckRect(l.show.Size, [4]int{r.X, r.Y, r.W, r.H}); err != nil && value.CheckSize(l.show.Size) == nil {
			l.errorf(lc.Attributes["rect"].Expr.Range(), "Rect out of bounds", "%v", err)
		}
	}
	ly.Fit = d.str("fit")
	ly.Crop = d.rect("crop")
	if c := ly.Crop; c != nil {
		src := l.show.Size
		if ly.Source != nil && ly.Source.Size.W > 0 {
			src = ly.Source.Size
		}
		if err := value.CheckCrop(src, [4]int{c.X, c.Y, c.W, c.H}); err != nil {
			l.errorf(lc.Attributes["crop"].Expr.Range(), "Crop out of bounds", "%v", err)
		}
	}
	ly.Opacity = d.number("opacity")
	ly.Z = d.integer("z")
	return ly
}

// sceneItem is one layer block, or one dynamic "layer" block, of a scene,
// read once when the scene is declared.
type sceneItem struct {
	layer        *hcl.Block       // a layer block; nil for a dynamic one
	content      *hcl.BodyContent // the layer's (or the dynamic content's) attributes
	dyn          *hcl.Block       // the dynamic block
	forEach      hcl.Expression
	iter         string     // the iterator's name
	contentBlock *hcl.Block // the dynamic block's content block
}

var sceneBodySchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "count"}, {Name: "for_each"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "layer"}, {Type: "dynamic", LabelNames: []string{"type"}}},
}

var dynamicBodySchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "for_each", Required: true}, {Name: "iterator"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "content"}},
}

// readScene reads a scene's body: count, for_each, and its layer and
// dynamic "layer" blocks in file order.
func (l *loader) readScene(n *node) {
	content, diags := n.block.Body.Content(sceneBodySchema)
	l.diags = append(l.diags, diags...)
	n.content = content
	spec := n.spec.Block("layer")
	for _, b := range content.Blocks {
		if b.Type == "layer" {
			lc, diags := b.Body.Content(spec.bodySchemaRequired())
			l.diags = append(l.diags, diags...)
			n.items = append(n.items, sceneItem{layer: b, content: lc})
			continue
		}
		if b.Labels[0] != "layer" {
			l.errorf(b.LabelRanges[0], "Unsupported dynamic block type", "A scene can generate only layer blocks; got %q.%s", b.Labels[0], didYouMean(b.Labels[0], []string{"layer"}))
			continue
		}
		dc, diags := b.Body.Content(dynamicBodySchema)
		l.diags = append(l.diags, diags...)
		if dc.Attributes["for_each"] == nil {
			continue
		}
		it := sceneItem{dyn: b, forEach: dc.Attributes["for_each"].Expr, iter: "layer"}
		if a := dc.Attributes["iterator"]; a != nil {
			t, diags := hcl.AbsTraversalForExpr(a.Expr)
			if diags.HasErrors() || len(t) != 1 {
				l.errorf(a.Expr.Range(), "Invalid dynamic iterator name", "iterator takes a bare name, e.g. iterator = cam.")
				continue
			}
			it.iter = t.RootName()
		}
		var cb *hcl.Block
		for _, c := range dc.Blocks {
			if cb != nil {
				l.errorf(c.DefRange, "Duplicate content block", "A dynamic block has one content block; the first is at %s.", cb.DefRange.String())
				continue
			}
			cb = c
		}
		if cb == nil {
			l.errorf(b.DefRange, "Missing content block", "A dynamic \"layer\" block needs a content { ... } block with the layer's attributes.")
			continue
		}
		lc, diags := cb.Body.Content(spec.bodySchemaRequired())
		l.diags = append(l.diags, diags...)
		it.content = lc
		it.contentBlock = cb
		n.items = append(n.items, it)
	}
}

func (l *loader) decodeBus(n *node, ctx *hcl.EvalContext, key Key) *Bus {
	b := &Bus{Kind: n.spec.Kind, Name: n.name, Key: key, DeclRange: n.rng, Attrs: l.attrsFor(n.content, n.spec)}
	d := l.newDec(n.spec, n.content, ctx, n.dir, b.Attrs)
	for _, group := range n.spec.OneOf {
		var set []string
		for _, name := range group {
			if n.content.Attributes[name] != nil {
				set = append(set, name)
			}
		}
		if len(set) != 1 {
			r := n.block.Body.MissingItemRange()
			if len(set) > 1 {
				r = n.content.Attributes[set[1]].Range
			}
			l.errorf(r, "Invalid combination of arguments", "An %s bus takes exactly one of %s; %d are set.", n.spec.Kind, strings.Join(group, " and "), len(set))
		}
	}
	if n.spec.Attr("scene") != nil {
		if addr, ok := d.ref("scene", "scene"); ok {
			b.Scene = l.sceneByAddr[addr]
		}
	}
	if n.spec.Attr("source") != nil {
		if addr, ok := d.ref("source", "source"); ok {
			b.Source = l.srcByAddr[addr]
		}
	}
	if n.spec.Attr("routes") != nil {
		for _, addr := range d.routes("routes") {
			if src := l.srcByAddr[addr]; src != nil {
				b.Routes = append(b.Routes, Route{Source: src})
			} else if sc := l.sceneByAddr[addr]; sc != nil {
				b.Routes = append(b.Routes, Route{Scene: sc})
			}
		}
	}
	b.Audio = d.busAudio()
	return b
}

func (l *loader) decodeOutput(n *node, ctx *hcl.EvalContext, key Key) *Output {
	o := &Output{Kind: n.spec.Kind, Name: n.name, Key: key, DeclRange: n.rng, Attrs: l.attrsFor(n.content, n.spec)}
	d := l.newDec(n.spec, n.content, ctx, n.dir, o.Attrs)
	if addr, ok := d.ref("bus", "bus"); ok {
		o.Bus = l.busByAddr[addr]
	}
	switch o.Kind {
	case "record":
		o.Path = d.path("path")
		if o.Path != "" && !strings.EqualFold(filepath.Ext(o.Path), ".y4m") {
			l.errorf(n.content.Attributes["path"].Expr.Range(), "Invalid path", "A record output writes Y4M; its path must end in .y4m (got %s).", o.Path)
		}
	case "ffmpeg":
		o.Args = d.stringList("args")
		o.Audio = d.boolean("audio")
	case "stream", "file", "hls":
		l.decodeDelivery(d, o)
	case "preview":
		o.IntervalMs = d.integer("interval_ms")
		o.Quality = d.integer("quality")
	}
	o.Extra = d.extra()
	return o
}

func (l *loader) decodeMoved(blk *hcl.Block) {
	spec := topBlock("moved")
	content, diags := blk.Body.Content(spec.bodySchemaRequired())
	l.diags = append(l.diags, diags...)
	m := &Moved{DeclRange: blk.DefRange}
	ok := true
	for _, name := range []string{"from", "to"} {
		a := content.Attributes[name]
		if a == nil {
			ok = false
			continue
		}
		t, diags := hcl.AbsTraversalForExpr(a.Expr)
		if diags.HasErrors() {
			l.errorf(a.Expr.Range(), "Invalid address", "%s must be an address such as source.cam or source.cam[3], written without quotes.", name)
			ok = false
			continue
		}
		root := t.RootName()
		if (root != "source" && root != "scene" && root != "bus" && root != "output") || len(t) < 2 || attrName(t[1]) == "" || len(t) > 3 {
			l.errorf(a.Expr.Range(), "Invalid address", "%s must address a source, scene, bus or output: source.NAME, source.NAME[0] or source.NAME[\"key\"].%s", name, didYouMean(root, []string{"source", "scene", "bus", "output"}))
			ok = false
			continue
		}
		if len(t) == 3 {
			if _, isIdx := t[2].(hcl.TraverseIndex); !isIdx {
				l.errorf(a.Expr.Range(), "Invalid address", "%s must be NAME, NAME[0] or NAME[\"key\"].", name)
				ok = false
				continue
			}
		}
		if name == "from" {
			m.From = traversalString(t)
		} else {
			m.To = traversalString(t)
		}
	}
	if ok && m.From == m.To {
		l.errorf(blk.DefRange, "Invalid moved block", "from and to are the same address, %s.", m.From)
		ok = false
	}
	if ok {
		l.show.Moved = append(l.show.Moved, m)
	}
}

// DefaultCanvas is the canvas of a show without a canvas block: every key
// at the default the schema declares.
func DefaultCanvas() Canvas {
	c := Canvas{Settings: value.Settings{}, Attrs: Attrs{}}
	for _, a := range topBlock("canvas").Attrs {
		c.Settings[a.Name] = a.Default
	}
	delete(c.Settings, earlierRingSize)
	return c
}
