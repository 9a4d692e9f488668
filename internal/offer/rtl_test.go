package offer

import "testing"

func TestVisualOrderOfRightToLeftRuns(t *testing.T) {
	t.Parallel()
	tests := []struct{ logical, visual string }{
		{"Ltd only", "Ltd only"},
		{"שלום Ltd", "םולש Ltd"},
		{"Cart: חנות 12 (ראשית)", "Cart: (תישאר) 12 תונח"},
		{"חנות 1,250.50", "1,250.50 תונח"},
		{"שָׁלוֹם", "םוֹלשָׁ"}, // points stay after their letters
		{"a שלום b", "a םולש b"},
	}
	for _, tt := range tests {
		if got := string(visualOrder([]rune(tt.logical))); got != tt.visual {
			t.Errorf("visualOrder(%q) = %q, want %q", tt.logical, got, tt.visual)
		}
	}
}

func TestArabicLettersTakeTheirJoinedForms(t *testing.T) {
	t.Parallel()
	s := newArabicShaper()
	tests := []struct{ logical, shaped string }{
		{"شركة", "\uFEB7\uFEAE\uFEDB\uFE94"}, // initial, final (joins only backwards), initial, final
		{"سلام", "\uFEB3\uFEFC\uFEE1"},       // lam-alef ligature, final after a joining letter
		{"لا", "\uFEFB"},                     // lam-alef alone: isolated
		{"ب", "\uFE8F"},                      // isolated
		{"ببب", "\uFE91\uFE92\uFE90"},        // initial, medial, final
		{"بَب", "\uFE91\u064E\uFE90"},        // a mark between letters leaves their joining alone
	}
	for _, tt := range tests {
		if got := string(s.shape([]rune(tt.logical))); got != tt.shaped {
			t.Errorf("shape(%q) = %+q, want %+q", tt.logical, got, tt.shaped)
		}
	}
}
