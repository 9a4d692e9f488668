package demoidp

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/subtle"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// authRequestTTL bounds how long an unfinished login may take.
const authRequestTTL = 30 * time.Minute

var errNotFound = errors.New("demoidp: not found")

// storage is the provider's in-memory op.Storage: auth requests, codes, access and refresh tokens.
type storage struct {
	issuer           string
	client           *client
	users            userDirectory
	accessTokenTTL   time.Duration
	refreshTokenTTL  time.Duration
	padAccessTokenTo int
	key              signingKey
	httpClient       *http.Client

	mu            sync.Mutex
	authRequests  map[string]*authRequest
	codes         map[string]string // code → auth request id
	accessTokens  map[string]*accessToken
	refreshTokens map[string]*refreshToken
	// sessions maps a provider session id (sid) to its user's subject.
	sessions map[string]string
}

var (
	_ op.Storage                        = (*storage)(nil)
	_ op.CanSetUserinfoFromRequest      = (*storage)(nil)
	_ op.CanGetPrivateClaimsFromRequest = (*storage)(nil)
)

type accessToken struct {
	id             string
	clientID       string
	subject        string
	refreshTokenID string
	audience       []string
	scopes         []string
	expiration     time.Time
}

type refreshToken struct {
	token         string
	authTime      time.Time
	amr           []string
	audience      []string
	subject       string
	clientID      string
	scopes        []string
	expiration    time.Time
	accessTokenID string
	sessionID     string
}

// refreshTokenRequest adapts a stored refresh token to op.RefreshTokenRequest.
type refreshTokenRequest struct{ *refreshToken }

func (r refreshTokenRequest) GetAMR() []string                 { return r.amr }
func (r refreshTokenRequest) GetAudience() []string            { return r.audience }
func (r refreshTokenRequest) GetAuthTime() time.Time           { return r.authTime }
func (r refreshTokenRequest) GetClientID() string              { return r.clientID }
func (r refreshTokenRequest) GetScopes() []string              { return r.scopes }
func (r refreshTokenRequest) GetSubject() string               { return r.subject }
func (r refreshTokenRequest) SetCurrentScopes(scopes []string) { r.scopes = scopes }

// signingKey is the RSA key the provider signs tokens with: random at every start unless
// Options.KeyFile keeps it (loadOrCreateKey).
type signingKey struct {
	id  string
	key *rsa.PrivateKey
}

func (k signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k signingKey) Key() any                                    { return k.key }
func (k signingKey) ID() string                                  { return k.id }

// publicKey is the verification half, published on the JWKS endpoint.
type publicKey struct{ signingKey }

func (k publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k publicKey) Use() string                        { return "sig" }
func (k publicKey) Key() any                           { return &k.key.PublicKey }

func newStorage(opts Options, c *client, users userDirectory) (*storage, error) {
	key, err := loadOrCreateKey(opts.KeyFile)
	if err != nil {
		return nil, err
	}
	// The key id follows the key, so a kept key keeps its id and old tokens find it in the JWKS.
	kid := uuid.NewSHA1(uuid.NameSpaceOID, x509.MarshalPKCS1PublicKey(&key.PublicKey)).String()
	return &storage{
		issuer:           opts.Issuer,
		client:           c,
		users:            users,
		accessTokenTTL:   opts.AccessTokenTTL,
		refreshTokenTTL:  opts.RefreshTokenTTL,
		padAccessTokenTo: opts.PadAccessTokenTo,
		key:              signingKey{id: kid, key: key},
		httpClient:       opts.HTTPClient,
		sessions:         map[string]string{},
		authRequests:     map[string]*authRequest{},
		codes:            map[string]string{},
		accessTokens:     map[string]*accessToken{},
		refreshTokens:    map[string]*refreshToken{},
	}, nil
}

// checkLogin verifies the credentials for the auth request id and marks the request done.
func (s *storage) checkLogin(id, username, password string) error {
	user, ok := s.users.byUsername[normalizeUsername(username)]
	// Compare against something even for unknown users, so timing does not reveal which usernames exist.
	want := "\x00no user"
	if ok {
		want = user.Password
	}
	passwordOK := subtle.ConstantTimeCompare([]byte(password), []byte(want)) == 1
	s.mu.Lock()
	defer s.mu.Unlock()
	req, found := s.authRequests[id]
	if !found {
		return errNotFound
	}
	if !ok || !passwordOK {
		return errBadCredentials
	}
	req.userID = user.Subject
	req.sessionID = uuid.NewString()
	s.sessions[req.sessionID] = user.Subject
	req.done = true
	req.authTime = time.Now()
	return nil
}

