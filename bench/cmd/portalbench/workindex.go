package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// measureWorkIndex runs the work index's list benchmark (internal/workindex: 10,000 quotes and
// 10,000 contracts, warm) and reports one page's time per list and the projection's memory
// (docs/work-index.md, docs/performance.md).
func measureWorkIndex(ctx context.Context, l *lab, rep *report) error {
	benchtime := "200x"
	if l.opts.quick {
		benchtime = "20x"
	}
	cmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", "^BenchmarkList10k$", "-benchmem",
		"-benchtime", benchtime, "-count", "1", "./internal/workindex/")
	cmd.Dir = l.opts.root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go test -bench ./internal/workindex: %w\n%s", err, out.String())
	}
	found := 0
	for _, line := range strings.Split(out.String(), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "BenchmarkList10k/") {
			continue
		}
		name := strings.ReplaceAll(trimProcs(strings.TrimPrefix(fields[0], "BenchmarkList10k/")), "-", "_")
		for i := 2; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			switch fields[i+1] {
			case "ns/op":
				rep.add("workindex_10k_"+name+"_ms", v/1e6, "ms")
				found++
			case "MiB-index":
				rep.add("workindex_10k_memory_mib", v, "MiB")
			}
		}
	}
	if found == 0 {
		return fmt.Errorf("no work index benchmark results in:\n%s", out.String())
	}
	return nil
}
