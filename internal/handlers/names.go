package handlers

import (
	"cmp"
	"context"
	"slices"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/web/templates/work"
)

// Names instead of numbers (issue 33: back office saw "Product catalogue 1", a catalogue filter
// reading "Any / 1", the palette "customer #60"). A configurator or customer is shown by its
// number only when the portal cannot know its name: configurators from the v2 API's configurator
// list (call 1, kept per user by configuratorCache), customers from the user's cached customer
// list (customercache), and either from the work index's rows (what the person's own token read).

// configuratorNamesNow are the user's configurators by id, from the cache or (cold) call 1; nil
// and the error when the v2 API cannot list them now (the caller falls back to what it knows,
// and says so where the call was its own). Safe to call from a goroutine: it takes no gin context.
func (h *Handler) configuratorNamesNow(ctx context.Context, user string) (map[int32]string, error) {
	if names, ok := h.configurators.get(user); ok {
		return names, nil
	}
	list, err := h.configuratorList(ctx, user)
	if err != nil {
		return nil, err
	}
	return configuratorNames(list), nil
}

// configuratorNamesHeld are the user's configurators by id when this replica holds them (no
// call; nil otherwise): for answers given as the person types or a region refreshed by htmx.
func (h *Handler) configuratorNamesHeld(c *gin.Context) map[int32]string {
	names, _ := h.configurators.get(customerCacheKey(c))
	return names
}

// customerNameHeld is a customer's name from the user's cached customer list ("" when the list
// is not in memory or does not have it): no call.
func (h *Handler) customerNameHeld(c *gin.Context, id int32) string {
	snap, ok := h.customers.Peek(customerCacheKey(c))
	if !ok {
		return ""
	}
	row, ok := snap.Lookup(id)
	if !ok {
		return ""
	}
	return row.Name
}

// workNames name the rows of a work list: configurators from the v2 API (they win over the name
// the index recorded, which may be older), customers from the user's cached list when the row
// has none.
type workNames struct {
	configurators map[int32]string
	customer      func(id int32) string
}

// nameRow fills in a row's configurator and customer.
func (n workNames) nameRow(r *workindex.Row) {
	if name := n.configurators[r.CPQID]; name != "" {
		r.Configurator = name
	}
	if r.Customer == "" && n.customer != nil {
		r.Customer = n.customer(r.CustomerID)
	}
}

// configuratorChoices is the list filter's product catalogues: the v2 API's list by name, and the
// ones the index knows (named as the v2 API names them when it does), sorted by name. A
// catalogue nobody can name is offered by its numbered word, never as a bare number.
func configuratorChoices(numbered func(id int32) string, indexed []workindex.Option, names map[int32]string, selected string) []work.Choice {
	label := map[int32]string{}
	for _, o := range indexed {
		label[o.ID] = o.Name
	}
	for id, name := range names {
		label[id] = name
	}
	out := make([]work.Choice, 0, len(label))
	for id, name := range label {
		if name == "" || name == strconv.Itoa(int(id)) {
			name = numbered(id)
		}
		value := strconv.Itoa(int(id))
		out = append(out, work.Choice{Value: value, Label: name, Selected: selected == value})
	}
	slices.SortFunc(out, func(a, b work.Choice) int {
		return cmp.Or(cmp.Compare(a.Label, b.Label), cmp.Compare(a.Value, b.Value))
	})
	return out
}
