package inspector

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
)

// ---- overview: the live Agent Card and the charts ----------------------

type overviewView struct {
	Card     *a2a.AgentCard
	CardJSON string
	CardErr  string
	Metrics  bool
}

func (in *Inspector) serveOverview(w http.ResponseWriter, r *http.Request) {
	v := overviewView{Metrics: in.opts.Metrics != nil}
	card, raw, err := in.card(r)
	switch {
	case err != nil:
		v.CardErr = err.Error()
	default:
		v.Card, v.CardJSON = card, pretty(jsonRaw(raw))
	}
	in.render(w, http.StatusOK, "overview", "", layout{Title: "Overview", Body: v})
}

// card reads the public Agent Card through the plugin's own handler, as a
// peer at the operator's address would get it.
func (in *Inspector) card(r *http.Request) (*a2a.AgentCard, []byte, error) {
	if in.opts.Server == nil || in.opts.Server() == nil {
		return nil, nil, errors.New("the A2A server is not running")
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, in.opts.CardPath, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Host, req.RemoteAddr, req.TLS = r.Host, r.RemoteAddr, r.TLS
	rec := &recorder{header: http.Header{}}
	in.opts.Server().ServeHTTP(rec, req)
	if rec.status != 0 && rec.status != http.StatusOK {
		return nil, nil, errors.New("the card route answered " + strconv.Itoa(rec.status) + ": " + strings.TrimSpace(rec.body.String()))
	}
	var card a2a.AgentCard
	if err := a2a.Unmarshal(rec.body.Bytes(), &card); err != nil {
		return nil, nil, errors.New("the served card does not parse: " + err.Error())
	}
	return &card, rec.body.Bytes(), nil
}

// recorder captures an in-process response.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

type jsonRaw []byte

// ---- tasks: the live list --------------------------------------------

// listSize is how many tasks one page of the list shows.
const listSize = 50

type taskFilter struct {
	State, Peer, Context string
}

// query renders the filter as a query string (for links and fragments).
func (f taskFilter) query() string {
	v := url.Values{}
	if f.State != "" {
		v.Set("state", f.State)
	}
	if f.Peer != "" {
		v.Set("peer", f.Peer)
	}
	if f.Context != "" {
		v.Set("context", f.Context)
	}
	return v.Encode()
}

type taskRow struct {
	ID, ContextID, Peer string
	State               a2a.TaskState
	Created, Updated    time.Time
	Snippet             string
}

type tasksView struct {
	Filter   taskFilter
	Query    string
	Rows     []taskRow
	Total    int
	Next     string
	NextHref string
	Peers    []string
	ReadErr  string
	Filtered bool
}

func (in *Inspector) serveTasks(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := taskFilter{State: strings.TrimSpace(q.Get("state")), Peer: strings.TrimSpace(q.Get("peer")), Context: strings.TrimSpace(q.Get("context"))}
	if f.State != "" && !a2a.TaskState(f.State).Known() {
		f.State = ""
	}
	v := tasksView{Filter: f, Query: f.query(), Filtered: f != taskFilter{}}
	page, err := in.opts.Store.ListTasks(r.Context(), store.TaskQuery{Owner: f.Peer, ContextID: f.Context,
		State: a2a.TaskState(f.State), PageSize: listSize, PageToken: q.Get("page")})
	if err != nil {
		v.ReadErr = "the task store could not be read: " + err.Error()
	}
	seen := map[string]bool{}
	for _, rec := range page.Tasks {
		v.Rows = append(v.Rows, rowOf(rec))
		if !seen[rec.Owner] {
			seen[rec.Owner] = true
			v.Peers = append(v.Peers, rec.Owner)
		}
	}
	sort.Strings(v.Peers)
	v.Total, v.Next = page.TotalSize, page.NextPageToken
	if v.Next != "" {
		nq := url.Values{}
		for k, vs := range q {
			if k != "fragment" && k != "page" {
				nq[k] = vs
			}
		}
		nq.Set("page", v.Next)
		v.NextHref = in.opts.Prefix + "tasks?" + nq.Encode()
	}
	fragment := ""
	if q.Get("fragment") == "rows" {
		fragment = "task-rows"
	}
	in.render(w, http.StatusOK, "tasks", fragment, layout{Title: "Tasks", Live: true, Body: v})
}

func rowOf(rec *store.TaskRecord) taskRow {
	t := &rec.Task
	row := taskRow{ID: t.ID, ContextID: t.ContextID, Peer: rec.Owner, State: t.Status.State, Created: rec.CreatedAt, Updated: rec.UpdatedAt}
	switch n, a := len(t.History), len(t.Artifacts); {
	case t.Status.Message != nil:
		row.Snippet = clipText(t.Status.Message.Text(), 90)
	case a > 0: // a completed task's answer is its last artifact
		row.Snippet = clipText(t.Artifacts[a-1].Text(), 90)
	case n > 0:
		row.Snippet = clipText(t.History[n-1].Text(), 90)
	}
	return row
}

func clipText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// ---- one task: history, artifacts, actions ----------------------------

type partView struct {
	Kind      string // text, file, url, data
	Text      string
	MediaType string
	Filename  string
	Size      int
	Href      string // where inline file bytes are served
	Image     bool
	URL       string
	Link      bool // URL is http(s) and may be shown as a link
	Data      string
	Metadata  string
	// Joined counts the streamed text chunks shown as this one text.
	Joined int
}

type messageView struct {
	Role      string
	ID        string
	Parts     []partView
	Metadata  string
	Reference []string
}

type artifactView struct {
	ID, Name, Description string
	Parts                 []partView
	Metadata              string
}

type taskView struct {
	ID, ContextID, Peer string
	State               a2a.TaskState
	Created, Updated    time.Time
	Status              *messageView
	History             []messageView
	Artifacts           []artifactView
	Metadata            string
	Raw                 string
	Terminal            bool
	Interrupted         bool
	// ChainID is the delegation chain the task belongs to.
	ChainID string
	// Delegations are the remote tasks its turns delegated, with how
	// canceling them went.
	Delegations []delegationView
}

// delegationView is one remote task a task's turn delegated.
type delegationView struct {
	Agent, TaskID, ContextID string
	// State says where it stands, in words ("running", "canceled", "cancel
	// failed", …); Class styles it.
	State, Class string
	RemoteState  string
	Attempts     int
	Error        string
	NextTry      time.Time
	Updated      time.Time
}

// delegationViewOf shows a delegation.
func delegationViewOf(d store.Delegation) delegationView {
	v := delegationView{Agent: d.Peer, TaskID: d.RemoteTaskID, ContextID: d.RemoteContextID, RemoteState: d.RemoteState,
		Attempts: d.Attempts, Error: d.LastError, Updated: d.UpdatedAt}
	switch d.State {
	case store.DelegationOpen:
		v.State, v.Class = "delegated", "st-working"
	case store.DelegationKept:
		v.State, v.Class = "left running", "st-completed"
	case store.DelegationCancel:
		v.State, v.Class, v.NextTry = "cancel pending", "st-input-required", d.NextTry
		if d.Attempts > 0 {
			v.State = "cancel retrying"
		}
	case store.DelegationCanceled:
		v.State, v.Class = "canceled", "st-canceled"
	case store.DelegationFinished:
		v.State, v.Class = "had finished", "st-completed"
	case store.DelegationFailed:
		v.State, v.Class = "cancel failed", "st-failed"
	default:
		v.State, v.Class = d.State, ""
	}
	return v
}

func (in *Inspector) serveTask(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	rec, err := in.opts.Store.GetTask(r.Context(), id, "")
	if errors.Is(err, store.ErrNotFound) {
		in.fail(w, r, http.StatusNotFound, "No task "+id+" is known (it may have been pruned, or it was answered with a direct message and never became a task).")
		return
	}
	if err != nil {
		in.fail(w, r, http.StatusInternalServerError, "The task store could not be read: "+err.Error())
		return
	}
	v := taskViewOf(rec, in.opts.Prefix)
	ds, err := in.opts.Store.Delegations(r.Context(), id)
	if err != nil {
		in.fail(w, r, http.StatusInternalServerError, "The task's delegations could not be read: "+err.Error())
		return
	}
	for _, d := range ds {
		v.Delegations = append(v.Delegations, delegationViewOf(d))
	}
	fragment := ""
	if r.URL.Query().Get("fragment") == "body" {
		fragment = "task-body"
	}
	in.render(w, http.StatusOK, "task", fragment, layout{Title: "Task " + shortID(id), Live: true, Body: v})
}

func taskViewOf(rec *store.TaskRecord, prefix string) taskView {
	t := &rec.Task
	base := prefix + "tasks/" + url.PathEscape(t.ID) + "/parts/"
	v := taskView{ID: t.ID, ContextID: t.ContextID, Peer: rec.Owner, State: t.Status.State, Created: rec.CreatedAt, Updated: rec.UpdatedAt,
		Terminal: t.Status.State.Terminal(), Interrupted: t.Status.State.Interrupted(), ChainID: tasks.TaskChainID(t)}
	if m := t.Status.Message; m != nil {
		mv := messageOf(m, base+"s-")
		v.Status = &mv
	}
	for i := range t.History {
		v.History = append(v.History, messageOf(&t.History[i], base+"h"+strconv.Itoa(i)+"-"))
	}
	for i, a := range t.Artifacts {
		av := artifactView{ID: a.ArtifactID, Name: a.Name, Description: a.Description}
		if len(a.Metadata) > 0 {
			av.Metadata = pretty(a.Metadata)
		}
		for j := range a.Parts {
			av.Parts = append(av.Parts, partOf(&a.Parts[j], base+"a"+strconv.Itoa(i)+"-"+strconv.Itoa(j)))
		}
		av.Parts = joinText(av.Parts)
		v.Artifacts = append(v.Artifacts, av)
	}
	if len(t.Metadata) > 0 {
		v.Metadata = pretty(t.Metadata)
	}
	v.Raw = pretty(t)
	return v
}

// messageOf renders a message; hrefBase+<part index> serves inline files
// ("" when the bytes are not served).
func messageOf(m *a2a.Message, hrefBase string) messageView {
	mv := messageView{Role: strings.ToLower(strings.TrimPrefix(string(m.Role), "ROLE_")), ID: m.MessageID, Reference: m.ReferenceTaskIDs}
	if len(m.Metadata) > 0 {
		mv.Metadata = pretty(m.Metadata)
	}
	for j := range m.Parts {
		href := ""
		if hrefBase != "" {
			href = hrefBase + strconv.Itoa(j)
		}
		mv.Parts = append(mv.Parts, partOf(&m.Parts[j], href))
	}
	return mv
}

// joinText shows consecutive plain text parts as one text: an artifact
// streamed in chunks (append) is one document to a reader.
func joinText(parts []partView) []partView {
	out := parts[:0:0]
	for _, p := range parts {
		if n := len(out); n > 0 && p.Kind == "text" && p.Metadata == "" && out[n-1].Kind == "text" && out[n-1].Metadata == "" &&
			out[n-1].MediaType == p.MediaType {
			prev := &out[n-1]
			if prev.Joined == 0 {
				prev.Joined = 1
			}
			prev.Joined++
			prev.Text += p.Text
			continue
		}
		out = append(out, p)
	}
	return out
}

// inlineImages are the image types shown in the page (never SVG, which
// can carry script).
var inlineImages = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

func partOf(p *a2a.Part, href string) partView {
	v := partView{MediaType: p.MediaType, Filename: p.Filename}
	if len(p.Metadata) > 0 {
		v.Metadata = pretty(p.Metadata)
	}
	switch p.Kind() {
	case a2a.PartText:
		v.Kind, v.Text = "text", p.TextValue()
	case a2a.PartRaw:
		v.Kind, v.Size, v.Href = "file", len(p.Raw), href
		v.Image = href != "" && inlineImages[strings.ToLower(p.MediaType)]
		if strings.HasPrefix(p.MediaType, "text/") && len(p.Raw) <= 64<<10 {
			v.Text = string(p.Raw) // a small text file reads best as text
		}
	case a2a.PartURL:
		v.Kind, v.URL = "url", p.URLValue()
		if u, err := url.Parse(v.URL); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
			v.Link = true
		}
	case a2a.PartData:
		v.Kind, v.Data = "data", pretty(jsonRaw(p.Data))
	default:
		v.Kind, v.Data = "invalid", pretty(p)
	}
	return v
}

