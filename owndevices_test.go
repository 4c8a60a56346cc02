package herald

import (
	"fmt"
	"sync"
	"testing"

	"github.com/heraldhq/herald/heraldtype"
)

// Two users registering one new device id at once through the Client's
// user-token call: each ends up with a device of its own, and neither is
// told it has a device that the other then holds (issue 23: the check and
// the write used to be two steps, and one user silently lost the device).
func TestRegisterOwnDeviceRace(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, nil)
	p.user("u1", "UTC", "tok-u1")
	p.user("u2", "UTC", "tok-u2")
	for round := range 30 {
		id := fmt.Sprintf("race-%d", round)
		var wg sync.WaitGroup
		got := map[string]heraldtype.Device{}
		var mu sync.Mutex
		for _, u := range []string{"u1", "u2"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d, err := p.client.RegisterOwnDevice(p.ctx, u, DeviceInput{DeviceID: id, Token: id + "-" + u, Platform: "android"})
				if err != nil {
					t.Errorf("%s %s: %v", id, u, err)
				}
				mu.Lock()
				got[u] = d
				mu.Unlock()
			}()
		}
		wg.Wait()
		for u, d := range got {
			cur, err := p.store.GetDevice(p.ctx, d.ID)
			if err != nil || cur.UserID != u || cur.Token != id+"-"+u {
				t.Fatalf("%s: %s was answered %+v; the store holds %+v (%v)", id, u, d, cur, err)
			}
		}
	}
}
