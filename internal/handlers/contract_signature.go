package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"net/mail"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/textrules"
	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/contracts"
)

// Bounds of a signature request (docs/v2-assumptions.md A7: signerName 1-200, message 0-2000).
const (
	maxSignerNameRunes = 200
	maxMessageRunes    = 2000
	maxEmailBytes      = 254 // RFC 5321 path limit
)

// signatureForm is the user's input of the signature form.
type signatureForm struct {
	Email, SignerName, Message string
}

// signatureVM builds the signature region of a contract with an empty form, or, after a decline
// or an expiry, with the last signer filled in ("Send again").
func signatureVM(tr *i18n.Translator, contract *apiclient.Contract) contracts.SignatureVM {
	var form signatureForm
	if latest, ok := contract.LatestSignatureRequest(); ok && (latest.Status == apiclient.SignatureDeclined || latest.Status == apiclient.SignatureExpired) {
		form = signatureForm{Email: latest.Email, SignerName: latest.SignerName, Message: latest.Message}
	}
	return signatureVMWith(tr, contract, form, nil)
}

// signatureVMWith builds the signature region with the user's input and field errors (keyed by the
// v2 body's field names: email, signerName, message).
func signatureVMWith(tr *i18n.Translator, contract *apiclient.Contract, form signatureForm, fieldErrs map[string]string) contracts.SignatureVM {
	form.Email = strings.ToValidUTF8(form.Email, "\uFFFD")
	form.SignerName = strings.ToValidUTF8(form.SignerName, "\uFFFD")
	form.Message = strings.ToValidUTF8(form.Message, "\uFFFD")
	vm := contracts.SignatureVM{
		ContractID: contract.ContractID,
		Number:     contractNumberOf(contract),
		Archived:   isArchived(contract),
		// No maxlength: a browser cuts a longer paste silently; validateSignatureForm says why instead.
		Email: components.Field{ID: "signature-email", Name: "email", Label: tr.T("signature.field.email"), Type: "email",
			Value: form.Email, Error: fieldErrs["email"], Required: true, Autocomplete: "email",
			Attrs: map[string]any{"spellcheck": "false", "data-testid": "signature-email"}},
		SignerName: components.Field{ID: "signature-signer", Name: "signerName", Label: tr.T("signature.field.name"),
			Value: form.SignerName, Error: fieldErrs["signerName"], Required: true, Autocomplete: "name",
			Attrs: map[string]any{"data-testid": "signature-signer"}},
		Message: components.Field{ID: "signature-message", Name: "message", Label: tr.T("signature.field.message"),
			Hint: tr.T("signature.field.message_hint", maxMessageRunes), Value: form.Message, Error: fieldErrs["message"],
			Attrs: map[string]any{"data-testid": "signature-message"}},
	}
	vm.Errors = components.SummaryFrom(vm.Email, vm.SignerName, vm.Message)
	for _, sr := range contract.SignatureRequests {
		row := contracts.SignatureRow{
			ID: string(sr.SignatureRequestID), Email: sr.Email, SignerName: sr.SignerName, Message: sr.Message,
			Status: sr.Status, SentAt: sr.SentAt, RemovedAt: sr.RemovedAt, AnsweredAt: sr.AnsweredAt(),
			Reason: strings.ToValidUTF8(sr.DeclineReason, "\uFFFD"),
		}
		vm.Requests = append(vm.Requests, row)
	}
	// The latest request's answer decides what the region offers (A11): signed, nothing more;
	// declined or expired, sending again. A signature stays signed whatever came after it.
	for i := range contract.SignatureRequests {
		if sr := &contract.SignatureRequests[i]; sr.Status == apiclient.SignatureSigned {
			vm.Outcome = &vm.Requests[i]
		}
	}
	if latest, ok := contract.LatestSignatureRequest(); ok && vm.Outcome == nil {
		switch latest.Status {
		case apiclient.SignatureDeclined, apiclient.SignatureExpired:
			for i := range contract.SignatureRequests {
				if &contract.SignatureRequests[i] == latest {
					vm.Outcome = &vm.Requests[i]
				}
			}
		}
	}
	if active, ok := contract.ActiveSignatureRequest(); ok {
		vm.Active = &contracts.SignatureRow{Email: active.Email, SignerName: active.SignerName, SentAt: active.SentAt}
	}
	return vm
}

