// Package workindex is the portal's index of the work that passes through it: every quote and
// contract a user of the portal created, changed or read, with its customer, configurator, net
// totals and stage as last seen, who created and last changed it through the portal, and when it
// was last seen ("as of"). The v2 API has no call that lists quotes or contracts (spec sections 3
// and 4.1), so the lists people work from (My quotes, contracts by stage, a customer's history)
// are read from this index.
//
// It is a read model, never a second source of truth: every row says when it was last seen, and
// each viewer's own reads are kept beside it (Row.ViewerSeenAt), so the handlers re-read, with
// the viewer's token, every row that token has not read recently before showing its customer or
// totals. A row the v2 API answers 403 or 404 for, for a viewer, leaves that viewer's lists
// (Forget). Listing: a row belongs to the people who created, changed or opened it through the
// portal; people with a team role list every row; nobody lists a row the v2 API refused them.
//
// Storage (docs/work-index.md): tables work_rows, work_viewers and work_configurators in the state
// database (internal/statedb: SQLite or PostgreSQL). A sighting is one small transaction; a list
// is one query in an index's order with a count that stops at CountBound. Nothing is held in
// memory and no row is dropped except by Options.Retention.
//
// The handlers turn v2 documents into sightings (QuoteSighting, ContractSighting) and call
// Observe*. Writing never fails an action: the handlers log an error and go on (the next
// sighting catches up).
package workindex
