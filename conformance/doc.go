// Package conformance checks the v2 API client (internal/apiclient) against a
// v2 API: by default the in-process simulator (internal/v2sim), or any real
// deployment named by the environment.
//
// The client and the simulator are two independent readings of
// shared/spec/v2-api.md and docs/v2-assumptions.md. The suite (in this
// package's tests) drives every one of the 38 endpoints through the client,
// records what went over the wire with a recording http.RoundTripper and
// asserts method, path, query, headers (rule R4 on X-SessionId, spec section
// 5), body and error handling. Against the in-process simulator it also
// checks that what the simulator received agrees with what the client sent.
//
// Run it with:
//
//	make conformance                                             # in-process simulator
//	make conformance V2_API_URL=http://host:port V2_API_TOKEN=…  # a deployment
//
// or go test -count=1 -v ./conformance/... with V2_API_URL and V2_API_TOKEN
// in the environment. Against a deployment the suite creates its own data (a
// customer, a quote, a contract, ...) and deletes what the API lets it delete;
// customers, quotes and contracts have no delete call and stay.
package conformance
