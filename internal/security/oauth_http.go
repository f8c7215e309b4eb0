package security

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// maxIdPBody bounds a discovery document or JWK Set.
const maxIdPBody = 1 << 20

// newIdPClient returns the HTTP client for requests to issuers. Every URL,
// redirects included, must pass checkIdPURL (https, or http to a loopback
// host with the allowance); bodies are capped at maxIdPBody; and a URL
// fetched successfully less than refetch ago is answered from that fetch
// instead of the network (refetch < 0: never). The last rule is what
// bounds JWK Set fetches: go-oidc fetches the set again for every token
// whose key it does not know, and without it every forged kid would be a
// request to the issuer.
func newIdPClient(base http.RoundTripper, allowLoopbackHTTP bool, refetch time.Duration) *http.Client {
	if base == nil {
		base = http.DefaultTransport
	}
	t := &idpTransport{base: base, allowHTTP: allowLoopbackHTTP, refetch: refetch, last: map[string]*idpFetch{}}
	return &http.Client{
		Transport: t,
		Timeout:   idpTimeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("too many redirects")
			}
			return checkIdPURL(req.URL.String(), allowLoopbackHTTP)
		},
	}
}

// idpTransport enforces newIdPClient's rules.
type idpTransport struct {
	base      http.RoundTripper
	allowHTTP bool
	refetch   time.Duration

	mu   sync.Mutex
	last map[string]*idpFetch // by URL, successful GETs only
}

// idpFetch is the body of the last successful GET of a URL.
type idpFetch struct {
	at     time.Time
	header http.Header
	body   []byte
}

func (t *idpTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	u := req.URL.String()
	if err := checkIdPURL(req.URL.Scheme+"://"+req.URL.Host+req.URL.Path, t.allowHTTP); err != nil {
		return nil, fmt.Errorf("security: oauth: refused to fetch %s: %w", req.URL.Redacted(), err)
	}
	if req.Method == http.MethodGet && t.refetch >= 0 {
		t.mu.Lock()
		f := t.last[u]
		t.mu.Unlock()
		if f != nil && time.Since(f.at) < t.refetch {
			return &http.Response{
				Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
				Header: f.header.Clone(), Body: io.NopCloser(bytes.NewReader(f.body)), ContentLength: int64(len(f.body)), Request: req,
			}, nil
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxIdPBody+1))
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("security: oauth: reading %s: %w", req.URL.Redacted(), err)
	}
	if len(body) > maxIdPBody {
		return nil, fmt.Errorf("security: oauth: %s answered more than %d bytes", req.URL.Redacted(), maxIdPBody)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	if req.Method == http.MethodGet && resp.StatusCode == http.StatusOK && t.refetch >= 0 {
		t.mu.Lock()
		if len(t.last) > 64 {
			t.last = map[string]*idpFetch{}
		}
		t.last[u] = &idpFetch{at: time.Now(), header: resp.Header.Clone(), body: body}
		t.mu.Unlock()
	}
	return resp, nil
}