// validateSignatureForm checks the form before any v2 call; it returns field errors by v2 field
// name, in tr's language.
func validateSignatureForm(tr *i18n.Translator, form signatureForm) map[string]string {
	errs := map[string]string{}
	if msg := emailProblem(form.Email); !msg.IsZero() {
		errs["email"] = msg.In(tr)
	}
	switch n := utf8.RuneCountInString(form.SignerName); {
	case n == 0:
		errs["signerName"] = tr.T("signature.error.name_empty")
	case n > maxSignerNameRunes:
		errs["signerName"] = tr.T("signature.error.name_too_long", maxSignerNameRunes)
	case !textrules.Acceptable(form.SignerName, false):
		errs["signerName"] = tr.T("signature.error.name_chars")
	}
	switch {
	case utf8.RuneCountInString(form.Message) > maxMessageRunes:
		errs["message"] = tr.T("signature.error.message_too_long", maxMessageRunes)
	case !textrules.Acceptable(form.Message, true):
		errs["message"] = tr.T("signature.error.message_chars")
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// emailProblem checks an e-mail address with net/mail plus what mail.ParseAddress accepts but no
// one can send to: a display name or angle brackets, no dot in the domain, spaces, an address
// over 254 bytes. It returns the message for the user, or the zero Message.
func emailProblem(email string) i18n.Message {
	if email == "" {
		return i18n.M("signature.error.email_empty")
	}
	invalid := i18n.M("signature.error.email_invalid")
	if len(email) > maxEmailBytes {
		return i18n.M("signature.error.email_too_long", maxEmailBytes)
	}
	if !utf8.ValidString(email) {
		return invalid
	}
	addr, err := mail.ParseAddress(email)
	if err != nil || addr.Name != "" || addr.Address != email {
		return invalid
	}
	local, domain, ok := strings.Cut(email, "@")
	if !ok || local == "" || len(local) > 64 || strings.Contains(domain, "@") {
		return invalid
	}
	if !strings.Contains(domain, ".") || strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, ".") ||
		strings.Contains(domain, "..") || strings.HasPrefix(domain, "[") {
		return invalid
	}
	if strings.IndexFunc(email, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return invalid
	}
	return i18n.Message{}
}

// sendSignatureRequest answers POST /contracts/:contractId/signature: it validates the form, sends
// the request to sign by e-mail (POST /v2/signature) and answers the signature region. Invalid
// input re-renders the form with 422 and nothing is sent.
func (h *Handler) sendSignatureRequest(c *gin.Context) {
	contractID, err := parseInt32ID(c, "contractId")
	if err != nil {
		h.fail(c, err)
		return
	}
	// An unreadable or too large body (the route's 1 MiB limit) is answered as such (400, 413),
	// not as empty fields.
	if err := c.Request.ParseForm(); err != nil {
		var tooLarge *http.MaxBytesError
		if !errors.As(err, &tooLarge) {
			err = badRequest("error.form_unreadable_reload")
		}
		h.fail(c, err)
		return
	}
	// The form is urlencoded (htmx's encoding without files); r.PostForm never reads a multipart body.
	values := c.Request.PostForm
	form := signatureForm{
		Email:      strings.TrimSpace(values.Get("email")),
		SignerName: strings.TrimSpace(values.Get("signerName")),
		Message:    strings.TrimSpace(strings.ReplaceAll(values.Get("message"), "\r\n", "\n")),
	}
	ctx := h.apiContext(c)
	// The signature region shows the contract around the request (its number, earlier requests,
	// status): it is read beside the request, not after it (issue 27: one round trip), and the
	// answer's request is put into it (contractWithRequest). A full-page form post only redirects.
	contractOf := func() (*apiclient.Contract, error) { return h.loadContract(ctx, contractID) }
	if isHTMX(c) {
		contractOf = later(contractOf)
		defer contractOf() //nolint:errcheck // waited for on every path; the result is read below
	}
	fieldErrs := validateSignatureForm(tr(c), form)
	if fieldErrs != nil {
		contract, err := contractOf()
		if err != nil {
			h.fail(c, err)
			return
		}
		h.render(c, http.StatusUnprocessableEntity, contracts.SignaturePartial(signatureVMWith(tr(c), contract, form, fieldErrs)))
		return
	}
	request, err := h.api.Signatures.Create(ctx, apiclient.SignatureInput{
		ContractID: contractID, Email: form.Email, SignerName: form.SignerName, Message: form.Message,
	})
	if err != nil {
		if fe := fieldErrorsFrom(err); fe != nil && errors.Is(err, apiclient.ErrUnprocessable) {
			contract, loadErr := contractOf()
			if loadErr != nil {
				h.fail(c, loadErr)
				return
			}
			h.render(c, http.StatusUnprocessableEntity, contracts.SignaturePartial(signatureVMWith(tr(c), contract, form, fe)))
			return
		}
		h.fail(c, fmt.Errorf("contracts: request the signature of contract %d: %w", contractID, err))
		return
	}
	message := t(c, "signature.sent", form.Email)
	if !isHTMX(c) {
		c.Redirect(http.StatusSeeOther, contractPath(contractID))
		return
	}
	contract, err := contractOf()
	if err != nil {
		h.fail(c, err)
		return
	}
	if merged, ok := contractWithRequest(contract, request); ok {
		h.renderSignatureAnswer(c, merged, message)
		return
	}
	// An answer that does not carry the request and its status (A7): the service says what it is now.
	h.answerSignature(c, contractID, message)
}

// contractWithRequest is contract as it is once request (the answer to POST /v2/signature, A7: the
// signature request with its id and status) is made: the request replaces the one with its id, or
// is added after the others when the contract was read before the service recorded it; a SENT
// request puts the contract in SIGNATURE_REQUESTED (A7, A11; docs/v2-assumptions.md A12). It
// reports false when the answer names no request, no status, or another contract.
func contractWithRequest(contract *apiclient.Contract, request *apiclient.SignatureRequest) (*apiclient.Contract, bool) {
	if request == nil || request.SignatureRequestID == "" || request.Status == "" ||
		(request.ContractID != 0 && request.ContractID != contract.ContractID) {
		return nil, false
	}
	merged := *contract
	merged.SignatureRequests = make([]apiclient.SignatureRequest, 0, len(contract.SignatureRequests)+1)
	found := false
	for _, sr := range contract.SignatureRequests {
		if sr.SignatureRequestID == request.SignatureRequestID {
			sr, found = *request, true
		}
		merged.SignatureRequests = append(merged.SignatureRequests, sr)
	}
	if !found {
		merged.SignatureRequests = append(merged.SignatureRequests, *request)
	}
	if request.Status == signatureStatusSent && !isArchived(&merged) {
		merged.Status = contractStatusSignatureRequested
	}
	return &merged, true
}

// removeSignatureRequest answers DELETE /contracts/:contractId/signature (after a confirmation):
// it removes the active request (DELETE /v2/signature?contractId=) and answers the signature region.
func (h *Handler) removeSignatureRequest(c *gin.Context) {
	contractID, err := parseInt32ID(c, "contractId")
	if err != nil {
		h.fail(c, err)
		return
	}
	ctx := h.apiContext(c)
	// The region shows the contract around the removal: it is read beside the removal, not after
	// it (one round trip), and the removal the 204 confirmed is put into it
	// (contractWithoutActiveRequest), so a read that ran first, or a service that answers a read
	// from a copy a moment behind, never shows the removed request as still out for signature.
	contractOf := func() (*apiclient.Contract, error) { return h.loadContract(ctx, contractID) }
	if isHTMX(c) {
		contractOf = later(contractOf)
		defer contractOf() //nolint:errcheck // waited for on every path; the result is read below
	}
	if err := h.api.Signatures.Delete(ctx, contractID); err != nil {
		h.fail(c, fmt.Errorf("contracts: remove the signature request of contract %d: %w", contractID, err))
		return
	}
	removedAt := h.now()
	if !isHTMX(c) {
		c.Redirect(http.StatusSeeOther, contractPath(contractID))
		return
	}
	contract, err := contractOf()
	if err != nil {
		h.fail(c, err)
		return
	}
	h.renderSignatureAnswer(c, contractWithoutActiveRequest(contract, removedAt), t(c, "signature.removed"))
}

// contractWithoutActiveRequest is contract as it is once its active request is removed (DELETE
// /v2/signature answered 204, A7): a request still SENT becomes REMOVED at removedAt (when the
// portal had the answer: the 204 carries no time) and a contract SIGNATURE_REQUESTED is
// GENERATED again (A11). A contract read after the removal comes back unchanged.
func contractWithoutActiveRequest(contract *apiclient.Contract, removedAt time.Time) *apiclient.Contract {
	if !slices.ContainsFunc(contract.SignatureRequests, func(sr apiclient.SignatureRequest) bool { return sr.Status == signatureStatusSent }) {
		return contract
	}
	merged := *contract
	merged.SignatureRequests = slices.Clone(contract.SignatureRequests)
	for i := range merged.SignatureRequests {
		if sr := &merged.SignatureRequests[i]; sr.Status == signatureStatusSent {
			sr.Status, sr.RemovedAt = signatureStatusRemoved, removedAt.UTC()
		}
	}
	if merged.Status == contractStatusSignatureRequested {
		merged.Status = contractStatusGenerated
	}
	return &merged
}

// answerSignature answers a successful signature action whose answer does not say the contract's
// new state (a removal answers 204): it reads the contract, then renders as renderSignatureAnswer.
func (h *Handler) answerSignature(c *gin.Context, contractID int32, message string) {
	if !isHTMX(c) {
		c.Redirect(http.StatusSeeOther, contractPath(contractID))
		return
	}
	contract, err := h.loadContract(h.apiContext(c), contractID)
	if err != nil {
		h.fail(c, err)
		return
	}
	h.renderSignatureAnswer(c, contract, message)
}

// renderSignatureAnswer answers a successful signature action with the contract's new state: the
// signature region and, out of band, the contract's status, with a toast; the live notice and the
// work index learn the state the user made.
func (h *Handler) renderSignatureAnswer(c *gin.Context, contract *apiclient.Contract, message string) {
	status := contractStatusVM(tr(c), contract)
	status.OOB = true
	h.markContractSeen(c, contract)
	h.indexContract(c, contract, workindex.ActChanged)
	h.toast(c, components.ToastSuccess, message)
	announce(c, message)
	sig := signatureVM(tr(c), contract)
	h.prefillSigner(c, contract, &sig)
	h.render(c, http.StatusOK, templ.Join(contracts.SignaturePartial(sig), contracts.StatusBadge(status)))
}
