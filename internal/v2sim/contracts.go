package v2sim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Contract statuses of docs/v2-assumptions.md A7.
const (
	contractGenerated          = "GENERATED"
	contractSignatureRequested = "SIGNATURE_REQUESTED"
	contractSigned             = "SIGNED"
	contractArchived           = "ARCHIVED"

	signatureSent     = "SENT"
	signatureRemoved  = "REMOVED"
	signatureSigned   = "SIGNED"
	signatureDeclined = "DECLINED"
	signatureExpired  = "EXPIRED"
)

type contract struct {
	ID         int32
	Number     string
	QuoteID    int64
	CustomerID int32
	CPQID      int32
	Status     string
	CreatedAt  time.Time
	// Snapshots taken when the contract was generated: the contract is a legal document and does not follow
	// later changes of the quote or customer.
	Quote      quoteDoc
	Customer   customerDoc
	PDF        []byte
	PDFSHA256  string
	Signatures []*signatureRequest
	ArchiveID  string
	ArchivedAt time.Time
}

type signatureRequest struct {
	ID         int64
	ContractID int32
	Email      string
	SignerName string
	Message    string
	Status     string
	SentAt     time.Time
	RemovedAt  time.Time
	// The signer's answer (signer.go): when it came and, for a decline, the signer's reason.
	ExpiresAt  time.Time
	AnsweredAt time.Time
	Reason     string
	// Token is the secret of the signing page's address (/sign/{token}), the link a real e-mail carries.
	Token string
}

func (c *contract) pdfFileName() string { return "contract-" + c.Number + ".pdf" }

func (c *contract) activeSignature() *signatureRequest {
	for _, sr := range c.Signatures {
		if sr.Status == signatureSent {
			return sr
		}
	}
	return nil
}

// Wire documents of A7.
type contractDoc struct {
	ContractID        int32                 `json:"contractId"`
	ContractNumber    string                `json:"contractNumber"`
	QuoteID           int64                 `json:"quoteId"`
	CustomerID        int32                 `json:"customerId"`
	CPQID             int32                 `json:"cpqId"`
	Status            string                `json:"status"`
	CreatedAt         time.Time             `json:"createdAt"`
	Totals            totals                `json:"totals"`
	Customer          contractCustomerDoc   `json:"customer"`
	PDF               documentDoc           `json:"pdf"`
	SignatureRequests []signatureRequestDoc `json:"signatureRequests"`
	Archive           archiveDoc            `json:"archive"`
}

type contractCustomerDoc struct {
	ID    int32  `json:"id"`
	Name  string `json:"name"`
	TaxID string `json:"taxId"`
}

type documentDoc struct {
	FileName string `json:"fileName"`
	Size     int64  `json:"size"`
	SHA256   string `json:"sha256"`
}

type signatureRequestDoc struct {
	SignatureRequestID int64      `json:"signatureRequestId"`
	ContractID         int32      `json:"contractId"`
	Email              string     `json:"email"`
	SignerName         string     `json:"signerName"`
	Message            string     `json:"message"`
	Status             string     `json:"status"`
	SentAt             time.Time  `json:"sentAt"`
	RemovedAt          *time.Time `json:"removedAt,omitempty"`
	ExpiresAt          *time.Time `json:"expiresAt,omitempty"`
	SignedAt           *time.Time `json:"signedAt,omitempty"`
	DeclinedAt         *time.Time `json:"declinedAt,omitempty"`
	ExpiredAt          *time.Time `json:"expiredAt,omitempty"`
	DeclineReason      string     `json:"declineReason,omitempty"`
}

type archiveDoc struct {
	Archived   bool       `json:"archived"`
	ArchiveID  string     `json:"archiveId,omitempty"`
	ArchivedAt *time.Time `json:"archivedAt,omitempty"`
}

