package herald

import (
	"container/list"
	"sync"

	"github.com/heraldhq/herald/internal/rule"
)

// compiledRules caches compiled rules (their parsed templates) by name
// and last update, so applying an event parses no template: the hot path
// of the Kafka intake compiles a rule once per edit, not once per event.
//
// It is a bounded LRU (issue 31 item 4): the rules in use stay, the ones
// no event has needed for longest go first. Before, the cache started
// over when full, so past 1,024 rules every rule was compiled again
// about once every 1,024 lookups — all of them, over and over.
type compiledRules struct {
	// limit is the most rules kept (RuleConfig.CompiledCache); 0 takes
	// DefaultCompiledRules.
	limit int

	mu    sync.Mutex
	order *list.List // of *rule.Compiled, most recently used first
	index map[string]*list.Element
	// compiles counts the rules compiled on a miss, for the tests.
	compiles int
}

// DefaultCompiledRules is how many compiled rules a Client keeps by
// default (RuleConfig.CompiledCache).
const DefaultCompiledRules = 4096

// get returns r compiled: the cached one if r has not changed since.
func (cr *compiledRules) get(r Rule) (*rule.Compiled, error) {
	cr.mu.Lock()
	if e, ok := cr.index[r.Name]; ok {
		c := e.Value.(*rule.Compiled)
		if c.Rule.UpdatedAt.Equal(r.UpdatedAt) {
			cr.order.MoveToFront(e)
			cr.mu.Unlock()
			return c, nil
		}
	}
	cr.mu.Unlock()
	// Compiled outside the lock: a slow compile holds up no other rule.
	c, err := rule.Compile(r)
	if err != nil {
		return nil, err
	}
	cr.mu.Lock()
	defer cr.mu.Unlock()
	cr.compiles++
	if cr.index == nil {
		cr.index, cr.order = map[string]*list.Element{}, list.New()
	}
	if e, ok := cr.index[r.Name]; ok {
		e.Value = c
		cr.order.MoveToFront(e)
		return c, nil
	}
	limit := cr.limit
	if limit <= 0 {
		limit = DefaultCompiledRules
	}
	for cr.order.Len() >= limit {
		last := cr.order.Back()
		delete(cr.index, last.Value.(*rule.Compiled).Rule.Name)
		cr.order.Remove(last)
	}
	cr.index[r.Name] = cr.order.PushFront(c)
	return c, nil
}

// len is how many compiled rules are kept.
func (cr *compiledRules) len() int {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	return len(cr.index)
}
