package testharness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// CommandBehavior is an agent backed by a shell command: each turn runs the
// command with the sender's own words on stdin (SenderText: the message's
// text parts, not the platform's framed text) and sends its stdout
// (trailing newlines trimmed) as the FINAL reply; a reply starting with
// "[INPUT_REQUIRED]" asks the sender a question instead (the A2A plugin
// turns it into INPUT_REQUIRED), and the answer comes as the next turn
// with AGENT_CONTINUATION=true. A non-zero exit ends the turn with FAILURE
// carrying the tail of stderr. CancelTurn kills the command's whole
// process group.
//
// The command sees the environment of the current process (or Env) plus
// the variables of CommandEnv: who sent the message, its trust tier and
// the platform's framed text.
type CommandBehavior struct {
	// Command is run with Shell -c.
	Command string
	// Shell defaults to /bin/sh.
	Shell string
	// Dir is the working directory; empty means the current one.
	Dir string
	// Env replaces the inherited environment when non-nil.
	Env []string
	// Timeout bounds one turn; zero means no limit beyond cancellation.
	Timeout time.Duration
	// StderrTail is how many bytes of stderr a failure carries; default 2048.
	StderrTail int
}

// NewCommandBehavior returns a CommandBehavior running command with /bin/sh.
func NewCommandBehavior(command string) *CommandBehavior {
	return &CommandBehavior{Command: command}
}

// Validate checks that there is a command.
func (c *CommandBehavior) Validate() error {
	if strings.TrimSpace(c.Command) == "" {
		return errors.New("command agent: the command is empty")
	}
	return nil
}

// Play runs the command for one turn.
func (c *CommandBehavior) Play(ctx context.Context, t *Turn) error {
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	shell := c.Shell
	if shell == "" {
		shell = "/bin/sh"
	}
	req := t.Request
	cmd := exec.CommandContext(ctx, shell, "-c", c.Command)
	cmd.Dir = c.Dir
	env := c.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(append([]string(nil), env...), CommandEnv(req, t.N)...)
	cmd.Stdin = strings.NewReader(SenderText(req))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	killGroup(cmd)
	// Pipes held open by orphaned grandchildren must not keep Wait waiting.
	cmd.WaitDelay = 2 * time.Second

	err := cmd.Run()
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && c.Timeout > 0 {
			return Failed(fmt.Sprintf("command timed out after %s", c.Timeout))
		}
		return ctx.Err()
	}
	if err != nil {
		tail := c.StderrTail
		if tail <= 0 {
			tail = 2048
		}
		msg := strings.TrimSpace(lastBytes(stderr.String(), tail))
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			if msg == "" {
				return Failed(fmt.Sprintf("command exited with status %d", exitErr.ExitCode()))
			}
			return Failed(fmt.Sprintf("command exited with status %d: %s", exitErr.ExitCode(), msg))
		}
		return Failed(fmt.Sprintf("command failed: %v", err))
	}
	_, err = t.EndWith(ctx, &pb.SendRequest{Kind: pb.SendKind_SEND_KIND_FINAL, Text: strings.TrimRight(stdout.String(), "\r\n")})
	return err
}

// MaxFramedTextEnv bounds AGENT_FRAMED_TEXT: Linux refuses to start a
// program with one environment string over 128 KiB. A longer framed text
// is cut (AGENT_FRAMED_TEXT_TRUNCATED=true); the sender's words on stdin
// are never cut.
const MaxFramedTextEnv = 64 << 10

// CommandEnv is what a command agent learns about a turn besides its
// standard input, as NAME=value strings:
//
//	AGENT_CHAT_ID       the conversation (for A2A the contextId)
//	AGENT_TASK_ID       the task the turn works on
//	AGENT_MESSAGE_ID    the sender's message id
//	AGENT_TURN          the n-th message of this conversation, from 1
//	AGENT_PLATFORM      the platform plugin that delivered it ("a2a")
//	AGENT_SENDER        the sender's identity (e.g. local:127.0.0.1, peer:alice)
//	AGENT_SENDER_NAME   the sender's display name, when the platform gives one
//	AGENT_TRUST_TIER    public, trusted, local or unspecified
//	AGENT_CONTINUATION  true when the message answers the agent's question
//	AGENT_UNATTENDED    true when nobody watches the turn (approvals must fail closed)
//	AGENT_FRAMED_TEXT   HandleMessageRequest.text as the platform sent it: for an
//	                    untrusted sender the A2A plugin wraps the words in an
//	                    untrusted-input frame, which is what a model should see
func CommandEnv(req *pb.HandleMessageRequest, turn int) []string {
	framed, cut := req.GetText(), false
	if len(framed) > MaxFramedTextEnv {
		framed, cut = strings.ToValidUTF8(framed[:MaxFramedTextEnv], ""), true
	}
	env := []string{
		"AGENT_CHAT_ID=" + req.GetChatId(),
		"AGENT_TASK_ID=" + req.GetTaskId(),
		"AGENT_MESSAGE_ID=" + req.GetMessageId(),
		fmt.Sprintf("AGENT_TURN=%d", turn),
		"AGENT_PLATFORM=" + req.GetPlatform(),
		"AGENT_SENDER=" + req.GetSender().GetId(),
		"AGENT_SENDER_NAME=" + req.GetSender().GetDisplayName(),
		"AGENT_TRUST_TIER=" + trustTierName(req.GetTrustTier()),
		fmt.Sprintf("AGENT_CONTINUATION=%t", req.GetContinuation()),
		fmt.Sprintf("AGENT_UNATTENDED=%t", req.GetUnattended()),
		"AGENT_FRAMED_TEXT=" + strings.ReplaceAll(framed, "\x00", ""),
	}
	if cut {
		env = append(env, "AGENT_FRAMED_TEXT_TRUNCATED=true")
	}
	return env
}

func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	// Do not start in the middle of a UTF-8 sequence.
	for len(s) > 0 && s[0]&0xC0 == 0x80 {
		s = s[1:]
	}
	return "…" + s
}
