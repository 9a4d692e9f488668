package handlers

import (
	"errors"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/auth"
)

// errExportsInFlight: the user has exportsPerUser exports running (429, errors.go).
var errExportsInFlight = errors.New("handlers: too many exports in flight for this user")

// startExport takes one of the user's export slots; it answers 429 and returns false when they
// are all taken. The caller defers the release.
func (h *Handler) startExport(c *gin.Context) (release func(), ok bool) {
	release, ok = h.exports.Acquire(auth.CurrentUser(c).Subject)
	if !ok {
		h.fail(c, errExportsInFlight)
	}
	return release, ok
}
