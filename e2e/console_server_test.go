package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fcmemu "github.com/heraldhq/herald/emulator/fcm"
	"github.com/heraldhq/herald/heraldclient"
	"github.com/heraldhq/herald/internal/apitest"
)

// consoleServer is a production `herald serve` (not --dev: the console
// asks for a key) on a SQLite file, pushing to an FCM emulator in the test
// process, with an admin key and, when the build knows the scope, a
// read-only console key. extraEnv adds to (or overrides) its
// environment.
type consoleServer struct {
	in         *instance
	em         *fcmemu.Emulator
	api        *heraldclient.Client // the admin key, every exchange held to the API's contract
	adminKey   string
	consoleKey string
	// noConsoleKey says why there is no console key ("" when there is).
	noConsoleKey string
}

func startConsoleServer(t *testing.T, extraEnv ...string) *consoleServer {
	t.Helper()
	em := fcmemu.New(fcmemu.Config{Seed: 7})
	if _, err := em.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { em.Close() })
	env := []string{
		"HERALD_DATABASE_URL=" + filepath.Join(t.TempDir(), "herald.db"),
		"HERALD_FCM__CREDENTIALS_JSON=" + string(em.ServiceAccountJSON("console")),
		"HERALD_FCM__ENDPOINT=" + em.URL(),
		"HERALD_LOG__LEVEL=info",
		// The overview's live region refreshes every second, so the test
		// sees a change soon after it happens.
		"HERALD_CONSOLE__REFRESH=1s",
		// The worker adds its counts to the overview's chart every second,
		// so the chart shows the replayed delivery sent.
		"HERALD_WORKER__ROLLUP_INTERVAL=1s",
	}
	env = append(env, extraEnv...)
	s := &consoleServer{em: em}
	var err error
	if s.adminKey, err = createKey(t, env, "console-admin", "admin"); err != nil {
		t.Fatal(err)
	}
	if s.consoleKey, err = createKey(t, env, "console-reader", "console"); err != nil {
		s.noConsoleKey = err.Error()
	}
	s.in = startInstance(t, env)
	s.api, err = heraldclient.New(s.in.api, heraldclient.WithAPIKey(s.adminKey),
		heraldclient.WithHTTPClient(&http.Client{Transport: apitest.Transport(t, nil), Timeout: 30 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// createKey runs `herald keys create` against the server's database, as an
// operator does, and returns the key it prints.
func createKey(t *testing.T, env []string, name, scope string) (string, error) {
	t.Helper()
	cmd := exec.Command(heraldBinary(t), "keys", "create", "--name", name, "--scope", scope)
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("herald keys create --scope %s: %v: %s", scope, err, strings.TrimSpace(stderr.String()))
	}
	for line := range strings.SplitSeq(string(out), "\n") {
		if k, ok := strings.CutPrefix(line, "key:"); ok {
			return strings.TrimSpace(k), nil
		}
	}
	return "", fmt.Errorf("herald keys create printed no key:\n%s", out)
}

// emulatorFaults sets (body) or clears (body "") the FCM emulator's faults
// through its control route, as docs/emulators.md shows an operator.
func (s *consoleServer) emulatorFaults(t *testing.T, body string) {
	t.Helper()
	method := http.MethodPut
	if body == "" {
		method = http.MethodDelete
	}
	req, err := http.NewRequestWithContext(context.Background(), method, s.em.URL()+"/emulator/faults", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s /emulator/faults: %s", method, resp.Status)
	}
}
