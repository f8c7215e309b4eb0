package tools

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// routeArgs are the arguments of a2a_route.
type routeArgs struct {
	Message string `json:"message"`
	Send    bool   `json:"send"`
}

// routeChoice is the routing decision.
type routeChoice struct {
	pc     *peerConf
	stage  string // "name", "keywords", "model"
	reason string
}

// stopwords are ignored in keyword matching.
var stopwords = map[string]bool{
	"the": true, "and": true, "for": true, "with": true, "that": true, "this": true, "from": true, "into": true,
	"please": true, "can": true, "you": true, "your": true, "what": true, "which": true, "about": true, "some": true,
	"would": true, "could": true, "should": true, "will": true, "are": true, "was": true, "were": true, "have": true,
	"has": true, "had": true, "not": true, "but": true, "all": true, "any": true, "our": true, "out": true, "how": true,
	"why": true, "who": true, "when": true, "where": true, "them": true, "they": true, "their": true, "its": true,
	"agent": true, "agents": true, "skill": true, "skills": true, "task": true,
}

var wordRe = regexp.MustCompile(`[\p{L}\p{N}]+`)

// words returns the lowercase words of s of 3 or more characters, minus
// stopwords.
func words(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range wordRe.FindAllString(strings.ToLower(s), -1) {
		if len(w) >= 3 && !stopwords[w] {
			out[w] = true
		}
	}
	return out
}

// mentions reports whether text names phrase as a whole word sequence.
func mentions(text, phrase string) bool {
	phrase = strings.TrimSpace(phrase)
	if len(phrase) < 3 {
		return false
	}
	re, err := regexp.Compile(`(?i)(^|[^\p{L}\p{N}])` + regexp.QuoteMeta(phrase) + `($|[^\p{L}\p{N}])`)
	return err == nil && re.MatchString(text)
}

func (t *Toolset) route(ctx context.Context, ci *callInfo) *result {
	var a routeArgs
	if err := decodeArgs(ToolRoute, ci.args, &a, "message", "send"); err != nil {
		return errorResult("%v", err)
	}
	if strings.TrimSpace(a.Message) == "" {
		return errorResult("a2a_route: argument \"message\" is required: the task to route")
	}
	if len(t.peers.all) == 0 {
		return errorResult("a2a_route: no A2A peers are configured (a2a_agents is empty), so there is nothing to route to")
	}
	var avail []candidate
	var skipped []string
	for _, c := range t.cards(ctx, ci.rec.org) {
		if c.err != nil {
			skipped = append(skipped, fmt.Sprintf("%s (card unavailable: %s)", c.pc.Name, kindOrErr(c.err)))
			continue
		}
		avail = append(avail, c)
	}
	if len(avail) == 0 {
		return errorResult("a2a_route: no peer's agent card could be fetched: %s", strings.Join(skipped, "; "))
	}
	choice, considered := t.choose(ctx, a.Message, avail)

	var b strings.Builder
	if choice == nil {
		fmt.Fprintf(&b, "No peer clearly fits this message. %s\n", considered)
		b.WriteString("Peers and their skills:\n")
		for _, c := range avail {
			fmt.Fprintf(&b, "- %s: %s\n", c.pc.Name, peerLine(strings.Join(skillLabels(c.info.Card), "; "), 500))
		}
		b.WriteString("Pick one yourself and use a2a_call, or rephrase the task with the skill you need.")
		if len(skipped) > 0 {
			fmt.Fprintf(&b, "\nNot considered: %s", strings.Join(skipped, "; "))
		}
		return textResult(b.String())
	}
	fmt.Fprintf(&b, "Route: %s (matched by %s: %s)\n", choice.pc.Name, choice.stage, choice.reason)
	if len(skipped) > 0 {
		fmt.Fprintf(&b, "Not considered: %s\n", strings.Join(skipped, "; "))
	}
	if !a.Send {
		fmt.Fprintf(&b, "To send it: a2a_call agent=%q message=\"…\" (or a2a_route with send=true).", choice.pc.Name)
		return textResult(b.String())
	}
	target := t.peers.target(choice.pc, &ci.rec)
	prep, res := t.prepareMessage(ci.rec.org, ToolRoute, a.Message, "", "", nil, nil)
	if res != nil {
		return res
	}
	if res := t.admitCalls(ci.rec.org, ToolRoute, 1); res != nil {
		return res
	}
	o := t.send(ctx, target, prep, true, t.defaultWait(target), ci.report, nil)
	r := t.callResult(target, prep, o)
	r.Content = b.String() + r.Content
	return r
}

