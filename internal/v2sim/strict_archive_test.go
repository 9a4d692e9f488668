package v2sim

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestStrictArchiveRefusesASecondArchive: in strict archive mode the first archive of a contract
// succeeds, the second answers 409 and is counted; without it the second answers the same archive.
func TestStrictArchiveRefusesASecondArchive(t *testing.T) {
	for _, strict := range []bool{true, false} {
		s := New(Options{StrictArchive: strict})
		t.Cleanup(func() { _ = s.Close() })
		numbers, err := s.SeedContracts(2)
		if err != nil || len(numbers) != 2 {
			t.Fatalf("seed: %v %v", numbers, err)
		}
		archive := func(number string) int {
			req := httptest.NewRequest(http.MethodGet, "/v2/contract/contractNumber/"+number+"/archive", nil)
			req.Header.Set("Authorization", "Bearer any")
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			return rec.Code
		}
		if got := archive(numbers[0]); got != http.StatusOK {
			t.Fatalf("strict=%v: first archive answered %d", strict, got)
		}
		want := http.StatusOK
		if strict {
			want = http.StatusConflict
		}
		if got := archive(numbers[0]); got != want {
			t.Fatalf("strict=%v: second archive answered %d, want %d", strict, got, want)
		}
		if got := archive(numbers[1]); got != http.StatusOK {
			t.Fatalf("strict=%v: other contract answered %d", strict, got)
		}
		wantConflicts := 0
		if strict {
			wantConflicts = 1
		}
		if got := s.ArchiveConflicts(); got != wantConflicts {
			t.Fatalf("strict=%v: %d conflicts counted, want %d", strict, got, wantConflicts)
		}
	}
}
