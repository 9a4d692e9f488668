package home

import "github.com/cpqportal/portal/web/templates/components"

// Team is the team lead's figures by rep (issue 41): a row per rep, named, each figure a link to
// the list that makes it, and the rep picker above it.
type Team struct {
	Caption string
	// Heads are the column heads: rep, open pipeline, signed, declined, win rate.
	RepHead, OpenHead, SignedHead, MedianHead, DeclinedHead, RateHead string
	Rows                                                              []TeamRow
	Picker                                                            RepPicker
	// Lists are the chosen rep's lists (none when nobody is chosen).
	Lists []components.Link
	// Chosen names the chosen rep ("" for everyone).
	Chosen string
	// Problem says why the rep asked for is not shown ("" when none).
	Problem string
}

// TeamRow is one rep's figures: counts linked to their lists, values and the win rate in words.
type TeamRow struct {
	// Person is the rep's key (the picker's value), Name their name, Href the home with them chosen.
	Person, Name, Href              string
	Open, OpenValue, OpenHref       string
	Signed, SignedValue, SignedHref string
	Declined, DeclinedHref          string
	// Median is the median days to signature ("–" when no send is known), MedianHref the list
	// of the signed contracts it is taken over (the Signed column's).
	Median, MedianHref string
	// Reasons are the most common decline reasons, each with its count and list.
	Reasons []ReasonLink
	Rate    string
}

// ReasonLink is a decline reason with its count linked to its list.
type ReasonLink struct {
	Reason, Count, Href string
}

// RepPicker chooses one rep whose figures and lists the page shows (GET /?rep=).
type RepPicker struct {
	Label, Everyone, Submit string
	Options                 []RepOption
}

// RepOption is one rep in the picker.
type RepOption struct {
	Value, Label string
	Selected     bool
}
