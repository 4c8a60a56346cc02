package heraldclient_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsOnlyStdlibAndHeraldtype: a remote client must not drag in the
// engine's dependencies (the store drivers, Kafka, the providers). Its
// whole import graph is the standard library and heraldtype.
func TestImportsOnlyStdlibAndHeraldtype(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goBin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}",
		"github.com/heraldhq/herald/heraldclient").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	allowed := map[string]bool{
		"github.com/heraldhq/herald/heraldclient":    true,
		"github.com/heraldhq/herald/heraldtype":      true,
		"github.com/heraldhq/herald/internal/redact": true,
	}
	for _, p := range strings.Fields(string(out)) {
		if !allowed[p] {
			t.Errorf("heraldclient depends on %s; it may import only the standard library and heraldtype", p)
		}
	}
}
