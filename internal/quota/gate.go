package quota

import (
	"context"
	"errors"
	"sync"
)

// ErrUserBusy: the user already has an operation of the gate in flight.
var ErrUserBusy = errors.New("quota: the user has one in flight")

// ErrBusy: the replica's slots stayed taken until the caller's context ended.
var ErrBusy = errors.New("quota: every slot of the replica is taken")

// Gate bounds an operation both per user and across the replica (the reading of uploaded
// spreadsheets: each takes a core and some MiB while it runs, so a replica bounds how many run at
// once, and one person cannot queue a line of them).
type Gate struct {
	users *InFlight
	slots chan struct{}
}

// NewGate allows perUser operations in flight per user and total across the replica (each at
// least 1).
func NewGate(perUser, total int) *Gate {
	return &Gate{users: NewInFlight(perUser), slots: make(chan struct{}, max(total, 1))}
}

// Acquire takes one of user's slots at once (ErrUserBusy when they are taken) and then one of the
// replica's, waiting for it until ctx ends (ErrBusy). release gives both back; call it once.
func (g *Gate) Acquire(ctx context.Context, user string) (release func(), err error) {
	releaseUser, ok := g.users.Acquire(user)
	if !ok {
		return nil, ErrUserBusy
	}
	select {
	case g.slots <- struct{}{}:
	case <-ctx.Done():
		releaseUser()
		return nil, ErrBusy
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			<-g.slots
			releaseUser()
		})
	}, nil
}