// authRequestExists reports whether a login for id is still pending.
func (s *storage) authRequestExists(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.authRequests[id]
	return ok
}

// CreateAuthRequest implements op.Storage.
func (s *storage) CreateAuthRequest(_ context.Context, req *oidc.AuthRequest, userID string) (op.AuthRequest, error) {
	if slices.Contains(req.Prompt, oidc.PromptNone) {
		return nil, oidc.ErrLoginRequired()
	}
	ar := newAuthRequest(req, userID)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.purgeLocked(time.Now())
	s.authRequests[ar.id] = ar
	return ar, nil
}

// AuthRequestByID implements op.Storage.
func (s *storage) AuthRequestByID(_ context.Context, id string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ar, ok := s.authRequests[id]
	if !ok {
		return nil, errNotFound
	}
	cp := *ar // the library reads it outside our lock
	return &cp, nil
}

// AuthRequestByCode implements op.Storage.
func (s *storage) AuthRequestByCode(_ context.Context, code string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ar, ok := s.authRequests[s.codes[code]]
	if !ok {
		return nil, errNotFound
	}
	cp := *ar
	return &cp, nil
}

// SaveAuthCode implements op.Storage.
func (s *storage) SaveAuthCode(_ context.Context, id, code string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.codes[code] = id
	return nil
}

// DeleteAuthRequest implements op.Storage. It runs when the code is exchanged, which makes codes
// single-use.
func (s *storage) DeleteAuthRequest(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.authRequests, id)
	for code, requestID := range s.codes {
		if requestID == id {
			delete(s.codes, code)
		}
	}
	return nil
}

// CreateAccessToken implements op.Storage (flows without a refresh token).
func (s *storage) CreateAccessToken(_ context.Context, req op.TokenRequest) (string, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	token := s.newAccessTokenLocked(clientIDOf(req), "", req.GetSubject(), req.GetAudience(), req.GetScopes())
	return token.id, token.expiration, nil
}

// CreateAccessAndRefreshTokens implements op.Storage. A refresh rotates: the presented refresh token and
// its access token stop working and a new pair is issued.
func (s *storage) CreateAccessAndRefreshTokens(_ context.Context, req op.TokenRequest, currentRefreshToken string) (string, string, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	rt := &refreshToken{
		authTime: now,
		audience: req.GetAudience(),
		subject:  req.GetSubject(),
		clientID: clientIDOf(req),
		scopes:   req.GetScopes(),
	}
	switch r := req.(type) {
	case *authRequest:
		rt.authTime, rt.amr, rt.sessionID = r.authTime, r.GetAMR(), r.sessionID
	case refreshTokenRequest:
		rt.authTime, rt.amr, rt.sessionID = r.authTime, r.amr, r.sessionID
	}
	if currentRefreshToken != "" {
		old, ok := s.refreshTokens[currentRefreshToken]
		if !ok || now.After(old.expiration) {
			return "", "", time.Time{}, oidc.ErrInvalidGrant().WithDescription("refresh token invalid or expired")
		}
		delete(s.refreshTokens, currentRefreshToken)
		delete(s.accessTokens, old.accessTokenID)
	}
	token, err := randomToken()
	if err != nil {
		return "", "", time.Time{}, err
	}
	rt.token = token
	rt.expiration = now.Add(s.refreshTokenTTL)
	access := s.newAccessTokenLocked(rt.clientID, rt.token, rt.subject, rt.audience, rt.scopes)
	rt.accessTokenID = access.id
	s.refreshTokens[rt.token] = rt
	return access.id, rt.token, access.expiration, nil
}

func (s *storage) newAccessTokenLocked(clientID, refreshTokenID, subject string, audience, scopes []string) *accessToken {
	token := &accessToken{
		id:             uuid.NewString(),
		clientID:       clientID,
		subject:        subject,
		refreshTokenID: refreshTokenID,
		audience:       audience,
		scopes:         scopes,
		expiration:     time.Now().Add(s.accessTokenTTL),
	}
	s.accessTokens[token.id] = token
	return token
}

