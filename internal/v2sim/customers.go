package v2sim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/mail"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Customer rules of docs/v2-assumptions.md A8.
var (
	taxIDPattern   = regexp.MustCompile(`^[A-Z]{2}[A-Z0-9]{8,14}$`)
	phonePattern   = regexp.MustCompile(`^\+?[0-9 ]{6,20}$`)
	countryPattern = regexp.MustCompile(`^[A-Z]{2}$`)
	segments       = []string{"BUSINESS", "CONSUMER", "PUBLIC"}
	profileTypes   = []string{"BILLING", "SHIPPING", "TECHNICAL", "LEGAL"}
)

// Online search answers at most this many customers (A8).
const onlineSearchLimit = 50

type customer struct {
	ID         int32
	Name       string
	TaxID      string
	Email      string
	Phone      string
	Segment    string
	Status     string
	Address    address
	Owners     []int64
	Profiles   []profile
	CPQIDs     []int32
	Attributes json.RawMessage
	Version    int64
	CreatedAt  time.Time
	UpdatedAt  time.Time

	search  string // lower-case name, tax id, e-mail and id for the online search
	encoded []byte // cached JSON document; nil after a change
}

type address struct {
	Street     string `json:"street"`
	City       string `json:"city"`
	PostalCode string `json:"postalCode"`
	Country    string `json:"country"`
}

type profile struct {
	ID          int32
	CustomerID  int32
	Type        string
	ContactName string
	Email       string
	Phone       string
	CreatedAt   time.Time
}

// index refreshes what the online search looks at and drops the cached document.
func (c *customer) index() {
	c.search = strings.ToLower(c.Name) + "\x00" + strings.ToLower(c.TaxID) + "\x00" + strings.ToLower(c.Email) + "\x00" + strconv.Itoa(int(c.ID))
	c.encoded = nil
}

func (c *customer) hasCPQ(cpqID int64) bool {
	for _, id := range c.CPQIDs {
		if int64(id) == cpqID {
			return true
		}
	}
	return false
}

// Wire documents of A8.
type customerDoc struct {
	ID         int32           `json:"id"`
	Name       string          `json:"name"`
	TaxID      string          `json:"taxId"`
	Email      string          `json:"email"`
	Phone      string          `json:"phone"`
	Segment    string          `json:"segment"`
	Status     string          `json:"status"`
	Address    address         `json:"address"`
	Owners     []ownerDoc      `json:"owners"`
	Profiles   []profileDoc    `json:"profiles"`
	CPQIDs     []int32         `json:"cpqIds"`
	Attributes json.RawMessage `json:"attributes"`
	Version    int64           `json:"version"`
	CreatedAt  time.Time       `json:"createdAt"`
	UpdatedAt  time.Time       `json:"updatedAt"`
}

type ownerDoc struct {
	OwnerID int64  `json:"ownerId"`
	Name    string `json:"name"`
	Email   string `json:"email"`
}

type profileDoc struct {
	ProfileID   int32     `json:"profileId"`
	CustomerID  int32     `json:"customerId"`
	ProfileType string    `json:"profileType"`
	ContactName string    `json:"contactName"`
	Email       string    `json:"email"`
	Phone       string    `json:"phone"`
	CreatedAt   time.Time `json:"createdAt"`
}

func (p profile) doc() profileDoc {
	return profileDoc{ProfileID: p.ID, CustomerID: p.CustomerID, ProfileType: p.Type, ContactName: p.ContactName,
		Email: p.Email, Phone: p.Phone, CreatedAt: p.CreatedAt}
}

