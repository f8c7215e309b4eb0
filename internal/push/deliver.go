package push

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/backoff"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
)

const (
	// storeTimeout bounds recording an outcome; it runs even while the
	// dispatcher stops, so an acknowledged POST is not sent again.
	storeTimeout = 10 * time.Second
	// maxRetryAfter caps a receiver's Retry-After.
	maxRetryAfter = time.Hour
	// maxRedirects is how many same-host 307/308 redirects are followed.
	maxRedirects = 3
	// maxDrain is how much of a response body is read (so the connection
	// can be reused) and snippetLen how much of it a reason quotes.
	maxDrain   = 64 << 10
	snippetLen = 200
)

// verdict is what one attempt means for a delivery.
type verdict int

const (
	delivered verdict = iota
	retry             // transient failure: try again later
	giveUp            // permanent failure: trying again cannot help
	aborted           // the dispatcher is stopping: leave it in the outbox
)

// outcome is the result of one POST.
type outcome struct {
	verdict verdict
	status  int
	// reason explains a failure; it is logged and stored, so it never
	// carries credentials, tokens or a URL's query.
	reason     string
	retryAfter time.Duration
	took       time.Duration
	// respBytes is how much of the response body was read.
	respBytes int64
	// refused: the SSRF guard refused the webhook's address.
	refused bool
}

// DeliveryID is the X-A2A-Delivery-Id of a delivery: its outbox id and
// creation time in Unix milliseconds, "<id>-<ms>". It is the same on every
// attempt, and the creation time keeps it unique even for an outbox that
// started again from id 1 (the memory store after a restart).
func DeliveryID(d *store.Delivery) string {
	return strconv.FormatInt(d.ID, 10) + "-" + strconv.FormatInt(d.CreatedAt.UnixMilli(), 10)
}

// deliver makes one attempt at del and records the outcome in the store.
// It returns when the config's next delivery is due (zero: now), and
// pause when the store failed, so the outbox cannot be trusted to say.
func (d *Dispatcher) deliver(ctx context.Context, del *store.Delivery) (next time.Time, pause bool) {
	attempt := del.Attempts + 1
	log := d.log.With("task_id", del.TaskID, "context_id", del.ContextID, "config_id", del.ConfigID, "delivery_id", DeliveryID(del), "attempt", attempt)
	pc, err := d.store.GetPushConfig(ctx, del.TaskID, del.ConfigID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		// The client deleted the webhook (or the task was pruned): nobody
		// wants this notification any more.
		log.Debug("push config no longer exists; dropping its notification")
		return d.record(ctx, log, func(ctx context.Context) error {
			return d.store.CompleteDelivery(ctx, del.ID, false, "")
		})
	case err != nil:
		if ctx.Err() != nil {
			d.giveBack(ctx, del)
			return time.Time{}, false
		}
		log.Error("cannot read the push config; trying again later", "error", err)
		return d.now().Add(d.base), true
	}
	cfg := pc.Config
	shown := safeURL(cfg.URL)
	// The peer is whoever registered the webhook (the task's client).
	log = log.With("peer", pc.Owner, "url", shown)

	ctx, span := d.startSpan(ctx, del, pc.Owner, shown, attempt)
	started := d.now()
	out := d.post(ctx, del, &cfg, shown, span)
	d.auditAttempt(del, cfg.URL, started, out)
	if span.Recording() {
		if out.status != 0 {
			span.SetInt("http.response.status_code", out.status)
		}
		if out.verdict != delivered {
			span.Fail(out.reason)
		}
		span.End(nil)
	}
	switch out.verdict {
	case aborted:
		d.giveBack(ctx, del)
		return time.Time{}, false
	case delivered:
		d.obs.Delivered(out.took)
		log.Debug("webhook notification delivered", "status", out.status, "took", out.took)
		return d.record(ctx, log, func(ctx context.Context) error {
			return d.store.CompleteDelivery(ctx, del.ID, false, "")
		})
	case retry:
		if attempt < d.maxAttempts {
			next := d.now().Add(max(d.backoff(attempt), out.retryAfter))
			log.Warn("webhook notification failed; will retry", "error", out.reason, "next_try", next.UTC().Format(time.RFC3339))
			if hold, pause := d.record(ctx, log, func(ctx context.Context) error {
				return d.store.RetryDelivery(ctx, del.ID, attempt, next, out.reason)
			}); pause {
				return hold, pause
			}
			d.obs.Retried()
			return next, false
		}
		out.reason = fmt.Sprintf("gave up after %d attempts; last error: %s", attempt, out.reason)
	}
	log.Error("gave up on a webhook notification", "reason", out.reason)
	d.obs.GaveUp()
	return d.record(ctx, log, func(ctx context.Context) error {
		return d.store.CompleteDelivery(ctx, del.ID, true, out.reason)
	})
}