// purgeLocked forgets expired requests and tokens, so a long-running demo does not grow without bound.
func (s *storage) purgeLocked(now time.Time) {
	for id, ar := range s.authRequests {
		if now.Sub(ar.created) > authRequestTTL {
			delete(s.authRequests, id)
		}
	}
	for code, id := range s.codes {
		if _, ok := s.authRequests[id]; !ok {
			delete(s.codes, code)
		}
	}
	for id, t := range s.accessTokens {
		if now.After(t.expiration) {
			delete(s.accessTokens, id)
		}
	}
	for id, t := range s.refreshTokens {
		if now.After(t.expiration) {
			delete(s.refreshTokens, id)
		}
	}
}

// TokenRequestByRefreshToken implements op.Storage.
func (s *storage) TokenRequestByRefreshToken(_ context.Context, token string) (op.RefreshTokenRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rt, ok := s.refreshTokens[token]
	if !ok || time.Now().After(rt.expiration) {
		return nil, errors.New("demoidp: refresh token invalid or expired")
	}
	cp := *rt
	return refreshTokenRequest{&cp}, nil
}

// TerminateSession implements op.Storage: signing out ends the user's provider sessions and their
// tokens for the client, and tells the client through back-channel logout (one logout token per
// provider session, with sub and sid), so the user's sessions in other browsers end at once too.
func (s *storage) TerminateSession(ctx context.Context, userID, clientID string) error {
	var ended []string
	s.mu.Lock()
	for sid, subject := range s.sessions {
		if subject == userID {
			ended = append(ended, sid)
			delete(s.sessions, sid)
		}
	}
	s.terminateTokensLocked(userID, clientID)
	s.mu.Unlock()
	if clientID == s.client.id {
		s.sendBackChannelLogouts(ctx, userID, ended)
	}
	return nil
}

// sendBackChannelLogouts POSTs a logout token per provider session to the client's
// backchannel_logout_uri. Failures are logged by nobody: a demo provider; the client's sessions
// then end at their next refresh, when the tokens are refused.
func (s *storage) sendBackChannelLogouts(ctx context.Context, subject string, sids []string) {
	if s.client.backChannelLogoutURI == "" {
		return
	}
	for _, sid := range sids {
		claims := oidc.NewLogoutTokenClaims(s.issuer, subject, oidc.Audience{s.client.id}, time.Now().Add(2*time.Minute), uuid.NewString(), sid, 0)
		token, err := s.sign(claims)
		if err != nil {
			continue
		}
		req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodPost, s.client.backChannelLogoutURI,
			strings.NewReader(url.Values{"logout_token": {token}}.Encode()))
		if err != nil {
			continue
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if resp, err := s.httpClient.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
			_ = resp.Body.Close()
		}
	}
}

// sign signs claims with the provider's key, as the library signs ID tokens.
func (s *storage) sign(claims any) (string, error) {
	signer, err := op.SignerFromKey(s.key)
	if err != nil {
		return "", fmt.Errorf("demoidp: signer: %w", err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("demoidp: claims: %w", err)
	}
	object, err := signer.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("demoidp: sign: %w", err)
	}
	return object.CompactSerialize()
}

func (s *storage) terminateTokensLocked(userID, clientID string) {
	for id, t := range s.accessTokens {
		if t.subject == userID && t.clientID == clientID {
			delete(s.accessTokens, id)
		}
	}
	for id, t := range s.refreshTokens {
		if t.subject == userID && t.clientID == clientID {
			delete(s.refreshTokens, id)
		}
	}
}

// RevokeToken implements op.Storage.
func (s *storage) RevokeToken(_ context.Context, tokenOrID, _, clientID string) *oidc.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.accessTokens[tokenOrID]; ok {
		if t.clientID != clientID {
			return oidc.ErrInvalidClient().WithDescription("token was not issued for this client")
		}
		delete(s.accessTokens, tokenOrID)
		return nil
	}
	if t, ok := s.refreshTokens[tokenOrID]; ok {
		if t.clientID != clientID {
			return oidc.ErrInvalidClient().WithDescription("token was not issued for this client")
		}
		delete(s.refreshTokens, tokenOrID)
		delete(s.accessTokens, t.accessTokenID)
	}
	return nil
}

