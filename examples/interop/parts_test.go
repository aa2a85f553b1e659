package interop_test

import (
	"flag"
	"os"
)

// mustRun reports whether a test that lacks an outside part (Node.js
// packages, Chromium, oidc-provider, the Inspector) fails instead of
// skipping: under CI=true (.ci/run installs every part), and when the run
// asked for artifacts (go test -artifacts: the sign-in screenshots), which
// a skipped test would not write while go test still printed ok.
func mustRun() bool {
	return os.Getenv("CI") == "true" || artifactsRequested()
}

// mustRunReason starts the failure message of mustRun.
func mustRunReason() string {
	if os.Getenv("CI") == "true" {
		return "CI=true: "
	}
	return "-artifacts asks for this test's screenshots, but it cannot run: "
}

func artifactsRequested() bool {
	f := flag.Lookup("test.artifacts")
	return f != nil && f.Value.String() == "true"
}
