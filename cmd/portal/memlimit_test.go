package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// Not parallel: the memory limit is the process's.
func TestApplyMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

	if got, err := applyMemoryLimit(env(nil)); err != nil || got != defaultMemoryLimit || debug.SetMemoryLimit(-1) != defaultMemoryLimit {
		t.Errorf("default: %d, %v; runtime limit %d", got, err, debug.SetMemoryLimit(-1))
	}
	if got, err := applyMemoryLimit(env(map[string]string{"PORTAL_MEMORY_LIMIT": "300MiB"})); err != nil || got != 300<<20 || debug.SetMemoryLimit(-1) != 300<<20 {
		t.Errorf("PORTAL_MEMORY_LIMIT=300MiB: %d, %v", got, err)
	}
	debug.SetMemoryLimit(math.MaxInt64)
	if got, err := applyMemoryLimit(env(map[string]string{"GOMEMLIMIT": "450MiB", "PORTAL_MEMORY_LIMIT": "300MiB"})); err != nil || got != 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Errorf("GOMEMLIMIT set: %d, %v; the runtime's own setting must win", got, err)
	}
	if got, err := applyMemoryLimit(env(map[string]string{"PORTAL_MEMORY_LIMIT": "off"})); err != nil || got != 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Errorf("off: %d, %v", got, err)
	}
	if _, err := applyMemoryLimit(env(map[string]string{"PORTAL_MEMORY_LIMIT": "lots"})); err == nil {
		t.Error("PORTAL_MEMORY_LIMIT=lots accepted")
	}
}
