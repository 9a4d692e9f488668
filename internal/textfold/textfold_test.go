package textfold

import "testing"

func TestFold(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Impianti S.p.A.":           "impianti spa",
		"Conti & D'Angelo S.n.c.":   "conti & dangelo snc",
		"Gómez Distribuciones S.A.": "gomez distribuciones sa",
		"Lucía García, Anna Weber":  "lucia garcia, anna weber",
		"Köln":                      "koln",
		"  l’Étoile—Paris  ":        "letoile—paris",
		"ÅLESUND":                   "alesund",
		"":                          "",
		"...":                       "",
		"A@B-C":                     "a@b-c",
	} {
		if got := Fold(in); got != want {
			t.Errorf("Fold(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzFold(f *testing.F) {
	for _, s := range []string{"Impianti S.p.A.", "Ärzte", "\xff\xfe", "ﬁ", "İstanbul"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		folded := Fold(s)
		if Fold(folded) != folded {
			t.Fatalf("Fold is not idempotent on %q: %q then %q", s, folded, Fold(folded))
		}
	})
}
