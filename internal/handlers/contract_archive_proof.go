package handlers

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/session"
	"github.com/cpqportal/portal/web/templates/contracts"
)

// The archive button carries the contract's number, signed, so "Archive" sends the v2 archive
// call at once instead of reading the contract first to learn it (issue 27: two round trips, not
// three; docs/v2-assumptions.md A12). Archiving cannot be undone, so a number the browser changed
// is refused before any v2 call: the MAC binds the number to the contract's id and is keyed from
// the session keys (session.Signer), so only a page this portal rendered can name it.

// Form fields of the archive button (hx-vals).
const (
	archiveNumberField = "contractNumber"
	archiveMACField    = "contractNumberMAC"
)

// formSignerPurpose separates these MACs from any other use of the session keys.
const formSignerPurpose = "archive form"

// newFormSigner keys the form signer from the session keys. Without keys (handler tests build the
// Handler without them; cmd/portal always has some, config refuses to start otherwise) a random
// key of this process signs: a page then verifies only on the replica that rendered it.
func newFormSigner(keys []string) (*session.Signer, error) {
	if len(keys) == 0 {
		random := make([]byte, 32)
		if _, err := rand.Read(random); err != nil {
			return nil, fmt.Errorf("handlers: form signer key: %w", err)
		}
		keys = []string{hex.EncodeToString(random)}
	}
	signer, err := session.NewSigner(keys, formSignerPurpose)
	if err != nil {
		return nil, fmt.Errorf("handlers: form signer: %w", err)
	}
	return signer, nil
}

// archiveMACContext binds a signed number to one contract.
func archiveMACContext(contractID int32) string { return "contract:" + strconv.Itoa(int(contractID)) }

// withArchiveProof adds the signed contract number to an archive region that offers the button.
func (h *Handler) withArchiveProof(vm contracts.ArchiveVM, contractNumber string) contracts.ArchiveVM {
	if vm.Archived || contractNumber == "" || validateContractNumber(contractNumber) != nil {
		return vm
	}
	vm.Proof = &contracts.ArchiveProof{
		NumberField: archiveNumberField, Number: contractNumber,
		MACField: archiveMACField, MAC: h.formSigner.Sign(contractNumber, archiveMACContext(vm.ContractID)),
	}
	return vm
}

// archiveNumberFromForm returns the contract number the archive button posted, verified; "" when
// the form names none (a page rendered before the button carried it: the handler reads the
// contract). A number without a valid MAC is refused with 400 before any v2 call.
func (h *Handler) archiveNumberFromForm(c *gin.Context, contractID int32) (string, error) {
	// An unreadable or too large body (the route's 1 MiB limit) is answered as such (400, 413)
	// before anything is archived. The button posts urlencoded (htmx without files); r.PostForm
	// never reads a multipart body.
	if err := c.Request.ParseForm(); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return "", err
		}
		return "", badRequest("error.form_unreadable_reload")
	}
	number, mac := c.Request.PostForm.Get(archiveNumberField), c.Request.PostForm.Get(archiveMACField)
	if number == "" && mac == "" {
		return "", nil
	}
	if validateContractNumber(number) != nil || !h.formSigner.Verify(number, archiveMACContext(contractID), mac) {
		return "", badRequest("archive.error.number_forged")
	}
	return number, nil
}
