package a2a

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// The Validate methods check REQUIRED fields and value ranges. Each
// returns nil or an *Error with code -32602 (InvalidParams) whose message
// names the first offending field and says how to fix it, and whose data
// carries a google.rpc.BadRequest listing every violation found.

// violations collects field violations during validation.
type violations []FieldViolation

func (v *violations) add(field, description string) {
	*v = append(*v, FieldViolation{Field: field, Description: description})
}

// err returns nil or the -32602 error for the collected violations. It
// returns a literal nil so that a nil result compares equal to nil as an
// error.
func (v violations) err() error {
	if len(v) == 0 {
		return nil
	}
	return invalidParams(v)
}

// Validate checks that exactly one of text, raw, url and data is set and
// that the set one is usable.
func (p *Part) Validate() error {
	var v violations
	p.validate(&v, "part")
	return v.err()
}

func (p *Part) validate(v *violations, path string) {
	n := 0
	if p.Text != nil {
		n++
	}
	if p.Raw != nil {
		n++
	}
	if p.URL != nil {
		n++
	}
	if p.Data != nil {
		n++
	}
	switch {
	case n == 0:
		v.add(path, "must have exactly one of text, raw, url or data; this part has none")
		return
	case n > 1:
		v.add(path, "must have exactly one of text, raw, url or data; send one part per kind of content")
		return
	}
	switch {
	case p.Raw != nil && len(p.Raw) == 0:
		v.add(path+".raw", "must not be empty: send the file's bytes as base64, or drop the part")
	case p.URL != nil:
		if u, err := url.Parse(*p.URL); err != nil || u.Scheme == "" {
			v.add(path+".url", fmt.Sprintf("must be an absolute URL such as https://example.com/file.pdf, got %q", *p.URL))
		}
	}
}

// Validate checks messageId, role and parts (at least one, each valid).
func (m *Message) Validate() error {
	var v violations
	m.validate(&v, "message")
	return v.err()
}

func (m *Message) validate(v *violations, path string) {
	if m.MessageID == "" {
		v.add(path+".messageId", "is required: set a unique id for the message, such as a UUID")
	}
	if m.Role != RoleUser && m.Role != RoleAgent {
		v.add(path+".role", fmt.Sprintf("must be ROLE_USER or ROLE_AGENT, got %s", m.Role))
	}
	validateParts(v, path+".parts", m.Parts)
}

// validateParts checks a REQUIRED parts list.
func validateParts(v *violations, path string, parts []Part) {
	if len(parts) == 0 {
		v.add(path, "must contain at least one part, e.g. {\"text\": \"hello\"}")
		return
	}
	for i := range parts {
		parts[i].validate(v, path+"["+strconv.Itoa(i)+"]")
	}
}

// Validate checks artifactId and parts.
func (a *Artifact) Validate() error {
	var v violations
	a.validate(&v, "artifact")
	return v.err()
}

func (a *Artifact) validate(v *violations, path string) {
	if a.ArtifactID == "" {
		v.add(path+".artifactId", "is required: set an id unique within the task")
	}
	validateParts(v, path+".parts", a.Parts)
}

// Validate checks the task id, its status and every history message and
// artifact; clients use it on tasks received from agents.
func (t *Task) Validate() error {
	var v violations
	t.validate(&v, "task")
	return v.err()
}

func (t *Task) validate(v *violations, path string) {
	if t.ID == "" {
		v.add(path+".id", "is required")
	}
	t.Status.validate(v, path+".status")
	for i := range t.History {
		t.History[i].validate(v, path+".history["+strconv.Itoa(i)+"]")
	}
	for i := range t.Artifacts {
		t.Artifacts[i].validate(v, path+".artifacts["+strconv.Itoa(i)+"]")
	}
}

func (s *TaskStatus) validate(v *violations, path string) {
	if s.State == "" || s.State == TaskStateUnspecified || !s.State.Known() {
		v.add(path+".state", fmt.Sprintf("must be a defined task state such as TASK_STATE_WORKING, got %s", s.State))
	}
	if s.Message != nil {
		s.Message.validate(v, path+".message")
	}
}

// Validate checks that exactly one field is set and that it is valid.
func (r *StreamResponse) Validate() error {
	var v violations
	switch r.Kind() {
	case "":
		v.add("", "a stream response must carry exactly one of task, message, statusUpdate or artifactUpdate")
	case "task":
		r.Task.validate(&v, "task")
	case "message":
		r.Message.validate(&v, "message")
	case "statusUpdate":
		e := r.StatusUpdate
		validateEventIDs(&v, "statusUpdate", e.TaskID, e.ContextID)
		e.Status.validate(&v, "statusUpdate.status")
	case "artifactUpdate":
		e := r.ArtifactUpdate
		validateEventIDs(&v, "artifactUpdate", e.TaskID, e.ContextID)
		e.Artifact.validate(&v, "artifactUpdate.artifact")
	}
	return v.err()
}