func (sr *signatureRequest) doc() signatureRequestDoc {
	d := signatureRequestDoc{SignatureRequestID: sr.ID, ContractID: sr.ContractID, Email: sr.Email, SignerName: sr.SignerName,
		Message: sr.Message, Status: sr.Status, SentAt: sr.SentAt}
	at := func(t time.Time) *time.Time {
		if t.IsZero() {
			return nil
		}
		return &t
	}
	d.RemovedAt, d.ExpiresAt = at(sr.RemovedAt), at(sr.ExpiresAt)
	switch sr.Status {
	case signatureSigned:
		d.SignedAt = at(sr.AnsweredAt)
	case signatureDeclined:
		d.DeclinedAt, d.DeclineReason = at(sr.AnsweredAt), sr.Reason
	case signatureExpired:
		d.ExpiredAt = at(sr.AnsweredAt)
	}
	return d
}

func (c *contract) archiveDoc() archiveDoc {
	if c.ArchiveID == "" {
		return archiveDoc{}
	}
	t := c.ArchivedAt
	return archiveDoc{Archived: true, ArchiveID: c.ArchiveID, ArchivedAt: &t}
}

func (c *contract) doc() contractDoc {
	d := contractDoc{ContractID: c.ID, ContractNumber: c.Number, QuoteID: c.QuoteID, CustomerID: c.CustomerID, CPQID: c.CPQID,
		Status: c.Status, CreatedAt: c.CreatedAt, Totals: c.Quote.Totals,
		Customer:          contractCustomerDoc{ID: c.Customer.ID, Name: c.Customer.Name, TaxID: c.Customer.TaxID},
		PDF:               documentDoc{FileName: c.pdfFileName(), Size: int64(len(c.PDF)), SHA256: c.PDFSHA256},
		SignatureRequests: []signatureRequestDoc{},
		Archive:           c.archiveDoc()}
	for _, sr := range c.Signatures {
		d.SignatureRequests = append(d.SignatureRequests, sr.doc())
	}
	return d
}

// generate makes the contract of a quote with its PDF. Caller holds s.mu.
func (s *Server) generate(r *http.Request, q *quote) (*contract, error) {
	now := s.stamp()
	c := &contract{ID: s.nextContractID, QuoteID: q.ID, CustomerID: q.CustomerID, CPQID: q.CPQID, Status: contractGenerated,
		CreatedAt: now, Customer: s.customerDoc(s.customerByID(int64(q.CustomerID)))}
	c.Number = fmt.Sprintf("C-%d-%06d", now.Year(), c.ID)
	c.Quote = s.quoteDoc(q)
	pdf, err := s.contractPDF(c)
	if err != nil {
		return nil, err
	}
	s.nextContractID++
	q.ContractID = c.ID
	c.PDF = pdf
	sum := sha256.Sum256(pdf)
	c.PDFSHA256 = hex.EncodeToString(sum[:])
	s.contracts[c.ID] = c
	s.contractByNumber[c.Number] = c
	s.audit(r, q, auditContractGenerated, fmt.Sprintf("Contract %s generated (net %s activation, %s recurring)", c.Number, c.Quote.Totals.NetActivation, c.Quote.Totals.NetRecurring),
		change{Field: "contract", Before: "", After: c.Number})
	return c, nil
}

// POST /v2/contract/{quoteId}/generate, empty body: 201 with the new contract, 200 with the existing one, 422
// without carts; with Options.GeneratePDF the PDF itself (A7).
func (s *Server) generateContract(w http.ResponseWriter, r *http.Request) error {
	quoteID, err := pathInt64(r, "quoteId")
	if err != nil {
		return err
	}
	if err := requireNoBody(r); err != nil {
		return err
	}
	status := http.StatusOK
	var (
		body, pdf []byte
		number    string
		id        int32
	)
	err = s.locked(func() error {
		q, ok := s.quotes[quoteID]
		if !ok {
			return errNotFound("quote %d not found", quoteID)
		}
		if err := s.checkQuote(r, q); err != nil {
			return err
		}
		var c *contract
		if q.ContractID != 0 {
			c = s.contracts[q.ContractID]
			s.settleSignature(c)
		} else {
			if len(q.Carts) == 0 {
				return errValidation("carts", fmt.Sprintf("quote %d has no carts: add a cart before generating the contract", quoteID))
			}
			var err error
			if c, err = s.generate(r, q); err != nil {
				return err
			}
			status = http.StatusCreated
		}
		body, _ = marshalJSON(c.doc())
		pdf, number, id = c.PDF, c.Number, c.ID
		return nil
	})
	if err != nil {
		return err
	}
	if s.opts.GeneratePDF && acceptQ(r.Header.Get("Accept"), "application/pdf") > 0 {
		w.Header().Set("X-Contract-Id", strconv.Itoa(int(id)))
		w.Header().Set("X-Contract-Number", number)
		return writePDF(w, status, "contract-"+number+".pdf", pdf)
	}
	return writeJSON(w, status, body)
}

