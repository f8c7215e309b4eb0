package app

import (
	"context"
	"net/http"
	"strings"

	"github.com/a2a-plugin/a2a-plugin/internal/inspector"
	"github.com/a2a-plugin/a2a-plugin/internal/server"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/tools"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// startInspectors builds the operator's inspector when the inspector
// setting is on and mounts it on the server's options as an extra route:
// Local callers only (no Allow), behind the same authentication. With
// several host agents each has its own, over its tasks only: the default
// agent's at /inspector/, the others' at /agents/{id}/inspector/ (their
// cards and send forms theirs too).
func (p *parts) startInspectors(agents []*agentRun, opts *server.Options, undo *undoList) error {
	if !p.cfg.Inspector {
		return nil
	}
	for i, ar := range agents {
		io := inspector.Options{
			Tasks: ar.tasks, Store: store.ForAgent(p.store, ar.id), Metrics: p.metrics, Agent: ar.id,
			Server:    func() http.Handler { return p.srv.Handler() },
			Peers:     p.inspectorPeers,
			PeerNames: p.peerNames,
			CallTool:  p.inspectorCall,
			PublicURL: p.cfg.PublicURL, AgentName: p.cfg.AgentName,
			Prefix: inspector.Prefix,
			Logger: p.log.Named("inspector"),
		}
		if ar.info != nil {
			io.AgentName = firstOf(ar.set.Name, ar.info.GetName(), p.cfg.AgentName)
		}
		if i > 0 {
			base := "/agents/" + ar.id
			io.Prefix, io.RPCPath, io.CardPath = base+inspector.Prefix, base+"/", base+"/.well-known/agent-card.json"
			io.Logger = io.Logger.With("agent", ar.id)
		}
		in, err := inspector.New(io)
		if err != nil {
			return err
		}
		undo.add(func(context.Context) error { in.Close(); return nil })
		p.inspectors = append(p.inspectors, in)
		route := server.ExtraRoute{Pattern: io.Prefix, Handler: in.Handler()}
		if i == 0 {
			opts.Extra = append(opts.Extra, route)
			continue
		}
		ao := &opts.Agents[i-1].Options
		ao.Extra = append(ao.Extra, route)
	}
	return nil
}

// endpoints are the URLs Connect reports: the A2A endpoint, then the
// inspector's page when it is on (agenthost prints both).
func (p *parts) endpoints(url string) []string {
	if len(p.inspectors) == 0 {
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
	res, err := p.callTool(ctx, tools.Origin{}, &pb.CallToolRequest{Name: tool, ArgumentsJson: argumentsJSON},
		func(pr *pb.ToolProgress) error { return progress(pr.GetMessage()) })
	if err != nil {
		return inspector.ToolResult{}, err
	}
	return inspector.ToolResult{Content: res.GetContent(), IsError: res.GetIsError()}, nil
}