// skillLabels lists a card's skills with their tags.
func skillLabels(c *a2a.AgentCard) []string {
	out := make([]string, 0, len(c.Skills))
	for _, s := range c.Skills {
		l := s.ID
		if s.Name != "" && !strings.EqualFold(s.Name, s.ID) {
			l += " (" + s.Name + ")"
		}
		if len(s.Tags) > 0 {
			l += " [" + strings.Join(s.Tags, ", ") + "]"
		}
		out = append(out, l)
	}
	return out
}

// choose runs the three routing stages. It returns nil when no stage
// decided, with a sentence on what was tried.
func (t *Toolset) choose(ctx context.Context, msg string, avail []candidate) (*routeChoice, string) {
	// Stage 1: a peer name, skill id or skill name mentioned in the
	// message. A single peer must be named; several → next stage.
	var named []*routeChoice
	for _, c := range avail {
		if mentions(msg, c.pc.Name) {
			named = append(named, &routeChoice{pc: c.pc, stage: "name", reason: fmt.Sprintf("the message names the peer %q", c.pc.Name)})
			continue
		}
		for _, s := range c.info.Card.Skills {
			if mentions(msg, s.ID) || (s.Name != "" && mentions(msg, s.Name)) {
				named = append(named, &routeChoice{pc: c.pc, stage: "name", reason: fmt.Sprintf("the message names its skill %q", peerLine(s.Name, 100))})
				break
			}
		}
	}
	if len(named) == 1 {
		return named[0], ""
	}
	// Stage 2: keyword overlap with skill ids, names and tags (weight 2)
	// and descriptions and examples (weight 1).
	mw := words(msg)
	best, second := -1, 0
	var bestC *candidate
	var bestWords []string
	for i := range avail {
		c := &avail[i]
		strong, weak := map[string]bool{}, map[string]bool{}
		for _, s := range c.info.Card.Skills {
			for w := range words(s.ID + " " + s.Name + " " + strings.Join(s.Tags, " ")) {
				strong[w] = true
			}
			for w := range words(s.Description + " " + strings.Join(s.Examples, " ")) {
				weak[w] = true
			}
		}
		score := 0
		var hit []string
		for w := range mw {
			switch {
			case strong[w]:
				score += 2
				hit = append(hit, w)
			case weak[w]:
				score++
				hit = append(hit, w)
			}
		}
		if score > best {
			best, second, bestC, bestWords = score, best, c, hit
		} else if score > second {
			second = score
		}
	}
	if best > 0 && best > second {
		return &routeChoice{pc: bestC.pc, stage: "keywords", reason: fmt.Sprintf("its skills share the words %s (score %d, next best %d)",
			quoteAll(sortedCopy(bestWords)), best, max(second, 0))}, ""
	}
	tried := "No single peer or skill is named in the message and no skill keyword overlap decides."
	// Stage 3: ask the host's model, when it offers a one-shot completion.
	if t.deps.Host == nil {
		return nil, tried
	}
	var prompt strings.Builder
	prompt.WriteString("Task:\n" + oneLine(msg, 2000) + "\n\nCandidate agents:\n")
	for _, c := range avail {
		fmt.Fprintf(&prompt, "- %s: %s. Skills: %s\n", c.pc.Name, peerLine(c.info.Card.Description, 300), peerLine(strings.Join(skillLabels(c.info.Card), "; "), 1000))
	}
	prompt.WriteString("\nAnswer with the name of the single best agent for the task, exactly as listed, or NONE if no agent fits. Answer with the name only.")
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := t.deps.Host.Complete(cctx, &pb.CompleteRequest{
		System:    "You route tasks to the best-suited agent. You answer with one agent name or NONE.",
		Prompt:    prompt.String(),
		MaxTokens: 32,
	})
	if err != nil {
		if errors.Is(err, plugin.ErrUnimplemented) {
			return nil, tried + " The host offers no model for semantic routing."
		}
		return nil, tried + fmt.Sprintf(" Asking the host's model failed: %v.", err)
	}
	answer := strings.TrimSpace(resp.GetText())
	for _, c := range avail {
		if strings.EqualFold(strings.Trim(answer, " .\"'`*"), c.pc.Name) {
			return &routeChoice{pc: c.pc, stage: "model", reason: "the host's model chose it from the candidates' cards"}, ""
		}
	}
	for _, c := range avail { // tolerate a sentence around the name
		if mentions(answer, c.pc.Name) {
			return &routeChoice{pc: c.pc, stage: "model", reason: fmt.Sprintf("the host's model answered %q", oneLine(answer, 80))}, ""
		}
	}
	return nil, tried + fmt.Sprintf(" The host's model found no fit (it answered %q).", oneLine(answer, 80))
}

func sortedCopy(ss []string) []string {
	out := append([]string(nil), ss...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
