package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/a2a-plugin/a2a-plugin/internal/client"
	"github.com/a2a-plugin/a2a-plugin/internal/config"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

// TokenCommandTimeout bounds one run of a peer's token_command.
const TokenCommandTimeout = 10 * time.Second

// maxTokenBytes bounds a token file and a token command's output.
const maxTokenBytes = 64 << 10

// tokenSource supplies the bearer token of a peer configured with
// token_file or token_command. The token is read on first use, kept, and
// read again only when refresh is asked for: after the peer refused it
// (HTTP 401) or asked for credentials (AUTH_REQUIRED). The token itself is
// never logged nor put into an error.
type tokenSource struct {
	peer    string
	file    string // token_file, or ""
	command string // token_command, or ""
	timeout time.Duration
	log     hclog.Logger

	// now is the toolset's clock.
	now func() time.Time

	mu     sync.Mutex
	token  string
	loaded bool
	// failedAt is when loading last failed; current does not try again
	// for retryLoadAfter (a hanging command would hold every request up).
	failedAt time.Time
}

// retryLoadAfter is how long current waits before trying a failed token
// source again (ensure and refresh always try).
const retryLoadAfter = 30 * time.Second

// newTokenSource returns the token source of p, or nil when p has neither
// token_file nor token_command.
func newTokenSource(p config.Peer, log hclog.Logger, now func() time.Time) *tokenSource {
	file, command := strings.TrimSpace(p.TokenFile), strings.TrimSpace(p.TokenCommand)
	if file == "" && command == "" {
		return nil
	}
	return &tokenSource{peer: p.Name, file: file, command: command, timeout: TokenCommandTimeout, log: log, now: now}
}

// what names the source for messages: "token_file /path" or
// "token_command".
func (s *tokenSource) what() string {
	if s.file != "" {
		return "token_file " + s.file
	}
	return "token_command"
}

// current is the client's Auth.TokenFunc: the token, loading it on first
// use. A failure to load is logged (without the token) and sends no
// Authorization header; the tools call ensure first, so that they can
// report the failure itself.
func (s *tokenSource) current() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.loaded && s.now().Sub(s.failedAt) >= retryLoadAfter {
		ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
		defer cancel()
		if err := s.loadLocked(ctx); err != nil {
			s.log.Warn("could not read the peer's token", "peer", s.peer, "error", err)
		}
	}
	return s.token
}

// ensure loads the token if it was never loaded.
func (s *tokenSource) ensure(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loaded {
		return nil
	}
	return s.loadLocked(ctx)
}

// refresh reads the token again. changed reports whether it differs from
// the one used so far.
func (s *tokenSource) refresh(ctx context.Context) (changed bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.token
	if err := s.loadLocked(ctx); err != nil {
		return false, err
	}
	return s.token != old, nil
}

// loadLocked reads the token from the file or the command. On failure the
// previous token (if any) stays in use.
func (s *tokenSource) loadLocked(ctx context.Context) error {
	var tok string
	var err error
	if s.file != "" {
		tok, err = readTokenFile(s.file)
	} else {
		tok, err = runTokenCommand(ctx, s.command, s.peer, s.timeout)
	}
	if err != nil {
		s.failedAt = s.now()
		return fmt.Errorf("a2a_agents[%q]: %s: %w", s.peer, s.what(), err)
	}
	s.token, s.loaded = tok, true
	return nil
}

// checkToken accepts a bare token: not empty, no spaces or control
// characters (it goes into an HTTP header).
func checkToken(tok string) error {
	if tok == "" {
		return errors.New("the token is empty")
	}
	for i := 0; i < len(tok); i++ {
		if c := tok[i]; c <= ' ' || c == 0x7f {
			return errors.New("the token contains spaces or control characters; give the bare token, without \"Bearer \"")
		}
	}
	return nil
}

// readTokenFile reads a token file: the whole file, surrounding white
// space trimmed.
func readTokenFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("cannot read the token: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxTokenBytes+1))
	if err != nil {
		return "", fmt.Errorf("cannot read the token: %w", err)
	}
	if len(b) > maxTokenBytes {
		return "", fmt.Errorf("the file is larger than %d bytes; it must hold just the token", maxTokenBytes)
	}
	tok := strings.TrimSpace(string(b))
	if err := checkToken(tok); err != nil {
		return "", err
	}
	return tok, nil
}

// runTokenCommand runs command with the system shell and returns what it
// printed on standard output, trimmed. The command sees A2A_TOKEN_PEER (the
// peer's name) beside the plugin's environment. Its standard error is
// quoted (redacted) in the error when it fails.
func runTokenCommand(ctx context.Context, command, peer string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var cmd *exec.Cmd
	if runtime.GOOS == "windows" {
		cmd = exec.CommandContext(ctx, "cmd", "/C", command)
	} else {
		cmd = exec.CommandContext(ctx, "/bin/sh", "-c", command)
	}
	cmd.Env = append(os.Environ(), "A2A_TOKEN_PEER="+peer)
	// A child that keeps the pipes open must not hold the call up.
	cmd.WaitDelay = time.Second
	var stdout, stderr limitedBuffer
	stdout.max, stderr.max = maxTokenBytes+1, 4<<10
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return "", fmt.Errorf("the command did not finish within %s", timeout)
	}
	if err != nil {
		msg := fmt.Sprintf("the command failed (%v)", err)
		if tail := strings.TrimSpace(stderr.String()); tail != "" {
			tail, _ = security.Redact(oneLine(tail, 300))
			msg += ": " + tail
		}
		return "", errors.New(msg)
	}
	if stdout.Len() > maxTokenBytes {
		return "", fmt.Errorf("the command printed more than %d bytes; it must print just the token", maxTokenBytes)
	}
	tok := strings.TrimSpace(stdout.String())
	if err := checkToken(tok); err != nil {
		return "", fmt.Errorf("the command's output: %w", err)
	}
	return tok, nil
}

// limitedBuffer keeps at most max bytes and discards the rest.
type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		if len(p) > room {
			b.Buffer.Write(p[:room])
		} else {
			b.Buffer.Write(p)
		}
	}
	return len(p), nil
}

// ensureToken loads a peer's file- or command-supplied token before a call,
// so that a missing file or a failing command is reported as such.
func (eng *outbound) ensureToken(ctx context.Context, target *resolved) error {
	if target.conf == nil || target.conf.tokens == nil {
		return nil
	}
	return target.conf.tokens.ensure(ctx)
}

// refreshOn401 reports whether err is an HTTP 401 from a peer whose token
// comes from a file or a command, after reading that token again; true
// means the call is worth one retry with the new token.
func (eng *outbound) refreshOn401(ctx context.Context, target *resolved, err error) bool {
	var ce *client.Error
	if target.conf == nil || target.conf.tokens == nil || !errors.As(err, &ce) || ce.HTTPStatus != 401 {
		return false
	}
	changed, rerr := target.conf.tokens.refresh(ctx)
	if rerr != nil {
		eng.log.Warn("the peer refused its token and reading it again failed", "peer", target.name, "error", rerr)
		return false
	}
	if !changed {
		eng.log.Debug("the peer refused its token; the token source still gives the same one", "peer", target.name)
		return false
	}
	eng.log.Info("the peer refused its token; retrying once with the token read again", "peer", target.name, "source", target.conf.tokens.what())
	return true
}