func validateEventIDs(v *violations, path, taskID, contextID string) {
	if taskID == "" {
		v.add(path+".taskId", "is required")
	}
	if contextID == "" {
		v.add(path+".contextId", "is required")
	}
}

// Validate checks that exactly one of task and message is set and valid.
func (r *SendMessageResponse) Validate() error {
	var v violations
	switch {
	case (r.Task == nil) == (r.Message == nil):
		v.add("", "a send message response must carry exactly one of task or message")
	case r.Task != nil:
		r.Task.validate(&v, "task")
	default:
		r.Message.validate(&v, "message")
	}
	return v.err()
}

// Validate checks the message and the configuration.
func (r *SendMessageRequest) Validate() error {
	var v violations
	r.Message.validate(&v, "message")
	if c := r.Configuration; c != nil {
		validateHistoryLength(&v, "configuration.historyLength", c.HistoryLength)
		if c.TaskPushNotificationConfig != nil {
			c.TaskPushNotificationConfig.validate(&v, "configuration.taskPushNotificationConfig", false)
		}
	}
	return v.err()
}

func validateHistoryLength(v *violations, path string, n *int32) {
	if n != nil && *n < 0 {
		v.add(path, fmt.Sprintf("must be 0 or more (0 returns no history; omit it for the server default), got %d", *n))
	}
}

func validateID(v *violations, path, id, what string) {
	if id == "" {
		v.add(path, "is required: give the "+what)
	}
}

// Validate checks the task id and historyLength.
func (r *GetTaskRequest) Validate() error {
	var v violations
	validateID(&v, "id", r.ID, "task id")
	validateHistoryLength(&v, "historyLength", r.HistoryLength)
	return v.err()
}

// Validate checks pageSize (1–100; 0 is taken as the server default),
// historyLength and status.
func (r *ListTasksRequest) Validate() error {
	var v violations
	if p := r.PageSize; p != nil && (*p < 0 || *p > 100) {
		v.add("pageSize", fmt.Sprintf("must be between 1 and 100 (omit it for the default of 50), got %d", *p))
	}
	validateHistoryLength(&v, "historyLength", r.HistoryLength)
	if !r.Status.Known() {
		v.add("status", fmt.Sprintf("must be a task state such as TASK_STATE_WORKING, got %s", r.Status))
	}
	return v.err()
}

// Validate checks the task id.
func (r *CancelTaskRequest) Validate() error {
	var v violations
	validateID(&v, "id", r.ID, "task id")
	return v.err()
}

// Validate checks the task id.
func (r *SubscribeToTaskRequest) Validate() error {
	var v violations
	validateID(&v, "id", r.ID, "task id")
	return v.err()
}

// Validate checks a config as the params of
// CreateTaskPushNotificationConfig: taskId, url and authentication.
func (c *TaskPushNotificationConfig) Validate() error {
	var v violations
	c.validate(&v, "", true)
	return v.err()
}

func (c *TaskPushNotificationConfig) validate(v *violations, path string, needTask bool) {
	prefix := path
	if prefix != "" {
		prefix += "."
	}
	if needTask {
		validateID(v, prefix+"taskId", c.TaskID, "id of the task to watch")
	}
	if c.URL == "" {
		v.add(prefix+"url", "is required: give the webhook URL, e.g. https://client.example/a2a/webhook")
	} else if u, err := url.Parse(c.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.add(prefix+"url", fmt.Sprintf("must be an absolute http or https URL, got %q", c.URL))
	}
	if c.Authentication != nil && c.Authentication.Scheme == "" {
		v.add(prefix+"authentication.scheme", "is required when authentication is given: use an HTTP scheme such as Bearer")
	}
}

// Validate checks taskId and id.
func (r *GetTaskPushNotificationConfigRequest) Validate() error {
	var v violations
	validateID(&v, "taskId", r.TaskID, "task id")
	validateID(&v, "id", r.ID, "push notification config id")
	return v.err()
}

// Validate checks taskId and pageSize.
func (r *ListTaskPushNotificationConfigsRequest) Validate() error {
	var v violations
	validateID(&v, "taskId", r.TaskID, "task id")
	if r.PageSize < 0 {
		v.add("pageSize", fmt.Sprintf("must be 0 (server default) or more, got %d", r.PageSize))
	}
	return v.err()
}

