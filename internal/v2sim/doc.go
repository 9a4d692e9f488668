// Package v2sim is a strict, stateful simulator of the v2 API (shared/spec/v2-api.md) that the portal talks to.
//
// The real v2 API is unreachable from development and test machines, so the portal, the conformance suite and
// the browser tests run against this simulator. It implements all 38 endpoints of sections 4.1 to 4.5 with the
// payloads, errors and rules our team chose where the spec says "not shown" (docs/v2-assumptions.md, sections
// A1 to A9). Every choice is kept in one place here and its comment names the assumption it implements.
//
// Words of the spec used throughout: a configurator (CPQ) offers TOFs (offer types); a quote holds carts
// (baskets), each with a MAIN product at its root and ADDON items below it; a configuration session
// (X-SessionId) is started by the init call and required by the cart, item, discount, package and price-list
// calls (rule R4).
//
// The simulator shares no code with internal/apiclient on purpose: the two are independent readings of the
// spec, checked against each other by the conformance suite.
//
// A Server is an http.Handler built by New. Its state lives in memory behind one mutex and is seeded
// deterministically from Options.Seed. Tests can inspect what it received (Requests) and make it misbehave
// (SetFault) and answer signature requests as their signers (AnswerSignature); with Options.Admin the same
// controls are reachable over HTTP under /_sim/. Signers answer on a signing page of their own, /sign/{token},
// outside the v2 API (signer.go, A7).
package v2sim
