package v2sim

import (
	"log/slog"
	"net/http"
	"time"
)

// Defaults applied by New when the corresponding Options field is zero.
const (
	DefaultCustomers  = 60
	MaxCustomers      = 100_000
	DefaultSessionTTL = 30 * time.Minute // docs/v2-assumptions.md A3
	DefaultMaxUpload  = 2 << 30          // 2 GiB, docs/v2-assumptions.md A9
	DefaultMemoryCap  = 8 << 20          // attachments above this size are kept in a temporary file
	// DefaultSignatureExpiry is how long a signature request waits for its signer before it
	// expires (docs/v2-assumptions.md A7).
	DefaultSignatureExpiry = 14 * 24 * time.Hour
)

// DefaultUnrestrictedRole is the role RestrictToOwners does not restrict when Options.UnrestrictedRoles is nil.
const DefaultUnrestrictedRole = "backoffice"

// Options configure a simulator. The zero value is a usable simulator that accepts any bearer token.
type Options struct {
	// IssuerURL, when set, makes the simulator verify bearer tokens as JWTs signed by that OpenID provider
	// (discovery and JWKS are fetched lazily on the first request, so the provider may start later).
	IssuerURL string
	// AcceptAnyToken accepts any non-empty bearer token as the user "api-user". It is the behaviour when
	// IssuerURL is empty; with IssuerURL set it makes tokens that fail verification fall back to "api-user"
	// instead of answering 401 INVALID_TOKEN.
	AcceptAnyToken bool
	// HTTPClient is used to talk to the OpenID provider. Default: a client with a 10 s timeout.
	HTTPClient *http.Client

	// Customers is the number of seeded customers (default 60, at most 100,000).
	Customers int
	// Seed makes the seeded data and the random faults deterministic.
	Seed int64

	// SessionTTL is how long a configuration session lives without use (default 30 minutes).
	SessionTTL time.Duration
	// MaxUpload is the largest attachment accepted, in bytes (default 2 GiB); larger uploads answer 413.
	MaxUpload int64
	// MemoryCap is the largest attachment kept in memory (default 8 MiB); larger ones spill to TempDir.
	MemoryCap int64
	// TempDir is where large attachments are written (default os.TempDir()).
	TempDir string

	// GeneratePDF makes POST /v2/contract/{quoteId}/generate answer the PDF itself (with X-Contract-Id and
	// X-Contract-Number headers) instead of the contract document, as docs/v2-assumptions.md A7 allows.
	GeneratePDF bool

	// StrictArchive makes a second archive call for a contract answer 409 CONFLICT instead of the same
	// archive (A7 lets the v2 API answer either way), and counts it (ArchiveConflicts): a batch that
	// archives a contract twice is then seen, not hidden by an idempotent answer.
	StrictArchive bool

	// RestrictToOwners restricts every user to the customers they own (the owner whose login is the token's
	// user, A1) and to those customers' quotes, contracts, attachments, signatures, audits and archive: a call
	// about another customer answers 403 FORBIDDEN, and the customer list and online search leave the others
	// out. A customer a restricted user creates is theirs. Users with one of UnrestrictedRoles see everything.
	// docs/v2-assumptions.md A13.
	RestrictToOwners bool
	// UnrestrictedRoles are the token roles (claim "roles") that RestrictToOwners does not restrict
	// (default: backoffice, as a back office works on every customer).
	UnrestrictedRoles []string

	// SignatureExpiry is how long a signature request waits for its signer's answer before it
	// ends EXPIRED (default 14 days, flag -signature-expiry). docs/v2-assumptions.md A7.
	SignatureExpiry time.Duration
	// Signers make the demo's signers answer by themselves (signer.go); the zero value leaves every
	// answer to the signing page and the control API.
	Signers AutoSigners

	// Admin enables the HTTP control API under /_sim/ (requests log, faults, signers' answers).
	Admin bool

	// Logger receives one debug line per request and errors. Default: discard.
	Logger *slog.Logger
	// Now is the clock (default time.Now); tests inject one to expire sessions.
	Now func() time.Time

	// Faults are random faults applied to every endpoint.
	Faults Faults
}

// AutoSigners make signers answer by themselves, for a demo that shows a deal's whole life.
type AutoSigners struct {
	// Delay is how long after a request was sent its signer answers; 0: signers never answer by
	// themselves.
	Delay time.Duration
	// DeclineEvery makes every n-th request (by its id) a decline, with a reason; 0: all sign.
	DeclineEvery int
}

// Faults are random misbehaviours applied to every endpoint (flags -latency, -error-rate, -malformed-rate).
type Faults struct {
	// Latency is added before every answer.
	Latency time.Duration
	// ErrorRate is the probability (0 to 1) that a request answers 500 INTERNAL without being processed.
	ErrorRate float64
	// MalformedRate is the probability (0 to 1) that a request answers 200 with a body that is not valid JSON,
	// without being processed.
	MalformedRate float64
}

// Fault is a deterministic misbehaviour of one endpoint, set with (*Server).SetFault. Fields combine: Delay is
// waited first, then the first of Hang, Truncated, WrongContentType, Malformed, Status that is set decides the
// answer; with only Delay the endpoint runs normally. A faulty answer never changes the simulator's state.
type Fault struct {
	// Status answers this HTTP status (e.g. 500, 503) with an error body.
	Status int `json:"status,omitempty"`
	// Delay waits this long before answering (or until the client gives up).
	Delay time.Duration `json:"-"`
	// Malformed answers a body that is not valid JSON (status 200, or Status when set).
	Malformed bool `json:"malformed,omitempty"`
	// Truncated declares a Content-Length larger than the body sent, then drops the connection.
	Truncated bool `json:"truncated,omitempty"`
	// WrongContentType answers an HTML page with Content-Type text/html (status 200, or Status when set).
	WrongContentType bool `json:"wrongContentType,omitempty"`
	// Hang never answers: the request is held until the client cancels it.
	Hang bool `json:"hang,omitempty"`
	// Times limits the fault to the next Times requests of the endpoint; 0 keeps it until cleared.
	Times int `json:"times,omitempty"`
}
