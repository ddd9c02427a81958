package command

import (
	"bytes"
	"strings"
	"testing"
)

// run runs the command line in process and returns its exit code, stdout and stderr.
func run(t testing.TB, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestVersion(t *testing.T) {
	code, out, _ := run(t, "", "version")
	if code != 0 || !strings.HasPrefix(out, "neardup ") {
		t.Fatalf("version: code %d, out %q", code, out)
	}
}

func TestUnknownFlagIsUsageError(t *testing.T) {
	code, _, errs := run(t, "", "version", "--no-such-flag")
	if code != 2 || !strings.Contains(errs, "no-such-flag") {
		t.Fatalf("got code %d, stderr %q; want 2 and a message naming the flag", code, errs)
	}
}

func TestUnknownCommand(t *testing.T) {
	code, _, errs := run(t, "", "no-such-command")
	if code != 2 || !strings.Contains(errs, "no-such-command") {
		t.Fatalf("got code %d, stderr %q; want 2 and a message naming the command", code, errs)
	}
}
