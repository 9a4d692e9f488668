// Package apiclient is the typed client of the v2 API (shared/spec/v2-api.md,
// sections 4.1 to 4.5), shaped like go-github: one [Client] with services per
// resource ([Client.CPQ], [Client.Customers], [Client.Attachments],
// [Client.Contracts], [Client.Signatures]), context first on every method, and
// one request path that applies the spec's header rules.
//
// # The spec's words
//
//   - Configurator (CPQ, cpqId): a tool defining product combinations and rules.
//     A configuration session ("session", sessionId) is started for one
//     configurator and one customer ([CPQService.Init]).
//   - TOF (tofId): an offer type of a configurator, e.g. "Mobile plans". Products
//     are offered per TOF; a quote lists its TOFs in tofList.
//   - Quote (quoteId): the offer for a customer, made of all its carts.
//   - Cart, also called basket (basketId): one main product (the root item) with
//     add-on items below it (nodeId, parentId); it has a quantity and a price list.
//   - Price list (pricelistId): the set of prices a cart is priced with.
//   - Discount (discountId): applicable, applied and extra discounts of a quote
//     (an extra discount carries a value).
//   - Package (packageId): a package configuration bound to a quote and a TOF.
//   - Contract (contractId, contract number): generated from a quote; it has a
//     PDF, signature requests and an archive state.
//
// Where the spec says "not shown" (payloads, errors, limits), this package
// follows docs/v2-assumptions.md; comments name the section (A1 to A9).
//
// # Tokens and sessions
//
// The client holds no credentials. Every call takes the signed-in user's
// access token from its context ([WithToken]); a call without one fails before
// anything is sent ([ErrNoToken]). The configuration session id is an explicit
// parameter of the calls that need it (rule R4: calls 3 to 9 and 11 to 16) and
// a call without one fails before anything is sent ([ErrNoSessionID]). It is
// never sent on calls 1, 2 and 10, nor on sections 4.2 to 4.5.
//
// # Errors
//
// A non-2xx answer is an [*APIError]; errors.Is matches it against sentinels
// such as [ErrNotFound] or [ErrSessionInvalid]. Parameters that would make a
// bad URL (ids < 1, ".." as a contract number) fail with [ErrInvalidParameter]
// before anything is sent.
//
// # Time-outs and streams
//
// JSON calls run under a per-call deadline ([WithTimeout]). Uploads and
// downloads have no overall deadline (they may move gigabytes); the transport's
// ResponseHeaderTimeout ([NewTransport]) bounds the wait for an answer.
package apiclient
