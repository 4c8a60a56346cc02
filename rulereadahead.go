package herald

import (
	"slices"
	"sync"
	"time"

	"github.com/heraldhq/herald/heraldtype"
	"github.com/heraldhq/herald/internal/audience"
	"github.com/heraldhq/herald/internal/rule"
	"github.com/heraldhq/herald/store"
)

// An inline batch (ruleinline.go) reads its interest audience's first
// page after the rules decided: a round trip of its own per event. Track
// reads those pages ahead instead, in the round trip that reads the
// event's rules, record and subject (Store.EventState; issue 39 item 3).
// Which pages, it guesses from the rules whose inline batch the previous
// applied event of the same source and name wrote — a rule that did not
// fire then, or whose audience was too large, is not read ahead, so an
// event stream whose rules seldom fire pays for few reads it does not
// use. The rules themselves are still read with every event, so an edit
// applies at once, and a page read ahead answers only the very query an
// inline batch then makes (audience.ReadAhead): a wrong guess costs a
// read, never a wrong audience.

// ruleGuesses keeps, by source and event name, the rules whose inline
// batch the last applied event wrote. It holds only names that have
// such rules, and starts over past maxRuleGuesses of them.
type ruleGuesses struct {
	mu sync.Mutex
	m  map[ruleGuessKey][]*rule.Compiled
}

type ruleGuessKey struct{ source, event string }

// maxRuleGuesses bounds ruleGuesses: as many as compiled rules are kept
// by default, each name having at least one.
const maxRuleGuesses = DefaultCompiledRules

func (g *ruleGuesses) get(source, event string) []*rule.Compiled {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.m[ruleGuessKey{source, event}]
}

func (g *ruleGuesses) put(source, event string, rs []*rule.Compiled) {
	k := ruleGuessKey{source, event}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(rs) == 0 {
		delete(g.m, k)
		return
	}
	if g.m == nil || len(g.m) >= maxRuleGuesses {
		g.m = map[ruleGuessKey][]*rule.Compiled{}
	}
	g.m[k] = rs
}

// inlined keeps, as the guess for the next event of source and event,
// the rules of rs whose inline batch rec wrote.
func (g *ruleGuesses) inlined(source, event string, rs []*rule.Compiled, rec store.EventRecord) {
	var out []*rule.Compiled
	for _, cr := range rs {
		if _, ok := rec.Inline[cr.Rule.Name]; ok {
			out = append(out, cr)
		}
	}
	g.put(source, event, out)
}

// interestsAhead is the first page each inline batch of e would ask of
// an interest audience, were e judged as the last applied event of its
// source and name was.
func (c *Client) interestsAhead(source string, e Event, now time.Time) []heraldtype.InterestQuery {
	n := c.cfg.Rules.InlineRecipients
	if n <= 0 {
		return nil
	}
	guess := c.ruleGuesses.get(source, e.Name)
	if len(guess) == 0 {
		return nil
	}
	fields := eventFields(e)
	var out []heraldtype.InterestQuery
	for _, cr := range guess {
		a, ok := c.jobAudience(cr, e, fields, now)
		if !ok || a.Limit < 1 {
			continue
		}
		_, ask := inlineAsk(a, n)
		q, ok := audience.FirstInterestQuery(a, ask)
		if !ok || store.CheckInterestQuery(q) != nil {
			continue // the inline batch's own read says what is wrong
		}
		if !slices.ContainsFunc(out, func(x heraldtype.InterestQuery) bool { return audience.SameInterestQuery(x, q) }) {
			out = append(out, q)
		}
	}
	return out
}