func (s *Server) customerDoc(c *customer) customerDoc {
	d := customerDoc{ID: c.ID, Name: c.Name, TaxID: c.TaxID, Email: c.Email, Phone: c.Phone, Segment: c.Segment,
		Status: c.Status, Address: c.Address, Owners: []ownerDoc{}, Profiles: []profileDoc{},
		CPQIDs: slices.Clone(c.CPQIDs), Attributes: c.Attributes, Version: c.Version,
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
	if d.CPQIDs == nil {
		d.CPQIDs = []int32{}
	}
	if len(d.Attributes) == 0 {
		d.Attributes = json.RawMessage("{}")
	}
	for _, id := range c.Owners {
		o := s.cat.ownerByID[id]
		d.Owners = append(d.Owners, ownerDoc{OwnerID: o.ID, Name: o.Name, Email: o.Email})
	}
	for _, p := range c.Profiles {
		d.Profiles = append(d.Profiles, p.doc())
	}
	return d
}

// customerJSON answers the customer's encoded document, cached until the customer changes. Caller holds s.mu.
func (s *Server) customerJSON(c *customer) []byte {
	if c.encoded == nil {
		c.encoded, _ = marshalJSON(s.customerDoc(c))
	}
	return c.encoded
}

// customerByID answers the customer or nil. Caller holds s.mu.
func (s *Server) customerByID(id int64) *customer {
	if id < 1 || id > int64(len(s.customers)) {
		return nil
	}
	return s.customers[id-1]
}

// touchCustomer records a change: new version, new updatedAt, and a new list ETag. Caller holds s.mu.
func (s *Server) touchCustomer(c *customer) {
	c.Version++
	c.UpdatedAt = s.stamp()
	c.index()
	s.customerGen++
}

// customerList answers the encoded full list and its strong ETag, rebuilt only after a change. With 100,000
// customers the list is tens of megabytes: each customer's document is cached, so a rebuild after one change is a
// concatenation and a hash. Caller holds s.mu.
func (s *Server) customerList() ([]byte, string) {
	if s.listCache.body != nil && s.listCache.gen == s.customerGen {
		return s.listCache.body, s.listCache.etag
	}
	size := 2
	for _, c := range s.customers {
		size += len(s.customerJSON(c)) + 1
	}
	buf := make([]byte, 0, size)
	buf = append(buf, '[')
	for i, c := range s.customers {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, s.customerJSON(c)...)
	}
	buf = append(buf, ']')
	sum := sha256.Sum256(buf)
	s.listCache.body = buf
	s.listCache.etag = `"` + hex.EncodeToString(sum[:16]) + `"`
	s.listCache.gen = s.customerGen
	return s.listCache.body, s.listCache.etag
}

// customerListOf answers the list of the customers a restricted user sees (A13) and its strong ETag; it is
// built on every call (a user owns few customers), and its ETag differs from the full list's. Caller holds s.mu.
func (s *Server) customerListOf(sc *scope) ([]byte, string) {
	buf := []byte{'['}
	for _, c := range s.customers {
		if !sc.sees(c) {
			continue
		}
		if len(buf) > 1 {
			buf = append(buf, ',')
		}
		buf = append(buf, s.customerJSON(c)...)
	}
	buf = append(buf, ']')
	sum := sha256.Sum256(buf)
	return buf, `"` + hex.EncodeToString(sum[:16]) + `"`
}

// etagMatches implements If-None-Match (weak comparison, RFC 9110 section 13.1.2).
func etagMatches(ifNoneMatch, etag string) bool {
	for _, candidate := range strings.Split(ifNoneMatch, ",") {
		candidate = strings.TrimSpace(candidate)
		if candidate == "*" || strings.TrimPrefix(candidate, "W/") == etag {
			return true
		}
	}
	return false
}

// GET /v2/customer/ (A8: the whole list, strong ETag, If-None-Match answers 304).
func (s *Server) listCustomers(w http.ResponseWriter, r *http.Request) error {
	if err := requireNoBody(r); err != nil {
		return err
	}
	s.mu.Lock()
	body, etag := s.customerList()
	if sc := scopeOf(r); sc != nil {
		body, etag = s.customerListOf(sc)
	}
	s.mu.Unlock()
	w.Header().Set("ETag", etag)
	w.Header().Set("Cache-Control", "no-cache")
	if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatches(inm, etag) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	return writeJSON(w, http.StatusOK, body)
}

