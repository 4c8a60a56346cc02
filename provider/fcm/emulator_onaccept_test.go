package fcm

import (
	"context"
	"sync"
	"testing"

	fcmemu "github.com/heraldhq/herald/emulator/fcm"
	"github.com/heraldhq/herald/heraldtype"
)

// TestEmulatorOnAccept: the hook sees every accepted message, with its
// receive time and raw message, and no rejected one (load generators count
// and time sends with it).
func TestEmulatorOnAccept(t *testing.T) {
	var mu sync.Mutex
	var got []fcmemu.Received
	e := startEmulator(t, fcmemu.Config{OnAccept: func(r fcmemu.Received) {
		mu.Lock()
		got = append(got, r)
		mu.Unlock()
	}})
	if err := e.FailToken("dead", fcmemu.TokenFault{Code: CodeUnregistered}); err != nil {
		t.Fatal(err)
	}
	c := newTestClient(t, e, nil)
	ctx := context.Background()
	if _, err := c.Send(ctx, message(heraldtype.PlatformAndroid, "live", heraldtype.PayloadAlert, heraldtype.PriorityHigh)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Send(ctx, message(heraldtype.PlatformAndroid, "dead", heraldtype.PayloadAlert, heraldtype.PriorityHigh)); err == nil {
		t.Fatal("send to an unregistered token succeeded")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0].Token != "live" || got[0].ReceivedAt.IsZero() || len(got[0].Message) == 0 {
		t.Fatalf("OnAccept saw %+v, want the one accepted message", got)
	}
}
