package httpapi_test

import (
	"net/http"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/boundtest"
)

// The two templates of issue 31 item 1: one doubles a string 34 times
// (256 GiB), one ranges 9e18 times. The spin is written with a variable,
// so that it passes the check at save and reaches the render's budget:
// its steps, or on a machine so loaded that 10,000 steps take 250 ms,
// its time.
var hostileTemplates = map[string]struct{ title, limit string }{
	"doubling": {`{{$x:="0123456789abcdef"}}{{range 34}}{{$x = print $x $x}}{{end}}`, `templates\.max_bytes`},
	"spin":     {`{{$n := 9000000000000000000}}{{range $n}}{{end}}`, `templates\.max_(steps|duration)`},
}

// maxRenderAlloc bounds what one hostile event or dry run may allocate:
// the render's byte budget (256 KiB), its escapers' overshoot and the
// request's own work — nowhere near what the templates ask for.
const maxRenderAlloc = 64 << 20

// Issue 31 item 1 over HTTP: a rule whose template goes over its budget
// fails its decision as render_failed — POST /v1/events answers with the
// decision, and the rule's run is recorded failed, saying why; the dry
// run says so too — with the process's memory bounded (a child process
// whose heap past 512 MiB fails the test). A range over a literal above
// the budget is refused when the rule is saved, naming the field; one
// stored before that check acts on nothing, and the event is still
// answered.
func TestTemplateBudgetOverHTTP(t *testing.T) {
	t.Parallel()
	boundtest.Run(t, boundtest.Bounds{MaxHeap: 512 << 20, Timeout: 2 * time.Minute}, func(t *testing.T) {
		e := newEnv(t, envOptions{})
		e.seedUser("u1")
		e.do("PUT", "/v1/types/hostile", map[string]any{"channels": []string{"push"}}).expect(t, http.StatusOK, nil)
		rule := func(event, title string) map[string]any {
			return map[string]any{"when": map[string]any{"event": event, "detect": map[string]any{"always": true}},
				"audience": map[string]any{"event_user": true}, "notify": map[string]any{"type": "hostile", "title": title}}
		}
		literal := `{{range 9000000000000000000}}{{end}}`
		res := e.do("PUT", "/v1/rules/spin-literal", rule("SPIN_LITERAL", literal))
		if eb := res.errorBody(t); res.status != http.StatusBadRequest || eb.Field != "notify.title" || !strings.Contains(eb.Message, "templates.max_steps") {
			t.Fatalf("a range over 9e18 saved: %d %s", res.status, res.body)
		}
		for name, h := range hostileTemplates {
			event := "HOSTILE_" + strings.ToUpper(name)
			e.do("PUT", "/v1/rules/"+name, rule(event, h.title)).expect(t, http.StatusCreated, nil)
			var out herald.TrackResult
			alloc := allocated(func() {
				e.do("POST", "/v1/events", map[string]any{"id": "ev-" + name, "name": event, "user_id": "u1"}).expect(t, http.StatusOK, &out)
			})
			if len(out.Rules) != 1 || !strings.HasPrefix(out.Rules[0].Error, "render_failed: notify.title: ") ||
				!regexp.MustCompile(h.limit).MatchString(out.Rules[0].Error) {
				t.Fatalf("%s: event: %+v", name, out)
			}
			if alloc > maxRenderAlloc {
				t.Errorf("%s: the event allocated %d MiB", name, alloc>>20)
			}
			var runs herald.RuleRunPage
			e.do("GET", "/v1/rules/"+name+"/runs", nil).expect(t, http.StatusOK, &runs)
			if len(runs.Runs) != 1 || runs.Runs[0].State != heraldtype.RunFailed || !regexp.MustCompile(h.limit).MatchString(runs.Runs[0].LastError) {
				t.Fatalf("%s: runs: %+v", name, runs)
			}
			var dry herald.RuleDryRun
			alloc = allocated(func() {
				e.do("POST", "/v1/rules/"+name+"/dry-run", map[string]any{"name": event, "user_id": "u1"}).expect(t, http.StatusOK, &dry)
			})
			if !dry.Detected || !strings.HasPrefix(dry.Error, "render_failed: ") || !regexp.MustCompile(h.limit).MatchString(dry.Error) {
				t.Fatalf("%s: dry run: %+v", name, dry)
			}
			if alloc > maxRenderAlloc {
				t.Errorf("%s: the dry run allocated %d MiB", name, alloc>>20)
			}
		}
		// A rule stored before the check (written to the store directly).
		r := heraldtype.Rule{Name: "spin-literal", When: heraldtype.RuleWhen{Event: "SPIN_LITERAL", Detect: heraldtype.Detector{Always: true}},
			Audience: heraldtype.RuleAudience{EventUser: true, Limit: 10}, Notify: heraldtype.RuleNotify{Type: "hostile", Title: literal}}
		if _, _, err := e.store.PutRule(t.Context(), r, time.Now()); err != nil {
			t.Fatal(err)
		}
		var out herald.TrackResult
		e.do("POST", "/v1/events", map[string]any{"id": "ev-literal", "name": "SPIN_LITERAL", "user_id": "u1"}).expect(t, http.StatusOK, &out)
		res = e.do("POST", "/v1/rules/spin-literal/dry-run", map[string]any{"name": "SPIN_LITERAL", "user_id": "u1"})
		if eb := res.errorBody(t); res.status != http.StatusBadRequest || eb.Field != "notify.title" {
			t.Fatalf("the dry run of a stored rule over the budget: %d %s", res.status, res.body)
		}
	})
}

// allocated is what f allocated on the heap (bytes, every goroutine's).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
