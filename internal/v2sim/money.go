package v2sim

import (
	"math"
	"strconv"
)

// Money is an amount in euro cents. It encodes as a JSON number with two decimals (docs/v2-assumptions.md:
// "Money is a JSON number in EUR with at most two decimals"); integer cents keep every sum exact.
type Money int64

// MarshalJSON writes the amount as a decimal number, e.g. 29.90.
func (m Money) MarshalJSON() ([]byte, error) { return []byte(m.String()), nil }

// String formats the amount with two decimals.
func (m Money) String() string {
	v := int64(m)
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	cents := v % 100
	s := sign + strconv.FormatInt(v/100, 10) + "."
	if cents < 10 {
		s += "0"
	}
	return s + strconv.FormatInt(cents, 10)
}

// moneyFromFloat converts a JSON amount to cents; ok is false when it has more than two decimals.
func moneyFromFloat(v float64) (Money, bool) {
	cents := v * 100
	rounded := math.Round(cents)
	if math.Abs(cents-rounded) > 1e-6 {
		return 0, false
	}
	return Money(rounded), true
}

// basisPoints converts a percentage (e.g. 7.5) to hundredths of a percent (750), so percentages apply in
// integer arithmetic.
func basisPoints(percent float64) int64 { return int64(math.Round(percent * 100)) }

// percentOf answers bp hundredths-of-a-percent of amount, rounded half-up to the cent (A4 step 5).
func percentOf(amount Money, bp int64) Money {
	if amount <= 0 || bp <= 0 {
		return 0
	}
	return Money((int64(amount)*bp + 5000) / 10000)
}