// GetRefreshTokenInfo implements op.Storage.
func (s *storage) GetRefreshTokenInfo(_ context.Context, _ string, token string) (string, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.refreshTokens[token]
	if !ok {
		return "", "", op.ErrInvalidRefreshToken
	}
	return t.subject, t.token, nil
}

// SigningKey implements op.Storage.
func (s *storage) SigningKey(context.Context) (op.SigningKey, error) { return s.key, nil }

// SignatureAlgorithms implements op.Storage.
func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

// KeySet implements op.Storage.
func (s *storage) KeySet(context.Context) ([]op.Key, error) {
	return []op.Key{publicKey{s.key}}, nil
}

// GetClientByClientID implements op.Storage.
func (s *storage) GetClientByClientID(_ context.Context, clientID string) (op.Client, error) {
	if clientID != s.client.id {
		return nil, oidc.ErrInvalidClient().WithDescription("unknown client")
	}
	return s.client, nil
}

// AuthorizeClientIDSecret implements op.Storage.
func (s *storage) AuthorizeClientIDSecret(_ context.Context, clientID, clientSecret string) error {
	if clientID != s.client.id || subtle.ConstantTimeCompare([]byte(clientSecret), []byte(s.client.secret)) != 1 {
		return oidc.ErrInvalidClient().WithDescription("invalid client credentials")
	}
	return nil
}

// SetUserinfoFromScopes implements op.Storage; SetUserinfoFromRequest does the work.
func (s *storage) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil
}

// SetUserinfoFromRequest implements op.CanSetUserinfoFromRequest (claims in the ID token).
func (s *storage) SetUserinfoFromRequest(_ context.Context, info *oidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	// The ID token names the provider session (sid), which back-channel logout tokens name again.
	switch r := req.(type) {
	case *authRequest:
		if r.sessionID != "" {
			info.AppendClaims("sid", r.sessionID)
		}
	case refreshTokenRequest:
		if r.sessionID != "" {
			info.AppendClaims("sid", r.sessionID)
		}
	}
	// The ID token carries the user's roles too: the portal reads them from it (PORTAL_ROLES_CLAIM,
	// default "roles") for the start page and the team-wide lists.
	if user, ok := s.users.bySubject[req.GetSubject()]; ok && user.Role != "" {
		info.AppendClaims("roles", []string{user.Role})
	}
	return s.setUserinfo(info, req.GetSubject(), scopes)
}

// SetUserinfoFromToken implements op.Storage (the userinfo endpoint).
func (s *storage) SetUserinfoFromToken(_ context.Context, info *oidc.UserInfo, tokenID, _, _ string) error {
	s.mu.Lock()
	token, ok := s.accessTokens[tokenID]
	s.mu.Unlock()
	if !ok || time.Now().After(token.expiration) {
		return errors.New("demoidp: access token invalid or expired")
	}
	return s.setUserinfo(info, token.subject, token.scopes)
}

// SetIntrospectionFromToken implements op.Storage.
func (s *storage) SetIntrospectionFromToken(_ context.Context, resp *oidc.IntrospectionResponse, tokenID, subject, clientID string) error {
	s.mu.Lock()
	token, ok := s.accessTokens[tokenID]
	s.mu.Unlock()
	if !ok || time.Now().After(token.expiration) || !slices.Contains(token.audience, clientID) {
		return errors.New("demoidp: token inactive")
	}
	info := new(oidc.UserInfo)
	if err := s.setUserinfo(info, subject, token.scopes); err != nil {
		return err
	}
	resp.SetUserInfo(info)
	resp.Scope = token.scopes
	resp.ClientID = token.clientID
	resp.Expiration = oidc.FromTime(token.expiration)
	return nil
}

func (s *storage) setUserinfo(info *oidc.UserInfo, subject string, scopes []string) error {
	user, ok := s.users.bySubject[subject]
	if !ok {
		return errors.New("demoidp: user not found")
	}
	for _, scope := range scopes {
		switch scope {
		case oidc.ScopeOpenID:
			info.Subject = user.Subject
		case oidc.ScopeProfile:
			info.Name = user.Name
			info.PreferredUsername = user.Username
		case oidc.ScopeEmail:
			info.Email = user.Email
			info.EmailVerified = true
		}
	}
	return nil
}

