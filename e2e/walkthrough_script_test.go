package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heraldhq/herald/store/postgres/pgtest"
)

// A walkthrough that runs long-lived processes of its own (`herald serve &`,
// `herald emulate … &`) is marked `<!-- walkthrough: script -->` and runs
// as one bash script, as a reader pasting it would run it (issue 32 item 2):
// the two-instance walkthrough of docs/operations.md — two `herald serve`
// on one PostgreSQL database sharing one Kafka broker. Its fixed ports are
// rewritten to free ones and its database name to one of the test's own;
// the script must exit 0 and its output must show what its `# →` comments
// say.
func TestScriptWalkthroughs(t *testing.T) {
	needKcat(t)
	if pgtest.DSN(t) != pgtest.DefaultDSN {
		t.Skip("the two-instance walkthrough uses the local PostgreSQL (127.0.0.1:5432, user postgres) as written")
	}
	files, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, f := range files {
		for i, block := range markedBlocks(t, f, "<!-- walkthrough: script -->") {
			ran++
			t.Run(fmt.Sprintf("%s block %d", filepath.Base(f), i+1), func(t *testing.T) {
				runScript(t, block)
			})
		}
	}
	if ran == 0 {
		t.Fatal("no script walkthrough found (docs/operations.md has the two-instance one)")
	}
}

// needKcat makes sure kcat, the Kafka producer the walkthroughs use, is
// on PATH: on CI its absence fails the test (.ci/run installs it), on a
// developer's machine it skips, saying so.
func needKcat(t *testing.T) {
	t.Helper()
	if !haveKcat(t) {
		t.Skip("kcat is not installed (apt-get install kcat): the Kafka walkthroughs are not run")
	}
}

// haveKcat reports whether kcat is on PATH; on CI its absence is a failure.
func haveKcat(t *testing.T) bool {
	t.Helper()
	if _, err := exec.LookPath("kcat"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("kcat is not installed (apt-get install kcat; .ci/run installs it): CI must run the Kafka walkthroughs")
		}
		return false
	}
	return true
}

var scriptPorts = regexp.MustCompile(`(localhost|127\.0\.0\.1):(8080|8081|8090|9092)\b`)

func runScript(t *testing.T, block string) {
	bin := heraldBinary(t)
	binDir := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(binDir, "herald")); err != nil {
		t.Fatal(err)
	}
	ports := map[string]string{}
	script := scriptPorts.ReplaceAllStringFunc(block, func(m string) string {
		host, port, _ := strings.Cut(m, ":")
		if ports[port] == "" {
			ports[port] = freePort(t)
		}
		return host + ":" + ports[port]
	})
	// The walkthrough's database, on the server the tests use.
	db := fmt.Sprintf("herald_walk_%d", time.Now().UnixNano())
	script = strings.ReplaceAll(script, "herald_demo", db)
	t.Cleanup(func() { exec.Command("dropdb", "--if-exists", "-h", "127.0.0.1", "-U", "postgres", db).Run() })

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "PATH="+binDir+":"+os.Getenv("PATH"), "HERALD_DATABASE_MAX_CONNS=4")
	// The script's background jobs share its process group; whatever is
	// left of them when it ends or fails is stopped with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	logs := ""
	for _, l := range []string{"a.log", "b.log"} {
		b, _ := os.ReadFile(filepath.Join(cmd.Dir, l))
		logs += fmt.Sprintf("--- %s (last lines)\n%s\n", l, lastLines(string(b), 15))
	}
	if err != nil {
		t.Fatalf("the script failed: %v\n%s\n%s", err, out.String(), logs)
	}
	for _, st := range steps(block) {
		for _, m := range expectPair.FindAllStringSubmatch(st.expect, -1) {
			if !strings.Contains(out.String(), `"`+m[1]+`":`+m[2]) {
				t.Errorf("the output lacks %q:%s (%s)\n%s\n%s", m[1], m[2], st.cmd, out.String(), logs)
			}
		}
	}
}

// freePort is a loopback port nobody listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
