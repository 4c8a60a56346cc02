package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// population is the users and devices of a run, and which device tokens
// the emulator treats as unregistered.
type population struct {
	users  []string
	tokens [][]string // per user, per device
	dead   [][]bool   // per user, per device: answered UNREGISTERED
	// live counts each user's devices that can receive.
	live []int
}

// newPopulation names users and tokens for run; a fraction unregistered of
// the devices, spread evenly, get dead tokens.
func newPopulation(run string, users, devices int, unregistered float64) *population {
	p := &population{users: make([]string, users), tokens: make([][]string, users),
		dead: make([][]bool, users), live: make([]int, users)}
	n := 0
	for u := range users {
		p.users[u] = "bench-u" + strconv.Itoa(u)
		p.tokens[u] = make([]string, devices)
		p.dead[u] = make([]bool, devices)
		for d := range devices {
			p.tokens[u][d] = fmt.Sprintf("bench-%s-u%d-d%d", run, u, d)
			// Bresenham-style spread: device n is dead when the running
			// count of dead devices steps up, so exactly ⌊rate·total⌋ die.
			n++
			p.dead[u][d] = int(float64(n)*unregistered) > int(float64(n-1)*unregistered)
			if !p.dead[u][d] {
				p.live[u]++
			}
		}
	}
	return p
}

// recipients of trigger k: r consecutive users, wrapping around.
func (p *population) recipients(k, r int) []string {
	out := make([]string, r)
	for i := range out {
		out[i] = p.users[(k*r+i)%len(p.users)]
	}
	return out
}

// expectedSends is how many pushes the emulator accepts if every delivery
// to a live token succeeds eventually.
func (p *population) expectedSends(triggers, r int) uint64 {
	var n uint64
	for k := range triggers {
		for i := range r {
			n += uint64(p.live[(k*r+i)%len(p.users)])
		}
	}
	return n
}

// expectedDigests is how many digests triggers of r recipients make when
// each user's triggers fall in one window: a digest per maxItems of a
// user's triggers (maxItems 0: one per user). sends counts one push per
// digest and live device.
func (p *population) expectedDigests(triggers, r, maxItems int) (digests int, sends uint64) {
	per := make([]int, len(p.users))
	for k := range triggers {
		for i := range r {
			per[(k*r+i)%len(p.users)]++
		}
	}
	for u, n := range per {
		d := 0
		switch {
		case n == 0:
		case maxItems == 0:
			d = 1
		default:
			d = (n + maxItems - 1) / maxItems
		}
		digests += d
		sends += uint64(d * p.live[u])
	}
	return digests, sends
}

// expectedFinals is how many notifications become final by a delivery's
// outcome — those to a user with a live token — each of which sends one
// notification.status_changed webhook.
func (p *population) expectedFinals(triggers, r int) uint64 {
	var n uint64
	for k := range triggers {
		for i := range r {
			if p.live[(k*r+i)%len(p.users)] > 0 {
				n++
			}
		}
	}
	return n
}

// register creates every user and device through the API.
func (p *population) register(ctx context.Context, api *apiClient, conc int, done *atomic.Int64) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, conc)
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				u := int(next.Add(1) - 1)
				if u >= len(p.users) || ctx.Err() != nil {
					return
				}
				if _, err := api.call(ctx, http.MethodPut, "/v1/users/"+p.users[u], []byte(`{"timezone":"UTC"}`)); err != nil {
					errc <- err
					return
				}
				for d, tok := range p.tokens[u] {
					body := fmt.Sprintf(`{"device_id":"%s-d%d","token":%q,"platform":"android","push_opt_in":true}`, p.users[u], d, tok)
					if _, err := api.call(ctx, http.MethodPost, "/v1/users/"+p.users[u]+"/devices", []byte(body)); err != nil {
						errc <- err
						return
					}
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return fmt.Errorf("registering users: %w", err)
	}
	return ctx.Err()
}

// loadStats counts the trigger phase as it runs.
type loadStats struct {
	notifications atomic.Int64 // accepted by the API
	deliveries    atomic.Int64
	errors        atomic.Int64
	retries       atomic.Int64 // trigger requests sent again (sendTrigger)
	lastErr       atomic.Value // string
}

// trigger sends triggers 0…triggers-1 with conc clients, closed loop
// (rate 0) or on an open-loop schedule of rate notifications per second.
func trigger(ctx context.Context, api *apiClient, pop *population, run string, triggers, r, conc int, rate float64, st *loadStats) {
	start := time.Now()
	interval := time.Duration(0)
	if rate > 0 {
		interval = time.Duration(float64(time.Second) * float64(r) / rate)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				k := int(next.Add(1) - 1)
				if k >= triggers {
					return
				}
				at := time.Now()
				if interval > 0 {
					at = start.Add(time.Duration(k) * interval)
					if d := time.Until(at); d > 0 {
						select {
						case <-time.After(d):
						case <-ctx.Done():
							return
						}
					}
				}
				sendTrigger(ctx, api, triggerBody(pop.recipients(k, r), at, k), run+"-"+strconv.Itoa(k), st)
			}
		}()
	}
	wg.Wait()
}

// triggerTries bounds how often a trigger is sent; a retry waits as the
// answer says (retryWait), from 100 ms doubling, at most 2 s.
const triggerTries = 5

// sendTrigger posts one trigger, retrying a request that failed for a
// reason worth retrying — the connection, a 503 when the store was slow,
// a 429 — as an API client should: with the same Idempotency-Key (so a
// retry never doubles it), after Retry-After or a backoff.
func sendTrigger(ctx context.Context, api *apiClient, body []byte, key string, st *loadStats) {
	var err error
	backoff := 100 * time.Millisecond
	for try := 1; try <= triggerTries; try++ {
		if try > 1 {
			wait, ok := retryWait(err, backoff, 2*time.Second)
			if !ok {
				break
			}
			st.retries.Add(1)
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			backoff *= 2
		}
		var out []byte
		out, err = api.call(ctx, http.MethodPost, "/v1/notifications", body, "Idempotency-Key", key)
		if err == nil {
			var res struct {
				Notifications []struct {
					Deliveries int `json:"deliveries"`
				} `json:"notifications"`
			}
			if err = json.Unmarshal(out, &res); err == nil {
				st.notifications.Add(int64(len(res.Notifications)))
				for _, n := range res.Notifications {
					st.deliveries.Add(int64(n.Deliveries))
				}
				return
			}
		}
		if ctx.Err() != nil {
			return
		}
	}
	st.errors.Add(1)
	st.lastErr.Store(err.Error())
}
