package i18n

import (
	"strconv"
	"strings"
)

// stringTemplate is a message whose printf verbs are all %s (taken in order) or all %[n]s. Given
// string arguments it is formatted by joining its parts, without the printer, which parses the
// message and boxes each argument on every call (two thirds of T's time on the customer page;
// docs/performance.md). What it writes is what the printer writes: a test compares them over
// every message of every catalogue.
type stringTemplate struct {
	parts []string // the text around the verbs: one more than verbs
	verbs []int    // the argument (0-based) each verb writes
	n     int      // how many arguments the message takes
	size  int      // the parts' total length
}

// compileStringTemplate returns msg's template, or false when msg has another verb (%d, %q, …),
// mixes %s with %[n]s, or skips an argument (the printer would then complain in the text).
func compileStringTemplate(msg string) (stringTemplate, bool) {
	var tpl stringTemplate
	var lit strings.Builder
	sequential, explicit := false, false
	for i := 0; i < len(msg); i++ {
		if msg[i] != '%' {
			lit.WriteByte(msg[i])
			continue
		}
		rest := msg[i+1:]
		switch {
		case strings.HasPrefix(rest, "%"):
			lit.WriteByte('%')
			i++
			continue
		case strings.HasPrefix(rest, "s"):
			sequential = true
			tpl.verbs = append(tpl.verbs, len(tpl.verbs))
			i++
		case strings.HasPrefix(rest, "["):
			end := strings.Index(rest, "]s")
			if end < 0 {
				return stringTemplate{}, false
			}
			n, err := strconv.Atoi(rest[1:end])
			if err != nil || n < 1 || n > 9 {
				return stringTemplate{}, false
			}
			explicit = true
			tpl.verbs = append(tpl.verbs, n-1)
			i += end + 2
		default:
			return stringTemplate{}, false
		}
		tpl.parts = append(tpl.parts, lit.String())
		lit.Reset()
	}
	tpl.parts = append(tpl.parts, lit.String())
	if len(tpl.verbs) == 0 || sequential && explicit {
		return stringTemplate{}, false
	}
	used := map[int]bool{}
	for _, v := range tpl.verbs {
		used[v] = true
		tpl.n = max(tpl.n, v+1)
	}
	if len(used) != tpl.n {
		return stringTemplate{}, false
	}
	for _, p := range tpl.parts {
		tpl.size += len(p)
	}
	return tpl, true
}

// format writes the message with args, or answers false when an argument is not a string.
func (tpl *stringTemplate) format(args []any) (string, bool) {
	size := tpl.size
	for _, v := range tpl.verbs {
		s, ok := args[v].(string)
		if !ok {
			return "", false
		}
		size += len(s)
	}
	var b strings.Builder
	b.Grow(size)
	for i, v := range tpl.verbs {
		b.WriteString(tpl.parts[i])
		b.WriteString(args[v].(string))
	}
	b.WriteString(tpl.parts[len(tpl.parts)-1])
	return b.String(), true
}
