package watch

import (
	"testing"
	"time"
)

func TestSignalsWakeOnlyTheKeysWaiters(t *testing.T) {
	t.Parallel()
	s := NewSignals()
	a, b := s.Changed("job:a"), s.Changed("job:b")
	s.Notify("job:a")
	select {
	case <-a:
	case <-time.After(time.Second):
		t.Fatal("the waiter of job:a was not woken")
	}
	select {
	case <-b:
		t.Fatal("the waiter of job:b was woken by job:a")
	default:
	}
	if next := s.Changed("job:a"); next == a {
		t.Fatal("a woken key's next wait reuses the closed channel")
	}
	s.Notify("job:none") // nobody waits: nothing happens
}