// writePDF answers a PDF as an attachment.
func writePDF(w http.ResponseWriter, status int, fileName string, pdf []byte) error {
	h := w.Header()
	h.Set("Content-Type", "application/pdf")
	h.Set("Content-Length", strconv.Itoa(len(pdf)))
	h.Set("Content-Disposition", contentDisposition(fileName))
	w.WriteHeader(status)
	_, err := w.Write(pdf)
	return err
}

// answerContract writes the contract document, or its PDF when the client prefers application/pdf (A7: content
// negotiation on GET /v2/contract/{contractId}). find runs under the state lock.
func (s *Server) answerContract(w http.ResponseWriter, r *http.Request, allowPDF bool, find func() (*contract, error)) error {
	accept := r.Header.Get("Accept")
	wantPDF := allowPDF && acceptQ(accept, "application/pdf") > acceptQ(accept, "application/json")
	var body []byte
	var name string
	err := s.locked(func() error {
		c, err := find()
		if err != nil {
			return err
		}
		if wantPDF {
			body, name = c.PDF, c.pdfFileName()
		} else {
			body, _ = marshalJSON(c.doc())
		}
		return nil
	})
	if err != nil {
		return err
	}
	if wantPDF {
		return writePDF(w, http.StatusOK, name, body)
	}
	return writeJSON(w, http.StatusOK, body)
}

// GET /v2/contract/{contractId} (A7).
func (s *Server) getContract(w http.ResponseWriter, r *http.Request) error {
	id, err := pathInt32(r, "contractId")
	if err != nil {
		return err
	}
	if err := requireNoBody(r); err != nil {
		return err
	}
	return s.answerContract(w, r, true, func() (*contract, error) {
		c, ok := s.contracts[id]
		if !ok {
			return nil, errNotFound("contract %d not found", id)
		}
		if err := s.checkContract(r, c); err != nil {
			return nil, err
		}
		s.settleSignature(c)
		return c, nil
	})
}

// contractByNumberParam answers the contract named by the (already unescaped) path parameter. Caller holds s.mu.
func (s *Server) contractByNumberParam(r *http.Request) (*contract, error) {
	number := r.PathValue("contractNumber")
	if number == "" || utf8.RuneCountInString(number) > 100 {
		return nil, newError(http.StatusBadRequest, codeBadPathParameter, "path parameter contractNumber must be 1 to 100 characters")
	}
	c, ok := s.contractByNumber[number]
	if !ok {
		return nil, errNotFound("contract %q not found", number)
	}
	if err := s.checkContract(r, c); err != nil {
		return nil, err
	}
	s.settleSignature(c)
	return c, nil
}

// GET /v2/contract/bycontractnumber/{contractNumber} (A7).
func (s *Server) getContractByNumber(w http.ResponseWriter, r *http.Request) error {
	if err := requireNoBody(r); err != nil {
		return err
	}
	return s.answerContract(w, r, false, func() (*contract, error) { return s.contractByNumberParam(r) })
}

