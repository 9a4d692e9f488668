package apiclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// The documents below decode the fields the portal uses
// (docs/v2-assumptions.md A3 to A8). Unknown fields are ignored and missing
// ones left zero; each document keeps its whole JSON in Raw so a page can show
// every other field. Money is a float64 in EUR (at most two decimals).

// decodeDocument decodes data into v (a pointer to a document's plain twin)
// and keeps a copy of data in raw. null leaves the document as it is.
func decodeDocument(data []byte, v any, raw *json.RawMessage) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return err
	}
	*raw = append(json.RawMessage(nil), data...)
	return nil
}

// decodeOwnedDocument is decodeDocument for data the document may keep (see
// ownedDecoder): one pass, no copy.
func decodeOwnedDocument(data []byte, v any, raw *json.RawMessage) error {
	if err := json.Unmarshal(data, v); err != nil {
		return err
	}
	*raw = data
	return nil
}

// OpaqueID is an identifier whose JSON type the assumptions leave open
// (signature request, archive and audit entry ids): a string or a number,
// kept as text.
type OpaqueID string

// UnmarshalJSON accepts a JSON string or number.
func (id *OpaqueID) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	switch {
	case bytes.Equal(data, []byte("null")):
		return nil
	case len(data) > 0 && data[0] == '"':
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*id = OpaqueID(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(data, &n); err != nil {
		return fmt.Errorf("id: want a string or a number, got %.32s", data)
	}
	*id = OpaqueID(n.String())
	return nil
}

// Int64 returns the id as a number, when it is one.
func (id OpaqueID) Int64() (int64, bool) {
	v, err := strconv.ParseInt(string(id), 10, 64)
	return v, err == nil
}

// Configurator is an entry of the configurator list (call 1).
type Configurator struct {
	ID   int32  `json:"id"`
	Name string `json:"name"`

	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the configurator and keeps its JSON in Raw.
func (x *Configurator) UnmarshalJSON(data []byte) error {
	type plain Configurator
	return decodeDocument(data, (*plain)(x), &x.Raw)
}

// TOF is an offer type of a configurator (A3).
type TOF struct {
	ID          int32  `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// InitResult is the answer of call 2: a new configuration session (A3).
type InitResult struct {
	SessionID string    `json:"sessionId"`
	TOFList   []TOF     `json:"tofList"`
	ExpiresAt time.Time `json:"expiresAt"`

	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the result and keeps its JSON in Raw.
func (x *InitResult) UnmarshalJSON(data []byte) error {
	type plain InitResult
	return decodeDocument(data, (*plain)(x), &x.Raw)
}

// Quote is the quote document answered by calls 3, 4, 5, 8, 10, 12, 13, 15
// and 16 (A4).
type Quote struct {
	QuoteID             int64             `json:"quoteId"`
	CPQID               int32             `json:"cpqId"`
	CustomerID          int32             `json:"customerId"`
	CustomerQuoteID     int64             `json:"customerQuoteId"`
	Status              string            `json:"status"`
	Currency            string            `json:"currency"`
	UpdatedAt           time.Time         `json:"updatedAt"`
	TOFList             []TOF             `json:"tofList"`
	AvailablePricelists []Pricelist       `json:"availablePricelists"`
	Carts               []Cart            `json:"carts"`
	AppliedDiscounts    []AppliedDiscount `json:"appliedDiscounts"`
	ExtraDiscounts      []ExtraDiscount   `json:"extraDiscounts"`
	Packages            []QuotePackage    `json:"packages"`
	Attachments         []Attachment      `json:"attachments"`
	// Contract is nil until a contract is generated.
	Contract *ContractRef `json:"contract"`
	Totals   Totals       `json:"totals"`

	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the quote and keeps its JSON in Raw.
func (x *Quote) UnmarshalJSON(data []byte) error {
	type plain Quote
	return decodeDocument(data, (*plain)(x), &x.Raw)
}

// Cart returns the cart (basket) with the given id.
func (x *Quote) Cart(basketID int64) (*Cart, bool) {
	for i := range x.Carts {
		if x.Carts[i].BasketID == basketID {
			return &x.Carts[i], true
		}
	}
	return nil, false
}

// Pricelist is a price list a quote may use.
type Pricelist struct {
	PricelistID int32  `json:"pricelistId"`
	Name        string `json:"name"`
}

// Cart (basket) of a quote: a main product with add-ons, a quantity and a
// price list.
type Cart struct {
	BasketID    int64  `json:"basketId"`
	TOFID       int32  `json:"tofId"`
	Label       string `json:"label"`
	Quantity    int32  `json:"quantity"`
	PricelistID int32  `json:"pricelistId"`
	Root        *Item  `json:"root"`
	Totals      Totals `json:"totals"`
}

// Item is a node of a cart's tree: the MAIN product at the root, ADDON
// children below it.
type Item struct {
	NodeID              int64     `json:"nodeId"`
	ParentID            int64     `json:"parentId"`
	ProductID           int32     `json:"productId"`
	TOFProductID        int32     `json:"tofProductId"`
	Kind                string    `json:"kind"`
	Name                string    `json:"name"`
	ItemUniqueID        string    `json:"itemUniqueId"`
	ListActivationPrice float64   `json:"listActivationPrice"`
	ListRecurringPrice  float64   `json:"listRecurringPrice"`
	ActivationPrice     float64   `json:"activationPrice"`
	RecurringPrice      float64   `json:"recurringPrice"`
	Repriced            bool      `json:"repriced"`
	Breakdown           Breakdown `json:"breakdown"`
	Children            []Item    `json:"children"`
}

// Breakdown shows how an item's line amounts were priced (A4 pricing).
type Breakdown struct {
	List      Amounts             `json:"list"`
	Discounts []BreakdownDiscount `json:"discounts"`
	Extra     Amounts             `json:"extra"`
	Net       Amounts             `json:"net"`
}

// Amounts is a pair of one-off (activation) and recurring amounts.
type Amounts struct {
	Activation float64 `json:"activation"`
	Recurring  float64 `json:"recurring"`
}

// BreakdownDiscount is what one applied discount took from a line.
type BreakdownDiscount struct {
	DiscountID int32   `json:"discountId"`
	Name       string  `json:"name"`
	Activation float64 `json:"activation"`
	Recurring  float64 `json:"recurring"`
}

// Totals sums a cart's or a quote's lines.
type Totals struct {
	ListActivation     float64 `json:"listActivation"`
	ListRecurring      float64 `json:"listRecurring"`
	DiscountActivation float64 `json:"discountActivation"`
	DiscountRecurring  float64 `json:"discountRecurring"`
	ExtraActivation    float64 `json:"extraActivation"`
	ExtraRecurring     float64 `json:"extraRecurring"`
	NetActivation      float64 `json:"netActivation"`
	NetRecurring       float64 `json:"netRecurring"`
}

// AppliedDiscount is a discount applied to a quote.
type AppliedDiscount struct {
	DiscountID int32   `json:"discountId"`
	Name       string  `json:"name"`
	Percent    float64 `json:"percent"`
	AppliesTo  string  `json:"appliesTo"` // ACTIVATION, RECURRING or BOTH
}

// ExtraDiscount is an extra discount of a quote with its value (a percentage, A4).
type ExtraDiscount struct {
	DiscountID    int32   `json:"discountId"`
	Name          string  `json:"name"`
	DiscountValue float64 `json:"discountValue"`
}

// QuotePackage is a package assigned to a quote.
type QuotePackage struct {
	PackageID      int32   `json:"packageId"`
	TOFID          int32   `json:"tofId"`
	Name           string  `json:"name"`
	RecurringPrice float64 `json:"recurringPrice"`
	AssigneeUserID int64   `json:"assigneeUserId"`
}

// Attachment is a document stored for a quote (A6).
type Attachment struct {
	AttachmentID   int32     `json:"attachmentId"`
	QuoteID        int64     `json:"quoteId"`
	AttachmentType string    `json:"attachmentType"`
	FileName       string    `json:"fileName"`
	ContentType    string    `json:"contentType"`
	Size           int64     `json:"size"`
	SHA256         string    `json:"sha256"`
	CreatedAt      time.Time `json:"createdAt"`

	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the attachment and keeps its JSON in Raw.
func (x *Attachment) UnmarshalJSON(data []byte) error {
	type plain Attachment
	return decodeDocument(data, (*plain)(x), &x.Raw)
}

// ContractRef names the contract generated from a quote.
type ContractRef struct {
	ContractID     int32  `json:"contractId"`
	ContractNumber string `json:"contractNumber"`
}

// Product is a product offered for a TOF (call 9, A5).
type Product struct {
	ProductID        int32   `json:"productId"`
	TOFProductID     int32   `json:"tofProductId"`
	Name             string  `json:"name"`
	Description      string  `json:"description"`
	Kind             string  `json:"kind"` // MAIN or ADDON
	Default          bool    `json:"default"`
	ActivationPrice  float64 `json:"activationPrice"`
	RecurringPrice   float64 `json:"recurringPrice"`
	ParentProductIDs []int32 `json:"parentProductIds"`

	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the product and keeps its JSON in Raw.
func (x *Product) UnmarshalJSON(data []byte) error {
	type plain Product
	return decodeDocument(data, (*plain)(x), &x.Raw)
}

// Discount is a discount applicable to a quote (call 11, A5). Extra
// discounts carry a value chosen by the user, up to MaxValue.
type Discount struct {
	DiscountID int32   `json:"discountId"`
	Name       string  `json:"name"`
	Percent    float64 `json:"percent"`
	AppliesTo  string  `json:"appliesTo"`
	Extra      bool    `json:"extra"`
	MaxValue   float64 `json:"maxValue"`

	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the discount and keeps its JSON in Raw.
func (x *Discount) UnmarshalJSON(data []byte) error {
	type plain Discount
	return decodeDocument(data, (*plain)(x), &x.Raw)
}

// PackageConfig is the package configuration of a quote and TOF (call 14).
type PackageConfig struct {
	QuoteID  int64     `json:"quoteId"`
	TOFID    int32     `json:"tofId"`
	Packages []Package `json:"packages"`
	Assigned []int32   `json:"assigned"` // packageIds already assigned

	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the configuration and keeps its JSON in Raw.
func (x *PackageConfig) UnmarshalJSON(data []byte) error {
	type plain PackageConfig
	return decodeDocument(data, (*plain)(x), &x.Raw)
}

// IsAssigned reports whether the package is already assigned to the quote.
func (x *PackageConfig) IsAssigned(packageID int32) bool {
	for _, id := range x.Assigned {
		if id == packageID {
			return true
		}
	}
	return false
}

// Package is a package offered for a TOF.
type Package struct {
	PackageID      int32   `json:"packageId"`
	Name           string  `json:"name"`
	Description    string  `json:"description"`
	RecurringPrice float64 `json:"recurringPrice"`
}

// Customer is the customer document (A8).
type Customer struct {
	ID         int32           `json:"id"`
	Name       string          `json:"name"`
	TaxID      string          `json:"taxId"`
	Email      string          `json:"email"`
	Phone      string          `json:"phone"`
	Segment    string          `json:"segment"` // BUSINESS, CONSUMER or PUBLIC
	Status     string          `json:"status"`
	Address    Address         `json:"address"`
	Owners     []Owner         `json:"owners"`
	Profiles   []Profile       `json:"profiles"`
	CPQIDs     []int32         `json:"cpqIds"`
	Attributes json.RawMessage `json:"attributes"` // free nested JSON
	Version    int64           `json:"version"`
	CreatedAt  time.Time       `json:"createdAt"`
	UpdatedAt  time.Time       `json:"updatedAt"`

	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the customer and keeps its JSON in Raw.
func (x *Customer) UnmarshalJSON(data []byte) error {
	type plain Customer
	return decodeDocument(data, (*plain)(x), &x.Raw)
}

// decodeOwned decodes a whole answer (decodeJSON) in one pass and keeps data as Raw.
func (x *Customer) decodeOwned(data []byte) error {
	type plain Customer
	return decodeOwnedDocument(data, (*plain)(x), &x.Raw)
}

// Address of a customer. Fields are omitted from request bodies when empty.
type Address struct {
	Street     string `json:"street,omitempty"`
	City       string `json:"city,omitempty"`
	PostalCode string `json:"postalCode,omitempty"`
	Country    string `json:"country,omitempty"` // two upper-case letters
}

// Owner is a sales user owning a customer.
type Owner struct {
	OwnerID int64  `json:"ownerId"`
	Name    string `json:"name"`
	Email   string `json:"email"`
}

// Profile is a customer profile (billing, shipping, technical or legal contact).
type Profile struct {
	ProfileID   int32     `json:"profileId"`
	CustomerID  int32     `json:"customerId"`
	ProfileType string    `json:"profileType"`
	ContactName string    `json:"contactName"`
	Email       string    `json:"email"`
	Phone       string    `json:"phone"`
	CreatedAt   time.Time `json:"createdAt"`

	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the profile and keeps its JSON in Raw.
func (x *Profile) UnmarshalJSON(data []byte) error {
	type plain Profile
	return decodeDocument(data, (*plain)(x), &x.Raw)
}

// Contract is the contract document (A7).
type Contract struct {
	ContractID        int32              `json:"contractId"`
	ContractNumber    string             `json:"contractNumber"`
	QuoteID           int64              `json:"quoteId"`
	CustomerID        int32              `json:"customerId"`
	CPQID             int32              `json:"cpqId"`
	Status            string             `json:"status"` // GENERATED, SIGNATURE_REQUESTED, SIGNED or ARCHIVED
	CreatedAt         time.Time          `json:"createdAt"`
	Totals            Totals             `json:"totals"`
	Customer          ContractCustomer   `json:"customer"`
	PDF               ContractPDF        `json:"pdf"`
	SignatureRequests []SignatureRequest `json:"signatureRequests"`
	Archive           ArchiveState       `json:"archive"`

	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the contract and keeps its JSON in Raw.
func (x *Contract) UnmarshalJSON(data []byte) error {
	type plain Contract
	return decodeDocument(data, (*plain)(x), &x.Raw)
}

// LatestSignatureRequest returns the request sent last, if any (the latest decides a contract's
// stage: declined, expired; A11).
func (x *Contract) LatestSignatureRequest() (*SignatureRequest, bool) {
	var latest *SignatureRequest
	for i := range x.SignatureRequests {
		if sr := &x.SignatureRequests[i]; latest == nil || !sr.SentAt.Before(latest.SentAt) {
			latest = sr
		}
	}
	return latest, latest != nil
}

// ActiveSignatureRequest returns the request with status SENT, if any.
func (x *Contract) ActiveSignatureRequest() (*SignatureRequest, bool) {
	for i := range x.SignatureRequests {
		if x.SignatureRequests[i].Status == "SENT" {
			return &x.SignatureRequests[i], true
		}
	}
	return nil, false
}

// ContractCustomer is the customer named in a contract.
type ContractCustomer struct {
	ID    int32  `json:"id"`
	Name  string `json:"name"`
	TaxID string `json:"taxId"`
}

// ContractPDF describes a contract's PDF.
type ContractPDF struct {
	FileName string `json:"fileName"`
	Size     int64  `json:"size"`
	SHA256   string `json:"sha256"`
}

// ArchiveState is a contract's archive state.
type ArchiveState struct {
	Archived   bool      `json:"archived"`
	ArchiveID  OpaqueID  `json:"archiveId"`
	ArchivedAt time.Time `json:"archivedAt"`
}

// SignatureRequest is a request to sign a contract by e-mail (A7).
type SignatureRequest struct {
	SignatureRequestID OpaqueID  `json:"signatureRequestId"`
	ContractID         int32     `json:"contractId"`
	Email              string    `json:"email"`
	SignerName         string    `json:"signerName"`
	Message            string    `json:"message"`
	Status             string    `json:"status"` // SENT, REMOVED, SIGNED, DECLINED or EXPIRED
	SentAt             time.Time `json:"sentAt"`
	RemovedAt          time.Time `json:"removedAt"`

	// The signer's answer (A7): when it came, the reason of a decline, and when a request
	// unanswered expires. Read leniently (SignatureRequest.UnmarshalJSON): a v2 that leaves them
	// out, or writes one the portal cannot read, gives zero values, never an unreadable contract.
	ExpiresAt     time.Time `json:"-"`
	SignedAt      time.Time `json:"-"`
	DeclinedAt    time.Time `json:"-"`
	ExpiredAt     time.Time `json:"-"`
	DeclineReason string    `json:"-"`

	Raw json.RawMessage `json:"-"`
}

// Signature request statuses (A7).
const (
	SignatureSent     = "SENT"
	SignatureRemoved  = "REMOVED"
	SignatureSigned   = "SIGNED"
	SignatureDeclined = "DECLINED"
	SignatureExpired  = "EXPIRED"
)

// UnmarshalJSON decodes the request and keeps its JSON in Raw; the signer's answer is read
// leniently: each time in RFC 3339 or left zero, the reason as declineReason or reason.
func (x *SignatureRequest) UnmarshalJSON(data []byte) error {
	type plain SignatureRequest
	if err := decodeDocument(data, (*plain)(x), &x.Raw); err != nil {
		return err
	}
	var answer struct {
		ExpiresAt     lenientTime   `json:"expiresAt"`
		SignedAt      lenientTime   `json:"signedAt"`
		DeclinedAt    lenientTime   `json:"declinedAt"`
		ExpiredAt     lenientTime   `json:"expiredAt"`
		DeclineReason lenientString `json:"declineReason"`
		Reason        lenientString `json:"reason"`
	}
	_ = json.Unmarshal(data, &answer) // lenient fields never fail; the document decoded above
	x.ExpiresAt, x.SignedAt, x.DeclinedAt, x.ExpiredAt = time.Time(answer.ExpiresAt), time.Time(answer.SignedAt),
		time.Time(answer.DeclinedAt), time.Time(answer.ExpiredAt)
	x.DeclineReason = string(answer.DeclineReason)
	if x.DeclineReason == "" {
		x.DeclineReason = string(answer.Reason)
	}
	return nil
}

// AnsweredAt is when the request ended by its signer's answer or its expiry (zero otherwise).
func (x *SignatureRequest) AnsweredAt() time.Time {
	switch x.Status {
	case SignatureSigned:
		return x.SignedAt
	case SignatureDeclined:
		return x.DeclinedAt
	case SignatureExpired:
		return x.ExpiredAt
	}
	return time.Time{}
}

// lenientTime is an RFC 3339 time, or zero for anything else (null, a number, a bad string).
type lenientTime time.Time

func (t *lenientTime) UnmarshalJSON(data []byte) error {
	var s string
	if json.Unmarshal(data, &s) == nil {
		if v, err := time.Parse(time.RFC3339Nano, s); err == nil {
			*t = lenientTime(v)
		}
	}
	return nil
}

// lenientString is a JSON string, or "" for anything else.
type lenientString string

func (s *lenientString) UnmarshalJSON(data []byte) error {
	var v string
	if json.Unmarshal(data, &v) == nil {
		*s = lenientString(v)
	}
	return nil
}

// ArchiveResult is the answer of the archive call (A7).
type ArchiveResult struct {
	ContractNumber string    `json:"contractNumber"`
	Archived       bool      `json:"archived"`
	ArchiveID      OpaqueID  `json:"archiveId"`
	ArchivedAt     time.Time `json:"archivedAt"`

	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the result and keeps its JSON in Raw.
func (x *ArchiveResult) UnmarshalJSON(data []byte) error {
	type plain ArchiveResult
	return decodeDocument(data, (*plain)(x), &x.Raw)
}

// DigitalArchivePayload is the nested JSON archive payload of a contract
// (A7). Its shape is the service's; the portal shows it as JSON.
type DigitalArchivePayload struct {
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON keeps the payload's JSON in Raw.
func (x *DigitalArchivePayload) UnmarshalJSON(data []byte) error {
	type plain DigitalArchivePayload
	return decodeDocument(data, (*plain)(x), &x.Raw)
}

// ValidationAudit is the JSON validation audit of a quote (A7).
type ValidationAudit struct {
	QuoteID    int64        `json:"quoteId"`
	CustomerID int32        `json:"customerId"`
	Entries    []AuditEntry `json:"entries"`

	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the audit and keeps its JSON in Raw.
func (x *ValidationAudit) UnmarshalJSON(data []byte) error {
	type plain ValidationAudit
	return decodeDocument(data, (*plain)(x), &x.Raw)
}

// AuditEntry is one recorded action.
type AuditEntry struct {
	EntryID OpaqueID      `json:"entryId"`
	At      time.Time     `json:"at"`
	Actor   string        `json:"actor"`
	Action  string        `json:"action"` // QUOTE_CREATED, CUSTOMER_UPDATED, ...
	Summary string        `json:"summary"`
	Changes []AuditChange `json:"changes"`
}

// AuditChange is one field's value before and after an action, as JSON.
type AuditChange struct {
	Field  string          `json:"field"`
	Before json.RawMessage `json:"before"`
	After  json.RawMessage `json:"after"`
}
