package cli

import (
	"encoding/json"
	"os"
	"testing"
)

// The commands are tested as a user runs them, from the repository root:
// paths in arguments and in expected diagnostics are relative to it.
//
// With ONAIR_TEST_RUN set (a JSON array of arguments), the test binary is
// onair itself, run with those arguments: the child process of a test that
// must kill a running show (TestAsRunLinesSurviveAKill).
func TestMain(m *testing.M) {
	if err := os.Chdir("../.."); err != nil {
		panic(err)
	}
	if a := os.Getenv("ONAIR_TEST_RUN"); a != "" {
		var args []string
		if err := json.Unmarshal([]byte(a), &args); err != nil {
			panic(err)
		}
		os.Exit(run(args, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
