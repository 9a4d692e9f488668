package v2sim

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// tAnswered is a signature request with the signer's answer (A7).
type tAnswered struct {
	SignatureRequestID                         int64
	Status, DeclineReason, ContractNumber      string
	SignedAt, DeclinedAt, ExpiredAt, ExpiresAt *string
	SigningURL                                 string
}

// sentContract makes a contract and sends it for signature; it answers the contract's number and id.
func sentContract(t *testing.T, e *env) (string, int32) {
	t.Helper()
	numbers, err := e.sim.SeedContracts(1)
	if err != nil {
		t.Fatal(err)
	}
	var c tContract
	e.do("GET", "/v2/contract/bycontractnumber/"+numbers[0], nil).wantStatus(t, 200).decode(t, &c)
	e.do("POST", "/v2/signature", path(`{"contractId": %d, "email": "anna@example.com", "signerName": "Anna Rossi"}`, c.ContractID)).
		wantStatus(t, http.StatusCreated)
	return c.ContractNumber, c.ContractID
}

func (e *env) contract(t *testing.T, number string) tContract {
	t.Helper()
	var c tContract
	e.do("GET", "/v2/contract/bycontractnumber/"+number, nil).wantStatus(t, 200).decode(t, &c)
	return c
}

func (e *env) answer(number, answer, reason string) response {
	return e.do("POST", "/_sim/signatures/answer", map[string]string{"contractNumber": number, "answer": answer, "reason": reason})
}

func (e *env) signatures(t *testing.T, number string) []tAnswered {
	t.Helper()
	var out []tAnswered
	e.do("GET", "/_sim/signatures?contractNumber="+url.QueryEscape(number), nil).wantStatus(t, 200).decode(t, &out)
	return out
}

func TestSignerSigns(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Admin: true})
	number, id := sentContract(t, e)
	var sr tAnswered
	e.answer(number, "SIGNED", "").wantStatus(t, 200).decode(t, &sr)
	if sr.Status != "SIGNED" || sr.SignedAt == nil || sr.DeclinedAt != nil {
		t.Fatalf("signed request %+v", sr)
	}
	c := e.contract(t, number)
	if c.Status != "SIGNED" || c.SignatureRequests[0].Status != "SIGNED" {
		t.Fatalf("contract after signing: %+v", c)
	}
	// Answered once: a second answer, a removal or a new request are refused.
	e.answer(number, "DECLINED", "too late").wantError(t, http.StatusNotFound, codeNotFound)
	e.do("DELETE", path("/v2/signature?contractId=%d", id), nil).wantError(t, http.StatusNotFound, codeNotFound)
	e.do("POST", "/v2/signature", path(`{"contractId": %d, "email": "b@example.com", "signerName": "B"}`, id)).wantError(t, http.StatusConflict, codeConflict)
	// The audit says who signed.
	var audit struct {
		Entries []struct{ Action, Actor string }
	}
	e.do("GET", path("/v2/contract/getjsonvalidationaudit/%d", c.QuoteID), nil).wantStatus(t, 200).decode(t, &audit)
	last := audit.Entries[len(audit.Entries)-1]
	if last.Action != "SIGNATURE_SIGNED" || last.Actor != "anna@example.com" {
		t.Fatalf("last audit entry %+v", last)
	}
	// Archiving a signed contract works as before.
	e.do("GET", "/v2/contract/contractNumber/"+number+"/archive", nil).wantStatus(t, 200)
	if c := e.contract(t, number); c.Status != "ARCHIVED" || c.SignatureRequests[0].Status != "SIGNED" {
		t.Fatalf("archived: %+v", c)
	}
}

func TestSignerDeclinesAndIsAskedAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Admin: true})
	number, id := sentContract(t, e)
	e.answer(number, "DECLINED", "").wantError(t, http.StatusUnprocessableEntity, codeValidationFailed)
	e.answer(number, "MAYBE", "").wantError(t, http.StatusUnprocessableEntity, codeValidationFailed)
	e.answer(number, "SIGNED", "a reason").wantError(t, http.StatusUnprocessableEntity, codeValidationFailed)
	var sr tAnswered
	e.answer(number, "DECLINED", "Price too high").wantStatus(t, 200).decode(t, &sr)
	if sr.Status != "DECLINED" || sr.DeclineReason != "Price too high" || sr.DeclinedAt == nil {
		t.Fatalf("declined request %+v", sr)
	}
	if c := e.contract(t, number); c.Status != "GENERATED" || c.SignatureRequests[0].Status != "DECLINED" {
		t.Fatalf("contract after the decline: %+v", c)
	}
	// Sent again: a new request, the declined one stays in the list.
	e.do("POST", "/v2/signature", path(`{"contractId": %d, "email": "anna@example.com", "signerName": "Anna Rossi"}`, id)).wantStatus(t, http.StatusCreated)
	c := e.contract(t, number)
	if c.Status != "SIGNATURE_REQUESTED" || len(c.SignatureRequests) != 2 || c.SignatureRequests[1].Status != "SENT" {
		t.Fatalf("sent again: %+v", c)
	}
	e.answer("C-0000-000000", "SIGNED", "").wantError(t, http.StatusNotFound, codeNotFound)
}

