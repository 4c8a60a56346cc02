package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/apitest"
)

// The documentation's walkthroughs run as written (issue 32 item 2). A
// ```sh block directly after a line `<!-- walkthrough -->` in README.md or
// a guide under docs/ is a walkthrough: TestWalkthroughs runs its
// commands, in order, against a real `herald serve --dev` on free ports —
// one server per file; a guide's walkthroughs run after the README's
// quick start, which they build on. What is checked, and what is not:
//
//   - every command runs: a curl must get a 2xx and a herald command must
//     exit 0, unless the block's `# → STATUS` says otherwise;
//   - a `# → STATUS {…}` comment (on the command's line or the lines after
//     it) checks the status and every "key":value pair of the comment whose
//     value is a plain string, number or boolean without "…": the answer
//     must hold that key with that value at some depth. Prose after the
//     arrow is for the reader and is not checked;
//   - a GET (a curl without -X or -d, or herald … list|get) whose check
//     fails is asked again until a deadline, as the work it shows is
//     asynchronous;
//   - a command holding "…" (an id the reader copies from an earlier
//     answer) and the `serve --dev &` line are not run; a VAR=$(…) line
//     must set VAR, which the later commands of the file then see;
//   - the documented addresses (localhost:8080, :8081, …) are rewritten to
//     the free ports the server was given, and `go run ./cmd/herald` and a
//     leading `herald` to the built binary.
//
// Blocks without the marker are not run: configuration excerpts, the
// providers' setup against `herald emulate …` (long-running processes on
// fixed ports),
// and JavaScript and Go snippets. A block that produces to Kafka needs
// kcat: without it the block is logged as not run, except on CI, where it
// fails (.ci/run installs kcat). The two-instance walkthrough of
// docs/operations.md runs as one script (TestScriptWalkthroughs).
func TestWalkthroughs(t *testing.T) {
	files, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{"../README.md"}, files...)
	readme := walkthroughs(t, "../README.md")
	if len(readme) == 0 {
		t.Fatal("README.md has no walkthrough (the quick start)")
	}
	total := 0
	for _, f := range files {
		blocks := walkthroughs(t, f)
		if len(blocks) == 0 {
			continue
		}
		total += len(blocks)
		t.Run(filepath.Base(f), func(t *testing.T) {
			s := startDevServer(t)
			if f != "../README.md" {
				s.run(t, "README.md quick start", readme[0])
			}
			for i, b := range blocks {
				s.run(t, fmt.Sprintf("%s block %d", filepath.Base(f), i+1), b)
			}
		})
	}
	t.Logf("ran %d walkthrough blocks", total)
}

// walkthroughs returns the text of every marked ```sh block of a file.
func walkthroughs(t *testing.T, path string) []string {
	t.Helper()
	return markedBlocks(t, path, "<!-- walkthrough -->")
}

// markedBlocks returns the text of every ```sh block of a file right after
// a line that is marker.
func markedBlocks(t *testing.T, path, marker string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	lines := strings.Split(string(raw), "\n")
	for i := 0; i+1 < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != marker {
			continue
		}
		if !strings.HasPrefix(lines[i+1], "```sh") {
			t.Errorf("%s:%d: a walkthrough marker not followed by a ```sh block", path, i+1)
			continue
		}
		var b []string
		for j := i + 2; j < len(lines) && !strings.HasPrefix(lines[j], "```"); j++ {
			b = append(b, lines[j])
		}
		blocks = append(blocks, strings.Join(b, "\n"))
	}
	return blocks
}

// step is one command of a walkthrough with what its comment expects.
type step struct {
	cmd, expect string
}

// steps splits a block into commands: a line ending in a backslash, a
// pipe or &&, or inside a single-quoted string, goes on; a comment holding "→" (and the
// comment lines right after it) is the expectation of the command before.
func steps(block string) []step {
	var out []step
	var cur strings.Builder
	inExpect := false
	for _, line := range strings.Split(block, "\n") {
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 && strings.HasPrefix(trimmed, "#") {
			if _, after, ok := strings.Cut(trimmed, "→"); ok && len(out) > 0 {
				out[len(out)-1].expect += after
				inExpect = true
			} else if inExpect && len(out) > 0 {
				out[len(out)-1].expect += strings.TrimPrefix(trimmed, "#")
			}
			continue
		}
		inExpect = false
		if trimmed == "" && cur.Len() == 0 {
			continue
		}
		cur.WriteString(line)
		cur.WriteString("\n")
		cmd, comment := splitComment(cur.String())
		// A command goes on past a line ending in a backslash, a pipe or
		// &&, or inside a single-quoted string.
		end := strings.TrimSpace(cmd)
		if strings.Count(cmd, "'")%2 == 1 || strings.HasSuffix(strings.TrimRight(line, " "), "\\") ||
			strings.HasSuffix(end, "|") || strings.HasSuffix(end, "&&") {
			continue
		}
		st := step{cmd: strings.TrimSpace(cmd)}
		if _, after, ok := strings.Cut(comment, "→"); ok {
			st.expect = after
			inExpect = true
		}
		out = append(out, st)
		cur.Reset()
	}
	return out
}

