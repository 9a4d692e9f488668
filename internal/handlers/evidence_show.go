package handlers

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/web/templates/contracts"
	"github.com/cpqportal/portal/web/templates/layout"
)

// showEvidence answers GET /contracts/:contractId/evidence, the back-office evidence page: the
// contract PDF, its signature requests, archive status and payload, and the quote's validation
// audit on one page, with the SHA-256 of every downloadable artifact, computed by streaming each
// one from the v2 API through SHA-256 while the page is built.
func (h *Handler) showEvidence(c *gin.Context) {
	contractID, err := parseInt32ID(c, "contractId")
	if err != nil {
		h.fail(c, err)
		return
	}
	ctx := h.apiContext(c)
	ev, err := h.loadEvidence(ctx, tr(c), contractID)
	if err != nil {
		h.fail(c, err)
		return
	}
	base := contractPath(contractID) + "/evidence"
	names := h.auditNames(c, ev.contract.QuoteID, ev.audit.CustomerID)
	vm := contracts.EvidenceVM{
		Contract: contractVM(tr(c), ev.contract),
		Audit:    auditVM(tr(c), ev.contract.QuoteID, ev.audit, names),
		ZipURL:   base + ".zip",
	}
	// The audit's names came with the user's catalogue names, so the catalogue is named here
	// without a call of its own.
	nameConfiguratorFrom(tr(c), ev.contract, names.Configurators, &vm.Contract)
	for _, a := range ev.artifacts {
		digest, size, err := h.hashArtifact(ctx, a)
		if err != nil {
			h.failDocument(c, err)
			return
		}
		row := contracts.ArtifactVM{
			Key: a.key, Label: a.label, FileName: a.fileName, Size: size, SizeText: formatBytes(size).In(tr(c)),
			SHA256: digest, URL: base + "/" + a.key,
		}
		if a.published != "" {
			row.CheckOK = strings.EqualFold(a.published, digest)
			if row.CheckOK {
				row.Check = t(c, "evidence.check.match")
			} else {
				row.Check = t(c, "evidence.check.differs", a.published)
			}
		}
		vm.Artifacts = append(vm.Artifacts, row)
	}
	if ev.payload != nil {
		p := payloadVM(tr(c), ev.contract, ev.payload)
		vm.Payload = &p
	}
	h.renderPage(c, http.StatusOK, t(c, "evidence.title", vm.Contract.Number), layout.SectionContracts, contracts.EvidencePage(vm))
}