// POST /v2/signature body {"contractId", "email", "signerName", "message"}: 201 (A7).
func (s *Server) requestSignature(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		ContractID *int32  `json:"contractId"`
		Email      *string `json:"email"`
		SignerName *string `json:"signerName"`
		Message    *string `json:"message"`
	}
	if err := decodeJSON(r, &in); err != nil {
		return err
	}
	var v validator
	if in.ContractID == nil {
		v.add("contractId", "is required")
	}
	var email, signer, message string
	if in.Email == nil || strings.TrimSpace(*in.Email) == "" {
		v.add("email", "is required")
	} else {
		email = strings.TrimSpace(*in.Email)
		v.check(validEmail(email), "email", "must be a valid e-mail address")
	}
	if in.SignerName != nil {
		signer = strings.TrimSpace(*in.SignerName)
	}
	n := utf8.RuneCountInString(signer)
	v.check(n >= 1 && n <= 200, "signerName", "must be 1 to 200 characters")
	if in.Message != nil {
		message = *in.Message
		v.check(utf8.RuneCountInString(message) <= 2000, "message", "must be at most 2000 characters")
	}
	if in.ContractID == nil {
		return v.err()
	}
	return s.lockedJSON(w, http.StatusCreated, func() (any, error) {
		c, ok := s.contracts[*in.ContractID]
		if !ok {
			return nil, errNotFound("contract %d not found", *in.ContractID)
		}
		if err := s.checkContract(r, c); err != nil {
			return nil, err
		}
		if err := v.err(); err != nil {
			return nil, err
		}
		s.settleSignature(c)
		if c.Status == contractArchived {
			return nil, errConflict("contract %s is archived", c.Number)
		}
		if c.Status == contractSigned {
			return nil, errConflict("contract %s is signed already", c.Number)
		}
		if active := c.activeSignature(); active != nil {
			return nil, errConflict("contract %s already has an active signature request (%d, sent to %s)", c.Number, active.ID, active.Email)
		}
		sent := s.stamp()
		sr := &signatureRequest{ID: s.nextSignatureID, ContractID: c.ID, Email: email, SignerName: signer, Message: message,
			Status: signatureSent, SentAt: sent, ExpiresAt: sent.Add(s.opts.SignatureExpiry), Token: newSigningToken()}
		before := c.Status
		s.nextSignatureID++
		c.Signatures = append(c.Signatures, sr)
		c.Status = contractSignatureRequested
		s.audit(r, s.quotes[c.QuoteID], auditSignatureRequest, fmt.Sprintf("Signature of contract %s requested from %s <%s>", c.Number, signer, email),
			change{Field: "contract.status", Before: before, After: contractSignatureRequested})
		return sr.doc(), nil
	})
}