// GET /v2/customer/{id}
func (s *Server) getCustomer(w http.ResponseWriter, r *http.Request) error {
	id, err := pathInt32(r, "id")
	if err != nil {
		return err
	}
	if err := requireNoBody(r); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.customerByID(int64(id))
	if c == nil {
		return errNotFound("customer %d not found", id)
	}
	if err := s.checkCustomer(r, c); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, s.customerJSON(c))
}

// GET /v2/customer/onlinesearch/{cpqId}?query= (A8). The spec types this cpqId as long.
func (s *Server) onlineSearch(w http.ResponseWriter, r *http.Request) error {
	cpqID, err := pathInt64(r, "cpqId")
	if err != nil {
		return err
	}
	if err := requireNoBody(r); err != nil {
		return err
	}
	query := strings.ToLower(strings.TrimSpace(r.URL.Query().Get("query")))
	if utf8.RuneCountInString(query) > 200 {
		return errBadRequest("query parameter query is limited to 200 characters")
	}
	if cpqID > 1<<31-1 || s.cat.cpqByID[int32(cpqID)] == nil {
		return errNotFound("configurator %d not found", cpqID)
	}
	sc := scopeOf(r)
	return s.lockedJSON(w, http.StatusOK, func() (any, error) {
		out := []json.RawMessage{}
		for _, c := range s.customers {
			if !c.hasCPQ(cpqID) || (query != "" && !strings.Contains(c.search, query)) || !sc.sees(c) {
				continue
			}
			out = append(out, s.customerJSON(c))
			if len(out) == onlineSearchLimit {
				break
			}
		}
		return out, nil
	})
}

// customerInput is the body of POST and PUT /v2/customer. Pointers tell a missing (or null) field from an empty one
// (docs/v2-assumptions.md A8): on PUT a missing field keeps its value and "" clears an optional text field (a
// required one then fails validateCustomer, 422); on POST the required ones are checked and "" is no value.
type customerInput struct {
	ID         *int32          `json:"id"`
	Name       *string         `json:"name"`
	TaxID      *string         `json:"taxId"`
	Email      *string         `json:"email"`
	Phone      *string         `json:"phone"`
	Segment    *string         `json:"segment"`
	Address    *addressInput   `json:"address"`
	CPQIDs     *[]int32        `json:"cpqIds"`
	Attributes json.RawMessage `json:"attributes"`
	Version    *int64          `json:"version"`
}

type addressInput struct {
	Street     *string `json:"street"`
	City       *string `json:"city"`
	PostalCode *string `json:"postalCode"`
	Country    *string `json:"country"`
}

// checkTypes rejects an attributes value that is not an object (a wrong JSON type: 400, A2).
func (in *customerInput) checkTypes() error {
	raw := bytes.TrimSpace(in.Attributes)
	if len(raw) > 0 && raw[0] != '{' && !bytes.Equal(raw, []byte("null")) {
		return errBadRequest("wrong JSON type for attributes: want an object")
	}
	return nil
}

// apply copies the given fields of in onto c, trimmed: "" (or spaces) empties a text field, an address object sets
// only the parts it names (A8).
func (in *customerInput) apply(c *customer) error {
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = strings.TrimSpace(*src)
		}
	}
	set(&c.Name, in.Name)
	set(&c.TaxID, in.TaxID)
	set(&c.Email, in.Email)
	set(&c.Phone, in.Phone)
	set(&c.Segment, in.Segment)
	if in.Address != nil {
		set(&c.Address.Street, in.Address.Street)
		set(&c.Address.City, in.Address.City)
		set(&c.Address.PostalCode, in.Address.PostalCode)
		set(&c.Address.Country, in.Address.Country)
	}
	if in.CPQIDs != nil {
		c.CPQIDs = slices.Clone(*in.CPQIDs)
		if c.CPQIDs == nil {
			c.CPQIDs = []int32{}
		}
	}
	if len(in.Attributes) > 0 {
		raw := bytes.TrimSpace(in.Attributes)
		switch {
		case bytes.Equal(raw, []byte("null")):
			c.Attributes = json.RawMessage("{}")
		case raw[0] == '{':
			var compact bytes.Buffer
			if err := json.Compact(&compact, raw); err != nil {
				return errBadRequest("malformed JSON in attributes: %v", err)
			}
			c.Attributes = compact.Bytes()
		default:
			return errBadRequest("wrong JSON type for attributes: want an object")
		}
	}
	return nil
}

