package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// allocBudgets is bench/alloc_budgets.json: the most allocations per request each handler benchmark
// may make. A change that allocates more fails `make bench` and shows in review as a change of this
// file.
type allocBudgets struct {
	// Package holds the benchmarks (go test pattern).
	Package string `json:"package"`
	// Benchtime is go test's -benchtime for them.
	Benchtime string `json:"benchtime"`
	// Budgets maps a benchmark name (without the -N suffix) to its allocs/op budget.
	Budgets map[string]int64 `json:"budgets"`
}

func loadBudgets(path string) (allocBudgets, error) {
	var b allocBudgets
	data, err := os.ReadFile(path)
	if err != nil {
		return b, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return b, fmt.Errorf("%s: %w", path, err)
	}
	if b.Package == "" || len(b.Budgets) == 0 {
		return b, fmt.Errorf("%s: package and budgets are required", path)
	}
	for name, n := range b.Budgets {
		if !strings.HasPrefix(name, "Benchmark") || n <= 0 {
			return b, fmt.Errorf("%s: budget %q: %d is not a benchmark's positive allocs/op", path, name, n)
		}
	}
	return b, nil
}

// benchResult is one line of go test -bench -benchmem output.
type benchResult struct {
	name        string
	nsPerOp     float64
	bytesPerOp  float64
	allocsPerOp float64
}

// parseBenchOutput reads the result lines of go test -bench -benchmem output, e.g.
// "BenchmarkQuotePage-2   1388   1713076 ns/op   221057 B/op   2171 allocs/op".
func parseBenchOutput(r io.Reader) ([]benchResult, error) {
	var out []benchResult
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		if _, err := strconv.ParseInt(fields[1], 10, 64); err != nil {
			continue // e.g. "BenchmarkX" printed alone before its result, or a log line
		}
		res := benchResult{name: trimProcs(fields[0])}
		for i := 2; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				return nil, fmt.Errorf("benchmark line %q: %w", sc.Text(), err)
			}
			switch fields[i+1] {
			case "ns/op":
				res.nsPerOp = v
			case "B/op":
				res.bytesPerOp = v
			case "allocs/op":
				res.allocsPerOp = v
			}
		}
		out = append(out, res)
	}
	return out, sc.Err()
}

// trimProcs drops the -GOMAXPROCS suffix of a benchmark name.
var procsSuffix = regexp.MustCompile(`-\d+$`)

func trimProcs(name string) string { return procsSuffix.ReplaceAllString(name, "") }

// checkBudgets compares results with budgets: every budgeted benchmark must have run and stay within
// its budget.
func checkBudgets(results []benchResult, b allocBudgets) []string {
	var problems []string
	byName := map[string]benchResult{}
	for _, r := range results {
		byName[r.name] = r
	}
	names := make([]string, 0, len(b.Budgets))
	for name := range b.Budgets {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		r, ok := byName[name]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s did not run", name))
		case r.allocsPerOp > float64(b.Budgets[name]):
			problems = append(problems, fmt.Sprintf("%s: %.0f allocs/op, over its budget of %d (bench/alloc_budgets.json)",
				name, r.allocsPerOp, b.Budgets[name]))
		}
	}
	return problems
}

// snakeName turns BenchmarkCustomerListPage into customer_list_page.
func snakeName(benchmark string) string {
	var b strings.Builder
	for i, r := range strings.TrimPrefix(benchmark, "Benchmark") {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// measureAllocs runs the budgeted handler benchmarks (go test -bench -benchmem) and checks them.
func measureAllocs(ctx context.Context, l *lab, rep *report) error {
	budgets, err := loadBudgets(filepath.Join(l.opts.root, l.opts.budgets))
	if err != nil {
		return err
	}
	names := make([]string, 0, len(budgets.Budgets))
	for name := range budgets.Budgets {
		names = append(names, regexp.QuoteMeta(name))
	}
	slices.Sort(names)
	benchtime := budgets.Benchtime
	if l.opts.quick {
		benchtime = "50x"
	}
	cmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", "^("+strings.Join(names, "|")+")$",
		"-benchmem", "-benchtime", benchtime, "-count", "1", budgets.Package)
	cmd.Dir = l.opts.root
	cmd.Env = append(os.Environ(), "PORTALBENCH_V2SIM="+l.simBin)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	runErr := cmd.Run()
	results, err := parseBenchOutput(bytes.NewReader(out.Bytes()))
	if runErr != nil || err != nil {
		return fmt.Errorf("go test -bench %s: %v %v\n%s", budgets.Package, runErr, err, out.String())
	}
	for _, r := range results {
		if _, ok := budgets.Budgets[r.name]; !ok {
			continue
		}
		name := snakeName(r.name)
		rep.add("allocs_"+name, r.allocsPerOp, "allocs/op")
		rep.add("alloc_bytes_"+name, r.bytesPerOp, "B/op")
		rep.add("handler_us_"+name, r.nsPerOp/1e3, "µs/op")
	}
	if problems := checkBudgets(results, budgets); len(problems) > 0 {
		return fmt.Errorf("allocation budgets: %s", strings.Join(problems, "; "))
	}
	return nil
}