// Validate checks taskId and id.
func (r *DeleteTaskPushNotificationConfigRequest) Validate() error {
	var v violations
	validateID(&v, "taskId", r.TaskID, "task id")
	validateID(&v, "id", r.ID, "push notification config id")
	return v.err()
}

// Validate accepts every request: all fields are optional.
func (r *GetExtendedAgentCardRequest) Validate() error { return nil }

// Validate checks the REQUIRED fields of a card this agent publishes:
// name, description, version, at least one interface (absolute URL —
// for GRPC the address gRPC clients dial, host:port — binding, version), input and output modes, at least one skill (id,
// name, description, a tag), one kind per security scheme and requirements
// that name declared schemes.
func (c *AgentCard) Validate() error {
	var v violations
	for _, f := range [...]struct{ name, value string }{
		{"name", c.Name}, {"description", c.Description}, {"version", c.Version},
	} {
		if f.value == "" {
			v.add(f.name, "is required")
		}
	}
	if len(c.SupportedInterfaces) == 0 {
		v.add("supportedInterfaces", "must list at least one interface, e.g. {url, protocolBinding: JSONRPC, protocolVersion: 1.0}")
	}
	for i, in := range c.SupportedInterfaces {
		p := "supportedInterfaces[" + strconv.Itoa(i) + "]"
		switch u, err := url.Parse(in.URL); {
		case strings.EqualFold(in.ProtocolBinding, BindingGRPC):
			if !grpcTarget(in.URL) {
				v.add(p+".url", fmt.Sprintf("must be the gRPC address a client dials, host:port (or dns:///host:port, or an absolute URL), got %q", in.URL))
			}
		case err != nil || u.Scheme == "" || u.Host == "":
			v.add(p+".url", fmt.Sprintf("must be an absolute URL, got %q", in.URL))
		}
		if in.ProtocolBinding == "" {
			v.add(p+".protocolBinding", "is required: JSONRPC, HTTP+JSON or GRPC")
		}
		if in.ProtocolVersion == "" {
			v.add(p+".protocolVersion", "is required: 1.0 or 0.3")
		}
	}
	if len(c.DefaultInputModes) == 0 {
		v.add("defaultInputModes", "must list at least one media type, e.g. text/plain")
	}
	if len(c.DefaultOutputModes) == 0 {
		v.add("defaultOutputModes", "must list at least one media type, e.g. text/plain")
	}
	if len(c.Skills) == 0 {
		v.add("skills", "must list at least one skill")
	}
	for i, s := range c.Skills {
		p := "skills[" + strconv.Itoa(i) + "]"
		if s.ID == "" {
			v.add(p+".id", "is required")
		}
		if s.Name == "" {
			v.add(p+".name", "is required")
		}
		if s.Description == "" {
			v.add(p+".description", "is required")
		}
		if len(s.Tags) == 0 {
			v.add(p+".tags", "must contain at least one tag")
		}
		c.validateRequirements(&v, p+".securityRequirements", s.SecurityRequirements)
	}
	for name, s := range c.SecuritySchemes {
		n := 0
		for _, set := range [...]bool{s.APIKey != nil, s.HTTPAuth != nil, s.OAuth2 != nil, s.OpenIDConnect != nil, s.MTLS != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			v.add("securitySchemes."+name, "must set exactly one scheme kind (apiKeySecurityScheme, httpAuthSecurityScheme, oauth2SecurityScheme, openIdConnectSecurityScheme or mtlsSecurityScheme)")
		}
	}
	c.validateRequirements(&v, "securityRequirements", c.SecurityRequirements)
	return v.err()
}

func (c *AgentCard) validateRequirements(v *violations, path string, reqs []SecurityRequirement) {
	for i, r := range reqs {
		for name := range r.Schemes {
			if _, ok := c.SecuritySchemes[name]; !ok {
				v.add(path+"["+strconv.Itoa(i)+"].schemes."+name, "names a scheme that securitySchemes does not declare")
			}
		}
	}
}

// grpcTarget reports whether s is an address a gRPC client dials:
// host:port, dns:///host:port, or an absolute URL with a host.
func grpcTarget(s string) bool {
	if rest, ok := strings.CutPrefix(s, "dns:///"); ok {
		s = rest
	} else if u, err := url.Parse(s); err == nil && u.Scheme != "" && u.Host != "" {
		return true
	}
	host, port, err := net.SplitHostPort(s)
	return err == nil && host != "" && port != "" && !strings.ContainsAny(host, "/?#@")
}
