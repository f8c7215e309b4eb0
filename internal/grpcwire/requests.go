package grpcwire

import (
	"strconv"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

func pushConfigToProto(p *a2a.TaskPushNotificationConfig) *a2apb.TaskPushNotificationConfig {
	if p == nil {
		return nil
	}
	out := &a2apb.TaskPushNotificationConfig{Tenant: p.Tenant, Id: p.ID, TaskId: p.TaskID, Url: p.URL, Token: p.Token}
	if a := p.Authentication; a != nil {
		out.Authentication = &a2apb.AuthenticationInfo{Scheme: a.Scheme, Credentials: a.Credentials}
	}
	return out
}

func pushConfigFromProto(p *a2apb.TaskPushNotificationConfig) a2a.TaskPushNotificationConfig {
	out := a2a.TaskPushNotificationConfig{Tenant: p.GetTenant(), ID: p.GetId(), TaskID: p.GetTaskId(), URL: p.GetUrl(), Token: p.GetToken()}
	if a := p.GetAuthentication(); a != nil {
		out.Authentication = &a2a.AuthenticationInfo{Scheme: a.GetScheme(), Credentials: a.GetCredentials()}
	}
	return out
}

// PushConfigToProto converts a push notification config
// (CreateTaskPushNotificationConfig's request and the answers).
func PushConfigToProto(p *a2a.TaskPushNotificationConfig) *a2apb.TaskPushNotificationConfig {
	return pushConfigToProto(p)
}

// PushConfigFromProto converts a push notification config.
func PushConfigFromProto(p *a2apb.TaskPushNotificationConfig) *a2a.TaskPushNotificationConfig {
	out := pushConfigFromProto(p)
	return &out
}

// SendMessageRequestToProto converts the request of SendMessage and
// SendStreamingMessage.
func SendMessageRequestToProto(r *a2a.SendMessageRequest) (*a2apb.SendMessageRequest, error) {
	var c conv
	out := &a2apb.SendMessageRequest{
		Tenant:   r.Tenant,
		Message:  c.messageToProto("message", &r.Message),
		Metadata: c.structToProto("metadata", r.Metadata),
	}
	if cfg := r.Configuration; cfg != nil {
		out.Configuration = &a2apb.SendMessageConfiguration{
			AcceptedOutputModes:        cloneStrings(cfg.AcceptedOutputModes),
			TaskPushNotificationConfig: pushConfigToProto(cfg.TaskPushNotificationConfig),
			HistoryLength:              cloneInt32(cfg.HistoryLength),
			ReturnImmediately:          cfg.ReturnImmediately,
		}
	}
	return out, c.err
}

// SendMessageRequestFromProto converts the request of SendMessage and
// SendStreamingMessage. A missing message is an empty one, which
// validation then refuses as the JSON bindings do.
func SendMessageRequestFromProto(r *a2apb.SendMessageRequest) (*a2a.SendMessageRequest, error) {
	var c conv
	out := &a2a.SendMessageRequest{
		Tenant:   r.GetTenant(),
		Message:  c.messageFromProto("message", r.GetMessage()),
		Metadata: structFromProto(r.GetMetadata()),
	}
	if cfg := r.GetConfiguration(); cfg != nil {
		out.Configuration = &a2a.SendMessageConfiguration{
			AcceptedOutputModes: cloneStrings(cfg.GetAcceptedOutputModes()),
			HistoryLength:       cloneInt32(cfg.HistoryLength),
			ReturnImmediately:   cfg.GetReturnImmediately(),
		}
		if p := cfg.GetTaskPushNotificationConfig(); p != nil {
			pc := pushConfigFromProto(p)
			out.Configuration.TaskPushNotificationConfig = &pc
		}
	}
	return out, c.err
}

// SendMessageResponseToProto converts SendMessage's answer.
func SendMessageResponseToProto(r *a2a.SendMessageResponse) (*a2apb.SendMessageResponse, error) {
	var c conv
	out := &a2apb.SendMessageResponse{}
	switch {
	case r.Task != nil:
		out.Payload = &a2apb.SendMessageResponse_Task{Task: c.taskToProto("task", r.Task)}
	case r.Message != nil:
		out.Payload = &a2apb.SendMessageResponse_Message{Message: c.messageToProto("message", r.Message)}
	}
	return out, c.err
}

// SendMessageResponseFromProto converts SendMessage's answer.
func SendMessageResponseFromProto(r *a2apb.SendMessageResponse) (*a2a.SendMessageResponse, error) {
	var c conv
	out := &a2a.SendMessageResponse{}
	switch v := r.GetPayload().(type) {
	case *a2apb.SendMessageResponse_Task:
		t := c.taskFromProto("task", v.Task)
		out.Task = &t
	case *a2apb.SendMessageResponse_Message:
		m := c.messageFromProto("message", v.Message)
		out.Message = &m
	}
	return out, c.err
}

// GetTaskRequestToProto converts GetTask's request.
func GetTaskRequestToProto(r *a2a.GetTaskRequest) *a2apb.GetTaskRequest {
	return &a2apb.GetTaskRequest{Tenant: r.Tenant, Id: r.ID, HistoryLength: cloneInt32(r.HistoryLength)}
}

// GetTaskRequestFromProto converts GetTask's request.
func GetTaskRequestFromProto(r *a2apb.GetTaskRequest) *a2a.GetTaskRequest {
	return &a2a.GetTaskRequest{Tenant: r.GetTenant(), ID: r.GetId(), HistoryLength: cloneInt32(r.HistoryLength)}
}

// ListTasksRequestToProto converts ListTasks' request.
func ListTasksRequestToProto(r *a2a.ListTasksRequest) *a2apb.ListTasksRequest {
	out := &a2apb.ListTasksRequest{
		Tenant:               r.Tenant,
		ContextId:            r.ContextID,
		PageSize:             cloneInt32(r.PageSize),
		PageToken:            r.PageToken,
		HistoryLength:        cloneInt32(r.HistoryLength),
		StatusTimestampAfter: timestampToProto(r.StatusTimestampAfter),
		IncludeArtifacts:     optTrue(r.IncludeArtifacts),
	}
	if r.Status != "" {
		out.Status = StateToProto(r.Status)
	}
	return out
}

// ListTasksRequestFromProto converts ListTasks' request. A status this
// version does not know (a number past the v1.0 enum) becomes a state
// named by its number, which validation refuses as the JSON bindings
// refuse an unknown state name: a filter must not silently match
// everything.
func ListTasksRequestFromProto(r *a2apb.ListTasksRequest) *a2a.ListTasksRequest {
	out := &a2a.ListTasksRequest{
		Tenant:               r.GetTenant(),
		ContextID:            r.GetContextId(),
		PageSize:             cloneInt32(r.PageSize),
		PageToken:            r.GetPageToken(),
		HistoryLength:        cloneInt32(r.HistoryLength),
		StatusTimestampAfter: timestampFromProto(r.GetStatusTimestampAfter()),
		IncludeArtifacts:     r.GetIncludeArtifacts(),
	}
	if s := r.GetStatus(); s != a2apb.TaskState_TASK_STATE_UNSPECIFIED {
		out.Status = StateFromProto(s)
		if _, known := a2apb.TaskState_name[int32(s)]; !known {
			out.Status = a2a.TaskState("TASK_STATE_" + strconv.Itoa(int(s)))
		}
	}
	return out
}

// ListTasksResponseToProto converts ListTasks' answer.
func ListTasksResponseToProto(r *a2a.ListTasksResponse) (*a2apb.ListTasksResponse, error) {
	var c conv
	out := &a2apb.ListTasksResponse{NextPageToken: r.NextPageToken, PageSize: r.PageSize, TotalSize: r.TotalSize}
	for i := range r.Tasks {
		out.Tasks = append(out.Tasks, c.taskToProto(index("tasks", i), &r.Tasks[i]))
	}
	return out, c.err
}

// ListTasksResponseFromProto converts ListTasks' answer.
func ListTasksResponseFromProto(r *a2apb.ListTasksResponse) (*a2a.ListTasksResponse, error) {
	var c conv
	out := &a2a.ListTasksResponse{NextPageToken: r.GetNextPageToken(), PageSize: r.GetPageSize(), TotalSize: r.GetTotalSize(),
		Tasks: make([]a2a.Task, 0, len(r.GetTasks()))}
	for i, t := range r.GetTasks() {
		out.Tasks = append(out.Tasks, c.taskFromProto(index("tasks", i), t))
	}
	return out, c.err
}

// CancelTaskRequestToProto converts CancelTask's request.
func CancelTaskRequestToProto(r *a2a.CancelTaskRequest) (*a2apb.CancelTaskRequest, error) {
	var c conv
	out := &a2apb.CancelTaskRequest{Tenant: r.Tenant, Id: r.ID, Metadata: c.structToProto("metadata", r.Metadata)}
	return out, c.err
}

// CancelTaskRequestFromProto converts CancelTask's request.
func CancelTaskRequestFromProto(r *a2apb.CancelTaskRequest) *a2a.CancelTaskRequest {
	return &a2a.CancelTaskRequest{Tenant: r.GetTenant(), ID: r.GetId(), Metadata: structFromProto(r.GetMetadata())}
}

// SubscribeToTaskRequestToProto converts SubscribeToTask's request.
func SubscribeToTaskRequestToProto(r *a2a.SubscribeToTaskRequest) *a2apb.SubscribeToTaskRequest {
	return &a2apb.SubscribeToTaskRequest{Tenant: r.Tenant, Id: r.ID}
}

// SubscribeToTaskRequestFromProto converts SubscribeToTask's request.
func SubscribeToTaskRequestFromProto(r *a2apb.SubscribeToTaskRequest) *a2a.SubscribeToTaskRequest {
	return &a2a.SubscribeToTaskRequest{Tenant: r.GetTenant(), ID: r.GetId()}
}

// GetPushConfigRequestToProto converts GetTaskPushNotificationConfig's
// request.
func GetPushConfigRequestToProto(r *a2a.GetTaskPushNotificationConfigRequest) *a2apb.GetTaskPushNotificationConfigRequest {
	return &a2apb.GetTaskPushNotificationConfigRequest{Tenant: r.Tenant, TaskId: r.TaskID, Id: r.ID}
}

// GetPushConfigRequestFromProto converts GetTaskPushNotificationConfig's
// request.
func GetPushConfigRequestFromProto(r *a2apb.GetTaskPushNotificationConfigRequest) *a2a.GetTaskPushNotificationConfigRequest {
	return &a2a.GetTaskPushNotificationConfigRequest{Tenant: r.GetTenant(), TaskID: r.GetTaskId(), ID: r.GetId()}
}

// ListPushConfigsRequestToProto converts ListTaskPushNotificationConfigs'
// request.
func ListPushConfigsRequestToProto(r *a2a.ListTaskPushNotificationConfigsRequest) *a2apb.ListTaskPushNotificationConfigsRequest {
	return &a2apb.ListTaskPushNotificationConfigsRequest{Tenant: r.Tenant, TaskId: r.TaskID, PageSize: r.PageSize, PageToken: r.PageToken}
}

// ListPushConfigsRequestFromProto converts ListTaskPushNotificationConfigs'
// request.
func ListPushConfigsRequestFromProto(r *a2apb.ListTaskPushNotificationConfigsRequest) *a2a.ListTaskPushNotificationConfigsRequest {
	return &a2a.ListTaskPushNotificationConfigsRequest{Tenant: r.GetTenant(), TaskID: r.GetTaskId(), PageSize: r.GetPageSize(), PageToken: r.GetPageToken()}
}

// ListPushConfigsResponseToProto converts ListTaskPushNotificationConfigs'
// answer.
func ListPushConfigsResponseToProto(r *a2a.ListTaskPushNotificationConfigsResponse) *a2apb.ListTaskPushNotificationConfigsResponse {
	out := &a2apb.ListTaskPushNotificationConfigsResponse{NextPageToken: r.NextPageToken}
	for i := range r.Configs {
		out.Configs = append(out.Configs, pushConfigToProto(&r.Configs[i]))
	}
	return out
}

// ListPushConfigsResponseFromProto converts
// ListTaskPushNotificationConfigs' answer.
func ListPushConfigsResponseFromProto(r *a2apb.ListTaskPushNotificationConfigsResponse) *a2a.ListTaskPushNotificationConfigsResponse {
	out := &a2a.ListTaskPushNotificationConfigsResponse{NextPageToken: r.GetNextPageToken(),
		Configs: make([]a2a.TaskPushNotificationConfig, 0, len(r.GetConfigs()))}
	for _, p := range r.GetConfigs() {
		out.Configs = append(out.Configs, pushConfigFromProto(p))
	}
	return out
}

// DeletePushConfigRequestToProto converts DeleteTaskPushNotificationConfig's
// request.
func DeletePushConfigRequestToProto(r *a2a.DeleteTaskPushNotificationConfigRequest) *a2apb.DeleteTaskPushNotificationConfigRequest {
	return &a2apb.DeleteTaskPushNotificationConfigRequest{Tenant: r.Tenant, TaskId: r.TaskID, Id: r.ID}
}

// DeletePushConfigRequestFromProto converts
// DeleteTaskPushNotificationConfig's request.
func DeletePushConfigRequestFromProto(r *a2apb.DeleteTaskPushNotificationConfigRequest) *a2a.DeleteTaskPushNotificationConfigRequest {
	return &a2a.DeleteTaskPushNotificationConfigRequest{Tenant: r.GetTenant(), TaskID: r.GetTaskId(), ID: r.GetId()}
}

// ExtendedCardRequestToProto converts GetExtendedAgentCard's request.
func ExtendedCardRequestToProto(r *a2a.GetExtendedAgentCardRequest) *a2apb.GetExtendedAgentCardRequest {
	return &a2apb.GetExtendedAgentCardRequest{Tenant: r.Tenant}
}

// ExtendedCardRequestFromProto converts GetExtendedAgentCard's request.
func ExtendedCardRequestFromProto(r *a2apb.GetExtendedAgentCardRequest) *a2a.GetExtendedAgentCardRequest {
	return &a2a.GetExtendedAgentCardRequest{Tenant: r.GetTenant()}
}
