package customercache

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/apiclient"
)

// randomItems are customers with names that share long prefixes, mixed case, non-ASCII letters
// and equal values, so that the sort keys' prefixes tie often.
func randomItems(n int, seed uint64) []*apiclient.CustomerListItem {
	rng := rand.New(rand.NewPCG(seed, 1))
	prefixes := []string{"Istituto Comprensivo ", "istituto comprensivo ", "Comune di ", "Ärzte ", "ärzte ", "Z", "", "Società "}
	cities := []string{"Milano", "milano", "Brescia", "Zürich", "", "Ålesund"}
	var out []*apiclient.CustomerListItem
	for i := range n {
		name := prefixes[rng.IntN(len(prefixes))] + fmt.Sprintf("%c%d", 'A'+rng.IntN(26), rng.IntN(5))
		out = append(out, &apiclient.CustomerListItem{
			ID: int32(i + 1), Name: []byte(name), TaxID: []byte(fmt.Sprintf("IT%03d", rng.IntN(50))),
			Email: []byte(strings.ToLower(name[:min(len(name), 5)]) + "@x.it"), Segment: []byte([]string{"BUSINESS", "PUBLIC", ""}[rng.IntN(3)]),
			City: []byte(cities[rng.IntN(len(cities))]), UpdatedAt: time.Unix(int64(rng.IntN(1000))*3600, 0),
			Owners: []apiclient.CustomerListOwner{{OwnerID: int64(rng.IntN(3)), Name: []byte("Owner")}}, CPQIDs: []int32{int32(rng.IntN(3))},
		})
	}
	return out
}

func buildSnapshot(t *testing.T, items []*apiclient.CustomerListItem) *Snapshot {
	t.Helper()
	b := newBuilder()
	for _, it := range items {
		if err := b.add(it); err != nil {
			t.Fatal(err)
		}
	}
	return b.build(`"e"`)
}

// TestSortOrdersMatchSortRows checks the prefix-keyed orders against SortRows, the plain
// comparison of the rows, for every key and both directions.
func TestSortOrdersMatchSortRows(t *testing.T) {
	t.Parallel()
	snap := buildSnapshot(t, randomItems(3000, 7))
	// An update adds a dictionary value equal to an existing one (ranks must tie).
	next, err := snap.withCustomer(&apiclient.Customer{ID: 5, Name: "istituto comprensivo A1", TaxID: "IT001", Segment: "PUBLIC", Address: apiclient.Address{City: "Milano"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Snapshot{snap, next} {
		var all []Row
		_ = s.Walk(Query{Sort: SortByID}, func(r Row) error { all = append(all, r); return nil })
		for k := range numSortKeys {
			for _, desc := range []bool{false, true} {
				want := slices.Clone(all)
				SortRows(want, k, desc)
				got := s.Search(Query{Sort: k, Desc: desc, Limit: len(all)}).Rows
				for i := range want {
					if got[i].ID != want[i].ID {
						t.Fatalf("sort %s desc %v: row %d is %d (%q), want %d (%q)", k, desc, i, got[i].ID, got[i].Name, want[i].ID, want[i].Name)
					}
				}
			}
		}
	}
}

// TestBuilderHostileItems: huge, empty, non-ASCII and invalid UTF-8 fields are kept (clipped to
// the row's limits) and searchable; many customers spread over several text chunks.
func TestBuilderHostileItems(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("Ω", 100_000)
	items := []*apiclient.CustomerListItem{
		{ID: 3, Name: []byte(huge), TaxID: []byte("X"), Email: []byte("Ä@EXAMPLE.com")},
		{ID: 1},
		{ID: 2, Name: []byte("Café Ünïcode"), Email: []byte("ann@example.com"), City: []byte("Zürich"), CPQIDs: []int32{4, 2}},
		{ID: 2, Name: []byte("second with the same id")},
	}
	for i := range 60_000 { // about 6 MiB of text: several chunks
		items = append(items, &apiclient.CustomerListItem{ID: int32(1_000_000 + i), Name: []byte(fmt.Sprintf("Customer %d with a longish name for the chunks", i)), TaxID: []byte("IT1")})
	}
	snap := buildSnapshot(t, items)
	if len(snap.text) < 3 {
		t.Errorf("%d text chunks, want several", len(snap.text))
	}
	r, ok := snap.Lookup(3)
	if !ok || len(r.Name) > 8191 || !strings.HasPrefix(huge, r.Name) || r.Email != "Ä@EXAMPLE.com" {
		t.Errorf("huge name: %d bytes, email %q", len(r.Name), r.Email)
	}
	r, _ = snap.Lookup(2)
	if r.Name != "Café Ünïcode" || r.City != "Zürich" || !slices.Equal(r.CPQIDs, []int32{4, 2}) {
		t.Errorf("unicode row %+v (the first of two with id 2 is kept)", r)
	}
	for q, want := range map[string]int32{"café ünï": 2, "ä@example": 3, "customer 59999 with": 1_059_999} {
		res := snap.Search(Query{Text: q, Limit: 5})
		if res.Total != 1 || res.Rows[0].ID != want {
			t.Errorf("search %q: %+v, want customer %d", q, res, want)
		}
	}
	if snap.Len() != 60_003 {
		t.Errorf("%d customers, want 60003", snap.Len())
	}
	last, _ := snap.Lookup(1_059_999)
	if last.Name != "Customer 59999 with a longish name for the chunks" {
		t.Errorf("last customer %q", last.Name)
	}
}

// TestSearchesReuseTheirScratch checks that a keystroke on a warm snapshot does not allocate
// its masks (one word per combination of city, owners...) and its bitmap of matches anew: they
// were most of a search's garbage, which a busy list piled up on top of the cached lists until
// the next collection (docs/performance.md, "Resident memory of the list and the stream").
// Not parallel: it reads the process's allocation counter.
func TestSearchesReuseTheirScratch(t *testing.T) {
	items := randomItems(50_000, 11)
	for i, it := range items {
		it.City = []byte(fmt.Sprintf("Town %d", i%8000)) // thousands of combinations, as a real list has
	}
	snap := buildSnapshot(t, items)
	scratch := uint64(len(snap.attrs)*8 + (len(snap.rows)+63)/64*8)
	if len(snap.attrs) < 8000 {
		t.Fatalf("%d combinations, want at least 8000", len(snap.attrs))
	}
	queries := []Query{{Text: "town 12", Sort: SortByName, Limit: 25}, {Text: "istituto a", Sort: SortByCity, Limit: 25}}
	for _, q := range queries { // the first searches make the combinations' texts and the orders
		if res := snap.Search(q); res.Total == 0 {
			t.Fatalf("%q: no match", q.Text)
		}
	}
	const searches = 40
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range searches {
		snap.Search(queries[i%len(queries)])
	}
	runtime.ReadMemStats(&after)
	perSearch := (after.TotalAlloc - before.TotalAlloc) / searches
	if perSearch > scratch/4 {
		t.Errorf("a search allocates %d bytes, want well under its scratch's %d (reused, not made anew)", perSearch, scratch)
	}
	// Walk (the export) uses the same scratch and finds what Search finds.
	var walked int
	if err := snap.Walk(queries[0], func(Row) error { walked++; return nil }); err != nil {
		t.Fatal(err)
	}
	if want := snap.Search(queries[0]).Total; walked != want {
		t.Errorf("Walk found %d, Search %d", walked, want)
	}
}
