package customerimport

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/sheetread/sheettest"
)

// TestParseHostileWorkbooksAreRefusedSmall: the tester's files (20,000 and 1.5 million rows of
// blank formulas at column XFD: 25 CPU-seconds, and over 5 minutes of 1.2 cores that outlived the
// request) and 1.5 million blank rows in column B are refused with a message naming the limit,
// allocating a few MiB at most.
func TestParseHostileWorkbooksAreRefusedSmall(t *testing.T) {
	r := testReader(t)
	cases := []struct {
		name string
		data []byte
		key  string
		args string
		// allocated bounds what refusing allocates in all (garbage included: a bound on the peak).
		allocated uint64
	}{
		{"20,000 blank formulas at XFD", sheettest.BlankFormulaRows(20_000), "import.file.too_many_columns", "[64 2 XFD]", 1 << 20},
		// 75 MB of sheet XML: refused by the sizes the zip declares, before any XML is read.
		{"1,500,000 blank formulas at XFD", sheettest.BlankFormulaRows(1_500_000), "import.file.inflates_too_much", "[25165824]", 1 << 20},
		// 20,000 rows read as tokens, then refused.
		{"500,000 blank rows", sheettest.BlankRows(500_000), "import.file.too_many_rows", fmt.Sprintf("[%d]", 2*MaxLines), 32 << 20},
	}
	for _, c := range cases {
		var err error
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err = r.Parse(context.Background(), "hostile.xlsx", c.data)
		runtime.ReadMemStats(&after)
		var input *InputError
		if !errors.As(err, &input) || input.Message.Key != c.key {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if fmt.Sprint(input.Message.Args) != c.args {
			t.Errorf("%s: args %v, want %s", c.name, input.Message.Args, c.args)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > c.allocated {
			t.Errorf("%s: refusing allocated %d MiB", c.name, n>>20)
		}
	}
}

// TestParseRefusesNULWithItsLine: a NUL character in a cell (which PostgreSQL cannot store: it
// was a 500) is refused with the line it is on, in a CSV file and in a workbook.
func TestParseRefusesNULWithItsLine(t *testing.T) {
	r := testReader(t)
	_, err := r.Parse(context.Background(), "a.csv", []byte("Name;Tax id\nAcme;IT01234567890\nBad\x00Name;IT01234567891\n"))
	var input *InputError
	if !errors.As(err, &input) || input.Message.Key != "import.file.nul" || fmt.Sprint(input.Message.Args) != "[3]" {
		t.Fatalf("CSV: %v", err)
	}
	data := sheettest.Sheet(`<row r="1"><c r="A1" t="inlineStr"><is><t>Name</t></is></c><c r="B1" t="inlineStr"><is><t>Tax id</t></is></c></row>` +
		`<row r="4"><c r="A4" t="inlineStr"><is><t>Bad` + "\x00" + `</t></is></c></row>`)
	if _, err := r.Parse(context.Background(), "a.xlsx", data); !errors.As(err, &input) || input.Message.Key != "import.file.nul" || fmt.Sprint(input.Message.Args) != "[4]" {
		t.Fatalf("XLSX: %v", err)
	}
}

// TestParseEndsWithItsContext: a read whose request went away ends as ErrReadCancelled, one past
// its deadline says it took too long; neither reads the rest of the file.
func TestParseEndsWithItsContext(t *testing.T) {
	r := testReader(t)
	var b strings.Builder
	b.WriteString("Name;Tax id\n")
	for i := range MaxLines {
		fmt.Fprintf(&b, "Customer %d;IT%011d\n", i, i)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Parse(ctx, "a.csv", []byte(b.String())); !errors.Is(err, ErrReadCancelled) {
		t.Fatalf("cancelled: %v", err)
	}
	dead, stop := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer stop()
	var input *InputError
	if _, err := r.Parse(dead, "a.csv", []byte(b.String())); !errors.As(err, &input) || input.Message.Key != "import.file.too_slow" {
		t.Fatalf("deadline: %v", err)
	}
}
