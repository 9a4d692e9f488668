package demoidp

import (
	"bytes"
	"embed"
	"errors"
	"net/http"

	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/cpqportal/portal/internal/i18n"
)

const (
	loginPath      = "/login"
	stylesheetPath = "/static/login.css"
)

//go:embed assets
var assets embed.FS

var errBadCredentials = errors.New("demoidp: invalid username or password")

// loginView is the login page's view model, its words in the person's language.
type loginView struct {
	Lang          string
	Action        string // form action: absolute path including the issuer prefix
	Stylesheet    string
	AuthRequestID string
	Username      string
	Error         string
	Text          loginText
}

// loginText are the login page's words.
type loginText struct {
	Title, Heading, Users, Username, Password, Submit string
}

func (p *Provider) view(r *http.Request, authRequestID string) (loginView, *i18n.Translator) {
	tr := p.languages.Translator(p.languages.Match(r))
	return loginView{
		Lang:          tr.Lang(),
		Action:        p.issuer.Path + loginPath,
		Stylesheet:    p.issuer.Path + stylesheetPath,
		AuthRequestID: authRequestID,
		Text: loginText{
			Title: tr.T("idp.title"), Heading: tr.T("idp.heading"), Users: tr.T("idp.users"),
			Username: tr.T("idp.username"), Password: tr.T("idp.password"), Submit: tr.T("idp.submit"),
		},
	}, tr
}

// showLogin renders the form for a pending authorization request.
func (p *Provider) showLogin(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("authRequestID")
	v, tr := p.view(r, id)
	status := http.StatusOK
	if !p.storage.authRequestExists(id) {
		v.Error = tr.T("idp.error.expired")
		status = http.StatusBadRequest
	}
	p.render(w, status, v)
}

// checkLogin verifies the credentials and hands the finished request back to the library, which redirects
// to the client with a code.
func (p *Provider) checkLogin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	id := r.PostForm.Get("authRequestID")
	username := r.PostForm.Get("username")
	err := p.storage.checkLogin(id, username, r.PostForm.Get("password"))
	switch {
	case errors.Is(err, errBadCredentials):
		v, tr := p.view(r, id)
		v.Username = username
		v.Error = tr.T("idp.error.credentials")
		p.render(w, http.StatusOK, v)
	case err != nil:
		v, tr := p.view(r, id)
		v.Error = tr.T("idp.error.expired")
		p.render(w, http.StatusBadRequest, v)
	default:
		http.Redirect(w, r, op.AuthCallbackURL(p.op)(r.Context(), id), http.StatusSeeOther)
	}
}

func (p *Provider) render(w http.ResponseWriter, status int, v loginView) {
	var buf bytes.Buffer
	if err := p.loginPage.Execute(&buf, v); err != nil {
		http.Error(w, "login page failed", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	if h.Get("Content-Security-Policy") == "" {
		// The portal sets its own strict policy on every response; standalone, the page needs no more.
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; frame-ancestors 'none'; base-uri 'none'")
	}
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func serveStylesheet(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=3600")
	http.ServeFileFS(w, r, assets, "assets/login.css")
}
