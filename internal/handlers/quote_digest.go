package handlers

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/web/templates/quotes"
)

// What changed since the last action (docs/quotes.md, "What changed").
//
// The portal keeps no state between requests, and the v2 API answers a mutation with the whole
// new quote only. So the quote page carries a compact fingerprint of the amounts it shows in one
// hidden input (#quote-digest), every action sends it (hx-include), and the answer compares the
// new quote document with it: amounts that differ are highlighted with their previous value, and
// lines or carts that were not there are marked new. No extra v2 call, no server memory.
//
// Format: entries separated by ";", each "key=v1,v2,..." with integers (money in cents):
//
//	q          quote:  list A, list R, extra A, extra R, net A, net R
//	d<id>      quote:  what discount <id> took, A and R (summed over every line)
//	c<basket>  cart:   quantity, price list, list A, list R, extra A, extra R, net A, net R
//	n<node>    line:   unit A, unit R, list A, list R, extra A, extra R, net A, net R
//	p<package> quote:  the package's monthly price
//	u          when the quote was last changed (updatedAt, Unix milliseconds), last; not part of
//	           the state compared (quote_stale.go): it only says since when to read the audit
//
// A = activation (one-off), R = recurring (monthly). The fingerprint only decides highlighting:
// a missing or malformed one means "nothing to compare with", never an error.

// maxDigestBytes bounds the fingerprint a request may send; larger ones are ignored.
const maxDigestBytes = 64 << 10

// quoteDigest maps a fingerprint key to its values. nil means "no previous state".
type quoteDigest map[string][]int64

// cents converts a v2 money amount (EUR, at most two decimals) to cents.
func cents(v float64) int64 { return int64(math.Round(v * 100)) }

// digestOf fingerprints q.
func digestOf(q *apiclient.Quote) string {
	var b strings.Builder
	entry := func(key string, values ...int64) {
		if b.Len() > 0 {
			b.WriteByte(';')
		}
		b.WriteString(key)
		b.WriteByte('=')
		for i, v := range values {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatInt(v, 10))
		}
	}
	t := q.Totals
	entry("q", cents(t.ListActivation), cents(t.ListRecurring), cents(t.ExtraActivation), cents(t.ExtraRecurring),
		cents(t.NetActivation), cents(t.NetRecurring))
	for _, d := range quoteDiscountSums(q) {
		entry("d"+strconv.FormatInt(int64(d.id), 10), d.activation, d.recurring)
	}
	for i := range q.Carts {
		c := &q.Carts[i]
		ct := c.Totals
		entry("c"+strconv.FormatInt(c.BasketID, 10), int64(c.Quantity), int64(c.PricelistID),
			cents(ct.ListActivation), cents(ct.ListRecurring), cents(ct.ExtraActivation), cents(ct.ExtraRecurring),
			cents(ct.NetActivation), cents(ct.NetRecurring))
		walkItems(c.Root, 0, "", func(it *apiclient.Item, _ int, _ string) {
			bd := it.Breakdown
			entry("n"+strconv.FormatInt(it.NodeID, 10), cents(it.ActivationPrice), cents(it.RecurringPrice),
				cents(bd.List.Activation), cents(bd.List.Recurring), cents(bd.Extra.Activation), cents(bd.Extra.Recurring),
				cents(bd.Net.Activation), cents(bd.Net.Recurring))
		})
	}
	for _, p := range q.Packages {
		entry("p"+strconv.FormatInt(int64(p.PackageID), 10), cents(p.RecurringPrice))
	}
	if !q.UpdatedAt.IsZero() {
		entry("u", q.UpdatedAt.UnixMilli())
	}
	return b.String()
}

// changeTag is a short hash of what a fingerprint says about the quote (without "u"): the ETag of
// the quote's live notice (quote_changes.go) and the tag the shared watcher keeps. A hash carries no
// data: equal tags mean "the same quote on screen".
func changeTag(digest string) string {
	if i := strings.LastIndex(digest, ";u="); i >= 0 {
		digest = digest[:i]
	}
	sum := sha256.Sum256([]byte(digest))
	return hex.EncodeToString(sum[:12])
}

