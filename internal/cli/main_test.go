package cli

import (
	"os"
	"testing"
)

// The commands are tested as a user runs them, from the repository root:
// paths in arguments and in expected diagnostics are relative to it.
func TestMain(m *testing.M) {
	if err := os.Chdir("../.."); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}
