// Package plugin is the plugin side of the agentplugin host↔plugin contract
// (proto/agentplugin/v1): the go-plugin handshake, the plugin set, both gRPC
// halves of every service, Serve for plugin authors, and the client for the
// host's callback service.
//
// A plugin author implements Lifecycle and any of Platform and Toolset, then
// calls Serve from main. A host (see host-sdk) dispenses the same interfaces
// from a launched plugin, backed by gRPC clients, so both sides program
// against one set of Go types.
//
// The messages are the generated protobuf types of agentpluginv1; the
// interfaces here are hand-written so they stay small, take a context first,
// and do not force implementations to embed generated "Unimplemented" structs.
package plugin

import (
	"context"

	goplugin "github.com/hashicorp/go-plugin"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// Contract version. ProtocolMajor is the go-plugin application protocol
// version (a host refuses plugins of another major); ProtocolMinor must equal
// the minor number in the "protocol-version:" header of
// proto/agentplugin/v1/agentplugin.proto (a test keeps them equal).
const (
	ProtocolMajor = 1
	ProtocolMinor = 4
)

// Handshake is the go-plugin handshake both sides use. The magic cookie is not
// a security measure; it only stops a user from running a plugin by hand and
// stops a host from launching executables that are not agentplugin plugins.
var Handshake = goplugin.HandshakeConfig{
	ProtocolVersion:  ProtocolMajor,
	MagicCookieKey:   "AGENTPLUGIN_MAGIC_COOKIE",
	MagicCookieValue: "7f3c2a9e-agentplugin-v1-b41d5e08",
}

// Names under which one plugin binary serves its services on one connection.
// A host dispenses each by name.
const (
	NameLifecycle = "lifecycle"
	NamePlatform  = "platform"
	NameToolset   = "toolset"
)

// EnvLogLevel is the environment variable through which a host passes the log
// level ("trace" … "error") to a plugin it launches; Configure may change it
// later.
const EnvLogLevel = "AGENTPLUGIN_LOG_LEVEL"

// Lifecycle is the lifecycle every plugin implements.
type Lifecycle interface {
	// Describe says who the plugin is and which roles it plays.
	Describe(ctx context.Context, req *pb.DescribeRequest) (*pb.DescribeResponse, error)
	// Configure hands the plugin its configuration and, when the host serves
	// one, a client of the host callback service (nil otherwise). A
	// misconfigured plugin returns a clear error instead of disabling itself.
	Configure(ctx context.Context, req *pb.ConfigureRequest, host Host) (*pb.ConfigureResponse, error)
	// Drain stops the plugin gracefully before the host kills it.
	Drain(ctx context.Context, req *pb.DrainRequest) (*pb.DrainResponse, error)
}

// Platform is a channel through which messages arrive and replies leave.
// The plugin implements it; the host calls it.
type Platform interface {
	// Connect starts inbound serving.
	Connect(ctx context.Context, req *pb.ConnectRequest) (*pb.ConnectResponse, error)
	// Disconnect stops inbound serving.
	Disconnect(ctx context.Context, req *pb.DisconnectRequest) (*pb.DisconnectResponse, error)
	// Send delivers agent output for a conversation and task.
	Send(ctx context.Context, req *pb.SendRequest) (*pb.SendResponse, error)
	// ProcessingComplete tells the platform a turn ended.
	ProcessingComplete(ctx context.Context, req *pb.ProcessingCompleteRequest) (*pb.ProcessingCompleteResponse, error)
}

// ProgressFunc reports progress of a running tool call. It returns an error
// when the caller went away; the tool should then stop.
type ProgressFunc func(*pb.ToolProgress) error

// Toolset is a set of tools the host's model can call. The plugin implements
// it; the host calls it.
type Toolset interface {
	// ListTools lists the tools.
	ListTools(ctx context.Context) ([]*pb.ToolDefinition, error)
	// CallTool runs one tool, reporting progress through progress, and
	// returns its result. A tool that fails in a way the model should see
	// returns a result with IsError set; a returned error means the call
	// itself broke (unknown tool, transport failure).
	CallTool(ctx context.Context, req *pb.CallToolRequest, progress ProgressFunc) (*pb.ToolResult, error)
}

// Host is the host callback service as seen from a plugin: every RPC of
// HostService. The optional ones (Complete, RecordDelegation) fail with an
// error matching ErrUnimplemented (gRPC Unimplemented) when the host lacks
// them; HostInfo.optional_rpcs in ConfigureRequest says which the host has.
type Host interface {
	HostHandler
	// Complete is an optional one-shot model call.
	Complete(ctx context.Context, req *pb.CompleteRequest) (*pb.CompleteResponse, error)
	// RecordDelegation optionally tells the host's memory about delegated work.
	RecordDelegation(ctx context.Context, req *pb.RecordDelegationRequest) (*pb.RecordDelegationResponse, error)
}

// HostHandler is what every host implements to serve the host callback
// service: the RPCs a host must have. A host with an optional capability
// implements its interface too (HostWithComplete, HostWithRecordDelegation,
// HostWithoutRunningCancel), as terraform-plugin-go's
// ProviderServerWith… interfaces: HostServer serves an optional RPC only
// for a handler that implements it (answering Unimplemented otherwise, so
// no host stubs what it lacks), and HostInfoOf derives what the host tells
// plugins in HostInfo from the same interfaces. HostServer adds the Watch
// stream itself.
type HostHandler interface {
	// HandleMessage injects an inbound message into the host's live session.
	HandleMessage(ctx context.Context, req *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error)
	// CancelTurn stops the running turn of a conversation.
	CancelTurn(ctx context.Context, req *pb.CancelTurnRequest) (*pb.CancelTurnResponse, error)
	// ListTools returns the host's live tool registry.
	ListTools(ctx context.Context) ([]*pb.ToolDefinition, error)
}

// HostWithComplete is a host that can answer a one-shot model call
// (HostService.Complete, e.g. for semantic routing).
type HostWithComplete interface {
	HostHandler
	Complete(ctx context.Context, req *pb.CompleteRequest) (*pb.CompleteResponse, error)
}

// HostWithRecordDelegation is a host whose memory records the work its
// agent delegated (HostService.RecordDelegation).
type HostWithRecordDelegation interface {
	HostHandler
	RecordDelegation(ctx context.Context, req *pb.RecordDelegationRequest) (*pb.RecordDelegationResponse, error)
}

// HostWithoutRunningCancel is a host whose CancelTurn may be unable to stop
// a turn it is running (contract 1.3): when CancelTurnUnsupported reports
// true, the host says so in HostInfo.cancel_turn_unsupported and plugins
// refuse to cancel what it runs instead of reporting it stopped.
type HostWithoutRunningCancel interface {
	HostHandler
	CancelTurnUnsupported() bool
}