func TestSignatureExpires(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Admin: true, SignatureExpiry: time.Hour})
	number, _ := sentContract(t, e)
	e.clock.Advance(59 * time.Minute)
	if c := e.contract(t, number); c.SignatureRequests[0].Status != "SENT" {
		t.Fatalf("expired early: %+v", c)
	}
	e.clock.Advance(time.Minute)
	c := e.contract(t, number)
	if c.Status != "GENERATED" || c.SignatureRequests[0].Status != "EXPIRED" {
		t.Fatalf("after the expiry: %+v", c)
	}
	srs := e.signatures(t, number)
	if len(srs) != 1 || srs[0].ExpiredAt == nil || srs[0].ExpiresAt == nil || *srs[0].ExpiredAt != *srs[0].ExpiresAt {
		t.Fatalf("expired request %+v", srs)
	}
	e.answer(number, "SIGNED", "").wantError(t, http.StatusNotFound, codeNotFound)
	// The default is 14 days.
	d := newEnv(t, Options{Admin: true})
	n2, _ := sentContract(t, d)
	d.clock.Advance(14*24*time.Hour - time.Second)
	if d.contract(t, n2).SignatureRequests[0].Status != "SENT" {
		t.Fatal("the default expiry is shorter than 14 days")
	}
	d.clock.Advance(time.Second)
	if d.contract(t, n2).SignatureRequests[0].Status != "EXPIRED" {
		t.Fatal("the default expiry is longer than 14 days")
	}
}

func TestDemoSignersAnswerByThemselves(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Signers: AutoSigners{Delay: 45 * time.Second, DeclineEvery: 3}})
	var numbers []string
	for range 3 {
		n, _ := sentContract(t, e)
		numbers = append(numbers, n)
	}
	if c := e.contract(t, numbers[0]); c.SignatureRequests[0].Status != "SENT" {
		t.Fatalf("answered before the delay: %+v", c)
	}
	e.clock.Advance(45 * time.Second)
	for i, n := range numbers {
		c := e.contract(t, n)
		want := "SIGNED"
		if c.SignatureRequests[0].SignatureRequestID%3 == 0 {
			want = "DECLINED"
		}
		if c.SignatureRequests[0].Status != want {
			t.Errorf("request %d (%s) = %s, want %s", i, n, c.SignatureRequests[0].Status, want)
		}
	}
	// Request ids 1, 2, 3: the third declines, with a reason.
	var declined tContract
	for _, n := range numbers {
		if c := e.contract(t, n); c.SignatureRequests[0].Status == "DECLINED" {
			declined = c
		}
	}
	if declined.ContractNumber == "" {
		t.Fatal("no demo signer declined")
	}
	var raw struct {
		SignatureRequests []struct{ DeclineReason string }
	}
	e.do("GET", "/v2/contract/bycontractnumber/"+declined.ContractNumber, nil).wantStatus(t, 200).decode(t, &raw)
	if raw.SignatureRequests[0].DeclineReason == "" {
		t.Fatal("a demo decline without a reason")
	}
}

func TestSigningPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Admin: true})
	number, _ := sentContract(t, e)
	srs := e.signatures(t, number)
	if len(srs) != 1 || !regexp.MustCompile(`/sign/[0-9a-f]{48}$`).MatchString(srs[0].SigningURL) {
		t.Fatalf("signing address %+v", srs)
	}
	link := srs[0].SigningURL
	get := func(u string) (int, string) {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	post := func(form url.Values, origin string) (int, string) {
		req, _ := http.NewRequest("POST", link, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, page := get(link)
	if status != 200 || !strings.Contains(page, number) || !strings.Contains(page, "Anna Rossi") || !strings.Contains(page, `data-testid="signing-decline"`) {
		t.Fatalf("signing page %d: %s", status, page)
	}
	if status, _ := get(e.srv.URL + "/sign/" + strings.Repeat("0", 48)); status != http.StatusNotFound {
		t.Fatalf("a guessed address answers %d", status)
	}
	// Another site cannot answer for the signer; a decline needs a reason.
	if status, _ := post(url.Values{"answer": {"sign"}}, "https://evil.example"); status != http.StatusForbidden {
		t.Fatalf("cross-site post answered %d", status)
	}
	if status, _ := post(url.Values{"answer": {"decline"}, "reason": {"  "}}, ""); status != http.StatusUnprocessableEntity {
		t.Fatalf("decline without a reason answered %d", status)
	}
	if c := e.contract(t, number); c.SignatureRequests[0].Status != "SENT" {
		t.Fatalf("a refused answer changed the request: %+v", c)
	}
	status, page = post(url.Values{"answer": {"decline"}, "reason": {"<b>Wrong address</b>"}}, e.srv.URL)
	if status != 200 || !strings.Contains(page, "DECLINED") || !strings.Contains(page, "&lt;b&gt;Wrong address") || strings.Contains(page, "signing-sign") {
		t.Fatalf("declined page %d: %s", status, page)
	}
	if c := e.contract(t, number); c.SignatureRequests[0].Status != "DECLINED" {
		t.Fatalf("after the decline: %+v", c)
	}
	if status, _ := post(url.Values{"answer": {"sign"}}, ""); status != http.StatusConflict {
		t.Fatalf("a second answer answered %d", status)
	}
}

func TestArchiveEndsAWaitingRequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Admin: true})
	number, _ := sentContract(t, e)
	e.do("GET", "/v2/contract/contractNumber/"+number+"/archive", nil).wantStatus(t, 200)
	c := e.contract(t, number)
	if c.Status != "ARCHIVED" || c.SignatureRequests[0].Status != "REMOVED" {
		t.Fatalf("archived with a waiting request: %+v", c)
	}
	e.answer(number, "SIGNED", "").wantError(t, http.StatusConflict, codeConflict)
}
