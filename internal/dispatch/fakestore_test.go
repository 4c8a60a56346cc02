package dispatch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

// fakeStore is an in-memory queue that keeps the store.go contract the
// worker relies on: claims lease pending due deliveries oldest run_at first
// and bump the attempt; outcomes apply only under the same owner and
// attempt; a release undoes the attempt; the reaper requeues or marks
// unknown by guarantee.
type fakeStore struct {
	mu         sync.Mutex
	nextID     int64
	deliveries map[int64]*heraldtype.Delivery
	devices    map[string]*heraldtype.Device
	notifs     map[string]*heraldtype.Notification
	// suppressions maps a suppressed address to its reason.
	suppressions map[string]string

	// minutes are the delivery rollup's rows, summed by key, and
	// failMinutes makes the next n AddDeliveryMinutes calls fail.
	minutes     map[store.DeliveryMinute]int64
	failMinutes int

	// failComplete makes the next n Complete calls fail.
	failComplete int
	// hangClaim and hangComplete make the next n calls hang until their
	// context ends, as on a database that stopped answering.
	hangClaim, hangComplete int
	claimErr                error
	claimCalls              int
	completes               int // successful Complete calls
	applied                 int
	// recorded holds the applied outcomes, in order.
	recorded []store.Outcome
	ignored  int
}

func newFakeStore() *fakeStore {
	return &fakeStore{
		deliveries:   make(map[int64]*heraldtype.Delivery),
		devices:      make(map[string]*heraldtype.Device),
		notifs:       make(map[string]*heraldtype.Notification),
		suppressions: make(map[string]string),
	}
}

func (s *fakeStore) suppressed(address string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.suppressions[address]
	return ok
}

// delivery options for add.
type fakeDelivery struct {
	provider    string
	guarantee   heraldtype.Guarantee
	maxAttempts int
	runAt       time.Time
	device      *heraldtype.Device // nil: a fresh active opted-in device
	noDevice    bool               // the device was deleted
	address     string             // set: an sms delivery to this number, no device
	inApp       bool               // an in_app delivery (provider inbox), no device
}

// add enqueues one pending push delivery and returns its id.
func (s *fakeStore) add(f fakeDelivery) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	id := s.nextID
	n := &heraldtype.Notification{ID: fmt.Sprintf("n%d", id), UserID: "u1", Type: "reminder",
		Title: "t", Body: "b", Channels: []heraldtype.Channel{heraldtype.ChannelPush}}
	s.notifs[n.ID] = n
	dev := f.device
	if dev == nil {
		dev = &heraldtype.Device{ID: fmt.Sprintf("d%d", id), UserID: "u1", Platform: heraldtype.PlatformAndroid,
			Token: fmt.Sprintf("tok%d", id), PushOptIn: true, Status: heraldtype.DeviceActive}
	}
	if !f.noDevice {
		s.devices[dev.ID] = dev
	}
	if f.provider == "" {
		f.provider = "fcm"
	}
	if f.guarantee == "" {
		f.guarantee = heraldtype.AtLeastOnce
	}
	if f.maxAttempts == 0 {
		f.maxAttempts = 4
	}
	d := &heraldtype.Delivery{
		ID: id, NotificationID: n.ID, UserID: "u1", Type: n.Type, Channel: heraldtype.ChannelPush,
		Provider: f.provider, DeviceID: dev.ID, State: heraldtype.StatePending, Guarantee: f.guarantee,
		MaxAttempts: f.maxAttempts, RunAt: f.runAt,
	}
	if f.address != "" {
		d.Channel, d.DeviceID, d.Address = heraldtype.ChannelSMS, "", f.address
		delete(s.devices, dev.ID)
	}
	if f.inApp {
		d.Channel, d.Provider, d.DeviceID = heraldtype.ChannelInApp, store.InboxProvider, ""
		delete(s.devices, dev.ID)
	}
	s.deliveries[id] = d
	return id
}

// get returns a copy of a delivery.
func (s *fakeStore) get(id int64) heraldtype.Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := *s.deliveries[id]
	d.Attempts = slices.Clone(d.Attempts)
	return d
}

func (s *fakeStore) device(id string) heraldtype.Device {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *s.devices[id]
}

