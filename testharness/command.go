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
// command with the inbound text on stdin and sends its stdout (trailing
// newlines trimmed) as the FINAL reply. A non-zero exit ends the turn with
// FAILURE carrying the tail of stderr. CancelTurn kills the command's whole
// process group.
//
// The command sees the environment of the current process (or Env) plus
// AGENT_CHAT_ID, AGENT_TASK_ID, AGENT_SENDER, AGENT_TURN (the n-th message
// of the chat), AGENT_MESSAGE_ID and AGENT_PLATFORM.
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
	cmd.Env = append(append([]string(nil), env...),
		"AGENT_CHAT_ID="+req.GetChatId(),
		"AGENT_TASK_ID="+req.GetTaskId(),
		"AGENT_SENDER="+req.GetSender().GetId(),
		fmt.Sprintf("AGENT_TURN=%d", t.N),
		"AGENT_MESSAGE_ID="+req.GetMessageId(),
		"AGENT_PLATFORM="+req.GetPlatform(),
	)
	cmd.Stdin = strings.NewReader(req.GetText())
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