// sameState reports whether two fingerprints show the same quote (every entry but "u" equal).
func (d quoteDigest) sameState(o quoteDigest) bool {
	if d == nil || o == nil {
		return false
	}
	n := 0
	for key, values := range d {
		if key == "u" {
			continue
		}
		n++
		other, ok := o[key]
		if !ok || len(other) != len(values) {
			return false
		}
		for i := range values {
			if values[i] != other[i] {
				return false
			}
		}
	}
	m := len(o)
	if _, ok := o["u"]; ok {
		m--
	}
	return n == m
}

// seenAt is when the quote the page showed was last changed; zero when unknown.
func (d quoteDigest) seenAt() time.Time {
	if v, ok := d.previous("u", 1); ok && v[0] > 0 {
		return time.UnixMilli(v[0])
	}
	return time.Time{}
}

// parseDigest reads a fingerprint sent back by the page; nil when absent or malformed.
func parseDigest(s string) quoteDigest {
	if s == "" || len(s) > maxDigestBytes {
		return nil
	}
	d := quoteDigest{}
	for entry := range strings.SplitSeq(s, ";") {
		key, list, ok := strings.Cut(entry, "=")
		if !ok || key == "" || len(key) > 24 {
			return nil
		}
		var values []int64
		for field := range strings.SplitSeq(list, ",") {
			v, err := strconv.ParseInt(field, 10, 64)
			if err != nil {
				return nil
			}
			values = append(values, v)
		}
		d[key] = values
	}
	return d
}

// previous returns the n values of key, or ok=false when there is nothing to compare with.
func (d quoteDigest) previous(key string, n int) ([]int64, bool) {
	values, ok := d[key]
	return values, ok && len(values) == n
}

// isNew reports whether key was not on screen before the last action (only when the page sent
// what was on screen).
func (d quoteDigest) isNew(key string) bool {
	if d == nil {
		return false
	}
	_, ok := d[key]
	return !ok
}

// amountAt makes an Amount of current cents, marked changed when prev[i] differs.
func amountAt(current int64, prev []int64, ok bool, i int) quotes.Amount {
	a := quotes.Amount{Cents: current}
	if ok && i < len(prev) && prev[i] != current {
		a.Was, a.Changed = prev[i], true
	}
	return a
}

// discountSum is what one discount took from a whole quote or cart.
type discountSum struct {
	id                    int32
	name                  string
	activation, recurring int64
}

// quoteDiscountSums sums each applied discount over every line of the quote, in the order the
// quote lists its applied discounts (then any other seen on lines).
func quoteDiscountSums(q *apiclient.Quote) []discountSum {
	var sums []discountSum
	index := map[int32]int{}
	for _, d := range q.AppliedDiscounts {
		index[d.DiscountID] = len(sums)
		sums = append(sums, discountSum{id: d.DiscountID, name: d.Name})
	}
	for i := range q.Carts {
		addDiscountSums(q.Carts[i].Root, &sums, index)
	}
	return sums
}

// addDiscountSums adds the discounts of root's tree to sums.
func addDiscountSums(root *apiclient.Item, sums *[]discountSum, index map[int32]int) {
	walkItems(root, 0, "", func(it *apiclient.Item, _ int, _ string) {
		for _, bd := range it.Breakdown.Discounts {
			i, ok := index[bd.DiscountID]
			if !ok {
				i = len(*sums)
				index[bd.DiscountID] = i
				*sums = append(*sums, discountSum{id: bd.DiscountID, name: bd.Name})
			}
			(*sums)[i].activation += cents(bd.Activation)
			(*sums)[i].recurring += cents(bd.Recurring)
		}
	})
}

// walkItems calls fn for root and every item below it, parents first, with its depth and its
// parent's name.
func walkItems(root *apiclient.Item, depth int, parentName string, fn func(it *apiclient.Item, depth int, parentName string)) {
	if root == nil {
		return
	}
	fn(root, depth, parentName)
	for i := range root.Children {
		walkItems(&root.Children[i], depth+1, root.Name, fn)
	}
}
