package nodes

import (
	"encoding"
	"fmt"
	"github.com/onairhq/onair/internal/value"
	"reflect"
)

// Decode fills dst, a pointer to a struct whose fields are tagged
// `param:"name"`, from a node's params by the kind's declarations: each
// field gets its param's value, or the declared default when the param is
// absent. A value of the wrong type or out of range is an error naming the
// kind and the param. Field types follow the param types: int for Int,
// string for String, Enum and Rational, bool for Bool, []string for
// Strings; a field whose type reads text (encoding.TextUnmarshaler, such as
// value.Colour) reads a String param, and its error is Decode's. A tag naming no declared param is an error: the struct and the
// registry disagree.
//
// Values may come from the compiler (int, []string) or from a saved plan's
// JSON (float64, []any): Decode reads both the same way, so a node reads
// its params once, typed, whatever made its plan.
func Decode(kind string, params map[string]any, dst any) error {
	k, ok := Lookup(kind)
	if !ok {
		return fmt.Errorf("no node kind %q", kind)
	}
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("nodes.Decode(%s): want a pointer to a struct, got %T", kind, dst)
	}
	sv := rv.Elem()
	st := sv.Type()
	for i := 0; i < st.NumField(); i++ {
		name := st.Field(i).Tag.Get("param")
		if name == "" {
			continue
		}
		p, ok := k.Param(name)
		if !ok {
			return fmt.Errorf("%s has no param %q (field %s of %s)", kind, name, st.Field(i).Name, st)
		}
		v, given := params[name]
		if !given || v == nil {
			v = p.Default
		}
		if v == nil {
			continue // optional, no default: the zero value
		}
		if n, err := value.Normalize(v); err == nil {
			v = n
		}
		if err := p.Check(v); err != nil {
			return fmt.Errorf("%s: %v", kind, err)
		}
		f := sv.Field(i)
		if u, ok := f.Addr().Interface().(encoding.TextUnmarshaler); ok {
			// A typed value spelt as text (a colour, a size, a rate): read
			// here, so a malformed one is an error where it is read.
			text, isText := v.(string)
			if !isText {
				return fmt.Errorf("%s: param %s is %s, field %s of %s reads text", kind, name, p.Type, st.Field(i).Name, st)
			}
			if err := u.UnmarshalText([]byte(text)); err != nil {
				return fmt.Errorf("%s: param %s: %v", kind, name, err)
			}
			continue
		}
		val := reflect.ValueOf(v)
		if !val.Type().AssignableTo(f.Type()) {
			return fmt.Errorf("%s: param %s is %s, field %s of %s is %s", kind, name, p.Type, st.Field(i).Name, st, f.Type())
		}
		f.Set(val)
	}
	return nil
}
