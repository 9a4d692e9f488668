package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// report collects the figures: each is printed as "name: value unit" when added and written to the
// results file at the end.
type report struct {
	mu      sync.Mutex
	stdout  io.Writer
	stderr  io.Writer
	machine string
	names   []string
	values  map[string]float64
}

func newReport(stdout, stderr io.Writer) *report {
	return &report{stdout: stdout, stderr: stderr, values: map[string]float64{}}
}

// add records and prints one figure. Values are rounded to 3 decimals (ms, MB/s and ratios need no more).
func (r *report) add(name string, value float64, unit string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	value = round3(value)
	if _, seen := r.values[name]; !seen {
		r.names = append(r.names, name)
	}
	r.values[name] = value
	fmt.Fprintf(r.stdout, "%s: %s %s\n", name, strconv.FormatFloat(value, 'f', -1, 64), unit)
}

// pending notes on stderr that a group could not be measured yet (its page does not exist).
func (r *report) pending(group, reason string) {
	fmt.Fprintf(r.stderr, "portalbench: %s PENDING: %s\n", group, reason)
}

func round3(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return math.Round(v*1000) / 1000
}

// write stores the figures as one JSON object, in the order they were measured, plus "machine".
func (r *report) write(path string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	b.WriteString("{\n")
	machine, _ := json.Marshal(r.machine)
	fmt.Fprintf(&b, "  %q: %s", "machine", machine)
	for _, name := range r.names {
		fmt.Fprintf(&b, ",\n  %q: %s", name, strconv.FormatFloat(r.values[name], 'f', -1, 64))
	}
	b.WriteString("\n}\n")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return nil
}

// machineDescription is "nproc N, <CPU model>, <Go version>" of this machine.
func machineDescription() string {
	model := "unknown CPU"
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		model = cpuModel(f)
	}
	return fmt.Sprintf("nproc %d, %s, %s %s/%s", runtime.NumCPU(), model, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// cpuModel returns the first "model name" of a /proc/cpuinfo text.
func cpuModel(r io.Reader) string {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.Join(strings.Fields(value), " ")
		}
	}
	return "unknown CPU"
}
