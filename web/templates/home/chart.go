package home

import "strconv"

// The charts' geometry, in the SVG's own units (viewBox): the SVG scales to its box, so a chart
// reads the same on a 375 px phone as in print. Each bar has its label on a line above it and
// its figures after it, so neither is hidden by the bar and colour is never the only cue.
const (
	chartWidth = 320
	rowHeight  = 44
	barHeight  = 14
	maxBar     = 180 // leaves room for the figures after the longest bar
)

func (c Chart) viewBox() string {
	return "0 0 " + strconv.Itoa(chartWidth) + " " + strconv.Itoa(len(c.Bars)*rowHeight+4)
}

func labelY(i int) string { return strconv.Itoa(i*rowHeight + 14) }
func barY(i int) string   { return strconv.Itoa(i*rowHeight + 20) }
func figureY(i int) string {
	return strconv.Itoa(i*rowHeight + 20 + barHeight - 3)
}

// barLength is at least 2 units, so an empty bar still shows where it starts.
func (b Bar) length() int { return max(2, int(b.Fraction*maxBar+0.5)) }

func (b Bar) width() string   { return strconv.Itoa(b.length()) }
func (b Bar) figureX() string { return strconv.Itoa(b.length() + 6) }

// figure is what follows the bar: the count, and the value when there is one.
func (b Bar) figure() string {
	if b.Value == "" {
		return b.Count
	}
	return b.Count + " · " + b.Value
}

// patterns: each bar after the first gets a texture over its colour (stripes, dots, cross-hatch),
// so bars differ without colour too.
var patterns = []string{"", "stripes", "dots", "cross"}

func pattern(i int) string { return patterns[i%len(patterns)] }

func barClass(i int) string { return "chart-bar chart-bar--" + strconv.Itoa(i%len(patterns)) }

func patternFill(id string, i int) string { return "url(#" + id + "-" + pattern(i) + ")" }