// giveBack returns a delivery this replica claimed and started but
// abandoned because it is stopping (its POST cut off, its config not yet
// read) to the shared outbox as it was, so another replica sends it now
// rather than once the claim lapses. The receiver may have got the POST
// that was cut off; it gets it again either way (at-least-once, the
// delivery id the same). A single process's outbox holds no claims: what
// it did not finish is sent again at its next start.
func (d *Dispatcher) giveBack(ctx context.Context, del *store.Delivery) {
	if d.replica == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := d.store.RetryDelivery(ctx, del.ID, del.Attempts, del.NextTry, del.LastError); err != nil {
		d.log.Warn("cannot give back a claimed notification; it is sent once the claim lapses", "task_id", del.TaskID, "config_id", del.ConfigID, "error", err)
	}
}

// auditAttempt writes the audit record of one delivery attempt (none for
// an attempt abandoned because the dispatcher is stopping).
func (d *Dispatcher) auditAttempt(del *store.Delivery, rawURL string, started time.Time, out outcome) {
	if d.audit == nil || out.verdict == aborted {
		return
	}
	rec := security.AuditRecord{
		Time: started, Direction: security.AuditOutbound, Method: "webhook", Peer: webhookHost(rawURL),
		TaskID: del.TaskID, ContextID: del.ContextID, Code: out.status,
		RequestBytes: int64(len(del.Body)), ResponseBytes: out.respBytes,
		DurationMS: float64(d.now().Sub(started).Microseconds()) / 1000,
	}
	switch {
	case out.verdict == delivered:
		rec.Outcome = "ok"
	case out.refused:
		rec.Outcome, rec.Error = "refused", out.reason
	default:
		rec.Outcome, rec.Error = "error", out.reason
	}
	if err := d.audit.Log(rec); err != nil {
		d.log.Warn("could not write the audit log", "task_id", del.TaskID, "context_id", del.ContextID, "error", err)
	}
}

// webhookHost is the host (and port) of a webhook URL, all the audit log
// keeps of it.
func webhookHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(invalid URL)"
	}
	return u.Host
}

// startSpan starts the span of one POST, a child of the notification's
// trace (a no-op with export off).
func (d *Dispatcher) startSpan(ctx context.Context, del *store.Delivery, peer, shown string, attempt int) (context.Context, tracing.Span) {
	if !d.tracer.Enabled() {
		return ctx, tracing.Span{}
	}
	ctx, span := d.tracer.Start(ctx, "a2a.push POST", tracing.KindClient, del.Trace)
	span.SetString("a2a.task_id", del.TaskID)
	span.SetString("a2a.context_id", del.ContextID)
	span.SetString("a2a.peer", peer)
	span.SetString("a2a.push.config_id", del.ConfigID)
	span.SetString("a2a.push.delivery_id", DeliveryID(del))
	span.SetInt("a2a.push.attempt", attempt)
	span.SetString("url.full", shown)
	return ctx, span
}

// setTraceHeaders continues the notification's trace: the POST carries the
// span recording it (export on) or a new child span of the turn's trace,
// with its tracestate. A notification without a trace sends none.
func setTraceHeaders(h http.Header, del *store.Delivery, span tracing.Span) {
	tc := span.Context()
	if tc.Traceparent == "" {
		if !del.Trace.Valid() {
			return
		}
		tc = del.Trace.Child()
	}
	tc.SetHeaders(h)
}

