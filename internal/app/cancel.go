package app

import (
	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// NoRunningCancelExtension is the URI of the Agent Card extension the plugin
// declares when its host cannot stop a running turn (contract 1.3,
// HostInfo.cancel_turn_unsupported): CancelTask of a task the agent is
// working on is refused with -32002 (TASK_NOT_CANCELABLE) instead of
// reporting a cancel that did not happen. The extension changes no message;
// it tells clients before they try. Queued tasks and tasks waiting for input
// are still canceled.
const NoRunningCancelExtension = "https://github.com/a2a-plugin/a2a-plugin/extensions/no-running-cancel/v1"

// noRunningCancel is the card's declaration of NoRunningCancelExtension.
var noRunningCancel = a2a.AgentExtension{
	URI: NoRunningCancelExtension,
	Description: "This agent's host cannot stop a turn it is running: CancelTask of a task in TASK_STATE_WORKING " +
		"is refused with -32002 (TASK_NOT_CANCELABLE) and the task goes on to its own end. Tasks still queued " +
		"(TASK_STATE_SUBMITTED) or waiting for input are canceled.",
}

// hostCannotCancel reports whether the host declared that its CancelTurn
// cannot stop a running turn.
func hostCannotCancel(req *pb.ConfigureRequest) bool {
	return req.GetHost().GetCancelTurnUnsupported()
}
