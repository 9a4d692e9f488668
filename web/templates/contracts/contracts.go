// Package contracts holds the pages and partials of the "contracts & documents" and "audits" areas:
// the documents of a quote (attachments, contract generation), the contract search and page
// (signature requests, archive, digital archive payload), the evidence page and the validation
// audit of a quote.
//
// Templates only display their typed view models; internal/handlers builds them. Everything from
// the v2 API is printed as escaped text (never templ.Raw). Every element tests need has a data-testid.
package contracts

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/web/templates/components"
)

// Element ids of the htmx regions (hx-target) of this area.
const (
	DocumentsID      = "documents-region"
	AttachmentListID = "attachment-list"
	SignatureID      = "contract-signature"
	ArchiveID        = "contract-archive"
	PayloadID        = "archive-payload"
	StatusID         = "contract-status"
)

// DocumentsVM is the documents region of a quote: its attachments, the upload form and the contract.
type DocumentsVM struct {
	CPQID      int32
	CustomerID int32
	QuoteID    int64
	// BaseURL is the quote's portal path, /quotes/{cpqId}/{customerId}/{quoteId}.
	BaseURL     string
	Attachments []AttachmentRow
	// Types are the attachment types offered in the upload form (apiclient.AttachmentTypes).
	Types []components.Option
	// UploadLimit is PORTAL_UPLOAD_LIMIT in bytes; UploadLimitText the same for people.
	UploadLimit     int64
	UploadLimitText string
	// AcceptedKinds names the kinds of file the upload accepts, for people ("PDF, PNG, …");
	// Accept lists their extensions for the file picker (".pdf,.png,…": a help, the portal checks).
	AcceptedKinds, Accept string
	// HasCarts: a contract can only be generated from a quote with carts.
	HasCarts bool
	// Contract is the quote's contract, nil until one is generated.
	Contract *ContractLink
	// Generated is set in the answer to "Generate contract".
	Generated *GeneratedVM
	// AuditURL is the quote's validation audit page.
	AuditURL string
	// Changed is set when "Generate contract" was refused because the quote changed after the
	// person confirmed (409): the confirmation of the quote as it is now, which they confirm anew.
	Changed string
	// Offer is the offer card: preview, send, the latest offer.
	Offer OfferVM
}

// UploadURL is where the upload form posts.
func (vm DocumentsVM) UploadURL() string { return vm.BaseURL + "/attachments" }

// GenerateURL is where "Generate contract" posts.
func (vm DocumentsVM) GenerateURL() string { return vm.BaseURL + "/contract" }

// GenerateConfirmURL answers the confirmation "Generate contract" asks, read when the person
// clicks (app.js, [data-confirm-url]), never as rendered with the page.
func (vm DocumentsVM) GenerateConfirmURL() string { return vm.BaseURL + "/contract/confirm" }

// AttachmentRow is one attachment of a quote.
type AttachmentRow struct {
	ID          int32
	Type        string
	TypeLabel   string
	FileName    string
	ContentType string
	Size        int64
	SizeText    string
	CreatedAt   time.Time
	SHA256      string
	DownloadURL string
}

// ContractLink names a contract and the portal URLs of its page and PDF.
type ContractLink struct {
	ID         int32
	Number     string
	URL        string
	PDFURL     string
	PreviewURL string
}

// GeneratedVM is the result of a contract generation.
type GeneratedVM struct {
	// Created is false when the quote already had this contract.
	Created bool
	// AnsweredWithPDF: the service answered with the PDF itself (docs/v2-assumptions.md A7).
	AnsweredWithPDF bool
	// Warning is shown when the answer was usable only in part (e.g. a "PDF" that is not one).
	Warning i18n.Message
}

// ContractSearchVM is the contract search page (/contracts and /contracts/lookup).
type ContractSearchVM struct {
	Query  components.Field
	Errors []components.FieldError
	// Searched is true once a query was looked up; then Candidates or NotFound tell the result.
	Searched   bool
	Candidates []ContractCandidate
	// Recent are the user's recent contracts (internal/recent), shown above the look-up box.
	Recent []components.RecentRow
	// CanBatchArchive: the person's roles open the batch archive (its link is not offered otherwise).
	CanBatchArchive bool
}

