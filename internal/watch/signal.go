package watch

import "sync"

// Signals wakes whoever waits on a key when it changes in this process (issue 27: a batch's
// progress page learns of the batch's end the moment the jobs manager writes it, instead of at its
// next poll). A signal carries no data: the waiter reads the state itself, so what it shows is
// still read the usual way. Other replicas' changes are not signalled; waiters also look again on
// their own after a short time.
type Signals struct {
	mu    sync.Mutex
	chans map[string]chan struct{}
}

// NewSignals returns an empty set of signals.
func NewSignals() *Signals { return &Signals{chans: map[string]chan struct{}{}} }

// Changed returns a channel closed at the next Notify of key.
func (s *Signals) Changed(key string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ok := s.chans[key]
	if !ok {
		ch = make(chan struct{})
		s.chans[key] = ch
	}
	return ch
}

// Notify wakes the waiters of key. Keys nobody waits on cost nothing.
func (s *Signals) Notify(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ch, ok := s.chans[key]; ok {
		close(ch)
		delete(s.chans, key)
	}
}