// record writes an outcome even if ctx is being cancelled (the POST has
// happened; forgetting it would send it again). On failure the delivery
// stays as it was, and its config is paused until the returned time.
func (d *Dispatcher) record(ctx context.Context, log hclog.Logger, write func(context.Context) error) (until time.Time, pause bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	err := write(ctx)
	if err == nil || errors.Is(err, store.ErrNotFound) {
		// ErrNotFound: the delivery went with its config or task meanwhile.
		return time.Time{}, false
	}
	log.Error("cannot record the outcome of a webhook notification; it stays in the outbox and will be sent again", "error", err)
	return d.now().Add(d.base), true
}

// post makes one POST of del to cfg's webhook and classifies the result.
func (d *Dispatcher) post(ctx context.Context, del *store.Delivery, cfg *a2a.TaskPushNotificationConfig, shown string, span tracing.Span) outcome {
	if u, err := url.Parse(cfg.URL); err != nil || u.Host == "" {
		return outcome{verdict: giveUp, reason: fmt.Sprintf("invalid webhook URL %s", shown)}
	}
	if err := d.guard.CheckURL(ctx, cfg.URL); err != nil {
		switch {
		case ctx.Err() != nil:
			return outcome{verdict: aborted}
		case errors.Is(err, security.ErrAddressNotAllowed):
			return outcome{verdict: giveUp, refused: true, reason: "webhook URL refused: " + errText(err, cfg.URL, shown)}
		default: // the host name did not resolve, which may pass
			return outcome{verdict: retry, reason: errText(err, cfg.URL, shown)}
		}
	}
	header := http.Header{}
	header.Set("Content-Type", ContentType)
	header.Set("User-Agent", UserAgent)
	header.Set(HeaderTaskID, del.TaskID)
	header.Set(HeaderDeliveryID, DeliveryID(del))
	setTraceHeaders(header, del, span)
	if a := cfg.Authentication; a != nil && a.Scheme != "" {
		v := a.Scheme
		if a.Credentials != "" {
			v += " " + a.Credentials
		}
		if !validHeaderValue(v) {
			return outcome{verdict: giveUp, reason: "the push config's authentication scheme or credentials contain characters not allowed in an HTTP header"}
		}
		header.Set("Authorization", v)
	}
	if cfg.Token != "" {
		if !validHeaderValue(cfg.Token) {
			return outcome{verdict: giveUp, reason: "the push config's token contains characters not allowed in an HTTP header"}
		}
		header.Set(HeaderNotificationToken, cfg.Token)
	}
	if !validHeaderValue(del.TaskID) {
		return outcome{verdict: giveUp, reason: "the task id contains characters not allowed in an HTTP header"}
	}
	if len(d.secret) > 0 {
		ts := d.now().Unix()
		header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
		header.Set(HeaderSignature, Sign(d.secret, ts, del.Body))
	}

	pctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(pctx, http.MethodPost, cfg.URL, bytes.NewReader(del.Body))
	if err != nil {
		return outcome{verdict: giveUp, reason: "invalid webhook URL: " + errText(err, cfg.URL, shown)}
	}
	req.Header = header
	start := time.Now()
	resp, err := d.client.Do(req)
	took := time.Since(start)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return outcome{verdict: aborted}
		case errors.Is(err, security.ErrAddressNotAllowed):
			return outcome{verdict: giveUp, refused: true, reason: "webhook address refused: " + errText(err, cfg.URL, shown)}
		case pctx.Err() != nil:
			return outcome{verdict: retry, reason: fmt.Sprintf("POST %s: no answer within %s", shown, d.timeout)}
		default:
			return outcome{verdict: retry, reason: fmt.Sprintf("POST %s: %s", shown, errText(err, cfg.URL, shown))}
		}
	}
	defer resp.Body.Close()
	var snippet []byte
	if resp.StatusCode/100 != 2 {
		snippet, _ = io.ReadAll(io.LimitReader(resp.Body, snippetLen))
	}
	drained, _ := io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))

	out := outcome{status: resp.StatusCode, took: took, respBytes: int64(len(snippet)) + drained}
	code := resp.StatusCode
	switch {
	case code >= 200 && code < 300:
		out.verdict = delivered
		return out
	case code >= 500, code == http.StatusTooManyRequests, code == http.StatusRequestTimeout:
		out.verdict = retry
		out.retryAfter = retryAfter(resp.Header.Get("Retry-After"), d.now())
	default:
		out.verdict = giveUp
	}
	out.reason = fmt.Sprintf("webhook answered %s", resp.Status)
	if code >= 300 && code < 400 {
		out.reason += fmt.Sprintf(" (to %s); notifications do not follow redirects to another host or that turn the POST into a GET: register the final URL",
			safeURL(resolveLocation(req.URL, resp.Header.Get("Location"))))
	}
	if s := quote(snippet); s != "" {
		out.reason += ": " + s
	}
	return out
}

