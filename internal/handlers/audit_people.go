package handlers

import (
	"log/slog"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/auditwords"
	"github.com/cpqportal/portal/internal/auth"
)

// peopleView is the directory of the people who signed in, for this page: the page's actors are
// looked up in the state database (one query when the page prefetches them, auditwords.Names.
// Prefetch). A database that fails names nobody: the page then shows logins as the v2 writes
// them, never an error.
func (h *Handler) peopleView(c *gin.Context) auditwords.Directory {
	view, err := h.people.View(c.Request.Context())
	if err != nil {
		h.log(c).Warn("people directory unavailable; audit actors shown as written", slog.Any("err", err))
	}
	return view
}

// actorNames are the names of audit actors where no v2 document is read beside the audit (the
// live notices): the people who signed in and the viewer.
func (h *Handler) actorNames(c *gin.Context) *auditwords.Names {
	user := auth.CurrentUser(c)
	names := &auditwords.Names{People: h.peopleView(c)}
	names.AddPerson(user.Name, user.Email)
	return names
}
