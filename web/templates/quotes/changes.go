package quotes

// Change is one difference between the quote a user saw and the quote as it is now, e.g.
// {What: "Quantity of “Head office”", Before: "2", After: "5"}. Before/After are empty for a
// change that is only an event ("Cart “Phones” removed").
type Change struct {
	What, Before, After string
}

// ChangeNotice says who changed a quote (or contract), when, and what.
type ChangeNotice struct {
	// Who is who made the changes, in words: the person's name where the portal knows the login
	// the validation audit names (internal/people, the viewer), "System" for the service's own
	// entries, else the actor as written ("backoffice"); empty when unknown.
	Who string
	// Ago is how long ago ("10 s ago"); empty when unknown.
	Ago string
	// AgoSeconds is the same in seconds, from which app.js keeps Ago up to date.
	AgoSeconds int64
	// Actions lists what was done, in words ("discounts applied", "cart removed").
	Actions []string
}

// ConflictVM is the answer to an action made on a quote that had changed since the page showed it:
// what changed, and the user's change, not applied, to confirm or drop.
type ConflictVM struct {
	Ref Ref
	// Unknown: the page's fingerprint was missing or malformed, so what the user saw is not known.
	Unknown bool
	Notice  ChangeNotice
	Changes []Change
	// Pending describes the user's change, in their language ("set the quantity of cart no. 700001 to 5").
	Pending string
	// Gone: what the user acted on no longer exists (removed meanwhile): nothing to confirm.
	Gone bool
	// Replay re-sends the user's change on the current quote: method ("post" or "delete"), path
	// and the form values (with the current fingerprint).
	ReplayMethod string
	ReplayURL    string
	ReplayFields []Field
}

// Field is one hidden form value.
type Field struct{ Name, Value string }

// LiveNoticeVM is the polite banner of an open page whose quote (or contract) changed elsewhere.
type LiveNoticeVM struct {
	Notice ChangeNotice
	// ShowURL loads the changes into the page (quote: the current quote's regions, highlighted);
	// for a contract, the page's own address (a reload).
	ShowURL string
	// Reload: ShowURL is a plain link (reload the page) rather than an htmx request.
	Reload bool
	// Subject is "quote" or "contract".
	Subject string
}
