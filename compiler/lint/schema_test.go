package lint_test

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"reflect"
	"sort"
	"strings"
)

// A validator for the subset of JSON Schema (draft 7) the hand-written
// SARIF subset schema in testdata uses. It refuses any keyword it does not
// implement, so the schema cannot silently ask for more than is checked.

var schemaKeywords = map[string]bool{
	"$comment": true, "$ref": true, "definitions": true, "type": true, "required": true,
	"properties": true, "items": true, "enum": true, "anyOf": true, "minimum": true,
	"maximum": true, "minLength": true, "uniqueItems": true, "format": true,
}

type validator struct {
	root map[string]any
	errs []string
}

func validateSchema(schema, doc []byte) ([]string, error) {
	var root map[string]any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, fmt.Errorf("schema: %v", err)
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(string(doc)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("document: %v", err)
	}
	val := &validator{root: root}
	if err := val.check(root, v, "$"); err != nil {
		return nil, err
	}
	return val.errs, nil
}

func (val *validator) fail(path, format string, args ...any) {
	val.errs = append(val.errs, path+": "+fmt.Sprintf(format, args...))
}

func (val *validator) check(s map[string]any, v any, path string) error {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !schemaKeywords[k] {
			return fmt.Errorf("schema keyword %q at %s is not supported by the test validator", k, path)
		}
	}
	if ref, ok := s["$ref"].(string); ok {
		name, ok := strings.CutPrefix(ref, "#/definitions/")
		defs, _ := val.root["definitions"].(map[string]any)
		sub, found := defs[name].(map[string]any)
		if !ok || !found {
			return fmt.Errorf("unresolvable $ref %q at %s", ref, path)
		}
		if err := val.check(sub, v, path); err != nil {
			return err
		}
	}
	if t, ok := s["type"].(string); ok && !hasType(v, t) {
		val.fail(path, "is %s, want %s", typeName(v), t)
		return nil
	}
	if e, ok := s["enum"].([]any); ok {
		found := false
		for _, x := range e {
			if fmt.Sprint(x) == fmt.Sprint(v) && typeName(v) == typeName(x) {
				found = true
			}
		}
		if !found {
			val.fail(path, "%v is not one of %v", v, e)
		}
	}
	if n, ok := v.(json.Number); ok {
		f, _ := n.Float64()
		if m, ok := s["minimum"].(float64); ok && f < m {
			val.fail(path, "%v is below the minimum %v", f, m)
		}
		if m, ok := s["maximum"].(float64); ok && f > m {
			val.fail(path, "%v is above the maximum %v", f, m)
		}
	}
	if str, ok := v.(string); ok {
		if m, ok := s["minLength"].(float64); ok && float64(len([]rune(str))) < m {
			val.fail(path, "shorter than %v", m)
		}
		if f, ok := s["format"].(string); ok {
			if f != "uri-reference" {
				return fmt.Errorf("format %q at %s is not supported by the test validator", f, path)
			}
			if _, err := url.Parse(str); err != nil || strings.ContainsAny(str, " \\") {
				val.fail(path, "%q is not a URI reference", str)
			}
		}
	}
	if obj, ok := v.(map[string]any); ok {
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if _, has := obj[r.(string)]; !has {
					val.fail(path, "missing required property %q", r)
				}
			}
		}
		if props, ok := s["properties"].(map[string]any); ok {
			names := make([]string, 0, len(obj))
			for k := range obj {
				names = append(names, k)
			}
			sort.Strings(names)
			for _, k := range names {
				if sub, ok := props[k].(map[string]any); ok {
					if err := val.check(sub, obj[k], path+"."+k); err != nil {
						return err
					}
				}
			}
		}
	}
	if arr, ok := v.([]any); ok {
		if items, ok := s["items"].(map[string]any); ok {
			for i, x := range arr {
				if err := val.check(items, x, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
		if u, ok := s["uniqueItems"].(bool); ok && u {
			for i := range arr {
				for j := i + 1; j < len(arr); j++ {
					if reflect.DeepEqual(arr[i], arr[j]) {
						val.fail(path, "items %d and %d are equal", i, j)
					}
				}
			}
		}
	}
	if alts, ok := s["anyOf"].([]any); ok {
		okOne := false
		for _, alt := range alts {
			sub := &validator{root: val.root}
			if err := sub.check(alt.(map[string]any), v, path); err != nil {
				return err
			}
			if len(sub.errs) == 0 {
				okOne = true
				break
			}
		}
		if !okOne {
			val.fail(path, "matches none of anyOf")
		}
	}
	return nil
}

func hasType(v any, t string) bool {
	switch t {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		f, err := n.Float64()
		return err == nil && f == math.Trunc(f) && !strings.ContainsAny(n.String(), ".eE")
	}
	return false
}

func typeName(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}