// GetPrivateClaimsFromScopes implements op.Storage.
func (s *storage) GetPrivateClaimsFromScopes(_ context.Context, userID, clientID string, _ []string) (map[string]any, error) {
	return s.accessTokenClaims(userID, clientID, []string{clientID})
}

// GetPrivateClaimsFromRequest implements op.CanGetPrivateClaimsFromRequest: the JWT access token carries
// the user's name, e-mail, username and role, as the v2 API reads the acting user from it.
func (s *storage) GetPrivateClaimsFromRequest(_ context.Context, req op.TokenRequest, _ []string) (map[string]any, error) {
	return s.accessTokenClaims(req.GetSubject(), clientIDOf(req), req.GetAudience())
}

func (s *storage) accessTokenClaims(subject, clientID string, audience []string) (map[string]any, error) {
	user, ok := s.users.bySubject[subject]
	if !ok {
		return nil, errors.New("demoidp: user not found")
	}
	claims := map[string]any{
		"preferred_username": user.Username,
		"name":               user.Name,
		"email":              user.Email,
		"roles":              []string{user.Role},
	}
	if s.padAccessTokenTo > 0 {
		pad, err := s.padding(claims, subject, clientID, audience)
		if err != nil {
			return nil, err
		}
		if pad != "" {
			claims["pad"] = pad
		}
	}
	return claims, nil
}

// padding returns random text that brings the signed access token to about padAccessTokenTo bytes, to
// imitate enterprise providers whose tokens carry kilobytes of group claims. The size is estimated from
// the claims the library adds (exact to within a few bytes).
func (s *storage) padding(claims map[string]any, subject, clientID string, audience []string) (string, error) {
	probe := oidc.NewAccessTokenClaims(s.issuer, subject, audience, time.Now().Add(s.accessTokenTTL), uuid.NewString(), clientID, 0)
	probe.Claims = claims
	payload, err := json.Marshal(probe)
	if err != nil {
		return "", fmt.Errorf("demoidp: size access token: %w", err)
	}
	const header = len(`{"alg":"RS256","kid":"00000000-0000-0000-0000-000000000000","typ":"JWT"}`)
	const signature = 256 // RSA-2048
	size := base64.RawURLEncoding.EncodedLen(header) + 1 + base64.RawURLEncoding.EncodedLen(len(payload)) + 1 +
		base64.RawURLEncoding.EncodedLen(signature)
	missing := (s.padAccessTokenTo-size)*3/4 - len(`,"pad":""`)
	if missing <= 0 {
		return "", nil
	}
	raw := make([]byte, missing*3/4+3)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("demoidp: padding: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(raw)[:missing], nil
}

// GetKeyByIDAndClientID implements op.Storage; JWT client authentication is not offered.
func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errors.New("demoidp: JWT profile not supported")
}

// ValidateJWTProfileScopes implements op.Storage; JWT profile grants are not offered.
func (s *storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errors.New("demoidp: JWT profile not supported")
}

// Health implements op.Storage.
func (s *storage) Health(context.Context) error { return nil }

func clientIDOf(req op.TokenRequest) string {
	switch r := req.(type) {
	case *authRequest:
		return r.clientID
	case refreshTokenRequest:
		return r.clientID
	}
	return ""
}

func randomToken() (string, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("demoidp: random token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(raw), nil
}

// loadOrCreateKey reads the RSA key from path (PEM), creating it (0600) when missing; with no path
// the key is random for this process.
func loadOrCreateKey(path string) (*rsa.PrivateKey, error) {
	if path != "" {
		data, err := os.ReadFile(path)
		if err == nil {
			block, _ := pem.Decode(data)
			if block == nil {
				return nil, fmt.Errorf("demoidp: %s holds no PEM key; delete it to make a new one", path)
			}
			key, err := x509.ParsePKCS1PrivateKey(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("demoidp: %s: %w", path, err)
			}
			return key, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("demoidp: signing key: %w", err)
		}
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("demoidp: signing key: %w", err)
	}
	if path != "" {
		data := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, fmt.Errorf("demoidp: signing key: %w", err)
		}
	}
	return key, nil
}