// splitComment cuts a shell line's trailing comment: a # after a space,
// outside quotes.
func splitComment(s string) (cmd, comment string) {
	var quote byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote == '"' && c == '\\':
			i++ // an escaped character inside double quotes
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			return s[:i], s[i+1:]
		}
	}
	return s, ""
}

// devServer is a `herald serve --dev` process and the addresses it took.
type devServer struct {
	bin string
	// dir is where the commands run, so a file a guide writes (curl -o)
	// lands in the test's temporary directory, not in the repository.
	dir     string
	rewrite *strings.Replacer
	env     []string
	mu      sync.Mutex
	logs    []string
}

// devPorts are the documented addresses of serve --dev's listeners, by
// the emulator name (or "api", "kafka", "schema_registry") in its log.
var devPorts = map[string]string{"api": "8080", "fcm": "8081", "webpush": "8082", "twilio": "8083", "smtp_http": "8084",
	"schema_registry": "8085", "recommend": "8086", "webhook": "8087", "apns": "8443", "smtp": "2525", "kafka": "9092"}

func startDevServer(t *testing.T) *devServer {
	t.Helper()
	bin := heraldBinary(t)
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
	s := &devServer{bin: bin, dir: t.TempDir()}
	addrs := map[string]string{}
	ready := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			s.mu.Lock()
			s.logs = append(s.logs, sc.Text())
			s.mu.Unlock()
			var l struct{ Msg, Addr, Emulator, URL, Brokers, Schema_registry string }
			if json.Unmarshal(sc.Bytes(), &l) != nil {
				continue
			}
			switch {
			case l.Msg == "dev mode: emulator started":
				addrs[l.Emulator] = l.URL
				if l.Emulator == "smtp" {
					var h struct{ Messages string }
					json.Unmarshal(sc.Bytes(), &h)
					addrs["smtp_http"] = strings.TrimSuffix(h.Messages, "/emulator/messages")
				}
			case strings.HasPrefix(l.Msg, "dev mode: Kafka broker started"):
				addrs["kafka"], addrs["schema_registry"] = l.Brokers, l.Schema_registry
			case l.Msg == "herald listening":
				addrs["api"] = l.Addr
				close(ready)
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
	})
	select {
	case <-ready:
	case <-done:
		t.Fatalf("serve --dev exited:\n%s", s.tail())
	case <-time.After(60 * time.Second):
		t.Fatalf("serve --dev did not listen within 60 s:\n%s", s.tail())
	}
	// The guides' requests reach the server through a proxy that checks
	// every exchange against the API's contract (api/openapi.yaml): a
	// documented example the document does not describe fails here.
	addrs["api"] = contractProxy(t, addrs["api"])
	var pairs []string
	for name, port := range devPorts {
		hostPort := regexp.MustCompile(`^[a-z]+://`).ReplaceAllString(addrs[name], "")
		if hostPort == "" {
			t.Fatalf("no address for %s in the start-up log:\n%s", name, s.tail())
		}
		pairs = append(pairs, "localhost:"+port, hostPort, "127.0.0.1:"+port, hostPort)
	}
	pairs = append(pairs, "go run ./cmd/herald ", bin+" ")
	s.rewrite = strings.NewReplacer(pairs...)
	s.env = append(os.Environ(), "HERALD_SERVER="+addrs["api"])
	return s
}

// contractProxy starts a reverse proxy to the API at addr whose every
// exchange passes through the contract's validator, and returns its URL.
func contractProxy(t *testing.T, addr string) string {
	t.Helper()
	target, err := url.Parse(addr)
	if err != nil || target.Host == "" {
		target, err = url.Parse("http://" + addr)
	}
	if err != nil {
		t.Fatal(err)
	}
	p := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target); r.Out.Host = r.In.Host },
		Transport:     apitest.Transport(t, nil),
		FlushInterval: -1, // the inbox stream flows as it is written
	}
	ts := httptest.NewServer(p)
	t.Cleanup(ts.Close)
	return ts.URL
}

func (s *devServer) tail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.logs[max(0, len(s.logs)-30):], "\n")
}

