package conformance

import (
	"fmt"
	"strings"
	"sync"
)

// ledger lists the data the suite created on the target and what became of
// it, for the summary and for cleaning up after a failed run.
type ledger struct {
	mu      sync.Mutex
	entries []*record
}

// record is one thing the suite created.
type record struct {
	what string
	// fate is how it ended: "deleted", "removed", or why it stays.
	fate string
	// cleanup, when set, deletes it; it runs at the end of a run that did not
	// get to the step that deletes it.
	cleanup func() error
}

// add records a created thing. kept says why it stays ("" when a later step
// deletes it).
func (l *ledger) add(what, kept string, cleanup func() error) *record {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := &record{what: what, fate: kept, cleanup: cleanup}
	l.entries = append(l.entries, r)
	return r
}

// done marks a record cleaned by the scenario itself.
func (l *ledger) done(r *record, fate string) {
	if r == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	r.fate, r.cleanup = fate, nil
}

// leftovers runs the cleanups the scenario did not get to, newest first, and
// answers a line per attempt.
func (l *ledger) leftovers() []string {
	l.mu.Lock()
	var pending []*record
	for i := len(l.entries) - 1; i >= 0; i-- {
		if r := l.entries[i]; r.cleanup != nil {
			pending = append(pending, r)
		}
	}
	l.mu.Unlock()
	var lines []string
	for _, r := range pending {
		err := r.cleanup()
		l.mu.Lock()
		if err != nil {
			r.fate = fmt.Sprintf("LEFT BEHIND: cleanup failed: %v", err)
		} else {
			r.fate = "deleted by the cleanup after a failed step"
		}
		r.cleanup = nil
		lines = append(lines, r.what+": "+r.fate)
		l.mu.Unlock()
	}
	return lines
}

// summary answers one line per record.
func (l *ledger) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, r := range l.entries {
		fate := r.fate
		if fate == "" {
			fate = "not cleaned (the step that deletes it did not run)"
		}
		fmt.Fprintf(&b, "\n    %s: %s", r.what, fate)
	}
	return b.String()
}
