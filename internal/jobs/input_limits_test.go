package jobs

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/cpqportal/portal/internal/jobs/jobstest"
	"github.com/cpqportal/portal/internal/sheetread/sheettest"
)

// TestZipBombWorkbookIsRefusedSmall: a workbook of a few hundred KB that inflates to 256 MiB is
// refused with a message for the person, and reading it allocates a few MiB, not the bomb.
func TestZipBombWorkbookIsRefusedSmall(t *testing.T) {
	bomb, err := jobstest.ZipBombXLSX([]string{"C-1", "C-2"}, 256<<20)
	if err != nil {
		t.Fatal(err)
	}
	if len(bomb) > 1<<20 {
		t.Fatalf("the bomb is %d bytes, meant to be small", len(bomb))
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = ParseFile(context.Background(), "list.xlsx", bomb)
	runtime.ReadMemStats(&after)
	var input *InputError
	if !errors.As(err, &input) || input.Message.Key != "batch.file.inflates_too_much" {
		t.Fatalf("bomb: %v", err)
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 32<<20 {
		t.Fatalf("reading the bomb allocated %d MiB", allocated>>20)
	}
}

// TestRowsPastTheMaximumAreRefusedWhileReading: MaxItems numbers are read, one more is refused
// (CSV and XLSX), and blank rows keep the numbers' own row numbers.
func TestRowsPastTheMaximumAreRefusedWhileReading(t *testing.T) {
	csvOf := func(n int) []byte {
		var b strings.Builder
		b.WriteString("Contract number\n")
		for i := range n {
			fmt.Fprintf(&b, "C-%d\n", i)
		}
		return []byte(b.String())
	}
	if entries, err := ParseFile(context.Background(), "list.csv", csvOf(MaxItems)); err != nil || len(entries) != MaxItems {
		t.Fatalf("%d numbers: %d entries, %v", MaxItems, len(entries), err)
	}
	var input *InputError
	if _, err := ParseFile(context.Background(), "list.csv", csvOf(MaxItems+1)); !errors.As(err, &input) || input.Message.Key != "batch.file.too_many_rows" {
		t.Fatalf("%d numbers in a CSV: %v", MaxItems+1, err)
	}

	f := excelize.NewFile()
	defer f.Close()
	sw, err := f.NewStreamWriter("Sheet1")
	if err != nil {
		t.Fatal(err)
	}
	_ = sw.SetRow("A1", []any{"Contract number"})
	for i := range MaxItems + 1 {
		_ = sw.SetRow(fmt.Sprintf("A%d", i+3), []any{fmt.Sprintf("C-%d", i)}) // row 2 blank
	}
	if err := sw.Flush(); err != nil {
		t.Fatal(err)
	}
	buf, err := f.WriteToBuffer()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseFile(context.Background(), "list.xlsx", buf.Bytes()); !errors.As(err, &input) || input.Message.Key != "batch.file.too_many_rows" {
		t.Fatalf("%d numbers in a workbook: %v", MaxItems+1, err)
	}

	small := excelize.NewFile()
	defer small.Close()
	_ = small.SetCellValue("Sheet1", "A1", "Vertragsnummer")
	_ = small.SetCellValue("Sheet1", "A3", "C-9")
	sbuf, _ := small.WriteToBuffer()
	entries, err := ParseFile(context.Background(), "liste.xlsx", sbuf.Bytes())
	if err != nil || len(entries) != 1 || entries[0] != (Entry{Line: 3, Number: "C-9"}) {
		t.Fatalf("entries %+v, %v", entries, err)
	}
}

// TestHostileListIsRefusedSmall: the tester's list (5,000 contract numbers, each row with a cell
// at column XFD: 42 KB that took 1.6 GB and 155 s when every row was padded to 16,384 cells) is
// refused with the column and the row, allocating under a MiB; a NUL in a number is refused with
// its line; a cancelled read ends as ErrReadCancelled, a passed deadline as "took too long".
func TestHostileListIsRefusedSmall(t *testing.T) {
	data := sheettest.XFDPerRow(MaxItems)
	var err error
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = ParseFile(context.Background(), "list.xlsx", data)
	runtime.ReadMemStats(&after)
	var input *InputError
	if !errors.As(err, &input) || input.Message.Key != "batch.file.too_many_columns" || fmt.Sprint(input.Message.Args) != "[64 2 XFD]" {
		t.Fatalf("XFD list: %v", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Fatalf("refusing the XFD list allocated %d KiB", n>>10)
	}
	if _, err := ParseFile(context.Background(), "list.csv", []byte("Contract number\nC-1\nC-\x002\n")); !errors.As(err, &input) || input.Message.Key != "batch.file.nul" || fmt.Sprint(input.Message.Args) != "[3]" {
		t.Fatalf("NUL: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ParseFile(ctx, "list.xlsx", sheettest.XFDPerRow(0)); err != nil {
		t.Fatalf("a file of one row is read before the context is looked at: %v", err)
	}
	var rows strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&rows, "C-%d\n", i)
	}
	if _, err := ParseFile(ctx, "list.csv", []byte(rows.String())); !errors.Is(err, ErrReadCancelled) {
		t.Fatalf("cancelled: %v", err)
	}
	dead, stop := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer stop()
	if _, err := ParseFile(dead, "list.csv", []byte(rows.String())); !errors.As(err, &input) || input.Message.Key != "batch.file.too_slow" {
		t.Fatalf("deadline: %v", err)
	}
}