// servePart serves the bytes of an inline file part of a task: images
// inline (PNG, JPEG, GIF, WebP), everything else as a download, always
// sandboxed so that content from a peer never runs as this origin.
func (in *Inspector) servePart(w http.ResponseWriter, r *http.Request) {
	id, where := r.PathValue("id"), r.PathValue("where")
	rec, err := in.opts.Store.GetTask(r.Context(), id, "")
	if err != nil {
		http.NotFound(w, r)
		return
	}
	p := findPart(&rec.Task, where)
	if p == nil || p.Kind() != a2a.PartRaw {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	mt := strings.ToLower(p.MediaType)
	name := p.Filename
	if name == "" {
		name = "part-" + where
	}
	if inlineImages[mt] {
		h.Set("Content-Type", mt)
		h.Set("Content-Disposition", "inline; filename*=UTF-8''"+url.PathEscape(name))
	} else {
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Disposition", "attachment; filename*=UTF-8''"+url.PathEscape(name))
	}
	_, _ = w.Write(p.Raw)
}

// findPart resolves "s-J" (status message), "hI-J" (history) and "aI-J"
// (artifact) to a part.
func findPart(t *a2a.Task, where string) *a2a.Part {
	if len(where) < 3 {
		return nil
	}
	kind, rest := where[0], where[1:]
	a, b, ok := strings.Cut(rest, "-")
	if !ok {
		return nil
	}
	j, err := strconv.Atoi(b)
	if err != nil || j < 0 {
		return nil
	}
	var parts []a2a.Part
	switch kind {
	case 's':
		if a != "" || t.Status.Message == nil {
			return nil
		}
		parts = t.Status.Message.Parts
	case 'h', 'a':
		i, err := strconv.Atoi(a)
		if err != nil || i < 0 {
			return nil
		}
		if kind == 'h' {
			if i >= len(t.History) {
				return nil
			}
			parts = t.History[i].Parts
		} else {
			if i >= len(t.Artifacts) {
				return nil
			}
			parts = t.Artifacts[i].Parts
		}
	default:
		return nil
	}
	if j >= len(parts) {
		return nil
	}
	return &parts[j]
}

// ---- send: talk to this agent or a peer and watch the stream ----------

type sendView struct {
	Peers     []string
	To        string
	TaskID    string
	ContextID string
	CanPeer   bool
}

func (in *Inspector) serveSend(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := sendView{To: q.Get("to"), TaskID: q.Get("task"), ContextID: q.Get("context"), CanPeer: in.opts.CallTool != nil}
	if v.CanPeer {
		v.Peers = in.peerNames(r.Context())
	}
	in.render(w, http.StatusOK, "send", "", layout{Title: "Send", Body: v})
}

// peerNames lists the configured peers without checking them.
func (in *Inspector) peerNames(ctx context.Context) []string {
	if in.opts.PeerNames != nil {
		return in.opts.PeerNames()
	}
	var names []string
	for _, p := range in.peers(ctx) {
		names = append(names, p.Name)
	}
	return names
}

func (in *Inspector) peers(ctx context.Context) []Peer {
	if in.opts.Peers == nil {
		return nil
	}
	return in.opts.Peers(ctx)
}

// ---- peers: outbound peers, calls and conversations --------------------

// Recent outbound calls are the newest entries of the newest
// conversations.
const (
	recentConversations = 20
	recentEntriesEach   = 6
	recentEntries       = 30
)

type entryView struct {
	Time              time.Time
	Peer, Direction   string
	TaskID, ContextID string
	State             string
	Text              string
	Parts             []partView
	Received          bool
}

type peersView struct {
	Peers         []Peer
	Recent        []entryView
	Conversations []store.ConversationSummary
	ReadErr       string
}

func (in *Inspector) servePeers(w http.ResponseWriter, r *http.Request) {
	v := peersView{Peers: in.peers(r.Context())}
	convs, err := in.opts.Store.Conversations(r.Context(), recentConversations)
	if err != nil {
		v.ReadErr = "the conversations could not be read: " + err.Error()
	}
	v.Conversations = convs
	for _, c := range convs {
		entries, err := in.opts.Store.Conversation(r.Context(), c.ContextID, recentEntriesEach)
		if err != nil {
			continue
		}
		for _, e := range entries {
			v.Recent = append(v.Recent, entryOf(e, false))
		}
	}
	sort.SliceStable(v.Recent, func(i, j int) bool { return v.Recent[i].Time.After(v.Recent[j].Time) })
	if len(v.Recent) > recentEntries {
		v.Recent = v.Recent[:recentEntries]
	}
	in.render(w, http.StatusOK, "peers", "", layout{Title: "Peers", Body: v})
}

func entryOf(e store.ConversationEntry, withParts bool) entryView {
	ev := entryView{Time: e.Time, Peer: e.Peer, Direction: e.Direction, TaskID: e.TaskID, ContextID: e.ContextID,
		State: e.State, Received: e.Direction == store.DirectionReceived}
	if withParts {
		ev.Text = e.Text
		for j := range e.Parts {
			ev.Parts = append(ev.Parts, partOf(&e.Parts[j], ""))
		}
	} else {
		ev.Text = clipText(e.Text, 160)
	}
	return ev
}

type conversationView struct {
	ContextID string
	Peer      string
	Entries   []entryView
}

// conversationLimit bounds the entries one conversation page shows.
const conversationLimit = 200

func (in *Inspector) serveConversation(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	entries, err := in.opts.Store.Conversation(r.Context(), id, conversationLimit)
	if err != nil {
		in.fail(w, r, http.StatusInternalServerError, "The conversation could not be read: "+err.Error())
		return
	}
	if len(entries) == 0 {
		in.fail(w, r, http.StatusNotFound, "No outbound conversation "+id+" is known.")
		return
	}
	v := conversationView{ContextID: id, Peer: entries[0].Peer}
	for _, e := range entries {
		v.Entries = append(v.Entries, entryOf(e, true))
	}
	in.render(w, http.StatusOK, "conversation", "", layout{Title: "Conversation " + shortID(id), Body: v})
}
