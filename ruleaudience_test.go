package herald

import (
	"slices"
	"testing"

	"github.com/heraldhq/herald/heraldtype"
)

// dealsRule sends a deal to the audience a.
func dealsRule(a heraldtype.RuleAudience) Rule {
	return Rule{Name: "deals", When: heraldtype.RuleWhen{Event: "DEAL"}, Audience: a,
		Notify: heraldtype.RuleNotify{Type: "back_in_stock", Title: "{{.title}}"}}
}

func deal(id, subject string) Event {
	return Event{ID: id, Name: "DEAL", Subject: subject, Data: map[string]string{"title": "Kettles 20% off"}}
}

// Issue 20 item 3: a topic audience reaches exactly the topic's
// subscribers (an interest in "topic:deals"), whatever the event is
// about — not the users interested in the event's subject, not another
// topic's subscribers, not a kind the rule does not name.
func TestAudienceTopicReachesExactlyTheSubscribers(t *testing.T) {
	p := newRulePipeline(t)
	p.interested("SUBSCRIBE", "topic:deals", "s1", "s2", "s3", "s4")
	p.interested("SUBSCRIBE", "topic:news", "n1")
	p.interested("VIEW", "topic:deals", "viewer")
	p.interested("VIEW", "product:42", "v1")
	r := dealsRule(heraldtype.RuleAudience{Topic: &heraldtype.TopicAudience{Name: "deals", Kinds: []string{"SUBSCRIBE"}}})
	if _, _, err := p.client.PutRule(p.ctx, r); err != nil {
		t.Fatal(err)
	}
	dry, err := p.client.DryRunRule(p.ctx, "deals", deal("", ""))
	if err != nil || dry.AudienceSize != 4 || !slices.Equal(dry.Sample, []string{"s1", "s2", "s3", "s4"}) {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	if _, err := p.client.Track(p.ctx, deal("d-1", "product:42")); err != nil {
		t.Fatal(err)
	}
	p.fanOut()
	if got := p.notified("back_in_stock"); !slices.Equal(got, []string{"s1", "s2", "s3", "s4"}) {
		t.Fatalf("notified %v", got)
	}
	// An event about no subject reaches them too (the 1 h de-duplication
	// is per subject, so a second deal is its own notification).
	if _, err := p.client.Track(p.ctx, deal("d-2", "")); err != nil {
		t.Fatal(err)
	}
	p.fanOut()
	runs, err := p.client.ListRuleRuns(p.ctx, heraldtype.RuleRunFilter{Rule: "deals"})
	if err != nil || len(runs.Runs) != 2 {
		t.Fatalf("runs: %+v %v", runs, err)
	}
	for _, run := range runs.Runs {
		if run.State != heraldtype.RunDone || run.Recipients != 4 || run.Job.Audience.Subject != "topic:deals" {
			t.Fatalf("run: %+v", run)
		}
	}
}
