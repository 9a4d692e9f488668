// Package workindex is the portal's index of the work that passes through it: every quote and
// contract a user of the portal created, changed or read, with its customer, configurator, net
// totals and stage as last seen, who created and last changed it through the portal, and when it
// was last seen ("as of"). The v2 API has no call that lists quotes or contracts (spec sections 3
// and 4.1), so the lists people work from (My quotes, contracts by stage, a customer's history)
// are read from this index.
//
// It is a read model, never a second source of truth: every row says when it was last seen, the
// handlers re-read old rows with the viewer's own token before showing them, and a row the v2
// API answers 403 or 404 for, for a viewer, leaves that viewer's lists (Forget). The visibility
// rule (Visible): a row belongs to the people who created, changed or opened it through the
// portal; people with a team role see every row; nobody sees a row the v2 API refused them.
//
// Storage (docs/work-index.md): the rows live in the portal's store (internal/store: the bbolt
// file with one replica, Redis with several) in 64 shards, one key per shard
// ("workindex/shard/NN", a JSON document of its rows) plus one small key of shard generations
// ("workindex/gen"). Each replica keeps an in-memory projection of all shards; a list first asks
// for the generations (one small read, at most once per RefreshEvery) and reloads only the shards
// that changed, then filters, sorts and pages in memory. A write is an atomic Update of one shard
// (and of the generations), so replicas never overwrite each other's rows. Memory is bounded by
// MaxRows per kind (the rows seen longest ago are dropped first).
//
// The index only depends on the store; the handlers turn v2 documents into sightings
// (QuoteSighting, ContractSighting) and call Observe*. Writing never fails an action: the
// handlers log an error and go on (the next sighting catches up).
package workindex
