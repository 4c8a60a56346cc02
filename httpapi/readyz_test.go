package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/httpapi"
)

// Issue 30 item 1: /readyz asks the components that can be stuck while
// the process lives (the Kafka intake) beside the store, and says what is
// stuck.
func TestReadyzAsksItsChecks(t *testing.T) {
	t.Parallel()
	var stuck atomic.Bool
	e := newEnv(t, envOptions{readyChecks: []httpapi.ReadyCheck{func(context.Context) error {
		if stuck.Load() {
			return errors.New("Kafka intake is stuck: a record can be neither applied nor dead-lettered on topic t partition 3 at offset 7")
		}
		return nil
	}}})
	e.do("GET", "/readyz", nil).expect(t, 200, nil)
	stuck.Store(true)
	r := e.do("GET", "/readyz", nil)
	if body := r.errorBody(t); r.status != http.StatusServiceUnavailable || body.Code != heraldtype.EUNAVAILABLE ||
		!strings.Contains(body.Message, "topic t partition 3") {
		t.Fatalf("readyz with the intake stuck: %d %s", r.status, r.body)
	}
	e.do("GET", "/healthz", nil).expect(t, 200, nil)
	stuck.Store(false)
	e.do("GET", "/readyz", nil).expect(t, 200, nil)
}
