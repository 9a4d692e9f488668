package statedb

// Migration 00021's steps, for its test in statedb_test.
var (
	SignedAtUp   = (*DB).signedAtUp
	SignedAtDown = signedAtDown
)
