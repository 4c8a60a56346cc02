package compat

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// nodeDir holds the npm packages of the OpenAPI linter and of the
// TypeScript client (package.json, pinned by package-lock.json).
const nodeDir = "node"

// minNode is the oldest Node the pinned packages run on (package.json's
// engines: Redocly CLI 1.34 needs 18.17, which Debian 12's nodejs meets).
var minNode = [3]int{18, 17, 0}

var (
	npmCIOnce sync.Once
	npmCIErr  error
)

// needNode skips the test when Node or npm is missing or too old — or, with
// CI=true, fails it — and installs compat/node's packages with `npm ci` when
// node_modules is missing.
func needNode(t *testing.T, what string) {
	t.Helper()
	missing := func(why string) {
		t.Helper()
		install := fmt.Sprintf("apt-get install nodejs npm; Node %d.%d or later", minNode[0], minNode[1])
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true: %s must run, but %s (%s)", what, why, install)
		}
		t.Skipf("%s was skipped because %s (%s)", what, why, install)
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing("Node is not installed (no node on PATH)")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		missing("Node is not installed (no npm on PATH)")
	}
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		missing(fmt.Sprintf("node --version failed: %v", err))
	}
	if v := strings.TrimSpace(string(out)); !atLeast(v, minNode) {
		missing(fmt.Sprintf("Node %s is too old", v))
	}
	npmCIOnce.Do(func() {
		if _, err := os.Stat(filepath.Join(nodeDir, "node_modules")); err == nil {
			return
		}
		t.Logf("compat/node/node_modules is missing: running npm ci (installs package-lock.json's versions from the npm registry)")
		cmd := npmCommand("ci", "--no-audit", "--no-fund")
		if out, err := cmd.CombinedOutput(); err != nil {
			npmCIErr = fmt.Errorf("npm ci in compat/node: %v\n%s", err, out)
		}
	})
	if npmCIErr != nil {
		t.Fatal(npmCIErr)
	}
}

// atLeast reports whether a "v20.19.2" version is min or later.
func atLeast(v string, min [3]int) bool {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	for i := range min {
		n := 0
		if i < len(parts) {
			n, _ = strconv.Atoi(parts[i])
		}
		if n != min[i] {
			return n > min[i]
		}
	}
	return true
}

// npmCommand is `npm args…` in compat/node, quiet and offline apart from
// npm ci: no update check, no audit, no telemetry.
func npmCommand(args ...string) *exec.Cmd {
	cmd := exec.Command("npm", args...)
	cmd.Dir = nodeDir
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false",
		"REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true", "NO_COLOR=1")
	return cmd
}

// npmRun runs a package.json script and fails the test with its output
// when it fails.
func npmRun(t *testing.T, env []string, script string, args ...string) string {
	t.Helper()
	cmd := npmCommand(append([]string{"run", "--silent", script, "--"}, args...)...)
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("npm run %s: %v\n%s%s", script, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// TestOpenAPILint lints api/openapi.yaml with Redocly CLI's recommended
// ruleset (compat/node/redocly.yaml says which rules are relaxed, and
// why): an error fails the test; warnings are listed by rule.
func TestOpenAPILint(t *testing.T) {
	needNode(t, "the OpenAPI lint (Redocly CLI)")
	cmd := npmCommand("run", "--silent", "lint", "--", "--format=json", "--max-problems=10000")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run() // exits 1 when there are errors; the report says which
	var report struct {
		Totals   struct{ Errors, Warnings, Ignored int }
		Problems []struct {
			RuleID   string `json:"ruleId"`
			Severity string
			Message  string
			Location []struct {
				Pointer string
				Start   struct{ Line, Col int }
			}
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &report); err != nil {
		t.Fatalf("redocly lint: %v (exit: %v): not a JSON report: %v\n%s%s", err, runErr, err, stdout.String(), stderr.String())
	}
	counts := map[string]int{}
	for _, p := range report.Problems {
		counts[p.Severity+" "+p.RuleID]++
		if p.Severity == "error" {
			where := ""
			if len(p.Location) > 0 {
				where = fmt.Sprintf("api/openapi.yaml:%d:%d %s: ", p.Location[0].Start.Line, p.Location[0].Start.Col, p.Location[0].Pointer)
			}
			t.Errorf("%s%s (%s)", where, p.Message, p.RuleID)
		}
	}
	var lines []string
	for k, n := range counts {
		lines = append(lines, fmt.Sprintf("%s: %d", k, n))
	}
	sort.Strings(lines)
	t.Logf("redocly lint: %d errors, %d warnings\n%s", report.Totals.Errors, report.Totals.Warnings, strings.Join(lines, "\n"))
	if runErr != nil && report.Totals.Errors == 0 {
		t.Fatalf("redocly lint: %v with no error in its report\n%s", runErr, stderr.String())
	}
}

// TestTypeScriptClient generates TypeScript types from api/openapi.yaml
// with openapi-typescript, typechecks and compiles node/smoke.ts against
// them (tsc, strict), and runs it with Node against a real `herald serve
// --dev`: the document is enough to write a working client in another
// language.
func TestTypeScriptClient(t *testing.T) {
	needNode(t, "the TypeScript client test")
	npmRun(t, nil, "gen")
	npmRun(t, nil, "build")

	addr := startDevServer(t)
	out := npmRun(t, []string{"HERALD_URL=" + addr}, "smoke")
	t.Log(strings.TrimSpace(out))
}

// startDevServer builds cmd/herald and starts `herald serve --dev` (no
// configuration, an embedded SQLite database, the emulators) with every
// listener on a free port; it answers the API's base URL.
func startDevServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "herald")
	build := exec.Command("go", "build", "-o", bin, "./cmd/herald")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/herald: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "serve", "--dev", "--listen", "127.0.0.1:0", "--emulator-addr", "127.0.0.1:0",
		"--database", filepath.Join(t.TempDir(), "herald.db"))
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "HERALD_DEV__APNS_ADDR=127.0.0.1:0", "HERALD_DEV__WEBPUSH_ADDR=127.0.0.1:0",
		"HERALD_DEV__TWILIO_ADDR=127.0.0.1:0", "HERALD_DEV__SMTP_ADDR=127.0.0.1:0", "HERALD_DEV__SMTP_HTTP_ADDR=127.0.0.1:0",
		"HERALD_DEV__RECOMMEND_ADDR=127.0.0.1:0", "HERALD_DEV__KAFKA_ADDR=127.0.0.1:0",
		"HERALD_DEV__SCHEMA_REGISTRY_ADDR=127.0.0.1:0", "HERALD_DEV__WEBHOOK_ADDR=127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		logs []string
	)
	tail := func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(logs[max(0, len(logs)-30):], "\n")
	}
	addrc := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			mu.Lock()
			logs = append(logs, sc.Text())
			mu.Unlock()
			var l struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "herald listening" {
				select {
				case addrc <- l.Addr:
				default:
				}
			}
		}
		cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("serve --dev's last log lines:\n%s", tail())
		}
	})
	select {
	case addr := <-addrc:
		if !strings.Contains(addr, "://") {
			addr = "http://" + addr
		}
		return addr
	case <-done:
		t.Fatalf("serve --dev exited:\n%s", tail())
	case <-time.After(60 * time.Second):
		t.Fatalf("serve --dev did not listen within 60 s:\n%s", tail())
	}
	return ""
}
