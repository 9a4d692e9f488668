package quota

import "testing"

// TestInFlightPerUser: a user's slots run out at the maximum and come back on release; other
// users are not counted; a release called twice gives one slot back.
func TestInFlightPerUser(t *testing.T) {
	q := NewInFlight(2)
	r1, ok1 := q.Acquire("alice")
	_, ok2 := q.Acquire("alice")
	if !ok1 || !ok2 {
		t.Fatal("alice's first two")
	}
	if _, ok := q.Acquire("alice"); ok {
		t.Fatal("alice's third while two run")
	}
	if _, ok := q.Acquire("bob"); !ok {
		t.Fatal("bob is counted with alice")
	}
	r1()
	r1()
	if _, ok := q.Acquire("alice"); !ok {
		t.Fatal("a released slot did not come back")
	}
	if _, ok := q.Acquire("alice"); ok {
		t.Fatal("a double release gave two slots back")
	}
}