// run runs a walkthrough block's commands in order and checks each.
func (s *devServer) run(t *testing.T, where, block string) {
	t.Helper()
	if strings.Contains(block, "kcat ") && !haveKcat(t) {
		t.Logf("%s: not run: it produces with kcat, which is not installed (apt-get install kcat)", where)
		return
	}
	for _, st := range steps(block) {
		if strings.Contains(st.cmd, "…") || strings.HasSuffix(st.cmd, "serve --dev &") {
			continue
		}
		cmd := s.rewrite.Replace(st.cmd)
		if strings.HasPrefix(cmd, "herald ") {
			cmd = s.bin + strings.TrimPrefix(cmd, "herald")
		}
		// A curl piped into another command is judged by the pipeline's exit
		// status alone.
		isCurl := strings.HasPrefix(cmd, "curl ") && !strings.Contains(cmd, " | ")
		if isCurl {
			cmd = "curl -sS -w '\\n%{http_code}' " + strings.TrimPrefix(cmd, "curl ")
		}
		if m := assignment.FindStringSubmatch(cmd); m != nil {
			// VAR=$(…): run it once and keep $VAR for the later commands.
			out, _, err := s.exec(cmd+`; printf '%s' "$`+m[1]+`"`, false)
			if err != nil || out == "" {
				t.Errorf("%s: %s\n  set nothing: %v %s", where, st.cmd, err, out)
				return
			}
			s.env = append(s.env, m[1]+"="+out)
			continue
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			out, code, err := s.exec(cmd, isCurl)
			problem := check(st.expect, out, code, err, isCurl)
			if problem == "" {
				break
			}
			if !isRead(st.cmd) || time.Now().After(deadline) {
				t.Errorf("%s: %s\n  ran: %s\n  %s\n  output: %s", where, st.cmd, cmd, problem, out)
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// exec runs one command with bash; for a curl, code is the HTTP status it
// printed last.
func (s *devServer) exec(cmd string, isCurl bool) (out string, code int, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, "bash", "-c", cmd)
	c.Env, c.Dir = s.env, s.dir
	var buf bytes.Buffer
	c.Stdout, c.Stderr = &buf, &buf
	err = c.Run()
	out = buf.String()
	if i := strings.LastIndexByte(out, '\n'); isCurl && i >= 0 {
		fmt.Sscan(out[i+1:], &code)
		out = out[:i]
	}
	return out, code, err
}

// isRead reports a command that only reads, which may be asked again.
func isRead(cmd string) bool {
	if strings.HasPrefix(cmd, "curl ") {
		return !strings.Contains(cmd, " -X ") && !strings.Contains(cmd, " -d ")
	}
	return regexp.MustCompile(`herald \w+ (list|get)\b`).MatchString(cmd)
}

var (
	assignment   = regexp.MustCompile(`^([A-Z_]+)=\$\(`)
	expectStatus = regexp.MustCompile(`^\s*([1-5]\d\d)\b`)
	expectPair   = regexp.MustCompile(`"([A-Za-z_]+)":("[^"…]*"|-?\d+(?:\.\d+)?\b|true|false)`)
)

// check compares a command's outcome with its expectation; "" if it
// holds.
func check(expect, out string, code int, err error, isCurl bool) string {
	want := 0
	if m := expectStatus.FindStringSubmatch(expect); m != nil {
		fmt.Sscan(m[1], &want)
	}
	switch {
	case isCurl && err != nil:
		return fmt.Sprintf("curl failed: %v", err)
	case isCurl && want != 0 && code != want:
		return fmt.Sprintf("status %d, the docs say %d", code, want)
	case isCurl && want == 0 && code/100 != 2:
		return fmt.Sprintf("status %d, the docs imply success", code)
	case !isCurl && err != nil:
		return fmt.Sprintf("failed: %v", err)
	}
	var answer any
	if json.Unmarshal([]byte(out), &answer) != nil {
		return ""
	}
	for _, m := range expectPair.FindAllStringSubmatch(expect, -1) {
		var v any
		if json.Unmarshal([]byte(m[2]), &v) != nil {
			continue
		}
		if !holds(answer, m[1], v) {
			return fmt.Sprintf("the answer lacks %q:%s", m[1], m[2])
		}
	}
	return ""
}

// holds reports whether v holds key with value want at some depth.
func holds(v any, key string, want any) bool {
	switch x := v.(type) {
	case map[string]any:
		if got, ok := x[key]; ok && fmt.Sprint(got) == fmt.Sprint(want) {
			return true
		}
		for _, e := range x {
			if holds(e, key, want) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if holds(e, key, want) {
				return true
			}
		}
	}
	return false
}
