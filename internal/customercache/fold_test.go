package customercache

import (
	"slices"
	"testing"

	"github.com/cpqportal/portal/internal/apiclient"
)

// TestSearchIgnoresPunctuationAccentsAndCase: "impianti spa" finds "Impianti S.p.A.", and the
// city and the owners are searched too, in both directions of folding.
func TestSearchIgnoresPunctuationAccentsAndCase(t *testing.T) {
	t.Parallel()
	items := []*apiclient.CustomerListItem{
		{ID: 1, Name: []byte("Impianti S.p.A."), TaxID: []byte("IT001"), Email: []byte("info@impianti.it"), City: []byte("Brescia"),
			Owners: []apiclient.CustomerListOwner{{OwnerID: 1, Name: []byte("Lucía García")}}},
		{ID: 2, Name: []byte("Gómez Distribuciones S.A."), TaxID: []byte("ES002"), Email: []byte("office@gomez-distribuciones.es"), City: []byte("Köln"),
			Owners: []apiclient.CustomerListOwner{{OwnerID: 2, Name: []byte("Anna Weber")}}},
		{ID: 3, Name: []byte("Conti & D'Angelo S.n.c."), TaxID: []byte("IT003"), Email: []byte("sales@conti-d-angelo.it"), City: []byte("Milano"),
			Owners: []apiclient.CustomerListOwner{{OwnerID: 1, Name: []byte("Lucía García")}}},
	}
	snap := buildSnapshot(t, items)
	ids := func(q string) []int32 {
		var out []int32
		for _, r := range snap.Search(Query{Text: q, Sort: SortByID, Limit: 10}).Rows {
			out = append(out, r.ID)
		}
		var walked []int32
		_ = snap.Walk(Query{Text: q, Sort: SortByID}, func(r Row) error { walked = append(walked, r.ID); return nil })
		if !slices.Equal(out, walked) {
			t.Errorf("%q: Search %v, Walk %v", q, out, walked)
		}
		return out
	}
	for q, want := range map[string][]int32{
		"impianti spa":            {1},
		"IMPIANTI S.P.A.":         {1},
		"impianti s.p.a":          {1},
		"gomez sa":                {2},
		"Gómez":                   {2},
		"d'angelo":                {3},
		"dangelo snc":             {3},
		"conti-d-angelo":          {3},
		"sales@conti-d-angelo.it": {3},
		"koln":                    {2},
		"Köln weber":              {2},
		"brescia":                 {1},
		"garcia":                  {1, 3},
		"García milano":           {3},
		"lucia impianti":          {1},
		"impianti weber":          nil,
		"&":                       {3},
		"a@example":               nil,
		".":                       {1, 2, 3},
		"IT003":                   {3},
	} {
		if got := ids(q); !slices.Equal(got, want) {
			t.Errorf("search %q: %v, want %v", q, got, want)
		}
	}
}
