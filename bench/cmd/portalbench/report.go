package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
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

// aggregate combines the reports of several runs: each figure is the median of its runs (the
// mean of the middle two for an even count), and with more than one run <name>_min and
// <name>_max follow it. One run is returned as it is.
func aggregate(runs []*report, stdout, stderr io.Writer) *report {
	if len(runs) == 1 {
		return runs[0]
	}
	out := newReport(io.Discard, stderr)
	out.machine = runs[0].machine
	var names []string
	values := map[string][]float64{}
	for _, r := range runs {
		for _, name := range r.names {
			if _, seen := values[name]; !seen {
				names = append(names, name)
			}
			values[name] = append(values[name], r.values[name])
		}
	}
	fmt.Fprintf(stdout, "--- over %d runs: median (min-max)\n", len(runs))
	for _, name := range names {
		v := slices.Sorted(slices.Values(values[name]))
		median := v[len(v)/2]
		if len(v)%2 == 0 {
			median = (v[len(v)/2-1] + v[len(v)/2]) / 2
		}
		out.add(name, median, "")
		out.add(name+"_min", v[0], "")
		out.add(name+"_max", v[len(v)-1], "")
		fmt.Fprintf(stdout, "%s: %s (%s-%s) [%d runs]\n", name, strconv.FormatFloat(round3(median), 'f', -1, 64),
			strconv.FormatFloat(round3(v[0]), 'f', -1, 64), strconv.FormatFloat(round3(v[len(v)-1]), 'f', -1, 64), len(v))
	}
	return out
}

// mergeFrom keeps the figures of the results file at path that this report lacks, in that file's
// order before the new ones (a missing file has none). A figure's spread (<name>_min, <name>_max)
// goes with it: when this run measures <name> again, the old spread is dropped rather than kept
// beside a figure it no longer describes.
func (r *report) mergeFrom(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("-merge: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("-merge: %s is not a JSON object", path)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// What this run measured, before any figure of the file is kept: a spread goes with its figure
	// only when this run measured the figure. Asked of r.values as the loop fills it, a kept
	// figure (it precedes its spread in the file) would count as measured and drop its own
	// spread: ~100 _min/_max keys of groups a run did not measure were lost that way.
	measured := make(map[string]bool, len(r.values))
	for name := range r.values {
		measured[name] = true
	}
	var kept []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("-merge: %s: %w", path, err)
		}
		name, _ := tok.(string)
		var value any
		if err := dec.Decode(&value); err != nil {
			return fmt.Errorf("-merge: %s: %w", path, err)
		}
		number, ok := value.(float64)
		if !ok || name == "machine" {
			continue
		}
		if measured[name] {
			continue
		}
		if base, ok := spreadOf(name); ok && measured[base] {
			continue
		}
		if _, dup := r.values[name]; !dup {
			kept = append(kept, name)
		}
		r.values[name] = number
	}
	r.names = append(kept, r.names...)
	return nil
}

// spreadOf returns the figure whose spread name is (its <figure>_min or <figure>_max).
func spreadOf(name string) (string, bool) {
	if base, ok := strings.CutSuffix(name, "_min"); ok {
		return base, true
	}
	return strings.CutSuffix(name, "_max")
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
