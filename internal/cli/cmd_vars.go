package cli

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/onairhq/onair/lang"
)

// varFlags holds the -var and -var-file flags that every command reading a
// show accepts.
type varFlags struct {
	vars  map[string]string
	files []string
}

type varValue struct{ v *varFlags }

func (f varValue) String() string { return "" }
func (f varValue) Set(s string) error {
	name, val, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(name) == "" {
		return fmt.Errorf("-var takes NAME=VALUE, got %q", s)
	}
	f.v.vars[strings.TrimSpace(name)] = val
	return nil
}

type varFileValue struct{ v *varFlags }

func (f varFileValue) String() string { return "" }
func (f varFileValue) Set(s string) error {
	f.v.files = append(f.v.files, s)
	return nil
}

// addVarFlags registers the repeatable -var NAME=VALUE and -var-file FILE
// flags on fs.
func addVarFlags(fs *flag.FlagSet) *varFlags {
	v := &varFlags{vars: map[string]string{}}
	fs.Var(varValue{v}, "var", "set a variable: `NAME=VALUE` (repeatable; VALUE in HCL syntax for lists, maps and objects)")
	fs.Var(varFileValue{v}, "var-file", "read variable values from `FILE`: HCL NAME = VALUE lines, or one JSON object when it ends in .json (repeatable)")
	return v
}

// options returns the lang options for the flags given, with the process
// environment (ONAIR_VAR_NAME=VALUE).
func (v *varFlags) options() lang.Options {
	return lang.Options{Vars: v.vars, VarFiles: v.files, Env: os.Environ()}
}
