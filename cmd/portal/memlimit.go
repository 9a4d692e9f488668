package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/cpqportal/portal/internal/config"
)

// defaultMemoryLimit is the soft memory limit when neither GOMEMLIMIT nor PORTAL_MEMORY_LIMIT is
// set. Without one the runtime lets garbage grow to the live heap's size before collecting, so
// five users' cached customer lists (about 81 MiB live) made a 180 MiB process; at 128 MiB the
// collector runs earlier instead (docs/performance.md, docs/operations.md).
const defaultMemoryLimit = 128 << 20

// applyMemoryLimit sets the Go runtime's soft memory limit: GOMEMLIMIT, when set, is the
// runtime's own and wins; else PORTAL_MEMORY_LIMIT (a size such as 300MiB, or "off"); else
// defaultMemoryLimit. It returns the limit it set (0: none set here).
func applyMemoryLimit(getenv func(string) string) (int64, error) {
	if getenv("GOMEMLIMIT") != "" {
		return 0, nil
	}
	limit := int64(defaultMemoryLimit)
	if raw := strings.TrimSpace(getenv("PORTAL_MEMORY_LIMIT")); raw != "" {
		if strings.EqualFold(raw, "off") {
			return 0, nil
		}
		n, err := config.ParseSize(raw)
		if err != nil {
			return 0, fmt.Errorf("PORTAL_MEMORY_LIMIT: %w", err)
		}
		limit = n
	}
	debug.SetMemoryLimit(limit)
	return limit, nil
}