// validateCustomer checks the A8 rules on a customer about to be stored.
func (s *Server) validateCustomer(c *customer) error {
	var v validator
	n := utf8.RuneCountInString(c.Name)
	v.check(n >= 1 && n <= 200, "name", "must be 1 to 200 characters")
	v.check(taxIDPattern.MatchString(c.TaxID), "taxId", "must look like IT01234567890 (two upper-case letters, then 8 to 14 upper-case letters or digits)")
	if c.Email != "" {
		v.check(validEmail(c.Email), "email", "must be a valid e-mail address")
	}
	if c.Phone != "" {
		v.check(phonePattern.MatchString(c.Phone), "phone", "must be 6 to 20 digits or spaces, optionally after a +")
	}
	v.check(slices.Contains(segments, c.Segment), "segment", "must be one of BUSINESS, CONSUMER, PUBLIC")
	if c.Address.Country != "" {
		v.check(countryPattern.MatchString(c.Address.Country), "address.country", "must be two upper-case letters (ISO 3166-1 alpha-2)")
	}
	seen := map[int32]bool{}
	for i, id := range c.CPQIDs {
		field := fmt.Sprintf("cpqIds[%d]", i)
		switch {
		case s.cat.cpqByID[id] == nil:
			v.add(field, "configurator %d does not exist", id)
		case seen[id]:
			v.add(field, "configurator %d is listed twice", id)
		}
		seen[id] = true
	}
	return v.err()
}

// validEmail accepts a bare address (no display name) with a dotted domain.
func validEmail(s string) bool {
	addr, err := mail.ParseAddress(s)
	if err != nil || addr.Name != "" || addr.Address != s {
		return false
	}
	_, domain, _ := strings.Cut(s, "@")
	return strings.Contains(domain, ".") && !strings.HasSuffix(domain, ".")
}

// duplicateTaxID answers the 409 of A8 when another customer has the tax id. Caller holds s.mu.
func (s *Server) duplicateTaxID(taxID string, self int32) error {
	if other, ok := s.taxIndex[taxID]; ok && other != self {
		return &apiError{Status: http.StatusConflict, Code: codeConflict,
			Message:     fmt.Sprintf("tax id %s is already used by customer %d", taxID, other),
			FieldErrors: []fieldError{{Field: "taxId", Message: "is already used by another customer"}}}
	}
	return nil
}