// ContractCandidate is a contract a search found, and how.
type ContractCandidate struct {
	MatchedBy string // "id" or "contract number"
	ID        int32
	Number    string
	Status    string
	Customer  string
	URL       string
}

// ContractVM is the contract page.
type ContractVM struct {
	ID int32
	// LiveURL, LiveTag and LiveSince drive the live notice (issue 18): the poll address, the change
	// tag of what the page shows, and when it was read (Unix milliseconds).
	LiveURL     string
	LiveTag     string
	LiveSince   string
	Number      string
	Status      StatusVM
	Details     []components.KV
	QuoteID     int64
	QuoteURL    string
	AuditURL    string
	PDFURL      string
	PreviewURL  string
	EvidenceURL string
	PDF         PDFInfo
	Signature   SignatureVM
	Archive     ArchiveVM
}

// StatusVM is the contract's status badge (updated out of band after signature and archive actions).
type StatusVM struct {
	Text  string
	Level components.BadgeLevel
	// OOB renders the badge as an htmx out-of-band swap.
	OOB bool
}

// PDFInfo describes the contract's PDF as the contract document tells.
type PDFInfo struct {
	FileName string
	SizeText string
	SHA256   string
}

// SignatureVM is the signature region of a contract: the requests sent so far and the form or the
// button to remove the active one.
type SignatureVM struct {
	ContractID int32
	Number     string
	Archived   bool
	Active     *SignatureRow
	Requests   []SignatureRow
	Email      components.Field
	SignerName components.Field
	Message    components.Field
	Errors     []components.FieldError
	// Outcome is the signer's answer to the latest request (signed, declined, expired), nil while
	// none came; with declined or expired the form offers to send again, the last signer filled in.
	Outcome *SignatureRow
	// OOB renders the region as an htmx out-of-band swap (after an archive).
	OOB bool
}

// Signed reports whether the signer signed: no new request is offered.
func (vm SignatureVM) Signed() bool { return vm.Outcome != nil && vm.Outcome.Status == "SIGNED" }

// SendAgain reports whether the form sends the request again (after a decline or an expiry).
func (vm SignatureVM) SendAgain() bool { return vm.Outcome != nil && !vm.Signed() }

// URL is the region's action URL (POST sends, DELETE removes).
func (vm SignatureVM) URL() string { return contractURL(vm.ContractID) + "/signature" }

// SignatureRow is one signature request.
type SignatureRow struct {
	ID         string
	Email      string
	SignerName string
	Message    string
	Status     string
	SentAt     time.Time
	RemovedAt  time.Time
	// AnsweredAt is when the signer signed or declined, or the request expired; Reason is a
	// decline's reason, as the signer wrote it.
	AnsweredAt time.Time
	Reason     string
}

// ArchiveVM is the archive region of a contract.
type ArchiveVM struct {
	ContractID int32
	Number     string
	Archived   bool
	ArchiveID  string
	ArchivedAt time.Time
	// JustArchived is set in the answer to "Archive".
	JustArchived bool
	// OOB renders the region as an htmx out-of-band swap (with a live notice: a colleague archived it).
	OOB bool
	// Payload, when set, is the payload region read along with the answer to "Archive"; nil: the
	// region loads itself (GET .../archive-payload).
	Payload *PayloadVM
	// Proof, when set, is the contract's number the archive button posts, signed by the portal
	// (the handler takes it back instead of reading the contract again).
	Proof *ArchiveProof
}

// ArchiveProof is the signed contract number the archive button carries (hx-vals).
type ArchiveProof struct {
	NumberField, Number, MACField, MAC string
}

// Vals is the button's hx-vals: the number and its MAC as JSON.
func (p ArchiveProof) Vals() string {
	vals, err := json.Marshal(map[string]string{p.NumberField: p.Number, p.MACField: p.MAC})
	if err != nil {
		return "{}" // unreachable: a map of strings always encodes
	}
	return string(vals)
}

