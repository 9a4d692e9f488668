package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/cpqportal/portal/internal/export"
)

// The XLSX export's own memory (docs/performance.md "Back office"): what matters is that the
// export streams, so its extra memory must not grow with the row count. A child process (this
// binary in exportMemoryMode, so nothing else shares its heap) writes N customer rows, typed as
// the customer export's (internal/export, the same columns and kinds), to a counting discard
// writer, and reports its peak resident size over its size before the export and its peak Go
// heap. The group runs it for 100,000 and 1,000,000 rows; the two extras must be within 10 %.

// exportMemoryMode is the first argument that makes this binary the export's child process.
const exportMemoryMode = "-export-memory"

// exportMemoryRuns is how many times each size is measured.
const exportMemoryRuns = 3

// exportMemoryTolerance is how much the 1,000,000-row extra may exceed the 100,000-row one.
const exportMemoryTolerance = 0.10

// exportMemoryResult is what the child prints (JSON).
type exportMemoryResult struct {
	Rows        int     `json:"rows"`
	Seconds     float64 `json:"seconds"`
	FileMiB     float64 `json:"fileMiB"`
	RSSBefore   float64 `json:"rssBeforeMiB"`
	ExtraRSS    float64 `json:"extraRSSMiB"`
	PeakHeapMiB float64 `json:"peakHeapMiB"`
}

func measureExportMemory(ctx context.Context, rep *report, stderr io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var results []exportMemoryResult
	for _, rows := range []int{100_000, 1_000_000} {
		// The peak depends on when the collector runs against excelize's buffer growing (about
		// ±6 % from one run to the next): the run with the median extra of three counts.
		var runs []exportMemoryResult
		for range exportMemoryRuns {
			out, err := exec.CommandContext(ctx, self, exportMemoryMode, "-rows", strconv.Itoa(rows)).Output()
			if err != nil {
				return fmt.Errorf("export memory, %d rows: %w", rows, err)
			}
			var r exportMemoryResult
			if err := json.Unmarshal(out, &r); err != nil {
				return fmt.Errorf("export memory, %d rows: %w: %.200s", rows, err, out)
			}
			runs = append(runs, r)
		}
		slices.SortFunc(runs, func(a, b exportMemoryResult) int { return cmp.Compare(a.ExtraRSS, b.ExtraRSS) })
		r := runs[len(runs)/2]
		fmt.Fprintf(stderr, "portalbench: export of %d rows: extra RSS %.1f / %.1f / %.1f MiB\n", rows, runs[0].ExtraRSS, runs[1].ExtraRSS, runs[2].ExtraRSS)
		name := "export_xlsx_" + map[int]string{100_000: "100k", 1_000_000: "1m"}[rows]
		rep.add(name+"_seconds", r.Seconds, "s")
		rep.add(name+"_file_mb", r.FileMiB, "MiB")
		rep.add(name+"_extra_rss_mb", r.ExtraRSS, "MiB")
		rep.add(name+"_peak_heap_mb", r.PeakHeapMiB, "MiB")
		results = append(results, r)
	}
	ratio := results[1].ExtraRSS / results[0].ExtraRSS
	rep.add("export_xlsx_extra_rss_1m_over_100k", ratio, "x")
	if ratio > 1+exportMemoryTolerance {
		return fmt.Errorf("the export's extra memory grows with the rows: %.1f MiB for 1,000,000, %.1f MiB for 100,000 (%.2fx, at most %.2fx)",
			results[1].ExtraRSS, results[0].ExtraRSS, ratio, 1+exportMemoryTolerance)
	}
	return nil
}

// countingWriter discards what it is given and counts it.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// runExportMemory is the child: it writes the rows and prints an exportMemoryResult.
func runExportMemory(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("portalbench "+exportMemoryMode, flag.ContinueOnError)
	rows := fs.Int("rows", 100_000, "customer rows to export")
	if err := fs.Parse(args); err != nil {
		return err
	}
	columns := []export.Column{{Header: "id", Kind: export.Integer}, {Header: "name", Width: 32}, {Header: "tax id", Width: 16},
		{Header: "e-mail", Width: 28}, {Header: "segment", Width: 16}, {Header: "city", Width: 18}, {Header: "country", Width: 10},
		{Header: "owners", Width: 28}, {Header: "configurators", Width: 28}, {Header: "updated (UTC)", Kind: export.DateTime}}
	runtime.GC()
	debug.FreeOSMemory()
	before, err := selfMemoryMB("VmRSS")
	if err != nil {
		return err
	}
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return fmt.Errorf("reset the peak RSS: %w", err)
	}
	var peakHeap atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peakHeap.Load() {
				peakHeap.Store(v)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	t0 := time.Now()
	out := &countingWriter{}
	w, err := export.New(export.XLSX, out, export.Options{Sheet: "Customers", Columns: columns})
	if err != nil {
		return err
	}
	updated := time.Date(2024, 1, 15, 13, 0, 0, 0, time.UTC)
	cells := make([]any, 0, len(columns))
	for i := range *rows {
		id := strconv.Itoa(i + 1)
		cells = append(cells[:0], int64(i+1), "Customer "+id+" S.p.A.", "IT"+id, "office@customer-"+id+".example", "Business",
			"Milano", "IT", "Lucía García, Anna Weber", "Business Mobile, Fibre & Connectivity", updated.Add(time.Duration(i)*time.Minute))
		if err := w.WriteRow(cells); err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	elapsed := time.Since(t0)
	close(stop)
	<-sampled
	peak, err := selfMemoryMB("VmHWM")
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(exportMemoryResult{Rows: *rows, Seconds: elapsed.Seconds(), FileMiB: float64(out.n) / (1 << 20),
		RSSBefore: before, ExtraRSS: peak - before, PeakHeapMiB: float64(peakHeap.Load()) / (1 << 20)})
}

// selfMemoryMB reads a field of /proc/self/status in MiB.
func selfMemoryMB(field string) (float64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	return statusFieldMB(string(data), field)
}