// POST /v2/customer (A8): 201 with the document.
func (s *Server) createCustomer(w http.ResponseWriter, r *http.Request) error {
	var in customerInput
	if err := decodeJSON(r, &in); err != nil {
		return err
	}
	if err := in.checkTypes(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.stamp()
	c := &customer{Status: "ACTIVE", Attributes: json.RawMessage("{}"), Version: 1, CreatedAt: now, UpdatedAt: now}
	// A customer created without cpqIds is offered by every configurator (docs/v2-assumptions.md A8).
	for _, cfg := range s.cat.configurators {
		c.CPQIDs = append(c.CPQIDs, cfg.ID)
	}
	if err := in.apply(c); err != nil {
		return err
	}
	if err := s.validateCustomer(c); err != nil {
		return err
	}
	if err := s.duplicateTaxID(c.TaxID, 0); err != nil {
		return err
	}
	if len(s.customers) >= 1<<31-2 {
		return errConflict("the customer directory is full")
	}
	c.ID = int32(len(s.customers) + 1)
	c.Owners = ownerOfNewCustomer(r)
	c.index()
	s.customers = append(s.customers, c)
	s.taxIndex[c.TaxID] = c.ID
	s.customerGen++
	return writeJSON(w, http.StatusCreated, s.customerJSON(c))
}

// PUT /v2/customer (A8): fields present in the body replace the stored ones (absent ones are kept, "" clears an
// optional text field); a stale version answers 409. The change is recorded, field by field, in the audit of every
// quote of the customer (A7 CUSTOMER_UPDATED).
func (s *Server) updateCustomer(w http.ResponseWriter, r *http.Request) error {
	var in customerInput
	if err := decodeJSON(r, &in); err != nil {
		return err
	}
	if err := in.checkTypes(); err != nil {
		return err
	}
	if in.ID == nil {
		return errValidation("id", "is required")
	}
	if *in.ID < 1 {
		return errValidation("id", "must be >= 1")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.customerByID(int64(*in.ID))
	if c == nil {
		return errNotFound("customer %d not found", *in.ID)
	}
	if err := s.checkCustomer(r, c); err != nil {
		return err
	}
	updated := *c
	updated.CPQIDs = slices.Clone(c.CPQIDs)
	if err := in.apply(&updated); err != nil {
		return err
	}
	if err := s.validateCustomer(&updated); err != nil {
		return err
	}
	if in.Version != nil && *in.Version != c.Version {
		return errConflict("customer %d was changed meanwhile: version %d is stale, the current version is %d", c.ID, *in.Version, c.Version)
	}
	if err := s.duplicateTaxID(updated.TaxID, c.ID); err != nil {
		return err
	}
	changes := customerChanges(c, &updated)
	if len(changes) == 0 {
		return writeJSON(w, http.StatusOK, s.customerJSON(c))
	}
	if updated.TaxID != c.TaxID {
		delete(s.taxIndex, c.TaxID)
		s.taxIndex[updated.TaxID] = c.ID
	}
	c.Name, c.TaxID, c.Email, c.Phone, c.Segment = updated.Name, updated.TaxID, updated.Email, updated.Phone, updated.Segment
	c.Address, c.CPQIDs, c.Attributes = updated.Address, updated.CPQIDs, updated.Attributes
	s.touchCustomer(c)
	s.auditCustomerChange(r, c, changes)
	return writeJSON(w, http.StatusOK, s.customerJSON(c))
}

// customerChanges lists the changed fields with their values before and after (A7: strings; other values as
// compact JSON).
func customerChanges(before, after *customer) []change {
	var out []change
	str := func(field, b, a string) {
		if b != a {
			out = append(out, change{Field: field, Before: b, After: a})
		}
	}
	str("name", before.Name, after.Name)
	str("taxId", before.TaxID, after.TaxID)
	str("email", before.Email, after.Email)
	str("phone", before.Phone, after.Phone)
	str("segment", before.Segment, after.Segment)
	str("address.street", before.Address.Street, after.Address.Street)
	str("address.city", before.Address.City, after.Address.City)
	str("address.postalCode", before.Address.PostalCode, after.Address.PostalCode)
	str("address.country", before.Address.Country, after.Address.Country)
	b, _ := marshalJSON(before.CPQIDs)
	a, _ := marshalJSON(after.CPQIDs)
	str("cpqIds", string(b), string(a))
	str("attributes", string(before.Attributes), string(after.Attributes))
	return out
}

// auditCustomerChange appends CUSTOMER_UPDATED to every quote of the customer. Caller holds s.mu.
func (s *Server) auditCustomerChange(r *http.Request, c *customer, changes []change) {
	fields := make([]string, len(changes))
	for i, ch := range changes {
		fields[i] = ch.Field
	}
	summary := fmt.Sprintf("Customer %d (%s) updated: %s", c.ID, c.Name, strings.Join(fields, ", "))
	for _, quoteID := range s.quotesByCustomer[c.ID] {
		s.audit(r, s.quotes[quoteID], "CUSTOMER_UPDATED", summary, changes...)
	}
}

// ownersChange records an owners change on the customer and its quotes. Caller holds s.mu.
func (s *Server) ownersChanged(r *http.Request, c *customer, before []int64) {
	b, _ := marshalJSON(before)
	a, _ := marshalJSON(c.Owners)
	s.touchCustomer(c)
	s.auditCustomerChange(r, c, []change{{Field: "owners", Before: string(b), After: string(a)}})
}

func (s *Server) knownOwner(id int64) bool {
	_, ok := s.cat.ownerByID[id]
	return ok
}

// PUT /v2/customer/{id}/owners body {"ownerIds": [..]} (A8: 1 to 10 known owners, replaces them).
func (s *Server) replaceOwners(w http.ResponseWriter, r *http.Request) error {
	id, err := pathInt32(r, "id")
	if err != nil {
		return err
	}
	var in struct {
		OwnerIDs *[]int64 `json:"ownerIds"`
	}
	if err := decodeJSON(r, &in); err != nil {
		return err
	}
	var v validator
	if in.OwnerIDs == nil {
		v.add("ownerIds", "is required")
	} else {
		ids := *in.OwnerIDs
		v.check(len(ids) >= 1 && len(ids) <= 10, "ownerIds", "must list 1 to 10 owners")
		seen := map[int64]bool{}
		for i, ownerID := range ids {
			field := fmt.Sprintf("ownerIds[%d]", i)
			switch {
			case !s.knownOwner(ownerID):
				v.add(field, "owner %d is not a known sales user", ownerID)
			case seen[ownerID]:
				v.add(field, "owner %d is listed twice", ownerID)
			}
			seen[ownerID] = true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.customerByID(int64(id))
	if c == nil {
		return errNotFound("customer %d not found", id)
	}
	if err := s.checkCustomer(r, c); err != nil {
		return err
	}
	if err := v.err(); err != nil {
		return err
	}
	before := c.Owners
	if !slices.Equal(before, *in.OwnerIDs) {
		c.Owners = slices.Clone(*in.OwnerIDs)
		s.ownersChanged(r, c, before)
	}
	return writeJSON(w, http.StatusOK, s.customerJSON(c))
}

// POST /v2/customer/{id}/owner/{ownerId} with an empty body (A8: 422 unknown owner, 409 already present).
func (s *Server) addOwner(w http.ResponseWriter, r *http.Request) error {
	id, err := pathInt32(r, "id")
	if err != nil {
		return err
	}
	ownerID, err := pathInt64(r, "ownerId")
	if err != nil {
		return err
	}
	if err := requireNoBody(r); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.customerByID(int64(id))
	if c == nil {
		return errNotFound("customer %d not found", id)
	}
	if err := s.checkCustomer(r, c); err != nil {
		return err
	}
	if !s.knownOwner(ownerID) {
		return errValidation("ownerId", fmt.Sprintf("owner %d is not a known sales user", ownerID))
	}
	if slices.Contains(c.Owners, ownerID) {
		return errConflict("owner %d is already an owner of customer %d", ownerID, id)
	}
	if len(c.Owners) >= 10 {
		return errValidation("ownerId", "a customer has at most 10 owners")
	}
	before := slices.Clone(c.Owners)
	c.Owners = append(slices.Clone(c.Owners), ownerID)
	s.ownersChanged(r, c, before)
	return writeJSON(w, http.StatusOK, s.customerJSON(c))
}

// PUT /v2/customer/{id}/owner/change body {"currentOwnerId", "newOwnerId"} (A8).
func (s *Server) changeOwner(w http.ResponseWriter, r *http.Request) error {
	id, err := pathInt32(r, "id")
	if err != nil {
		return err
	}
	var in struct {
		CurrentOwnerID *int64 `json:"currentOwnerId"`
		NewOwnerID     *int64 `json:"newOwnerId"`
	}
	if err := decodeJSON(r, &in); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.customerByID(int64(id))
	if c == nil {
		return errNotFound("customer %d not found", id)
	}
	if err := s.checkCustomer(r, c); err != nil {
		return err
	}
	var v validator
	if in.CurrentOwnerID == nil {
		v.add("currentOwnerId", "is required")
	} else {
		v.check(slices.Contains(c.Owners, *in.CurrentOwnerID), "currentOwnerId", "owner %d is not an owner of customer %d", *in.CurrentOwnerID, id)
	}
	if in.NewOwnerID == nil {
		v.add("newOwnerId", "is required")
	} else {
		v.check(s.knownOwner(*in.NewOwnerID), "newOwnerId", "owner %d is not a known sales user", *in.NewOwnerID)
	}
	if err := v.err(); err != nil {
		return err
	}
	if slices.Contains(c.Owners, *in.NewOwnerID) {
		return errConflict("owner %d is already an owner of customer %d", *in.NewOwnerID, id)
	}
	before := slices.Clone(c.Owners)
	owners := slices.Clone(c.Owners)
	owners[slices.Index(owners, *in.CurrentOwnerID)] = *in.NewOwnerID
	c.Owners = owners
	s.ownersChanged(r, c, before)
	return writeJSON(w, http.StatusOK, s.customerJSON(c))
}

// POST /v2/customer/customerprofile (A8): 201 with the profile.
func (s *Server) createProfile(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		CustomerID  *int32  `json:"customerId"`
		ProfileType *string `json:"profileType"`
		ContactName *string `json:"contactName"`
		Email       *string `json:"email"`
		Phone       *string `json:"phone"`
	}
	if err := decodeJSON(r, &in); err != nil {
		return err
	}
	if in.CustomerID == nil {
		return errValidation("customerId", "is required")
	}
	p := profile{}
	var v validator
	if in.ProfileType == nil {
		v.add("profileType", "is required")
	} else {
		p.Type = *in.ProfileType
		v.check(slices.Contains(profileTypes, p.Type), "profileType", "must be one of BILLING, SHIPPING, TECHNICAL, LEGAL")
	}
	if in.ContactName != nil {
		p.ContactName = strings.TrimSpace(*in.ContactName)
		v.check(utf8.RuneCountInString(p.ContactName) <= 200, "contactName", "must be at most 200 characters")
	}
	if in.Email != nil && *in.Email != "" {
		p.Email = strings.TrimSpace(*in.Email)
		v.check(validEmail(p.Email), "email", "must be a valid e-mail address")
	}
	if in.Phone != nil && *in.Phone != "" {
		p.Phone = strings.TrimSpace(*in.Phone)
		v.check(phonePattern.MatchString(p.Phone), "phone", "must be 6 to 20 digits or spaces, optionally after a +")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.customerByID(int64(*in.CustomerID))
	if c == nil {
		return errNotFound("customer %d not found", *in.CustomerID)
	}
	if err := s.checkCustomer(r, c); err != nil {
		return err
	}
	if err := v.err(); err != nil {
		return err
	}
	p.ID = s.nextProfileID
	s.nextProfileID++
	p.CustomerID = c.ID
	p.CreatedAt = s.stamp()
	c.Profiles = append(slices.Clone(c.Profiles), p)
	s.touchCustomer(c)
	s.auditCustomerChange(r, c, []change{{Field: "profiles", Before: "", After: fmt.Sprintf("added %s profile %d", p.Type, p.ID)}})
	body, _ := marshalJSON(p.doc())
	return writeJSON(w, http.StatusCreated, body)
}

// DELETE /v2/customer/customerprofile?customerId=&profileId= (A8): 204.
func (s *Server) deleteProfile(w http.ResponseWriter, r *http.Request) error {
	customerID, err := queryID(r, "customerId", 32)
	if err != nil {
		return err
	}
	profileID, err := queryID(r, "profileId", 32)
	if err != nil {
		return err
	}
	if err := requireNoBody(r); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.customerByID(customerID)
	if c == nil {
		return errNotFound("customer %d not found", customerID)
	}
	if err := s.checkCustomer(r, c); err != nil {
		return err
	}
	i := slices.IndexFunc(c.Profiles, func(p profile) bool { return int64(p.ID) == profileID })
	if i < 0 {
		return errNotFound("profile %d not found on customer %d", profileID, customerID)
	}
	removed := c.Profiles[i]
	c.Profiles = slices.Delete(slices.Clone(c.Profiles), i, i+1)
	s.touchCustomer(c)
	s.auditCustomerChange(r, c, []change{{Field: "profiles", Before: fmt.Sprintf("%s profile %d", removed.Type, removed.ID), After: "removed"}})
	w.WriteHeader(http.StatusNoContent)
	return nil
}