// DELETE /v2/signature?contractId=: 204, 404 without an active request (A7).
func (s *Server) removeSignature(w http.ResponseWriter, r *http.Request) error {
	contractID, err := queryID(r, "contractId", 32)
	if err != nil {
		return err
	}
	if err := requireNoBody(r); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.contracts[int32(contractID)]
	if !ok {
		return errNotFound("contract %d not found", contractID)
	}
	if err := s.checkContract(r, c); err != nil {
		return err
	}
	s.settleSignature(c)
	if c.Status == contractArchived {
		return errConflict("contract %s is archived", c.Number)
	}
	active := c.activeSignature()
	if active == nil {
		return errNotFound("contract %s has no active signature request", c.Number)
	}
	active.Status = signatureRemoved
	active.RemovedAt = s.stamp()
	c.Status = contractGenerated
	s.audit(r, s.quotes[c.QuoteID], auditSignatureRemoved, fmt.Sprintf("Signature request %d of contract %s removed", active.ID, c.Number),
		change{Field: "contract.status", Before: contractSignatureRequested, After: contractGenerated})
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// GET /v2/contract/contractNumber/{contractNumber}/archive: archives once, then answers the same archive (A7),
// or 409 in strict archive mode (Options.StrictArchive).
func (s *Server) archiveContract(w http.ResponseWriter, r *http.Request) error {
	if err := requireNoBody(r); err != nil {
		return err
	}
	return s.lockedJSON(w, http.StatusOK, func() (any, error) {
		c, err := s.contractByNumberParam(r)
		if err != nil {
			return nil, err
		}
		if c.ArchiveID != "" && s.opts.StrictArchive {
			s.archiveConflicts++
			return nil, errConflict("contract %s is archived already (as %s)", c.Number, c.ArchiveID)
		}
		if c.ArchiveID == "" {
			before := c.Status
			c.ArchivedAt = s.stamp()
			c.ArchiveID = fmt.Sprintf("ARC-%d-%06d", c.ArchivedAt.Year(), c.ID)
			c.Status = contractArchived
			if active := c.activeSignature(); active != nil {
				// An archived contract can no longer be signed: its waiting request ends (A7).
				active.Status, active.RemovedAt = signatureRemoved, c.ArchivedAt
			}
			s.audit(r, s.quotes[c.QuoteID], auditContractArchived, fmt.Sprintf("Contract %s archived as %s", c.Number, c.ArchiveID),
				change{Field: "contract.status", Before: before, After: contractArchived})
		}
		return struct {
			ContractNumber string    `json:"contractNumber"`
			Archived       bool      `json:"archived"`
			ArchiveID      string    `json:"archiveId"`
			ArchivedAt     time.Time `json:"archivedAt"`
		}{c.Number, true, c.ArchiveID, c.ArchivedAt}, nil
	})
}

// GET /v2/contract/digitalarchivepayload/{contractNumber}: 409 before the contract is archived (A7).
func (s *Server) archivePayload(w http.ResponseWriter, r *http.Request) error {
	if err := requireNoBody(r); err != nil {
		return err
	}
	return s.lockedJSON(w, http.StatusOK, func() (any, error) {
		c, err := s.contractByNumberParam(r)
		if err != nil {
			return nil, err
		}
		if c.ArchiveID == "" {
			return nil, errConflict("contract %s is not archived yet: archive it first", c.Number)
		}
		return s.archivePayloadDoc(c), nil
	})
}

// archivePayloadDoc is the nested payload handed to long-term storage. Caller holds s.mu.
func (s *Server) archivePayloadDoc(c *contract) any {
	type item struct {
		NodeID        int64  `json:"nodeId"`
		ParentID      int64  `json:"parentId"`
		ProductID     int32  `json:"productId"`
		Name          string `json:"name"`
		Kind          string `json:"kind"`
		NetActivation Money  `json:"netActivation"`
		NetRecurring  Money  `json:"netRecurring"`
	}
	type cartPayload struct {
		BasketID    int64  `json:"basketId"`
		TOFID       int32  `json:"tofId"`
		Label       string `json:"label"`
		Quantity    int64  `json:"quantity"`
		PricelistID int32  `json:"pricelistId"`
		Items       []item `json:"items"`
		Totals      totals `json:"totals"`
	}
	type document struct {
		Kind           string `json:"kind"`
		AttachmentID   int32  `json:"attachmentId,omitempty"`
		AttachmentType string `json:"attachmentType,omitempty"`
		FileName       string `json:"fileName"`
		ContentType    string `json:"contentType"`
		Size           int64  `json:"size"`
		SHA256         string `json:"sha256"`
	}
	carts := []cartPayload{}
	for _, cd := range c.Quote.Carts {
		cp := cartPayload{BasketID: cd.BasketID, TOFID: cd.TOFID, Label: cd.Label, Quantity: cd.Quantity, PricelistID: cd.PricelistID, Totals: cd.Totals}
		var flatten func(n nodeDoc)
		flatten = func(n nodeDoc) {
			cp.Items = append(cp.Items, item{NodeID: n.NodeID, ParentID: n.ParentID, ProductID: n.ProductID, Name: n.Name, Kind: n.Kind,
				NetActivation: n.Breakdown.Net.Activation, NetRecurring: n.Breakdown.Net.Recurring})
			for _, child := range n.Children {
				flatten(child)
			}
		}
		flatten(cd.Root)
		carts = append(carts, cp)
	}
	docs := []document{{Kind: "CONTRACT_PDF", FileName: c.pdfFileName(), ContentType: "application/pdf", Size: int64(len(c.PDF)), SHA256: c.PDFSHA256}}
	if q := s.quotes[c.QuoteID]; q != nil {
		for _, a := range q.Attachments {
			docs = append(docs, document{Kind: "ATTACHMENT", AttachmentID: a.ID, AttachmentType: a.Type, FileName: a.FileName,
				ContentType: a.ContentType, Size: a.Size, SHA256: a.SHA256})
		}
	}
	signatures := []signatureRequestDoc{}
	for _, sr := range c.Signatures {
		signatures = append(signatures, sr.doc())
	}
	cfg := s.cat.cpqByID[c.CPQID]
	return map[string]any{
		"payloadVersion": "1.0",
		"archive":        map[string]any{"archiveId": c.ArchiveID, "archivedAt": c.ArchivedAt, "retentionYears": 10, "hashAlgorithm": "SHA-256"},
		"contract": map[string]any{"contractId": c.ID, "contractNumber": c.Number, "status": c.Status, "createdAt": c.CreatedAt,
			"currency": "EUR", "totals": c.Quote.Totals},
		"customer": map[string]any{"id": c.Customer.ID, "name": c.Customer.Name, "taxId": c.Customer.TaxID, "email": c.Customer.Email,
			"phone": c.Customer.Phone, "segment": c.Customer.Segment, "address": c.Customer.Address},
		"quote": map[string]any{"quoteId": c.Quote.QuoteID, "cpqId": c.Quote.CPQID, "configurator": cfg.Name,
			"customerQuoteId": c.Quote.CustomerQuoteID, "carts": carts, "appliedDiscounts": c.Quote.AppliedDiscounts,
			"extraDiscounts": c.Quote.ExtraDiscounts, "packages": c.Quote.Packages},
		"signatures": signatures,
		"documents":  docs,
	}
}

// auditDoc is the validation audit of A7.
type auditDoc struct {
	QuoteID    int64        `json:"quoteId"`
	CustomerID int32        `json:"customerId"`
	Entries    []auditEntry `json:"entries"`
}

// GET /v2/contract/getjsonvalidationaudit/{quoteId} (A7).
func (s *Server) auditJSON(w http.ResponseWriter, r *http.Request) error {
	quoteID, err := pathInt64(r, "quoteId")
	if err != nil {
		return err
	}
	if err := requireNoBody(r); err != nil {
		return err
	}
	return s.lockedJSON(w, http.StatusOK, func() (any, error) {
		q, ok := s.quotes[quoteID]
		if !ok {
			return nil, errNotFound("quote %d not found", quoteID)
		}
		if err := s.checkQuote(r, q); err != nil {
			return nil, err
		}
		return auditDoc{QuoteID: q.ID, CustomerID: q.CustomerID, Entries: slices.Clone(q.Audit)}, nil
	})
}

// GET /v2/contract/downloadvalidationauditpdf/{quoteId} (A7).
func (s *Server) auditPDF(w http.ResponseWriter, r *http.Request) error {
	quoteID, err := pathInt64(r, "quoteId")
	if err != nil {
		return err
	}
	if err := requireNoBody(r); err != nil {
		return err
	}
	var pdf []byte
	err = s.locked(func() error {
		q, ok := s.quotes[quoteID]
		if !ok {
			return errNotFound("quote %d not found", quoteID)
		}
		if err := s.checkQuote(r, q); err != nil {
			return err
		}
		var err error
		pdf, err = s.auditPDFBytes(q)
		return err
	})
	if err != nil {
		return err
	}
	return writePDF(w, http.StatusOK, fmt.Sprintf("validation-audit-%d.pdf", quoteID), pdf)
}

// ArchiveConflicts counts the archive calls refused in strict archive mode (Options.StrictArchive)
// because the contract was archived already: a batch that archived a contract twice.
func (s *Server) ArchiveConflicts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.archiveConflicts
}

// SeedContracts generates n more contracts, each of a new quote of seeded customer 1 with one cart,
// and returns their numbers: batch tests and benchmarks need many contracts to archive without
// driving the whole quote flow for each.
func (s *Server) SeedContracts(n int) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cu := s.customerByID(1)
	if cu == nil || len(cu.CPQIDs) == 0 {
		return nil, fmt.Errorf("v2sim: seed contracts: customer 1 has no CPQ id")
	}
	t := s.cat.tofs[11]
	root := s.cat.products[102]
	if t == nil || root == nil {
		return nil, fmt.Errorf("v2sim: seed contracts: catalogue has no TOF 11 or product 102")
	}
	numbers := make([]string, 0, n)
	for range n {
		q := s.createQuote(nil, cu.CPQIDs[0], 1, 0)
		s.addCartTo(nil, q, t, root, "Batch")
		c, err := s.generate(nil, q)
		if err != nil {
			return numbers, fmt.Errorf("v2sim: seed contracts: %w", err)
		}
		numbers = append(numbers, c.Number)
	}
	return numbers, nil
}
