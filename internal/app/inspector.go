package app

import (
	"context"
	"net/http"
	"strings"

	"github.com/a2a-plugin/a2a-plugin/internal/inspector"
	"github.com/a2a-plugin/a2a-plugin/internal/server"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// startInspector builds the operator's inspector when the inspector
// setting is on and mounts it on the server's options as an extra route:
// Local callers only (no Allow), behind the same authentication.
func (p *parts) startInspector(mgr *tasks.Manager, opts *server.Options) error {
	if !p.cfg.Inspector {
		return nil
	}
	in, err := inspector.New(inspector.Options{
		Tasks: mgr, Store: p.store, Metrics: p.metrics,
		Server:    func() http.Handler { return p.srv.Handler() },
		Peers:     p.inspectorPeers,
		PeerNames: p.peerNames,
		CallTool:  p.inspectorCall,
		PublicURL: p.cfg.PublicURL, AgentName: p.cfg.AgentName,
		Logger: p.log.Named("inspector"),
	})
	if err != nil {
		return err
	}
	p.inspector = in
	opts.Extra = append(opts.Extra, server.ExtraRoute{Pattern: inspector.Prefix, Handler: in.Handler()})
	return nil
}

// endpoints are the URLs Connect reports: the A2A endpoint, then the
// inspector's page when it is on (agenthost prints both).
func (p *parts) endpoints(url string) []string {
	if p.inspector == nil {
		return []string{url}
	}
	return []string{url, strings.TrimSuffix(url, "/") + inspector.Prefix}
}

// peerNames are the configured peers' names (a2a_agents), in order.
func (p *parts) peerNames() []string {
	names := make([]string, 0, len(p.cfg.Agents))
	for _, a := range p.cfg.Agents {
		names = append(names, a.Name)
	}
	return names
}

// inspectorPeers reports the configured peers for the inspector.
func (p *parts) inspectorPeers(ctx context.Context) []inspector.Peer {
	var out []inspector.Peer
	for _, s := range p.tools.Peers(ctx) {
		v := inspector.Peer{Name: s.Name, URL: s.URL, Trust: s.Trust, Signed: s.Signed, Credential: s.Credential,
			Reachable: s.Reachable, RateLimited: s.RateLimited, Error: s.Error, Checked: s.Checked}
		if c := s.Card; c != nil {
			v.Card, v.CardURL, v.Interface = c.Card, c.CardURL, c.Interface
			if c.Verified != nil {
				v.VerifiedKey = c.Verified.KeyID
			}
		}
		out = append(out, v)
	}
	return out
}

// inspectorCall runs a tool for the inspector the way CallTool runs the
// host's: same tools, same trace handling (a new trace: the operator's
// call continues no inbound turn). The contract's request and result
// types stay here; the inspector knows none.
func (p *parts) inspectorCall(ctx context.Context, tool, argumentsJSON string, progress func(string) error) (inspector.ToolResult, error) {
	res, err := p.tracedCall(ctx, &pb.CallToolRequest{Name: tool, ArgumentsJson: argumentsJSON}, tracing.Context{},
		func(pr *pb.ToolProgress) error { return progress(pr.GetMessage()) })
	if err != nil {
		return inspector.ToolResult{}, err
	}
	return inspector.ToolResult{Content: res.GetContent(), IsError: res.GetIsError()}, nil
}
