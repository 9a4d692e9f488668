package handlers

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/cpqportal/portal/internal/workindex"
)

// TestContractPageShowsTheSignersAnswer: a declined request shows who declined, when and why, the
// badge says Declined, and the form sends again with the last signer filled in; sent again and
// signed, the page says who signed and offers no new request; an expired one offers to send again.
func TestContractPageShowsTheSignersAnswer(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	_, contract := e.newContract(t)
	e.sendForSignature(t, contract)
	if err := e.sim.AnswerSignature(contract.ContractNumber, "DECLINED", "The <b>price</b> is too high"); err != nil {
		t.Fatal(err)
	}
	page := func() *goquery.Document {
		t.Helper()
		r := e.p.get(t, e.user, contractPath(contract.ContractID), nil)
		if r.StatusCode != http.StatusOK {
			t.Fatalf("contract page: %d", r.StatusCode)
		}
		return parseHTML(t, r.body)
	}
	doc := page()
	if got := workRows(t, e, "/work/contracts?stage=declined")[strconv.Itoa(int(contract.ContractID))]; got != string(workindex.StageDeclined) {
		t.Errorf("contracts list, stage declined: %q", got)
	}
	declined := squash(doc.Find(`[data-testid="signature-declined"]`).Text())
	if !strings.Contains(declined, "Declined by Signer (signer@example.com) on") || !strings.Contains(declined, "Reason: The <b>price</b> is too high") {
		t.Errorf("declined notice %q", declined)
	}
	if doc.Find(`[data-testid="signature-declined"] time[datetime]`).Length() != 1 {
		t.Error("the decline has no time")
	}
	if got := doc.Find(`[data-testid="contract-status"]`).AttrOr("data-status", ""); got != "Declined" {
		t.Errorf("status badge %q, want Declined", got)
	}
	if got := doc.Find(`[data-testid="signature-request"]`).AttrOr("data-status", ""); got != "DECLINED" {
		t.Errorf("request row status %q", got)
	}
	if email, name := doc.Find(`#signature-email`).AttrOr("value", ""), doc.Find(`#signature-signer`).AttrOr("value", ""); email != "signer@example.com" || name != "Signer" {
		t.Errorf("Send again is filled with %q, %q; want the last signer", email, name)
	}
	if got := strings.TrimSpace(doc.Find(`[data-testid="signature-send"]`).Text()); got != "Send again" {
		t.Errorf("send button %q", got)
	}
	// Sent again with what the form holds.
	r := e.htmxDo(t, http.MethodPost, contractPath(contract.ContractID)+"/signature", url.Values{"email": {"signer@example.com"}, "signerName": {"Signer"}})
	if r.StatusCode != http.StatusOK || !strings.Contains(r.body, `data-testid="signature-active"`) {
		t.Fatalf("send again: %d %.300s", r.StatusCode, r.body)
	}
	if err := e.sim.AnswerSignature(contract.ContractNumber, "SIGNED", ""); err != nil {
		t.Fatal(err)
	}
	doc = page()
	if got := squash(doc.Find(`[data-testid="signature-signed"]`).Text()); !strings.Contains(got, "Signed by Signer (signer@example.com) on") {
		t.Errorf("signed notice %q", got)
	}
	if doc.Find(`[data-testid="signature-form"]`).Length() != 0 || doc.Find(`[data-testid="signature-declined"]`).Length() != 0 {
		t.Error("a signed contract still offers a new request, or shows the old decline as its answer")
	}
	if got := doc.Find(`[data-testid="contract-status"]`).AttrOr("data-status", ""); got != "Signed" {
		t.Errorf("status badge %q, want Signed", got)
	}
	// The lists follow, with the stage filter: signed, no longer declined.
	id := strconv.Itoa(int(contract.ContractID))
	if got := workRows(t, e, "/work/contracts?stage=signed")[id]; got != string(workindex.StageSigned) {
		t.Errorf("contracts list, stage signed: %q", got)
	}
	if rows := workRows(t, e, "/work/contracts?stage=declined"); rows[id] != "" {
		t.Errorf("the signed contract is still listed as declined")
	}

	// Expired: the same offer to send again.
	_, other := e.newContract(t)
	e.sendForSignature(t, other)
	if err := e.sim.AnswerSignature(other.ContractNumber, "EXPIRED", ""); err != nil {
		t.Fatal(err)
	}
	doc = parseHTML(t, e.p.get(t, e.user, contractPath(other.ContractID), nil).body)
	if got := squash(doc.Find(`[data-testid="signature-expired"]`).Text()); !strings.Contains(got, "The request sent to Signer (signer@example.com) expired unanswered on") {
		t.Errorf("expired notice %q", got)
	}
	if doc.Find(`#signature-email`).AttrOr("value", "") != "signer@example.com" || doc.Find(`[data-testid="contract-status"]`).AttrOr("data-status", "") != "Expired" {
		t.Error("an expired request does not offer to send again to the last signer, or the badge does not say Expired")
	}
}

// TestContractLiveNoticeFollowsTheSigner: an open contract page's poll sees the signer's answer:
// the notice says the contract was signed, and the status and signature regions come with it.
func TestContractLiveNoticeFollowsTheSigner(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	_, contract := e.newContract(t)
	e.sendForSignature(t, contract)
	doc := parseHTML(t, e.p.get(t, e.user, contractPath(contract.ContractID), nil).body)
	live := doc.Find(`#contract-live`)
	tag, since := live.AttrOr("data-tag", ""), live.AttrOr("data-since", "")
	poll := func() response {
		return e.p.do(t, e.user, http.MethodGet, contractPath(contract.ContractID)+"/changes?since="+since, nil,
			map[string]string{"If-None-Match": `"` + tag + `"`, "HX-Request": "true"})
	}
	if r := poll(); r.StatusCode != http.StatusNotModified {
		t.Fatalf("poll before any answer: %d", r.StatusCode)
	}
	if err := e.sim.AnswerSignature(contract.ContractNumber, "SIGNED", ""); err != nil {
		t.Fatal(err)
	}
	// The shared watcher answers its tag for one poll interval: poll as the page does until the
	// change shows (within the interval, bounded).
	r := poll()
	for deadline := time.Now().Add(15 * time.Second); r.StatusCode == http.StatusNotModified && time.Now().Before(deadline); r = poll() {
		time.Sleep(50 * time.Millisecond)
	}
	if r.StatusCode != http.StatusOK {
		t.Fatalf("poll after the signature: %d", r.StatusCode)
	}
	notice := parseHTML(t, r.body)
	if got := squash(notice.Find(`[data-testid="live-notice-text"]`).Text()); !strings.Contains(got, "contract signed") {
		t.Errorf("live notice %q does not say the contract was signed", got)
	}
	if got := notice.Find(`[data-testid="contract-status"]`).AttrOr("data-status", ""); got != "Signed" {
		t.Errorf("out-of-band status %q, want Signed", got)
	}
	if notice.Find(`[data-testid="signature-signed"]`).Length() != 1 {
		t.Error("the signature region does not come with the notice")
	}
}