// URL is where "Archive" posts.
func (vm ArchiveVM) URL() string { return contractURL(vm.ContractID) + "/archive" }

// PayloadURL is the payload region (loaded once the contract is archived).
func (vm ArchiveVM) PayloadURL() string { return contractURL(vm.ContractID) + "/archive-payload" }

// PayloadVM is the digital archive payload of a contract.
type PayloadVM struct {
	ContractID int32
	Number     string
	// Payload is the JSON as the service sent it; nil with NotArchived.
	Payload     json.RawMessage
	NotArchived bool
	Message     i18n.Message
	SHA256      string
	SizeText    string
}

// DownloadURL is the payload as a .json file.
func (vm PayloadVM) DownloadURL() string {
	return contractURL(vm.ContractID) + "/archive-payload/download"
}

// EvidenceVM is the back-office evidence page of a contract.
type EvidenceVM struct {
	Contract  ContractVM
	Artifacts []ArtifactVM
	Audit     AuditVM
	Payload   *PayloadVM
	ZipURL    string
}

// ArtifactVM is one downloadable artifact with its SHA-256 (computed by the portal while streaming it).
type ArtifactVM struct {
	Key      string // stable id for tests: contract-pdf, contract-json, archive-payload, audit-json, audit-pdf
	Label    string
	FileName string
	Size     int64
	SizeText string
	SHA256   string
	URL      string
	// Check compares with the hash the service published, when it published one ("" when none).
	Check string
	// CheckOK is true when Check is a match.
	CheckOK bool
}

// AuditSearchVM is the audits start page (/audits).
type AuditSearchVM struct {
	QuoteID components.Field
	Errors  []components.FieldError
}

// AuditVM is the validation audit of a quote.
type AuditVM struct {
	QuoteID     int64
	CustomerID  int32
	CustomerURL string
	// CustomerName is the customer's name, "" when unknown (the number is shown then).
	CustomerName string
	Entries      []AuditEntryVM
	Raw          json.RawMessage
	PDFURL       string
	PreviewURL   string
	// ShowPreview embeds the PDF audit (the audit page does; the evidence page links it).
	ShowPreview bool
	// Zone names the time zone the times are shown in (an IANA name, "UTC" by default).
	Zone string
}

// AuditEntryVM is one entry of the audit timeline.
type AuditEntryVM struct {
	ID string
	At time.Time // shown to the second (components.Timestamp)
	// Actor is the person in words (their name where the portal knows it); ActorLogin is the actor
	// as the v2 API wrote it when Actor says something else ("" otherwise).
	Actor       string
	ActorLogin  string
	Action      string
	ActionLabel string
	Summary     string
	Changes     []AuditChangeVM
	// CustomerChange marks customer data changes (CUSTOMER_UPDATED), shown as before → after.
	CustomerChange bool
}

// AuditChangeVM is one field's change. Empty values are shown as "(empty)".
type AuditChangeVM struct {
	// Key is the field as the v2 API names it (carts[12].quantity); Field its label in words.
	Key     string
	Field   string
	Before  string
	After   string
	Changed bool
}

func contractURL(id int32) string {
	return "/contracts/" + strconv.FormatInt(int64(id), 10)
}

// orEmpty shows "(empty)", in the reader's language, for an empty audit value.
func orEmpty(ctx context.Context, s string) string {
	if s == "" {
		return i18n.T(ctx, "audit.change.empty")
	}
	return s
}

// shortHash is the first 12 hex digits of a SHA-256, for narrow places (the full one is in the title).
func shortHash(h string) string {
	if len(h) <= 12 {
		return h
	}
	return h[:12] + "…"
}

// typeLabel turns an attachment type or audit action (ID_DOCUMENT) into words (Id document).
func typeLabel(s string) string {
	words := strings.Fields(strings.ReplaceAll(strings.ToLower(s), "_", " "))
	if len(words) == 0 {
		return s
	}
	words[0] = strings.ToUpper(words[0][:1]) + words[0][1:]
	return strings.Join(words, " ")
}

