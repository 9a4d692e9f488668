// Package auditwords turns the entries of a validation audit (spec 4.4, docs/v2-assumptions.md
// A7) into the words of the person reading them: field names as labels of their language,
// discount, product, cart, price list, package, attachment and owner ids as the names the v2 API
// gives them elsewhere, JSON values (the v2 writes lists and objects as compact JSON) as lists
// of words, numbers and money in the reader's formats, codes (contract status, segment) as
// words, and login names as people's names where they are known (the customer's owners, the
// viewer, and the people the portal saw sign in: internal/people).
//
// The names come from documents the portal already reads with the viewer's own token (the quote
// document of call 10, the customer document); a name the portal cannot find is written as a
// numbered word ("Discount no. 9"), never as JSON. Nothing here calls the v2 API: the caller
// gathers the documents into Names.
package auditwords

import (
	"strings"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/i18n"
)

// Names are the names the audit's ids stand for, gathered from v2 documents. The zero value
// knows no names; every lookup then falls back to a numbered word.
type Names struct {
	// Currency is the quote's currency (ISO 4217), for repriced amounts; "" when unknown (EUR is
	// assumed, docs/v2-assumptions.md A4).
	Currency string
	// Customer is the name of the quote's customer, "" when unknown.
	Customer      string
	Discounts     map[int32]string
	Items         map[int64]string // node id to product name
	Carts         map[int64]string // basket id to its main product's name (or its label)
	Pricelists    map[int32]string
	Packages      map[int32]string
	Attachments   map[int32]string // attachment id to file name
	Owners        map[int64]string // owner (user) id to the person's name
	Configurators map[int32]string
	// People names the people who signed in to the portal by login (internal/people); nil: none.
	People Directory
	// people maps a lower-cased login name or e-mail address to the person's name.
	people map[string]string
}

// Directory names people by the login they sign in with: the portal's directory of sign-ins
// (internal/people.View). exact is false when only an e-mail address's local part matched.
type Directory interface {
	Person(actor string) (name string, exact, ok bool)
}

// prefetcher is a Directory that looks several actors up at once (internal/people.View: one
// database query for a page's actors instead of one per actor).
type prefetcher interface {
	Prefetch(actors ...string)
}

// Prefetch looks up at once, in n's directory of people, the actors a page is about to name (a
// directory that cannot does nothing; n may be nil).
func (n *Names) Prefetch(actors ...string) {
	if n == nil {
		return
	}
	if p, ok := n.People.(prefetcher); ok {
		p.Prefetch(actors...)
	}
}

// systemActor is the actor of the entries the v2 API writes on its own (seed data, services;
// docs/v2-assumptions.md A7): shown as a word of the reader's language, never as a login.
const systemActor = "system"

func put[K comparable](m *map[K]string, k K, v string) {
	if v == "" {
		return
	}
	if *m == nil {
		*m = map[K]string{}
	}
	(*m)[k] = v
}

// AddQuote learns the names of a quote document (call 10): its carts and their items, price
// lists, applied and extra discounts (and those named in the lines' breakdowns), packages and
// attachments.
func (n *Names) AddQuote(q *apiclient.Quote) {
	if q == nil {
		return
	}
	if n.Currency == "" {
		n.Currency = q.Currency
	}
	for _, pl := range q.AvailablePricelists {
		put(&n.Pricelists, pl.PricelistID, pl.Name)
	}
	for _, d := range q.AppliedDiscounts {
		put(&n.Discounts, d.DiscountID, d.Name)
	}
	for _, d := range q.ExtraDiscounts {
		put(&n.Discounts, d.DiscountID, d.Name)
	}
	for _, p := range q.Packages {
		put(&n.Packages, p.PackageID, p.Name)
	}
	for _, a := range q.Attachments {
		put(&n.Attachments, a.AttachmentID, a.FileName)
	}
	for _, c := range q.Carts {
		name := c.Label
		if c.Root != nil && c.Root.Name != "" {
			name = c.Root.Name
		}
		put(&n.Carts, c.BasketID, name)
		if c.Root != nil {
			n.addItem(c.Root)
		}
	}
}

func (n *Names) addItem(it *apiclient.Item) {
	put(&n.Items, it.NodeID, it.Name)
	for _, d := range it.Breakdown.Discounts {
		put(&n.Discounts, d.DiscountID, d.Name)
	}
	for i := range it.Children {
		n.addItem(&it.Children[i])
	}
}

// AddCustomer learns the names of a customer's owners (who may be the people of the audit) and,
// with configurators (id to name, may be nil), the names of its configurators.
func (n *Names) AddCustomer(c *apiclient.Customer) {
	if c == nil {
		return
	}
	n.Customer = c.Name
	for _, o := range c.Owners {
		put(&n.Owners, o.OwnerID, o.Name)
		n.AddPerson(o.Name, o.Email)
	}
}

// AddPerson learns that the person called name signs in as email: the audit's actor may be that
// address or its local part (the simulator writes the login name, "sales"; docs/v2-assumptions.md
// A7). An empty name or address teaches nothing.
func (n *Names) AddPerson(name, email string) {
	email = strings.ToLower(strings.TrimSpace(email))
	if name == "" || email == "" {
		return
	}
	put(&n.people, email, name)
	if local, _, ok := strings.Cut(email, "@"); ok && local != "" {
		put(&n.people, local, name)
	}
}

// Person is the name of the person an audit names by actor: their name when it is known, else
// the actor as the v2 API writes it (Actor also puts "system" into words). A login the portal's
// directory has seen sign in wins; then an owner's or the viewer's e-mail address or its local
// part; then a directory match of an e-mail's local part alone.
func (n *Names) Person(actor string) string {
	if n == nil {
		return actor
	}
	key := strings.ToLower(strings.TrimSpace(actor))
	var weak string
	if n.People != nil {
		if name, exact, ok := n.People.Person(key); ok && exact {
			return name
		} else if ok {
			weak = name
		}
	}
	if name, ok := n.people[key]; ok {
		return name
	}
	if weak != "" {
		return weak
	}
	return actor
}

// CustomerName is the name of the quote's customer, "" when unknown (n may be nil).
func (n *Names) CustomerName() string {
	if n == nil {
		return ""
	}
	return n.Customer
}

// Actor is who an audit entry names, in the reader's words.
type Actor struct {
	// Name is what is shown: the person's name, the word for the system, or the actor as written.
	Name string
	// Login is the actor as the v2 API wrote it when Name says something else (for a tooltip or
	// secondary text); "" when Name is the actor itself.
	Login string
}

// Actor is the person an audit entry names, in tr's words: their name when the portal knows it,
// the v2's own entries ("system") as a word of the reader's language, anyone else as written.
func (n *Names) Actor(tr *i18n.Translator, actor string) Actor {
	if strings.EqualFold(strings.TrimSpace(actor), systemActor) {
		return Actor{Name: tr.T("audit.actor.system")}
	}
	name := n.Person(actor)
	if name == actor {
		return Actor{Name: actor}
	}
	return Actor{Name: name, Login: actor}
}
