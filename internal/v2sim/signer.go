package v2sim

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The signer's side of a signature request (docs/v2-assumptions.md A7). The spec names the request
// ("by e-mail") and its removal, and leaves open what the signer does; the simulator's choice lives
// here, in one place:
//
//   - a request is SENT until its signer answers: SIGNED (the contract's status becomes SIGNED) or
//     DECLINED with the signer's reason (the contract is GENERATED again and may be sent anew);
//   - a request nobody answers is EXPIRED once Options.SignatureExpiry has passed since it was sent
//     (the contract is GENERATED again); the portal may still remove a SENT request (REMOVED);
//   - only a SENT request can be answered, once; a signed contract takes no new request (409);
//   - the signer answers on the signing page (/sign/{token}, the link a real e-mail carries), tests
//     answer through the control API (POST /_sim/signatures/answer), and demo signers answer by
//     themselves Options.Signers.Delay after the request was sent.
//
// Time-driven answers (expiry, demo signers) are settled when the contract is next read, at the
// time they were due: no timer runs, and an injected clock (Options.Now) moves them.

// Audit actions of the signer's answers (A7).
const (
	auditSignatureSigned   = "SIGNATURE_SIGNED"
	auditSignatureDeclined = "SIGNATURE_DECLINED"
	auditSignatureExpired  = "SIGNATURE_EXPIRED"
)

// signingPathPrefix is where the signing pages are served (outside /v2/: the signer has no token).
const signingPathPrefix = "/sign/"

// maxDeclineReason bounds a decline's reason, in characters.
const maxDeclineReason = 1000

// demoDeclineReasons are what demo signers say when they decline (picked by the request's id).
var demoDeclineReasons = []string{
	"The monthly price is above the budget we agreed.",
	"We need the start date moved to next quarter.",
	"Our legal team asks for a different liability clause.",
}

// newSigningToken is the unguessable secret of a signing page's address.
func newSigningToken() string {
	var b [24]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	return hex.EncodeToString(b[:])
}

// settleSignature applies the answers that became due since the contract was last read: a demo
// signer's (Options.Signers), then expiry. Caller holds s.mu.
func (s *Server) settleSignature(c *contract) {
	active := c.activeSignature()
	if active == nil || c.Status == contractArchived {
		return
	}
	now := s.stamp()
	if d := s.opts.Signers.Delay; d > 0 {
		at := active.SentAt.Add(d)
		if !now.Before(at) && at.Before(active.ExpiresAt) {
			if n := s.opts.Signers.DeclineEvery; n > 0 && active.ID%int64(n) == 0 {
				reason := demoDeclineReasons[int(active.ID/int64(n))%len(demoDeclineReasons)]
				_ = s.answer(c, active, signatureDeclined, reason, at)
			} else {
				_ = s.answer(c, active, signatureSigned, "", at)
			}
			return
		}
	}
	if !now.Before(active.ExpiresAt) {
		_ = s.answer(c, active, signatureExpired, "", active.ExpiresAt)
	}
}

// answer ends a SENT request with the signer's answer (SIGNED, DECLINED with reason, or EXPIRED)
// given at at, and moves the contract with it. Caller holds s.mu and has settled c.
func (s *Server) answer(c *contract, sr *signatureRequest, status, reason string, at time.Time) error {
	if c.Status == contractArchived {
		return errConflict("contract %s is archived", c.Number)
	}
	if sr.Status != signatureSent {
		return errConflict("signature request %d is %s, not SENT: it cannot be answered", sr.ID, sr.Status)
	}
	before := c.Status
	sr.Status, sr.AnsweredAt = status, at.UTC().Truncate(time.Second)
	var action, summary string
	switch status {
	case signatureSigned:
		c.Status = contractSigned
		action, summary = auditSignatureSigned, fmt.Sprintf("Contract %s signed by %s <%s>", c.Number, sr.SignerName, sr.Email)
	case signatureDeclined:
		sr.Reason = reason
		c.Status = contractGenerated
		action, summary = auditSignatureDeclined, fmt.Sprintf("Contract %s declined by %s <%s>: %s", c.Number, sr.SignerName, sr.Email, reason)
	default:
		c.Status = contractGenerated
		action, summary = auditSignatureExpired, fmt.Sprintf("Signature request %d of contract %s expired unanswered", sr.ID, c.Number)
	}
	if q := s.quotes[c.QuoteID]; q != nil {
		actor := sr.Email
		if status == signatureExpired {
			actor = seedActor
		}
		s.nextAuditID++
		q.Audit = append(q.Audit, auditEntry{EntryID: s.nextAuditID, At: sr.AnsweredAt, Actor: actor, Action: action, Summary: summary,
			Changes: []change{{Field: "contract.status", Before: before, After: c.Status}}})
		q.UpdatedAt = sr.AnsweredAt
	}
	return nil
}

