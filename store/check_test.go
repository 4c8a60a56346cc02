package store_test

import (
	"testing"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/store"
)

func TestArgumentChecks(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	wantField(t, "TryLock name", store.CheckTryLock("", "a", now, now.Add(time.Minute)), "name")
	wantField(t, "TryLock owner", store.CheckTryLock("x", "", now, now.Add(time.Minute)), "owner")
	wantField(t, "TryLock until", store.CheckTryLock("x", "a", now, now), "until")
	wantField(t, "Unlock name", store.CheckUnlock("", "a"), "name")
	wantField(t, "Unlock owner", store.CheckUnlock("x", ""), "owner")
	wantField(t, "PruneFinished", store.CheckPruneFinished(0), "limit")
	wantField(t, "AcquireDedupe", store.CheckAcquireDedupe(0), "window")
	wantField(t, "CountDaily", store.CheckCountDaily(0), "limit")
	wantField(t, "ReplayDeliveries max", store.CheckReplayDeliveries(heraldtype.DeliveryFilter{}, 0), "max")
	for _, err := range []error{
		store.CheckTryLock("x", "a", now, now.Add(time.Minute)), store.CheckUnlock("x", "a"),
		store.CheckPruneFinished(1), store.CheckAcquireDedupe(time.Second), store.CheckCountDaily(1),
	} {
		if err != nil {
			t.Errorf("a good call refused: %v", err)
		}
	}
}

// A bulk replay may ask for exactly the states a replay moves from
// (store.Moves), and its guard in SQL names the same.
func TestReplayable(t *testing.T) {
	t.Parallel()
	for _, st := range append([]heraldtype.DeliveryState{""}, store.DeliveryStates...) {
		err := store.CheckReplayDeliveries(heraldtype.DeliveryFilter{State: st}, 1)
		ok := st == "" || st == heraldtype.StateDead || st == heraldtype.StateUnknown
		if ok != (err == nil) {
			t.Errorf("replay of %q: %v", st, err)
		}
		if !ok {
			wantField(t, "replay of "+string(st), err, "state")
		}
	}
	if want := "state IN ('dead', 'unknown')"; store.ReplayableSQL != want {
		t.Errorf("ReplayableSQL = %q, want %q", store.ReplayableSQL, want)
	}
	if err := store.ReplayRefusal(7, nil); err.Error() != "not_found: delivery 7 not found" {
		t.Errorf("refusal of a missing delivery = %v", err)
	}
	if err := store.ReplayRefusal(7, &heraldtype.Delivery{State: heraldtype.StateSent}); heraldtype.ErrorCode(err) != heraldtype.ECONFLICT ||
		err.Error() != "conflict: delivery 7 is sent; only dead or unknown deliveries can be replayed" {
		t.Errorf("refusal of a sent delivery = %v", err)
	}
}

// PutType and PutPreferences keep the same JSON on every store, stamped
// to the microsecond in UTC.
func TestEncodePolicy(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 12, 0, 0, 123_456_789, time.FixedZone("X", 3600))
	_, _, err := store.EncodeType(heraldtype.NotificationType{}, now)
	wantField(t, "a type without a name", err, "name")
	typ, b, err := store.EncodeType(heraldtype.NotificationType{Name: "welcome"}, now)
	if err != nil {
		t.Fatal(err)
	}
	back, err := store.DecodeType(b)
	if err != nil || back.Name != "welcome" || !back.UpdatedAt.Equal(typ.UpdatedAt) || back.UpdatedAt.Location() != time.UTC ||
		typ.UpdatedAt.Nanosecond() != 123_456_000 {
		t.Fatalf("type %+v round-tripped to %+v, %v", typ, back, err)
	}
	p, b, err := store.EncodePreferences(heraldtype.Preferences{UserID: "u1", Timezone: "Asia/Seoul"}, now)
	if err != nil || p.Timezone != "" || p.UpdatedAt.Location() != time.UTC {
		t.Fatalf("preferences %+v, %v", p, err)
	}
	got, err := store.DecodePreferences("u1", "Europe/Paris", b)
	if err != nil || got.Timezone != "Europe/Paris" || !got.UpdatedAt.Equal(p.UpdatedAt) {
		t.Fatalf("preferences round-tripped to %+v, %v", got, err)
	}
}
