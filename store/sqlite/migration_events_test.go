package sqlite_test

import (
	"testing"

	"github.com/heraldhq/herald/store"
)

// TestMigrationMovesEventsToNamespaces: migration 0017 (issues 30 item 5
// and 31 item 5) keeps an event recorded before, in the namespace ”;
// moves a subject's row to the source whose events named it; and turns a
// type stored with counts_toward_cap false — what every type that said
// nothing was stored with — into one that does not say.
func TestMigrationMovesEventsToNamespaces(t *testing.T) {
	ctx := t.Context()
	s := migratedBelow(t, "0017")
	for _, q := range []string{
		`INSERT INTO notification_types (name, config, updated_at) VALUES
			('walk', '{"name":"walk","counts_toward_cap":false,"quiet_hours":true}', 0),
			('capped', '{"name":"capped","counts_toward_cap":true}', 0)`,
		`INSERT INTO events (source, id, name, subject, version, outcome, received_at)
			VALUES ('product.inventory.v1', 'ev-1', 'PRICE_CHANGE', 'product:42', 100, '{"event_id":"ev-1"}', 0)`,
		`INSERT INTO event_subjects (subject, version, seq, state, updated_at) VALUES
			('product:42', 100, 3, '{}', 0), ('product:7', 5, 1, '{}', 0)`,
	} {
		if _, err := s.DB().ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if typ, err := s.GetType(ctx, "walk"); err != nil || typ.CountsTowardCap != nil || !typ.QuietHours {
		t.Fatalf("walk: %+v %v; want counts_toward_cap unset", typ, err)
	}
	if typ, err := s.GetType(ctx, "capped"); err != nil || typ.CountsTowardCap == nil || !*typ.CountsTowardCap {
		t.Fatalf("capped: %+v %v", typ, err)
	}
	rec, ok, err := s.RecordedEvent(ctx, store.EventKey{Source: "product.inventory.v1", ID: "ev-1"})
	if err != nil || !ok || rec.RequestHash != "" || string(rec.Outcome) != `{"event_id":"ev-1"}` {
		t.Fatalf("the event from before: %+v %v %v", rec, ok, err)
	}
	if subj, err := s.EventSubject(ctx, "product.inventory.v1", "product:42"); err != nil || subj.Seq != 3 || subj.Version != 100 {
		t.Fatalf("the topic's subject: %+v %v", subj, err)
	}
	if subj, err := s.EventSubject(ctx, "http", "product:42"); err != nil || subj.Seq != 0 {
		t.Fatalf("another source's subject: %+v %v", subj, err)
	}
}
