package lease

import (
	"context"
	"sync"
	"time"
)

// Loop is the goroutine each replica runs a schedule's work on: a tick at once, then every
// interval (or sooner when woken), until Close; each tick looks for work this replica may do (a
// lease's Do, or rows to claim: the outbox's mails, the jobs). The inbox's scans, the bounce
// poll, the outbox's worker and the job manager's scan tick on one each. The zero Loop is ready
// to Start.
type Loop struct {
	mu   sync.Mutex
	stop context.CancelFunc
	done chan struct{}
	wake chan struct{}
}

// Start starts the loop, calling tick with a context that ends at Close. A loop runs once: a
// Start after the first (or after Close) does nothing.
func (l *Loop) Start(interval time.Duration, tick func(ctx context.Context)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stop != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	l.stop, l.done = cancel, make(chan struct{})
	wake := l.wakeLocked()
	go func() {
		defer close(l.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			tick(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-wake:
			}
		}
	}()
}

// Wake makes the loop tick now (after the tick in flight); a wake before Start makes the first
// tick's successor come at once.
func (l *Loop) Wake() {
	l.mu.Lock()
	wake := l.wakeLocked()
	l.mu.Unlock()
	select {
	case wake <- struct{}{}:
	default:
	}
}

func (l *Loop) wakeLocked() chan struct{} {
	if l.wake == nil {
		l.wake = make(chan struct{}, 1)
	}
	return l.wake
}

// Close stops the loop after the tick in flight (whose context ends) and waits for it; before
// Start it does nothing.
func (l *Loop) Close() {
	l.mu.Lock()
	stop, done := l.stop, l.done
	l.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}
