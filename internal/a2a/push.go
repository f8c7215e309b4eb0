package a2a

import "encoding/json"

// TaskPushNotificationConfig is a webhook registered for a task: the
// params and result of CreateTaskPushNotificationConfig, and an element of
// a list. It is flat in v1.0 (0.3 and v1.0-rc nested the webhook fields
// under `pushNotificationConfig`; that shape is accepted on input).
type TaskPushNotificationConfig struct {
	// Tenant is copied from the chosen AgentInterface, if it declares one.
	Tenant string `json:"tenant,omitempty"`
	// ID is the config id: the client's if it set one, else generated.
	ID string `json:"id,omitempty"`
	// TaskID is the task the webhook watches.
	TaskID string `json:"taskId,omitempty"`
	// URL is the webhook URL; required.
	URL string `json:"url"`
	// Token is an opaque client token for the webhook to check.
	Token string `json:"token,omitempty"`
	// Authentication says how the server authenticates to the webhook.
	Authentication *AuthenticationInfo `json:"authentication,omitempty"`
}

// UnmarshalJSON accepts the flat v1.0 shape and the nested 0.3/v1.0-rc
// shape {"taskId", "pushNotificationConfig": {"id","url","token",
// "authentication"}}; flat fields win where both are given.
func (c *TaskPushNotificationConfig) UnmarshalJSON(b []byte) error {
	type plain TaskPushNotificationConfig
	var w struct {
		plain
		PushNotificationConfig *struct {
			ID             string              `json:"id"`
			URL            string              `json:"url"`
			Token          string              `json:"token"`
			Authentication *AuthenticationInfo `json:"authentication"`
		} `json:"pushNotificationConfig"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	out := TaskPushNotificationConfig(w.plain)
	if n := w.PushNotificationConfig; n != nil {
		if out.ID == "" {
			out.ID = n.ID
		}
		if out.URL == "" {
			out.URL = n.URL
		}
		if out.Token == "" {
			out.Token = n.Token
		}
		if out.Authentication == nil {
			out.Authentication = n.Authentication
		}
	}
	*c = out
	return nil
}

// AuthenticationInfo says how the server authenticates to a webhook: it
// sends `Authorization: <Scheme> <Credentials>`.
type AuthenticationInfo struct {
	// Scheme is an HTTP authentication scheme such as "Bearer"; required.
	Scheme string `json:"scheme"`
	// Credentials is the scheme-specific credential.
	Credentials string `json:"credentials,omitempty"`
}

// UnmarshalJSON also accepts the 0.3 form {"schemes": [...],
// "credentials"}, taking the first scheme.
func (a *AuthenticationInfo) UnmarshalJSON(b []byte) error {
	type plain AuthenticationInfo
	var w struct {
		plain
		Schemes []string `json:"schemes"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	out := AuthenticationInfo(w.plain)
	if out.Scheme == "" && len(w.Schemes) > 0 {
		out.Scheme = w.Schemes[0]
	}
	*a = out
	return nil
}

// GetTaskPushNotificationConfigRequest is the params of
// GetTaskPushNotificationConfig.
type GetTaskPushNotificationConfigRequest struct {
	// Tenant is copied from the chosen AgentInterface, if it declares one.
	Tenant string `json:"tenant,omitempty"`
	// TaskID is the task id.
	TaskID string `json:"taskId"`
	// ID is the config id.
	ID string `json:"id"`
}

// ListTaskPushNotificationConfigsRequest is the params of
// ListTaskPushNotificationConfigs.
type ListTaskPushNotificationConfigsRequest struct {
	// Tenant is copied from the chosen AgentInterface, if it declares one.
	Tenant string `json:"tenant,omitempty"`
	// TaskID is the task id.
	TaskID string `json:"taskId"`
	// PageSize is the page size (0: server default).
	PageSize int32 `json:"pageSize,omitempty"`
	// PageToken is the nextPageToken of the previous page.
	PageToken string `json:"pageToken,omitempty"`
}

// UnmarshalJSON accepts pageSize as a number or a numeric string.
func (r *ListTaskPushNotificationConfigsRequest) UnmarshalJSON(b []byte) error {
	type plain ListTaskPushNotificationConfigsRequest
	var w struct {
		plain
		PageSize *flexInt32 `json:"pageSize"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = ListTaskPushNotificationConfigsRequest(w.plain)
	r.PageSize = w.PageSize.value()
	return nil
}

// ListTaskPushNotificationConfigsResponse is the result of
// ListTaskPushNotificationConfigs. Both keys are always emitted.
type ListTaskPushNotificationConfigsResponse struct {
	// Configs is the page of configs.
	Configs []TaskPushNotificationConfig `json:"configs"`
	// NextPageToken fetches the next page; "" on the last page.
	NextPageToken string `json:"nextPageToken"`
}

// MarshalJSON emits both fields, `configs` as [] when empty.
func (r ListTaskPushNotificationConfigsResponse) MarshalJSON() ([]byte, error) {
	type plain ListTaskPushNotificationConfigsResponse
	p := plain(r)
	if p.Configs == nil {
		p.Configs = []TaskPushNotificationConfig{}
	}
	return marshalPlain(p)
}

// DeleteTaskPushNotificationConfigRequest is the params of
// DeleteTaskPushNotificationConfig.
type DeleteTaskPushNotificationConfigRequest struct {
	// Tenant is copied from the chosen AgentInterface, if it declares one.
	Tenant string `json:"tenant,omitempty"`
	// TaskID is the task id.
	TaskID string `json:"taskId"`
	// ID is the config id.
	ID string `json:"id"`
}