// count returns how many deliveries are in state st.
func (s *fakeStore) count(st heraldtype.DeliveryState) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, d := range s.deliveries {
		if d.State == st {
			n++
		}
	}
	return n
}

// hang blocks until ctx ends if *n is positive (decrementing it), and
// returns ctx's error then.
func (s *fakeStore) hang(ctx context.Context, n *int) error {
	s.mu.Lock()
	if *n == 0 {
		s.mu.Unlock()
		return nil
	}
	*n--
	s.mu.Unlock()
	<-ctx.Done()
	return ctx.Err()
}

func (s *fakeStore) Claim(ctx context.Context, p store.ClaimParams) ([]heraldtype.Job, error) {
	if err := s.hang(ctx, &s.hangClaim); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.claimCalls++
	if s.claimErr != nil {
		return nil, s.claimErr
	}
	var due []*heraldtype.Delivery
	for _, d := range s.deliveries {
		if d.State == heraldtype.StatePending && !d.RunAt.After(p.Now) && !slices.Contains(p.ExcludeProviders, d.Provider) {
			due = append(due, d)
		}
	}
	sort.Slice(due, func(i, j int) bool {
		if !due[i].RunAt.Equal(due[j].RunAt) {
			return due[i].RunAt.Before(due[j].RunAt)
		}
		return due[i].ID < due[j].ID
	})
	if len(due) > p.Limit {
		due = due[:p.Limit]
	}
	jobs := make([]heraldtype.Job, 0, len(due))
	for _, d := range due {
		until := p.LeaseUntil
		d.State, d.LeaseOwner, d.LeaseUntil = heraldtype.StateLeased, p.Owner, &until
		d.Attempt++
		job := heraldtype.Job{Delivery: *d, Notification: s.notifs[d.NotificationID]}
		job.Delivery.Attempts = nil
		if dev, ok := s.devices[d.DeviceID]; ok {
			c := *dev
			job.Device = &c
		}
		jobs = append(jobs, job)
	}
	return jobs, nil
}

func (s *fakeStore) ExtendLeases(_ context.Context, owner string, ids []int64, until time.Time) ([]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var got []int64
	for _, id := range ids {
		d, ok := s.deliveries[id]
		if ok && d.State == heraldtype.StateLeased && d.LeaseOwner == owner {
			u := until
			d.LeaseUntil = &u
			got = append(got, id)
		}
	}
	return got, nil
}

func (s *fakeStore) Complete(ctx context.Context, outcomes []store.Outcome) (int, error) {
	if err := s.hang(ctx, &s.hangComplete); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failComplete > 0 {
		s.failComplete--
		return 0, fmt.Errorf("fake: database is locked")
	}
	// The real stores' check: a move of store.Moves, a valid header.
	for i := range outcomes {
		if err := store.CheckOutcome(&outcomes[i]); err != nil {
			return 0, err
		}
	}
	applied := 0
	for _, o := range outcomes {
		d, ok := s.deliveries[o.DeliveryID]
		if !ok || d.State != heraldtype.StateLeased || d.LeaseOwner != o.Owner || d.Attempt != o.Attempt {
			s.ignored++
			continue
		}
		applied++
		s.recorded = append(s.recorded, o)
		s.apply(d, o)
	}
	s.completes++
	s.applied += applied
	return applied, nil
}

func (s *fakeStore) apply(d *heraldtype.Delivery, o store.Outcome) {
	r := o.Row()
	d.LeaseOwner, d.LeaseUntil = "", nil
	d.State = r.State
	if r.Release {
		d.Attempt--
	}
	if r.State.Final() {
		at := o.At
		d.FinishedAt = &at
	} else {
		d.RunAt = r.RunAt
	}
	if r.SetError {
		d.LastErrorCode, d.LastError = r.ErrorCode, r.Error
	}
	if r.ProviderMessageID != "" {
		d.ProviderMessageID = r.ProviderMessageID
	}
	if r.Timeline != "" {
		d.Attempts = append(d.Attempts, heraldtype.Attempt{Attempt: o.Attempt, At: o.At, Outcome: r.Timeline,
			ErrorCode: r.ErrorCode, Error: r.Error, RetryAfter: r.RetryAfter, ProviderMessageID: r.ProviderMessageID,
			Latency: r.Latency})
	}
	if r.Suppress {
		s.suppressions[d.Address] = r.SuppressReason
	}
	if dev, ok := s.devices[d.DeviceID]; ok && r.InvalidReason != "" {
		at := o.At
		dev.FailCount++
		dev.Status, dev.InvalidReason, dev.InvalidatedAt = heraldtype.DeviceInvalid, r.InvalidReason, &at
	}
}

