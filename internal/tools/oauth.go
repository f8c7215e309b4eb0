package tools

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/client"
	"github.com/a2a-plugin/a2a-plugin/internal/config"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

// oauthTokenTimeout bounds one token request.
const oauthTokenTimeout = 15 * time.Second

// refreshEarly is how long before its expiry a token is replaced: at
// most a minute, and at most a quarter of its lifetime.
func refreshEarly(lifetime time.Duration) time.Duration {
	return min(time.Minute, lifetime/4)
}

// oauthSource supplies a peer's bearer token from its OAuth 2.0 client
// credentials. A token is fetched on first use and kept until shortly
// before it expires (refreshEarly); refresh fetches a new one at once —
// after the peer refused the token (HTTP 401) or asked for credentials
// (AUTH_REQUIRED), the recovery path token_file and token_command use.
// Neither the token nor the secret is ever logged or put into an error.
type oauthSource struct {
	peer string
	cfg  config.PeerOAuth
	hc   *http.Client
	log  hclog.Logger
	now  func() time.Time

	mu        sync.Mutex
	token     string
	refreshAt time.Time // zero: keep the token until it is refused
	failedAt  time.Time
}

// newOAuthSource returns the token source of p, or nil when p has no
// OAuth client. hc carries the token requests (redirects are refused: a
// token endpoint has no business moving the secret elsewhere).
func newOAuthSource(p config.Peer, hc *http.Client, log hclog.Logger, now func() time.Time) *oauthSource {
	if p.OAuth2 == nil {
		return nil
	}
	if hc == nil {
		hc = &http.Client{Timeout: oauthTokenTimeout}
	}
	c := *hc
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if now == nil {
		now = time.Now
	}
	return &oauthSource{peer: p.Name, cfg: *p.OAuth2, hc: &c, log: log, now: now}
}

func (s *oauthSource) what() string {
	return "the OAuth 2.0 client credentials (token endpoint " + s.cfg.TokenURL + ")"
}

// validLocked reports whether the kept token may still be used.
func (s *oauthSource) validLocked() bool {
	return s.token != "" && (s.refreshAt.IsZero() || s.now().Before(s.refreshAt))
}

// current is the client's Auth.TokenFunc: the kept token, fetching one
// when it is missing or due (see tokenSource.current for failures).
func (s *oauthSource) current() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.validLocked() && s.now().Sub(s.failedAt) >= retryLoadAfter {
		ctx, cancel := context.WithTimeout(context.Background(), oauthTokenTimeout)
		defer cancel()
		if err := s.fetchLocked(ctx); err != nil {
			s.log.Warn("could not get the peer's OAuth token", "peer", s.peer, "error", err)
		}
	}
	return s.token
}

// ensure fetches a token when none is kept or the kept one is due.
func (s *oauthSource) ensure(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.validLocked() {
		return nil
	}
	return s.fetchLocked(ctx)
}

// refresh fetches a new token now.
func (s *oauthSource) refresh(ctx context.Context) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.token
	if err := s.fetchLocked(ctx); err != nil {
		return false, err
	}
	return s.token != old, nil
}

// fetchLocked runs the client-credentials grant. On failure the previous
// token (if any) stays.
func (s *oauthSource) fetchLocked(ctx context.Context) error {
	fail := func(err error) error {
		s.failedAt = s.now()
		return fmt.Errorf("a2a_agents[%q].oauth2: %w", s.peer, err)
	}
	secret, err := s.secret(ctx)
	if err != nil {
		return fail(err)
	}
	cc := clientcredentials.Config{ClientID: s.cfg.ClientID, ClientSecret: secret, TokenURL: s.cfg.TokenURL, Scopes: s.cfg.Scopes}
	if s.cfg.Audience != "" {
		cc.EndpointParams = map[string][]string{"audience": {s.cfg.Audience}}
	}
	ctx, cancel := context.WithTimeout(ctx, oauthTokenTimeout)
	defer cancel()
	tok, err := cc.Token(context.WithValue(ctx, oauth2.HTTPClient, s.hc))
	if err != nil {
		return fail(tokenError(err))
	}
	if err := checkToken(tok.AccessToken); err != nil {
		return fail(fmt.Errorf("the token endpoint's access_token is unusable: %w", err))
	}
	s.token, s.refreshAt = tok.AccessToken, time.Time{}
	if !tok.Expiry.IsZero() {
		s.refreshAt = tok.Expiry.Add(-refreshEarly(tok.Expiry.Sub(s.now())))
	}
	return nil
}

// tokenError says why the token endpoint refused, from its OAuth error
// code and description (redacted), never quoting the request.
func tokenError(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		msg := "the token endpoint refused the request"
		if re.Response != nil {
			msg += fmt.Sprintf(" (HTTP %d)", re.Response.StatusCode)
		}
		if re.ErrorCode != "" {
			msg += ": " + oneLine(re.ErrorCode, 80)
			if re.ErrorDescription != "" {
				d, _ := security.Redact(oneLine(re.ErrorDescription, 300))
				msg += " (" + d + ")"
			}
		}
		if re.ErrorCode == "invalid_client" || re.ErrorCode == "unauthorized_client" {
			msg += "; check client_id and the client secret"
		}
		return errors.New(msg)
	}
	d, _ := security.Redact(oneLine(err.Error(), 300))
	return fmt.Errorf("getting a token failed: %s", d)
}