// checkRedirect follows only redirects that keep the POST and the origin
// (307/308 to the same scheme, host and port), at most maxRedirects of
// them. Any other redirect is returned as the response, and given up.
func (d *Dispatcher) checkRedirect(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	if req.Method != http.MethodPost || len(via) > maxRedirects ||
		!strings.EqualFold(req.URL.Scheme, first.Scheme) || !strings.EqualFold(req.URL.Host, first.Host) {
		return http.ErrUseLastResponse
	}
	return d.guard.CheckURL(req.Context(), req.URL.String())
}

// backoff is the delay after the attempt-th failure: BaseBackoff doubled
// per earlier failure, capped at MaxBackoff, drawn from its upper half.
func (d *Dispatcher) backoff(attempt int) time.Duration {
	return backoff.Jittered(d.base, d.max, attempt)
}

// retryAfter parses a Retry-After value (seconds or an HTTP date), capped
// at maxRetryAfter; 0 when absent or invalid.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return min(time.Duration(min(n, int64(maxRetryAfter/time.Second)))*time.Second, maxRetryAfter)
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(t.Sub(now), 0), maxRetryAfter)
	}
	return 0
}

// safeURL is a webhook URL fit for logs and stored reasons: no user
// information, no query (both often carry credentials), no fragment.
func safeURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(invalid URL)"
	}
	s := u.Scheme + "://" + u.Host + u.EscapedPath()
	if u.RawQuery != "" {
		s += "?…"
	}
	return s
}

// resolveLocation resolves a redirect target against the request URL.
func resolveLocation(base *url.URL, loc string) string {
	u, err := base.Parse(loc)
	if err != nil {
		return ""
	}
	return u.String()
}

// errText renders err without the raw webhook URL (replaced by shown),
// then redacts anything credential-shaped.
func errText(err error, raw, shown string) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // "Post <url>": the URL is said by the caller
	}
	var se *security.SSRFError
	if errors.As(err, &se) {
		c := *se
		if c.URL != "" {
			c.URL = safeURL(c.URL)
		}
		err = &c
	}
	s := err.Error()
	if raw != "" {
		s = strings.ReplaceAll(s, raw, shown)
		s = strings.ReplaceAll(s, strconv.Quote(raw), strconv.Quote(shown))
	}
	s, _ = security.Redact(s)
	return s
}

// quote turns the start of a response body into a short, single-line,
// redacted excerpt.
func quote(b []byte) string {
	if !utf8.Valid(b) {
		b = bytes.ToValidUTF8(b, []byte("?"))
	}
	s := strings.Join(strings.Fields(string(b)), " ")
	if s == "" {
		return ""
	}
	if len(b) >= snippetLen {
		s += "…"
	}
	s, _ = security.Redact(s)
	return strconv.Quote(s)
}

// validHeaderValue refuses control characters (CR and LF above all): a
// header value taken from a client's push config must not be able to add
// headers.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}