// ReportLate follows rules.LateReportSQL: an outcome whose lease the
// reaper expired, with no replay or report of that lease since, gets a
// late_report attempt row.
func (s *fakeStore) ReportLate(_ context.Context, outcomes []store.Outcome) (int, error) {
	outcomes, err := store.CheckReportLate(outcomes)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for i := range outcomes {
		o := &outcomes[i]
		d, ok := s.deliveries[o.DeliveryID]
		if !ok {
			continue
		}
		reaped := -1
		for j, a := range d.Attempts {
			switch {
			case a.Attempt == o.Attempt && a.ErrorCode == "lease_expired":
				reaped = j
			case a.Outcome == heraldtype.OutcomeReplayed, a.Outcome == heraldtype.OutcomeLateReport && a.Attempt == o.Attempt:
				reaped = -1
			}
		}
		if reaped < 0 {
			continue
		}
		r := o.Row()
		d.Attempts = append(d.Attempts, heraldtype.Attempt{Attempt: o.Attempt, At: o.At, Outcome: heraldtype.OutcomeLateReport,
			ErrorCode: r.Report, Error: store.LateReportError(o), ProviderMessageID: r.ProviderMessageID, Latency: r.Latency})
		n++
	}
	return n, nil
}

func (s *fakeStore) ReapExpiredLeases(_ context.Context, now time.Time) (store.ReapResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var r store.ReapResult
	for _, d := range s.deliveries {
		if d.State != heraldtype.StateLeased || !d.LeaseUntil.Before(now) {
			continue
		}
		d.LeaseOwner, d.LeaseUntil = "", nil
		row := heraldtype.Attempt{Attempt: d.Attempt, At: now, ErrorCode: "lease_expired"}
		if d.Guarantee == heraldtype.AtMostOnce {
			d.State, row.Outcome = heraldtype.StateUnknown, heraldtype.OutcomeUnknown
			r.Unknown++
		} else {
			d.State, d.RunAt, row.Outcome = heraldtype.StatePending, now, heraldtype.OutcomeLeaseExpired
			r.Requeued++
		}
		d.Attempts = append(d.Attempts, row)
	}
	return r, nil
}

func (s *fakeStore) NextRunAt(context.Context) (time.Time, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var next time.Time
	found := false
	for _, d := range s.deliveries {
		if d.State == heraldtype.StatePending && (!found || d.RunAt.Before(next)) {
			next, found = d.RunAt, true
		}
	}
	return next, found, nil
}

func (s *fakeStore) QueueStats(context.Context) (map[heraldtype.DeliveryState]int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := make(map[heraldtype.DeliveryState]int)
	for _, st := range store.QueueDepthStates {
		m[st] = 0
	}
	for _, d := range s.deliveries {
		if _, ok := m[d.State]; ok {
			m[d.State]++
		}
	}
	return m, nil
}

func (s *fakeStore) AddDeliveryMinutes(_ context.Context, _ string, rows []store.DeliveryMinute) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failMinutes > 0 {
		s.failMinutes--
		return errors.New("fake: rollup refused")
	}
	if s.minutes == nil {
		s.minutes = map[store.DeliveryMinute]int64{}
	}
	for _, r := range rows {
		n := r.Count
		r.Count = 0
		s.minutes[r] += n
	}
	return nil
}

// rollup returns the rollup's sums by outcome and code ("sent" or
// "failed:<code>").
func (s *fakeStore) rollup() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int64{}
	for k, n := range s.minutes {
		key := string(k.Outcome)
		if k.Outcome == store.RollupFailed {
			key += ":" + k.ErrorCode
		}
		out[key] += n
	}
	return out
}

var _ Store = (*fakeStore)(nil)

func storeClaim(owner string, now time.Time, limit int) store.ClaimParams {
	return store.ClaimParams{Owner: owner, Now: now, LeaseUntil: now.Add(time.Minute), Limit: limit}
}