// StatusLabel is a contract status in words of tr's language; a status the portal does not know
// is shown as the v2 API's word, made readable.
func StatusLabel(tr *i18n.Translator, status string) string {
	switch status {
	case "GENERATED":
		return tr.T("contract.status.generated")
	case "SIGNATURE_REQUESTED":
		return tr.T("contract.status.signature_requested")
	case "SIGNED":
		return tr.T("contract.status.signed")
	case "ARCHIVED":
		return tr.T("contract.status.archived")
	}
	return typeLabel(status)
}

// signatureStatusLabel is a signature request's status in words of the reader's language.
func signatureStatusLabel(ctx context.Context, status string) string {
	switch status {
	case "SENT":
		return i18n.T(ctx, "signature.status.sent")
	case "REMOVED":
		return i18n.T(ctx, "signature.status.removed")
	case "SIGNED":
		return i18n.T(ctx, "signature.status.signed")
	case "DECLINED":
		return i18n.T(ctx, "signature.status.declined")
	case "EXPIRED":
		return i18n.T(ctx, "signature.status.expired")
	}
	return typeLabel(status)
}

// matchedByText says how a search found a contract (MatchedBy stays the stable "id" or
// "contract number" for data-matched-by).
func matchedByText(ctx context.Context, matchedBy string) string {
	if matchedBy == "id" {
		return i18n.T(ctx, "contracts.results.by_id")
	}
	return i18n.T(ctx, "contracts.results.by_number")
}

// AttachmentTypeLabel is an attachment type (apiclient.AttachmentTypes) in words of tr's language.
func AttachmentTypeLabel(tr *i18n.Translator, attachmentType string) string {
	switch attachmentType {
	case "CONTRACT_ANNEX":
		return tr.T("attachments.type.contract_annex")
	case "ID_DOCUMENT":
		return tr.T("attachments.type.id_document")
	case "PRIVACY_CONSENT":
		return tr.T("attachments.type.privacy_consent")
	case "PROOF_OF_ADDRESS":
		return tr.T("attachments.type.proof_of_address")
	case "OTHER":
		return tr.T("attachments.type.other")
	case "QUOTE_PDF":
		return tr.T("attachments.type.quote_pdf")
	}
	return typeLabel(attachmentType)
}

// auditActionKeys are the catalogue keys of the audit actions (docs/v2-assumptions.md A7).
var auditActionKeys = map[string]string{
	"QUOTE_CREATED":       "audit.action.quote_created",
	"CART_ADDED":          "audit.action.cart_added",
	"CART_REMOVED":        "audit.action.cart_removed",
	"ITEM_ADDED":          "audit.action.item_added",
	"ITEM_REMOVED":        "audit.action.item_removed",
	"QUANTITY_CHANGED":    "audit.action.quantity_changed",
	"DISCOUNTS_APPLIED":   "audit.action.discounts_applied",
	"REPRICED":            "audit.action.repriced",
	"PACKAGE_ADDED":       "audit.action.package_added",
	"PRICELIST_CHANGED":   "audit.action.pricelist_changed",
	"ATTACHMENT_ADDED":    "audit.action.attachment_added",
	"ATTACHMENT_DELETED":  "audit.action.attachment_deleted",
	"CONTRACT_GENERATED":  "audit.action.contract_generated",
	"SIGNATURE_REQUESTED": "audit.action.signature_requested",
	"SIGNATURE_REMOVED":   "audit.action.signature_removed",
	"SIGNATURE_SIGNED":    "audit.action.signature_signed",
	"SIGNATURE_DECLINED":  "audit.action.signature_declined",
	"SIGNATURE_EXPIRED":   "audit.action.signature_expired",
	"CONTRACT_ARCHIVED":   "audit.action.contract_archived",
	"CUSTOMER_UPDATED":    "audit.action.customer_updated",
}

// ActionLabel is an audit action in words of tr's language; an action the portal does not know
// is shown as the v2 API's word, made readable.
func ActionLabel(tr *i18n.Translator, action string) string {
	if key, ok := auditActionKeys[action]; ok {
		return tr.T(key)
	}
	return typeLabel(action)
}
