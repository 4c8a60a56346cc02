package e2e

import (
	"strings"
	"testing"
)

// steps splits a block as a shell reads it: continuations, multi-line
// single-quoted bodies, trailing comments (an apostrophe in one included),
// and expectations on the command's line or the comment lines after it.
func TestWalkthroughSteps(t *testing.T) {
	t.Parallel()
	block := `curl -X PUT localhost:8080/v1/a -d '{
  "k":"v"}'
# → 201 {"name":"a",
#    "n":1}
RUN=$(curl -s localhost:8080/v1/a | jq -r '.id')   # that run's id
curl -X POST localhost:8080/v1/b \
     -d "{\"run\":\"$RUN\"}"   # again → 202
curl localhost:8080/v1/c   # no arrow here
echo '{"id":"ev-1",
  "k":1}' | tr -d '\n' |
  kcat -P -t topic
echo done`
	got := steps(block)
	if len(got) != 6 {
		t.Fatalf("%d steps: %q", len(got), got)
	}
	if !strings.Contains(got[0].cmd, `"k":"v"}'`) || !strings.Contains(got[0].expect, `"n":1`) {
		t.Errorf("step 1 = %+v", got[0])
	}
	if got[1].cmd != `RUN=$(curl -s localhost:8080/v1/a | jq -r '.id')` || got[1].expect != "" {
		t.Errorf("step 2 = %+v", got[1])
	}
	if !strings.HasSuffix(got[2].cmd, `-d "{\"run\":\"$RUN\"}"`) || strings.TrimSpace(got[2].expect) != "202" {
		t.Errorf("step 3 = %+v", got[2])
	}
	if got[3].expect != "" {
		t.Errorf("step 4 = %+v", got[3])
	}
	if !strings.HasSuffix(got[4].cmd, "kcat -P -t topic") || got[5].cmd != "echo done" {
		t.Errorf("a pipeline over three lines: %+v, %+v", got[4], got[5])
	}
	if p := check(` 201 {"name":"a","n":1}`, `{"name":"a","n":2}`, 201, nil, true); !strings.Contains(p, `"n":1`) {
		t.Errorf("check missed a wrong field: %q", p)
	}
	if p := check(``, `{}`, 400, nil, true); p == "" {
		t.Error("check passed a 400 the docs do not show")
	}
}
