package worklist

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/i18n"
)

type fakeSource map[int64]Audit

func (f fakeSource) Audit(_ context.Context, id int64) (Audit, error) {
	a, ok := f[id]
	if !ok {
		return Audit{}, ErrNotFound
	}
	return a, nil
}

func (f fakeSource) CustomerName(_ context.Context, id int32) (string, error) {
	if id == 9 {
		return "", errors.New("down")
	}
	return map[int32]string{1: "Acme", 2: "Globex"}[id], nil
}

func day(d int) time.Time { return time.Date(2026, 11, d, 10, 0, 0, 0, time.UTC) }

func TestGatherAndFilter(t *testing.T) {
	src := fakeSource{
		1: {CustomerID: 1, Entries: []Row{{At: day(1), Actor: "sam", Action: "QUOTE_CREATED"}, {At: day(3), Actor: "bea", Action: "CUSTOMER_UPDATED",
			Changes: []Change{{"name", "Old", "New"}}}}},
		2: {CustomerID: 2, Entries: []Row{{At: day(2), Actor: "sam", Action: "CART_ADDED"}}},
	}
	rows, problems, err := Gather(context.Background(), src, []int64{1, 2, 3}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0].At != day(3) || rows[0].Customer != "Acme" || rows[1].Customer != "Globex" {
		t.Fatalf("rows %+v", rows)
	}
	if len(problems) != 1 || problems[0].QuoteID != 3 {
		t.Fatalf("problems %+v", problems)
	}
	bundle, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	if got := rows[0].ChangesText(bundle.Translator(i18n.Source)); got != "Name: Old -> New" {
		t.Fatalf("changes %q", got)
	}
	for name, tc := range map[string]struct {
		f    Filter
		want int
	}{
		"none":     {Filter{}, 3},
		"from":     {Filter{From: day(2).Truncate(24 * time.Hour)}, 2},
		"to":       {Filter{To: day(2).Truncate(24 * time.Hour)}, 2},
		"range":    {Filter{From: day(2).Truncate(24 * time.Hour), To: day(2).Truncate(24 * time.Hour)}, 1},
		"user":     {Filter{User: "SAM"}, 2},
		"action":   {Filter{Action: "CUSTOMER_UPDATED"}, 1},
		"customer": {Filter{Customer: "glob"}, 1},
		"id":       {Filter{Customer: "2"}, 1},
	} {
		if got := len(tc.f.Apply(rows)); got != tc.want {
			t.Errorf("%s: %d rows, want %d", name, got, tc.want)
		}
	}
}

func TestParseQuoteIDs(t *testing.T) {
	ids, err := ParseQuoteIDs("900001, 900002\n900001", "900003")
	if err != nil || len(ids) != 3 || ids[2] != 900003 {
		t.Fatalf("%v %v", ids, err)
	}
	for _, bad := range []string{"12a", "-1", "0", "007", "99999999999999999999"} {
		if _, err := ParseQuoteIDs(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestFilterDaysInTheReadersZone: a day filter means the reader's day, not UTC's.
func TestFilterDaysInTheReadersZone(t *testing.T) {
	rome, err := time.LoadLocation("Europe/Rome")
	if err != nil {
		t.Skip(err)
	}
	lateUTC := Row{At: time.Date(2026, 11, 2, 23, 30, 0, 0, time.UTC)} // 3 November, 00:30 in Rome
	nov3 := time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)
	if got := (Filter{From: nov3, To: nov3, Zone: rome}).Apply([]Row{lateUTC}); len(got) != 1 {
		t.Error("an entry of 3 November in Rome is left out of 3 November")
	}
	if got := (Filter{From: nov3, To: nov3}).Apply([]Row{lateUTC}); len(got) != 0 {
		t.Error("in UTC the entry is of 2 November")
	}
}

// slowSource answers every audit at once and every customer name after a pause, counting the
// name reads, so workers ask for the same name while its read runs.
type slowSource struct {
	mu        sync.Mutex
	nameReads map[int32]int
}

func (s *slowSource) Audit(_ context.Context, id int64) (Audit, error) {
	return Audit{CustomerID: int32(id % 2), Entries: []Row{{At: day(1), Actor: "sam", Action: "QUOTE_CREATED"}}}, nil
}

func (s *slowSource) CustomerName(_ context.Context, id int32) (string, error) {
	s.mu.Lock()
	s.nameReads[id]++
	s.mu.Unlock()
	time.Sleep(20 * time.Millisecond)
	return "Customer " + strconv.Itoa(int(id)), nil
}

// TestGatherReadsEachCustomerOnce: ten quotes of two customers read each customer's name once,
// even when workers ask for it at the same moment (issue 27: shared in-flight lookups).
func TestGatherReadsEachCustomerOnce(t *testing.T) {
	src := &slowSource{nameReads: map[int32]int{}}
	ids := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	rows, problems, err := Gather(context.Background(), src, ids, len(ids))
	if err != nil || len(problems) != 0 || len(rows) != len(ids) {
		t.Fatalf("rows %d, problems %v, err %v", len(rows), problems, err)
	}
	for _, r := range rows {
		if r.Customer != "Customer "+strconv.Itoa(int(r.CustomerID)) {
			t.Errorf("quote %d: customer %q", r.QuoteID, r.Customer)
		}
	}
	if len(src.nameReads) != 2 || src.nameReads[0] != 1 || src.nameReads[1] != 1 {
		t.Errorf("customer name reads %v, want one per customer", src.nameReads)
	}
}