// validReason checks a decline's reason: 1 to maxDeclineReason characters, no control characters
// but line breaks and tabs.
func validReason(reason string) bool {
	n := utf8.RuneCountInString(reason)
	return n >= 1 && n <= maxDeclineReason && utf8.ValidString(reason) &&
		strings.IndexFunc(reason, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }) < 0
}

// signatureByToken finds the request of a signing page. Caller holds s.mu.
func (s *Server) signatureByToken(token string) (*contract, *signatureRequest) {
	if len(token) != 48 {
		return nil, nil
	}
	for _, c := range s.contracts {
		for _, sr := range c.Signatures {
			if sr.Token == token {
				return c, sr
			}
		}
	}
	return nil, nil
}

// signingView is what the signing page shows.
type signingView struct {
	Contract, Customer, Signer, Email, Message, Status, Reason string
	OneOff, Monthly                                            string
	SentAt, ExpiresAt, AnsweredAt                              string
	Open                                                       bool
	Problem                                                    string
}

var signingPage = template.Must(template.New("sign").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign contract {{.Contract}}</title></head>
<body><main>
<h1>Contract {{.Contract}}</h1>
<p>For {{.Customer}}: one-off {{.OneOff}}, monthly {{.Monthly}}.</p>
<p>Requested from {{.Signer}} ({{.Email}}) on {{.SentAt}}{{if .ExpiresAt}}; the request expires on {{.ExpiresAt}}{{end}}.</p>
{{if .Message}}<p>Message: {{.Message}}</p>{{end}}
{{if .Problem}}<p role="alert" data-testid="signing-problem">{{.Problem}}</p>{{end}}
<p data-testid="signing-status">Status: {{.Status}}{{if .AnsweredAt}} ({{.AnsweredAt}}){{end}}{{if .Reason}}. Reason: {{.Reason}}{{end}}</p>
{{if .Open}}
<form method="post"><input type="hidden" name="answer" value="sign"><button type="submit" data-testid="signing-sign">Sign</button></form>
<form method="post"><input type="hidden" name="answer" value="decline">
<label for="reason">Why do you decline?</label><br><textarea id="reason" name="reason" maxlength="1000" required></textarea><br>
<button type="submit" data-testid="signing-decline">Decline</button></form>
{{end}}
</main></body></html>
`))

// serveSigningPage is GET and POST /sign/{token}: the page a signer opens from the e-mail, with Sign
// and Decline (and a reason). No bearer token: the address's secret is the signer's proof. A POST
// from another site is refused (Origin / Sec-Fetch-Site), so a page elsewhere cannot answer for them.
func (s *Server) serveSigningPage(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; form-action 'self'; frame-ancestors 'none'")
	h.Set("Referrer-Policy", "same-origin") // not no-referrer: that makes the form post's Origin "null"
	h.Set("X-Content-Type-Options", "nosniff")
	token := strings.TrimPrefix(r.URL.Path, signingPathPrefix)
	status := http.StatusOK
	var problem string
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodPost:
		if !sameOrigin(r) {
			http.Error(w, "cross-site answer refused", http.StatusForbidden)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
		if err := r.ParseForm(); err != nil {
			http.Error(w, "unreadable form", http.StatusBadRequest)
			return
		}
	default:
		h.Set("Allow", "GET, HEAD, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	s.mu.Lock()
	c, sr := s.signatureByToken(token)
	if c == nil {
		s.mu.Unlock()
		http.Error(w, "no signature request at this address", http.StatusNotFound)
		return
	}
	s.settleSignature(c)
	if r.Method == http.MethodPost {
		var err error
		switch r.PostForm.Get("answer") {
		case "sign":
			err = s.answer(c, sr, signatureSigned, "", s.stamp())
		case "decline":
			reason := strings.TrimSpace(strings.ReplaceAll(r.PostForm.Get("reason"), "\r\n", "\n"))
			if !validReason(reason) {
				status, problem = http.StatusUnprocessableEntity, fmt.Sprintf("Please say why you decline (1 to %d characters).", maxDeclineReason)
				break
			}
			err = s.answer(c, sr, signatureDeclined, reason, s.stamp())
		default:
			status, problem = http.StatusBadRequest, "Choose Sign or Decline."
		}
		if err != nil {
			status, problem = http.StatusConflict, "This request cannot be answered any more: "+err.Error()
		}
	}
	v := signingView{Contract: c.Number, Customer: c.Customer.Name, Signer: sr.SignerName, Email: sr.Email, Message: sr.Message,
		Status: sr.Status, Reason: sr.Reason, OneOff: c.Quote.Totals.NetActivation.String() + " EUR",
		Monthly: c.Quote.Totals.NetRecurring.String() + " EUR", SentAt: sr.SentAt.Format(time.RFC3339),
		Open: sr.Status == signatureSent && c.Status != contractArchived, Problem: problem}
	if !sr.ExpiresAt.IsZero() {
		v.ExpiresAt = sr.ExpiresAt.Format(time.RFC3339)
	}
	if !sr.AnsweredAt.IsZero() {
		v.AnsweredAt = sr.AnsweredAt.Format(time.RFC3339)
	}
	s.mu.Unlock()
	h.Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = signingPage.Execute(w, v)
}

// sameOrigin reports whether a form post comes from the signing page's own site (or from a client
// that sends neither header, such as a test's HTTP client).
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return false
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		u, err := url.Parse(origin)
		return err == nil && u.Host == r.Host
	}
	return true
}

// signatureView is how the control API lists a signature request: with its contract's number and
// the signing page's address.
type signatureView struct {
	signatureRequestDoc
	ContractNumber string `json:"contractNumber"`
	SigningURL     string `json:"signingUrl"`
}

// signingURL is the absolute address of a request's signing page as the request r reached the
// simulator.
func signingURL(r *http.Request, sr *signatureRequest) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + signingPathPrefix + sr.Token
}

// adminSignatures lists signature requests, those of one contract with ?contractNumber= (GET
// /_sim/signatures): what the e-mails would carry, for tests.
func (s *Server) adminSignatures(w http.ResponseWriter, r *http.Request) {
	number := r.URL.Query().Get("contractNumber")
	s.mu.Lock()
	out := []signatureView{}
	for id := int32(1); id < s.nextContractID; id++ {
		c := s.contracts[id]
		if c == nil || (number != "" && c.Number != number) {
			continue
		}
		s.settleSignature(c)
		for _, sr := range c.Signatures {
			out = append(out, signatureView{signatureRequestDoc: sr.doc(), ContractNumber: c.Number, SigningURL: signingURL(r, sr)})
		}
	}
	s.mu.Unlock()
	body, _ := marshalJSON(out)
	_ = writeJSON(w, http.StatusOK, body)
}

// adminAnswer answers a contract's waiting request as its signer would (POST
// /_sim/signatures/answer, body {"contractNumber", "answer": "SIGNED" | "DECLINED" | "EXPIRED",
// "reason"}): 200 with the request, 404 without a waiting request, 409 on an archived contract,
// 422 on a bad answer or a decline without a reason.
func (s *Server) adminAnswer(w http.ResponseWriter, r *http.Request) {
	var in struct {
		ContractNumber string `json:"contractNumber"`
		Answer         string `json:"answer"`
		Reason         string `json:"reason"`
	}
	if err := decodeJSON(r, &in); err != nil {
		s.renderError(w, r, err)
		return
	}
	var v validator
	v.check(in.ContractNumber != "", "contractNumber", "is required")
	v.check(in.Answer == signatureSigned || in.Answer == signatureDeclined || in.Answer == signatureExpired, "answer", "must be SIGNED, DECLINED or EXPIRED")
	reason := strings.TrimSpace(in.Reason)
	if in.Answer == signatureDeclined {
		v.check(validReason(reason), "reason", "must be 1 to %d characters", maxDeclineReason)
	} else {
		v.check(reason == "", "reason", "is only given with DECLINED")
	}
	if err := v.err(); err != nil {
		s.renderError(w, r, err)
		return
	}
	err := s.lockedJSON(w, http.StatusOK, func() (any, error) {
		c, sr, err := s.answerLocked(in.ContractNumber, in.Answer, reason)
		if err != nil {
			return nil, err
		}
		return signatureView{signatureRequestDoc: sr.doc(), ContractNumber: c.Number, SigningURL: signingURL(r, sr)}, nil
	})
	if err != nil {
		s.renderError(w, r, err)
	}
}

// AnswerSignature answers the waiting signature request of the contract numbered number as its
// signer would: answer is SIGNED, DECLINED (with reason) or EXPIRED. For tests in other packages;
// the control API's POST /_sim/signatures/answer does the same over HTTP.
func (s *Server) AnswerSignature(number, answer, reason string) error {
	if answer == signatureDeclined && !validReason(reason) {
		return errValidation("reason", "must be 1 to 1000 characters")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _, err := s.answerLocked(number, answer, reason)
	return err
}

// answerLocked answers the waiting request of a contract. Caller holds s.mu.
func (s *Server) answerLocked(number, answer, reason string) (*contract, *signatureRequest, error) {
	if answer != signatureSigned && answer != signatureDeclined && answer != signatureExpired {
		return nil, nil, errValidation("answer", "must be SIGNED, DECLINED or EXPIRED")
	}
	c, ok := s.contractByNumber[number]
	if !ok {
		return nil, nil, errNotFound("contract %q not found", number)
	}
	s.settleSignature(c)
	if c.Status == contractArchived {
		return nil, nil, errConflict("contract %s is archived", c.Number)
	}
	sr := c.activeSignature()
	if sr == nil {
		return nil, nil, errNotFound("contract %s has no signature request waiting for an answer", c.Number)
	}
	if err := s.answer(c, sr, answer, reason, s.stamp()); err != nil {
		return nil, nil, err
	}
	return c, sr, nil
}
