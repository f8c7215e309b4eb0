package bridge

import (
	"context"
	"sync"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// Redacting streamed artifacts. A host that streams model output sends an
// artifact in chunks (append, last_chunk); a secret the model wrote can
// fall across two chunks, where redacting each chunk alone finds neither
// half. So the text of an artifact stream goes through one
// security.StreamRedactor per task and artifact: each chunk gives out
// its text redacted, less only what may be the beginning of a credential
// (never more than security.DefaultStreamHold), which is held until the
// next chunk, the last chunk, or the end of the turn (a final answer, a
// question, an authentication request, ProcessingComplete), whichever
// comes first. Joined, the chunks a peer receives (in the stream, in
// GetTask's artifact) are the whole text redacted, in order, nothing lost
// (but the local part of an e-mail address cut before its "@").
//
// What the peer sees: the same artifact, with the same chunk boundaries
// for prose; a boundary that cut a credential moves past it, and a chunk
// whose text is held entirely is not sent on its own (its name,
// description and metadata travel with the next one). An artifact sent in
// one piece should carry last_chunk: one that does not is read as the
// first chunk of a stream, and what it holds follows with the next chunk
// or at the end of the turn. A file or data part in a stream releases the
// text before it (a secret is not looked for across it).

// maxArtifactStreams bounds the artifact streams the bridge follows; past
// it the oldest are released (given out) and forgotten.
const maxArtifactStreams = 4096

type streamKey struct{ task, artifact string }

// artifactStream is one artifact being streamed.
type artifactStream struct {
	red *security.StreamRedactor
	// sent: a chunk of it reached the task, so later ones append.
	sent bool
	// What a held chunk carried that the next one given out must carry.
	name, description string
	metadata          map[string]any
	seq               uint64
}

// artifactStreams are the streams in progress, by task and artifact.
type artifactStreams struct {
	mu   sync.Mutex
	seq  uint64
	byID map[streamKey]*artifactStream
}

// streamedArtifact turns an ARTIFACT send into the update to apply, its
// text redacted across chunks; ok is false when everything it carried is
// held back (nothing to apply yet). Other updates, of streams forgotten
// to make room, come back in released.
func (b *Bridge) streamedArtifact(taskID string, pa *pb.Artifact, art *a2a.Artifact, counted func(int)) (u tasks.Update, ok bool, released []taskUpdate) {
	key := streamKey{taskID, pa.GetArtifactId()}
	s := &b.streams
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byID == nil {
		s.byID = map[streamKey]*artifactStream{}
	}
	st := s.byID[key]
	if !pa.GetAppend() || st == nil {
		if pa.GetLastChunk() && !pa.GetAppend() {
			// A whole artifact: nothing to carry across.
			delete(s.byID, key)
			for i, p := range art.Parts {
				if p.Kind() == a2a.PartText {
					text, n := security.Redact(*p.Text)
					counted(n)
					art.Parts[i].Text = &text
				}
			}
			return tasks.Update{Kind: tasks.UpdateArtifact, Artifact: art, LastChunk: true}, true, nil
		}
		if st == nil && len(s.byID) >= maxArtifactStreams {
			released = b.releaseOldestLocked(len(s.byID) / 8)
		}
		// A new stream (append=false), or the continuation of one the
		// bridge did not see begin: its chunks append as the host said.
		st = &artifactStream{red: security.NewStreamRedactor(0), sent: pa.GetAppend()}
		s.byID[key] = st
	}
	s.seq++
	st.seq = s.seq
	var parts []a2a.Part
	var heldMeta map[string]any
	for _, p := range art.Parts {
		if p.Kind() != a2a.PartText {
			if out, n := st.red.Flush(); out != "" {
				counted(n)
				parts = append(parts, textWith(out, nil, &heldMeta))
			}
			parts = append(parts, p)
			continue
		}
		out, n := st.red.Write(*p.Text)
		counted(n)
		if out == "" {
			if heldMeta == nil {
				heldMeta = p.Metadata
			}
			continue
		}
		parts = append(parts, textWith(out, &p, &heldMeta))
	}
	if pa.GetLastChunk() {
		if out, n := st.red.Flush(); out != "" {
			counted(n)
			parts = append(parts, textWith(out, nil, &heldMeta))
		}
		delete(s.byID, key)
	}
	carry(&st.name, art.Name)
	carry(&st.description, art.Description)
	if art.Metadata != nil {
		st.metadata = art.Metadata
	}
	if len(parts) == 0 && !pa.GetLastChunk() {
		return tasks.Update{}, false, released
	}
	out := &a2a.Artifact{ArtifactID: art.ArtifactID, Name: st.name, Description: st.description, Metadata: st.metadata, Parts: parts}
	if len(parts) == 0 {
		// The last chunk brought nothing new: an empty text closes it.
		out.Parts = []a2a.Part{a2a.TextPart("")}
	}
	u = tasks.Update{Kind: tasks.UpdateArtifact, Artifact: out, Append: st.sent, LastChunk: pa.GetLastChunk()}
	st.sent = true
	st.name, st.description, st.metadata = "", "", nil
	return u, true, released
}

// taskUpdate is an update for a task other than the one being sent to.
type taskUpdate struct {
	task string
	u    tasks.Update
}

// releaseFor gives out what the artifact streams of a task hold, as
// updates to apply before the turn ends, and forgets them.
func (b *Bridge) releaseFor(taskID string) []tasks.Update {
	s := &b.streams
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []tasks.Update
	for key, st := range s.byID {
		if key.task != taskID {
			continue
		}
		if u, ok := b.release(st, key); ok {
			out = append(out, u)
		}
		delete(s.byID, key)
	}
	return out
}

// releaseOldestLocked releases and forgets the n least recently used
// streams (at least one).
func (b *Bridge) releaseOldestLocked(n int) []taskUpdate {
	s := &b.streams
	var out []taskUpdate
	for range max(n, 1) {
		var oldest streamKey
		var found *artifactStream
		for k, st := range s.byID {
			if found == nil || st.seq < found.seq {
				oldest, found = k, st
			}
		}
		if found == nil {
			break
		}
		if u, ok := b.release(found, oldest); ok {
			out = append(out, taskUpdate{oldest.task, u})
		}
		delete(s.byID, oldest)
	}
	return out
}

// release is the update that gives out what the stream holds (ok false
// when it holds nothing); its redactions are counted.
func (b *Bridge) release(st *artifactStream, key streamKey) (tasks.Update, bool) {
	text, n := st.red.Flush()
	if n > 0 && b.obs != nil {
		b.obs.Redactions(n)
	}
	if text == "" && st.name == "" && st.description == "" && st.metadata == nil {
		return tasks.Update{}, false
	}
	art := &a2a.Artifact{ArtifactID: key.artifact, Name: st.name, Description: st.description, Metadata: st.metadata,
		Parts: []a2a.Part{a2a.TextPart(text)}}
	return tasks.Update{Kind: tasks.UpdateArtifact, Artifact: art, Append: st.sent}, true
}

// textWith is a text part with the media type, file name and metadata of
// the part it came from (nil: a text released on its own), taking on the
// metadata of parts held entirely before it.
func textWith(text string, from *a2a.Part, held *map[string]any) a2a.Part {
	p := a2a.TextPart(text)
	if from != nil {
		p.MediaType, p.Filename, p.Metadata = from.MediaType, from.Filename, from.Metadata
	}
	if p.Metadata == nil && *held != nil {
		p.Metadata = *held
	}
	*held = nil
	return p
}

// carry keeps the latest non-empty value.
func carry(dst *string, v string) {
	if v != "" {
		*dst = v
	}
}

// applyReleased applies what streams of a task held before the task
// moves on; failures (a task that already ended) are ignored.
func (b *Bridge) applyReleased(ctx context.Context, out Tasks, taskID string, us []tasks.Update) {
	for _, u := range us {
		_ = out.Apply(ctx, taskID, u)
	}
}
