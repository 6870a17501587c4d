package lint_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// validateSchema validates doc against schema (JSON Schema of any draft
// the schema names; the official SARIF 2.1.0 schema is draft 4), with
// formats asserted, and returns one line per failed keyword: where in the
// document, and why.
func validateSchema(schema, doc []byte) ([]string, error) {
	s, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("schema: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("schema.json", s); err != nil {
		return nil, fmt.Errorf("schema: %v", err)
	}
	sch, err := c.Compile("schema.json")
	if err != nil {
		return nil, fmt.Errorf("schema: %v", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("document: %v", err)
	}
	err = sch.Validate(v)
	var ve *jsonschema.ValidationError
	if err == nil {
		return nil, nil
	}
	if !errors.As(err, &ve) {
		return nil, err
	}
	// One line per failed keyword, each naming the document's location
	// and what was wanted there.
	var out []string
	for _, l := range strings.Split(ve.Error(), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "jsonschema validation failed") {
			out = append(out, l)
		}
	}
	return out, nil
}
