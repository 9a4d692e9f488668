package handlers

import (
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

func TestParseID(t *testing.T) {
	t.Parallel()
	const max32 = 2147483647
	good := []struct {
		raw  string
		max  int64
		want int64
	}{
		{"1", max32, 1},
		{"17", max32, 17},
		{"007", max32, 7},
		{"2147483647", max32, max32},
		{"9223372036854775807", 9223372036854775807, 9223372036854775807},
		{"2147483648", 9223372036854775807, 2147483648},
	}
	for _, tt := range good {
		got, err := parseID(tt.raw, "id", tt.max)
		if err != nil || got != tt.want {
			t.Errorf("parseID(%q) = %d, %v; want %d", tt.raw, got, err, tt.want)
		}
	}
	bad := []struct {
		raw string
		max int64
	}{
		{"", max32}, {"0", max32}, {"00", max32}, {"-1", max32}, {"+1", max32}, {" 1", max32}, {"1 ", max32},
		{"abc", max32}, {"1e3", max32}, {"0x10", max32}, {"1.0", max32}, {"١٢", max32}, // Arabic-Indic digits
		{"2147483648", max32}, {"9223372036854775808", 9223372036854775807}, {"99999999999999999999", 9223372036854775807},
	}
	for _, tt := range bad {
		_, err := parseID(tt.raw, "customerId", tt.max)
		var br *badRequestError
		if !errors.As(err, &br) {
			t.Errorf("parseID(%q): err = %v, want a badRequestError", tt.raw, err)
			continue
		}
		if !strings.Contains(fmt.Sprint(br.msg.Args...), "customerId") {
			t.Errorf("parseID(%q): message %q does not name the parameter", tt.raw, br.msg)
		}
	}
}

func TestValidateContractNumber(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"C-2026-000042", "Vertrag Nr. 7/2026", "契約-1", strings.Repeat("x", 200), strings.Repeat("é", 200)} {
		if err := validateContractNumber(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", strings.Repeat("x", 201), "C-1\n", "C\x00", "C\u0085", string([]byte{0xff, 0xfe})} {
		err := validateContractNumber(bad)
		var br *badRequestError
		if !errors.As(err, &br) {
			t.Errorf("%q: err = %v, want a badRequestError", bad, err)
		}
	}
}

func FuzzParseID(f *testing.F) {
	for _, seed := range []string{"1", "0", "-1", "2147483647", "2147483648", "abc", "1e9", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		n, err := parseID(raw, "id", 2147483647)
		if err == nil && (n < 1 || n > 2147483647) {
			t.Fatalf("parseID(%q) accepted out-of-range %d", raw, n)
		}
		if err == nil {
			for _, r := range raw {
				if r < '0' || r > '9' {
					t.Fatalf("parseID(%q) accepted a non-digit", raw)
				}
			}
		}
	})
}

func TestPathParamHelpers(t *testing.T) {
	t.Parallel()
	c, _ := gin.CreateTestContext(httptest.NewRecorder())
	c.Params = gin.Params{{Key: "customerId", Value: "17"}, {Key: "quoteId", Value: "9000000001"}, {Key: "contractNumber", Value: "C-2026-000042"}, {Key: "bad", Value: "x"}}
	if id, err := parseInt32ID(c, "customerId"); err != nil || id != 17 {
		t.Errorf("parseInt32ID = %d, %v", id, err)
	}
	if id, err := parseInt64ID(c, "quoteId"); err != nil || id != 9000000001 {
		t.Errorf("parseInt64ID = %d, %v", id, err)
	}
	if _, err := parseInt32ID(c, "quoteId"); err == nil {
		t.Error("an int64 quote id passed as int32")
	}
	if _, err := parseInt64ID(c, "bad"); err == nil {
		t.Error("non-numeric id accepted")
	}
	if _, err := parseInt32ID(c, "missing"); err == nil {
		t.Error("missing parameter accepted")
	}
	if n, err := contractNumberParam(c, "contractNumber"); err != nil || n != "C-2026-000042" {
		t.Errorf("contractNumberParam = %q, %v", n, err)
	}
	if _, err := contractNumberParam(c, "missing"); err == nil {
		t.Error("empty contract number accepted")
	}
}
