package server

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/a2a-plugin/a2a-plugin/testharness"
	"github.com/a2a-plugin/a2a-plugin/testharness/sdkclient"
)

// TestOfficialGoSDKClientWithOAuth: the official Go SDK's client reads
// our card, finds the OAuth 2.0 client-credentials flow on it, gets a
// token at its token URL (golang.org/x/oauth2, as a Go client would) and
// calls the agent with it through the SDK's own AuthInterceptor.
func TestOfficialGoSDKClientWithOAuth(t *testing.T) {
	e, _ := oauthEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The stock parser cannot read a card with security requirements
	// (a2a-go#430); sdkclient works around it. Card discovery runs the
	// issuer's discovery, so the OAuth 2.0 scheme may take one more read.
	var card *sdk.AgentCard
	var flow sdk.ClientCredentialsOAuthFlow
	var scheme sdk.SecuritySchemeName
	for range 50 {
		card = sdkclient.ResolveCard(t, ctx, http.DefaultClient, e.url)
		for name, s := range card.SecuritySchemes {
			if o, ok := s.(sdk.OAuth2SecurityScheme); ok {
				if f, ok := o.Flows.(sdk.ClientCredentialsOAuthFlow); ok {
					flow, scheme = f, name
				}
			}
		}
		if scheme != "" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if scheme == "" || flow.TokenURL == "" {
		t.Fatalf("the card declares no client-credentials flow: %+v", card.SecuritySchemes)
	}
	if _, ok := flow.Scopes["a2a:send"]; !ok {
		t.Fatalf("scopes = %v", flow.Scopes)
	}
	cc := clientcredentials.Config{ClientID: "svc", ClientSecret: "svc-secret", TokenURL: flow.TokenURL,
		Scopes: []string{"a2a:send", "a2a:get", "a2a:trusted"}, EndpointParams: map[string][]string{"audience": {oauthAudience}}}
	tok, err := cc.Token(context.WithValue(ctx, oauth2.HTTPClient, http.DefaultClient))
	if err != nil {
		t.Fatalf("token: %v", err)
	}

	creds := a2aclient.NewInMemoryCredentialsStore()
	creds.Set("s1", scheme, a2aclient.AuthCredential(tok.AccessToken))
	client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(http.DefaultClient),
		a2aclient.WithCallInterceptors(&a2aclient.AuthInterceptor{Service: creds}))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Destroy()
	sctx := a2aclient.AttachSessionID(ctx, "s1")
	res, err := client.SendMessage(sctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("hello with oauth"))})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	task, ok := res.(*sdk.Task)
	if !ok || task.Status.State != sdk.TaskStateCompleted || task.Artifacts[0].Parts[0].Text() != "echo: hello with oauth" {
		t.Fatalf("send = %#v", res)
	}
	if got, err := client.GetTask(sctx, &sdk.GetTaskRequest{ID: task.ID}); err != nil || got.ID != task.ID {
		t.Fatalf("get = %+v, %v", got, err)
	}
	// The token has no list scope: the SDK gets our refusal naming it.
	if _, err := client.ListTasks(sctx, &sdk.ListTasksRequest{}); err == nil || !strings.Contains(err.Error(), "a2a:list") {
		t.Errorf("list without the scope: %v", err)
	}
	// Without the credential the SDK client is refused.
	if _, err := client.GetTask(ctx, &sdk.GetTaskRequest{ID: task.ID}); err == nil {
		t.Error("a call without the token succeeded")
	}
}

// TestOfficialJSSDKClientWithOAuth: the official JS SDK's client
// (@a2a-js/sdk 1.3.0, testharness/interop/js/client-oauth.mjs) reads the
// card, gets a token at the card's token URL with the client-credentials
// grant, and calls the agent through the SDK's AuthenticationHandler.
func TestOfficialJSSDKClientWithOAuth(t *testing.T) {
	e, _ := oauthEnv(t)
	steps := testharness.RunJSClient(t, testharness.NodeOptions{Env: []string{
		"OAUTH_CLIENT_ID=svc", "OAUTH_CLIENT_SECRET=svc-secret", "OAUTH_AUDIENCE=" + oauthAudience,
		"OAUTH_SCOPES=a2a:send a2a:get a2a:trusted",
	}}, nil, "client-oauth.mjs", e.url)
	for _, name := range []string{"card", "token", "send", "get", "refresh-on-401", "list-refused", "no-token-refused", "done"} {
		if s, ok := steps[name]; !ok || !s.OK {
			t.Errorf("step %s: %+v", name, s)
		}
	}
	if c := steps["card"]; !slices.Contains(c.SecuritySchemes, "oauth2-idp") || !slices.Contains(c.SecuritySchemes, "oidc-idp") {
		t.Errorf("card = %+v", c)
	}
	if s := steps["send"]; s.State != "TASK_STATE_COMPLETED" || s.Answer != "echo: hello from js with oauth" {
		t.Errorf("send = %+v", s)
	}
	if r := steps["refresh-on-401"]; r.Count != 1 {
		t.Errorf("refresh = %+v (want one new token)", r)
	}
	if l := steps["list-refused"]; !strings.Contains(l.Error, "a2a:list") {
		t.Errorf("list = %+v", l)
	}
}