// secret reads the client secret from its source.
func (s *oauthSource) secret(ctx context.Context) (string, error) {
	switch {
	case s.cfg.ClientSecretFile != "":
		sec, err := readTokenFile(s.cfg.ClientSecretFile)
		if err != nil {
			return "", fmt.Errorf("client_secret_file %s: %w", s.cfg.ClientSecretFile, err)
		}
		return sec, nil
	case s.cfg.ClientSecretEnv != "":
		sec := strings.TrimSpace(os.Getenv(s.cfg.ClientSecretEnv))
		if sec == "" {
			return "", fmt.Errorf("client_secret_env: the environment variable %s is empty or not set (a host passes the plugin only the variables it allows, e.g. A2A_*)", s.cfg.ClientSecretEnv)
		}
		return sec, nil
	case s.cfg.ClientSecretCommand != "":
		sec, err := runTokenCommand(ctx, s.cfg.ClientSecretCommand, s.peer, TokenCommandTimeout)
		if err != nil {
			return "", fmt.Errorf("client_secret_command: %w", err)
		}
		return sec, nil
	}
	return "", errors.New("no client secret is configured (client_secret_file, client_secret_env or client_secret_command)")
}

// authSchemeError is a refusal by a peer whose card asks for OAuth 2.0 or
// OpenID Connect when the plugin has no OAuth credentials for it; its
// hint says what to set. The peer's words stay in err; the hint is ours.
type authSchemeError struct {
	err  error
	hint string
}

func (e *authSchemeError) Error() string { return e.err.Error() + "\n" + e.hint }
func (e *authSchemeError) Unwrap() error { return e.err }

// explainAuth adds to a peer's refusal (HTTP 401/403) what to configure
// when its card asks for OAuth 2.0 or OpenID Connect and the peer has no
// OAuth client configured. Other errors are returned as they are.
func (eng *outbound) explainAuth(ctx context.Context, target *resolved, err error) error {
	if err == nil || client.KindOf(err) != client.ErrAuthRefused {
		return err
	}
	if target.conf != nil && target.conf.OAuth2 != nil {
		return err
	}
	info, cerr := target.peer.Card(ctx)
	if cerr != nil || info == nil || info.Card == nil {
		return err
	}
	if h := oauthHint(target, info.Card); h != "" {
		return &authSchemeError{err: err, hint: h}
	}
	return err
}

// oauthHint says what to configure for a peer whose card declares OAuth
// 2.0 or OpenID Connect; "" when it declares neither. What the card says
// (URLs, scope names) is quoted and cut.
func oauthHint(target *resolved, c *a2a.AgentCard) string {
	var flows []string
	var scopes []string
	names := make([]string, 0, len(c.SecuritySchemes))
	for n := range c.SecuritySchemes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s := c.SecuritySchemes[n]
		switch {
		case s.OAuth2 != nil && s.OAuth2.Flows.ClientCredentials != nil:
			cc := s.OAuth2.Flows.ClientCredentials
			flows = append(flows, "OAuth 2.0 client credentials at token URL "+peerID(cc.TokenURL))
			for sc := range cc.Scopes {
				scopes = append(scopes, sc)
			}
		case s.OAuth2 != nil:
			flows = append(flows, "OAuth 2.0")
		case s.OpenIDConnect != nil:
			flows = append(flows, "OpenID Connect tokens (discovery "+peerID(s.OpenIDConnect.OpenIDConnectURL)+")")
		}
	}
	if len(flows) == 0 {
		return ""
	}
	sort.Strings(scopes)
	if len(scopes) > 12 {
		scopes = scopes[:12]
	}
	what := "no credentials are configured for it"
	where := fmt.Sprintf("set a2a_agents[%q].oauth2", target.name)
	if target.conf == nil {
		what = "it is called by URL, without credentials"
		where = "add it to a2a_agents with oauth2"
	} else if target.conf.Token != "" || target.conf.tokens != nil || target.conf.Header != "" {
		what = "its static credential was refused"
		where = fmt.Sprintf("replace the static credential of a2a_agents[%q] with oauth2", target.name)
	}
	hint := fmt.Sprintf("The peer's card asks for %s, and %s: %s to {\"token_url\": the peer issuer's token endpoint (check with the peer's operator that it is theirs), \"client_id\": …, one of \"client_secret_file\", \"client_secret_env\" or \"client_secret_command\", \"scopes\": [",
		strings.Join(flows, " or "), what, where)
	for i, sc := range scopes {
		if i > 0 {
			hint += ", "
		}
		hint += peerID(sc)
	}
	hint += "], \"audience\": the audience the peer expects}; the plugin then gets the peer's tokens itself."
	return hint
}
