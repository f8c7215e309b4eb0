package testharness

import (
	"regexp"
	"strconv"
	"strings"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// holds reports whether the condition holds for a field value; present is
// false when the field does not exist (a missing metadata key), which never
// matches.
func (c *Condition) holds(value string, present bool) bool {
	if !present {
		return false
	}
	switch c.Op {
	case OpEquals:
		if c.Field == "trust_tier" {
			want, _ := trustTierByName(c.Value)
			return trustTierName(want) == value
		}
		return value == c.Value
	case OpPrefix:
		return strings.HasPrefix(value, c.Value)
	case OpContains:
		return strings.Contains(value, c.Value)
	case OpRegexp:
		if c.re != nil {
			return c.re.MatchString(value)
		}
		ok, err := regexp.MatchString(c.Value, value)
		return err == nil && ok
	}
	return false
}

// messageField returns the value of a condition field of an inbound message.
func messageField(req *pb.HandleMessageRequest, field string) (string, bool) {
	switch field {
	case "text":
		return SenderText(req), true
	case "framed_text":
		return req.GetText(), true
	case "parts_text":
		return PartsText(req), true
	case "message_id":
		return req.GetMessageId(), true
	case "sender":
		return req.GetSender().GetId(), true
	case "sender_name":
		return req.GetSender().GetDisplayName(), true
	case "trust_tier":
		return trustTierName(req.GetTrustTier()), true
	case "continuation":
		return strconv.FormatBool(req.GetContinuation()), true
	case "unattended":
		return strconv.FormatBool(req.GetUnattended()), true
	case "chat_id":
		return req.GetChatId(), true
	case "task_id":
		return req.GetTaskId(), true
	case "platform":
		return req.GetPlatform(), true
	}
	if key, ok := strings.CutPrefix(field, "metadata."); ok {
		return metadataLookup(req.GetMetadata(), key)
	}
	return "", false
}

// Matches reports whether every condition of the rule holds for req.
func (r *Rule) Matches(req *pb.HandleMessageRequest) bool {
	for i := range r.Match {
		c := &r.Match[i]
		if !c.holds(messageField(req, c.Field)) {
			return false
		}
	}
	return true
}

// Select returns the rule that plays for req: the first matching rule, else
// the default rule, else nil.
func (s *Scenario) Select(req *pb.HandleMessageRequest) *Rule {
	for i := range s.Rules {
		if s.Rules[i].Matches(req) {
			return &s.Rules[i]
		}
	}
	return s.Default
}

// matches reports whether every condition holds for a completion request.
func (c *CompletionRule) matches(req *pb.CompleteRequest) bool {
	for i := range c.Match {
		cond := &c.Match[i]
		var v string
		switch cond.Field {
		case "prompt":
			v = req.GetPrompt()
		case "system":
			v = req.GetSystem()
		}
		if !cond.holds(v, true) {
			return false
		}
	}
	return true
}

// SenderText is the sender's own words: the text parts of the message
// joined by newlines, without the framing a platform may add to
// HandleMessageRequest.text (the A2A plugin wraps an untrusted sender's
// text in an untrusted-input frame, meant for a model). A request that
// carries no parts at all (a platform that only fills text) gives its text.
// Scenario matchers and templates named text, the echo action and the
// standard input of a command agent all use it.
func SenderText(req *pb.HandleMessageRequest) string {
	if len(req.GetParts()) == 0 {
		return req.GetText()
	}
	return PartsText(req)
}

// PartsText joins the text parts of an inbound message (not the framed
// Text the plugin adds) with newlines: the sender's own words, which
// scenario rules match (parts_text).
func PartsText(req *pb.HandleMessageRequest) string {
	var texts []string
	for _, p := range req.GetParts() {
		if t, ok := p.GetContent().(*pb.Part_Text); ok {
			texts = append(texts, t.Text)
		}
	}
	return strings.Join(texts, "\n")
}
