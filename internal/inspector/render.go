package inspector

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

//go:embed templates/*.html static/*
var assets embed.FS

// pageNames are the pages; each is templates/<name>.html on the layout.
var pageNames = []string{"overview", "tasks", "task", "send", "peers", "conversation", "error"}

var funcs = template.FuncMap{
	"short":      shortID,
	"stateName":  stateName,
	"stateClass": stateClass,
	"iso":        func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) },
	"clock":      clock,
	"size":       humanSize,
	"join":       strings.Join,
	"yesno": func(b *bool) string {
		if b != nil && *b {
			return "yes"
		}
		return "no"
	},
	"states": func() []a2a.TaskState { return allStates },
	// pathEscape makes an id one path segment (ids may hold "/" or "?").
	"pathEscape": url.PathEscape,
}

// allStates are the task states, in the order the filter offers them.
var allStates = []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired,
	a2a.TaskStateCompleted, a2a.TaskStateFailed, a2a.TaskStateCanceled, a2a.TaskStateRejected}

func parsePages(prefix string) (map[string]*template.Template, error) {
	// {{base}} is the inspector's own path in every link.
	base, err := template.New("layout").Funcs(funcs).Funcs(template.FuncMap{"base": func() string { return prefix }}).ParseFS(assets, "templates/layout.html", "templates/partials.html")
	if err != nil {
		return nil, fmt.Errorf("inspector: parsing the layout: %w", err)
	}
	pages := make(map[string]*template.Template, len(pageNames))
	for _, name := range pageNames {
		t, err := base.Clone()
		if err == nil {
			t, err = t.ParseFS(assets, "templates/"+name+".html")
		}
		if err != nil {
			return nil, fmt.Errorf("inspector: parsing page %s: %w", name, err)
		}
		pages[name] = t
	}
	return pages, nil
}

// asset is one embedded static file.
type asset struct {
	body        []byte
	contentType string
	etag        string
}

func loadStatic() (map[string]asset, error) {
	out := map[string]asset{}
	err := fs.WalkDir(assets, "static", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := assets.ReadFile(path)
		if err != nil {
			return err
		}
		ct := "application/octet-stream"
		switch {
		case strings.HasSuffix(path, ".css"):
			ct = "text/css; charset=utf-8"
		case strings.HasSuffix(path, ".js"):
			ct = "text/javascript; charset=utf-8"
		case strings.HasSuffix(path, ".svg"):
			ct = "image/svg+xml"
		}
		out[strings.TrimPrefix(path, "static/")] = asset{body: b, contentType: ct, etag: fmt.Sprintf(`"%x"`, hash(b))}
		return nil
	})
	return out, err
}

// hash is FNV-1a, enough to tell asset versions apart.
func hash(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

func (in *Inspector) serveStatic(w http.ResponseWriter, r *http.Request) {
	a, ok := in.static[r.PathValue("name")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", a.contentType)
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("ETag", a.etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}

// layout is what every page's layout needs.
type layout struct {
	Title string
	// Page names the page (body data-page, the current nav entry).
	Page  string
	Agent string
	RPC   string
	// Live: the page follows the task feed.
	Live bool
	Body any
}

// render writes a page; with fragment set, only that template of it.
func (in *Inspector) render(w http.ResponseWriter, status int, name, fragment string, l layout) {
	t := in.pages[name]
	l.Page, l.RPC, l.Agent = name, in.opts.RPCPath, in.opts.AgentName
	if l.Agent == "" {
		l.Agent = "this agent"
	}
	var buf bytes.Buffer
	var err error
	if fragment != "" {
		err = t.ExecuteTemplate(&buf, fragment, l.Body)
	} else {
		err = t.ExecuteTemplate(&buf, "layout", l)
	}
	if err != nil {
		in.log.Error("rendering an inspector page failed", "page", name, "error", err)
		http.Error(w, "internal error rendering the page (see the plugin's log)", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// fail renders the error page.
func (in *Inspector) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	in.render(w, status, "error", "", layout{Title: http.StatusText(status), Body: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func shortID(s string) string {
	if len(s) <= 13 {
		return s
	}
	return s[:8] + "…"
}

// stateName renders TASK_STATE_INPUT_REQUIRED as "input required".
func stateName(s any) string {
	v := strings.TrimPrefix(fmt.Sprint(s), "TASK_STATE_")
	return strings.ToLower(strings.ReplaceAll(v, "_", " "))
}

func stateClass(s any) string {
	v := strings.TrimPrefix(fmt.Sprint(s), "TASK_STATE_")
	return "st-" + strings.ToLower(strings.ReplaceAll(v, "_", "-"))
}

func clock(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func humanSize(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// pretty indents JSON for display ("" for nothing).
func pretty(v any) string {
	if v == nil {
		return ""
	}
	var b []byte
	switch x := v.(type) {
	case jsonRaw:
		var out bytes.Buffer
		if json.Indent(&out, x, "", "  ") == nil {
			return out.String()
		}
		return string(x)
	case json.RawMessage:
		var out bytes.Buffer
		if json.Indent(&out, x, "", "  ") == nil {
			return out.String()
		}
		return string(x)
	default:
		var err error
		b, err = a2a.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
	}
	var out bytes.Buffer
	if json.Indent(&out, b, "", "  ") != nil {
		return string(b)
	}
	return out.String()
}
