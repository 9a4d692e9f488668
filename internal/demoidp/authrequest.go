package demoidp

import (
	"time"

	"github.com/google/uuid"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// authRequest is one pending or finished authorization request.
type authRequest struct {
	id            string
	created       time.Time
	clientID      string
	redirectURI   string
	state         string
	nonce         string
	scopes        []string
	responseType  oidc.ResponseType
	responseMode  oidc.ResponseMode
	codeChallenge *oidc.CodeChallenge

	userID string
	// sessionID is the provider session (the ID token's sid), made at sign-in.
	sessionID string
	done      bool
	authTime  time.Time
}

var _ op.AuthRequest = (*authRequest)(nil)

func newAuthRequest(req *oidc.AuthRequest, userID string) *authRequest {
	ar := &authRequest{
		id:           uuid.NewString(),
		created:      time.Now(),
		clientID:     req.ClientID,
		redirectURI:  req.RedirectURI,
		state:        req.State,
		nonce:        req.Nonce,
		scopes:       req.Scopes,
		responseType: req.ResponseType,
		responseMode: req.ResponseMode,
		userID:       userID,
	}
	if req.CodeChallenge != "" {
		method := oidc.CodeChallengeMethodPlain
		if req.CodeChallengeMethod == oidc.CodeChallengeMethodS256 {
			method = oidc.CodeChallengeMethodS256
		}
		ar.codeChallenge = &oidc.CodeChallenge{Challenge: req.CodeChallenge, Method: method}
	}
	return ar
}

func (a *authRequest) GetID() string         { return a.id }
func (a *authRequest) GetACR() string        { return "" }
func (a *authRequest) GetAudience() []string { return []string{a.clientID} }
func (a *authRequest) GetAuthTime() time.Time {
	return a.authTime
}
func (a *authRequest) GetClientID() string                   { return a.clientID }
func (a *authRequest) GetCodeChallenge() *oidc.CodeChallenge { return a.codeChallenge }
func (a *authRequest) GetNonce() string                      { return a.nonce }
func (a *authRequest) GetRedirectURI() string                { return a.redirectURI }
func (a *authRequest) GetResponseType() oidc.ResponseType    { return a.responseType }
func (a *authRequest) GetResponseMode() oidc.ResponseMode    { return a.responseMode }
func (a *authRequest) GetScopes() []string                   { return a.scopes }
func (a *authRequest) GetState() string                      { return a.state }
func (a *authRequest) GetSubject() string                    { return a.userID }
func (a *authRequest) Done() bool                            { return a.done }

// GetAMR reports password authentication once the user signed in.
func (a *authRequest) GetAMR() []string {
	if a.done {
		return []string{"pwd"}
	}
	return nil
}
