package cascade

import (
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

// maxProblems bounds the problems a task's metadata lists: past them it
// says how many more there are (a task may delegate without limit, with
// max_calls_per_task 0, and every cancel may fail).
const maxProblems = 20

// Summary is how canceling a task's delegations went: what the task's
// metadata says under security.MetaCancelCascade.
type Summary struct {
	// ChainID is the delegation chain the cancels carried.
	ChainID string
	// Cause is the task's final state that started the cancels.
	Cause string
	// Delegated counts the remote tasks to cancel; the other counts split
	// it.
	Delegated, Canceled, AlreadyFinished, Pending, Failed int
	// Problems are the remote tasks not canceled yet (Pending with an
	// error) or at all (Failed), in the order they were delegated: the
	// first maxProblems of them; MoreProblems counts the others.
	Problems     []Problem
	MoreProblems int
}

// Problem is one remote task whose cancel did not (yet) succeed.
type Problem struct {
	// Agent is the configured peer name, or the URL called.
	Agent  string
	TaskID string
	// Status is "retrying" or "failed".
	Status   string
	Attempts int
	Error    string
	// NextAttempt is when a retrying cancel is tried again.
	NextAttempt time.Time
}

// Summarize sums up a task's delegations for its metadata; nil when none
// of them is being or was canceled (the task completed, or it delegated
// nothing).
func Summarize(ds []store.Delegation) *Summary {
	var s Summary
	for _, d := range ds {
		switch d.State {
		case store.DelegationOpen, store.DelegationKept:
			continue
		case store.DelegationCanceled:
			s.Canceled++
		case store.DelegationFinished:
			s.AlreadyFinished++
		case store.DelegationCancel:
			s.Pending++
			if d.LastError != "" {
				s.problem(Problem{Agent: d.Peer, TaskID: d.RemoteTaskID, Status: "retrying",
					Attempts: d.Attempts, Error: d.LastError, NextAttempt: d.NextTry})
			}
		case store.DelegationFailed:
			s.Failed++
			s.problem(Problem{Agent: d.Peer, TaskID: d.RemoteTaskID, Status: "failed",
				Attempts: d.Attempts, Error: d.LastError})
		}
		s.Delegated++
		if s.ChainID == "" {
			s.ChainID, s.Cause = d.ChainID, d.Cause
		}
	}
	if s.Delegated == 0 {
		return nil
	}
	return &s
}

// problem adds p to the problems, or counts it past maxProblems.
func (s *Summary) problem(p Problem) {
	if len(s.Problems) >= maxProblems {
		s.MoreProblems++
		return
	}
	s.Problems = append(s.Problems, p)
}

// metadata is s as the JSON object the task's metadata holds (camelCase
// keys, times in RFC 3339 UTC with milliseconds).
func (s *Summary) metadata() map[string]any {
	md := map[string]any{
		"cause":           s.Cause,
		"delegated":       s.Delegated,
		"canceled":        s.Canceled,
		"alreadyFinished": s.AlreadyFinished,
		"pending":         s.Pending,
		"failed":          s.Failed,
	}
	if s.ChainID != "" {
		md["chainId"] = s.ChainID
	}
	if len(s.Problems) > 0 {
		ps := make([]any, len(s.Problems))
		for i, p := range s.Problems {
			m := map[string]any{"agent": p.Agent, "taskId": p.TaskID, "status": p.Status, "attempts": p.Attempts, "error": p.Error}
			if !p.NextAttempt.IsZero() {
				m["nextAttempt"] = p.NextAttempt.UTC().Format("2006-01-02T15:04:05.000Z")
			}
			ps[i] = m
		}
		md["problems"] = ps
	}
	if s.MoreProblems > 0 {
		md["moreProblems"] = s.MoreProblems
	}
	return md
}
