package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"
)

// SQLiteOptions tunes OpenSQLite. The zero value is the recommended
// configuration.
type SQLiteOptions struct {
	// FullSync sets PRAGMA synchronous=FULL and syncs the task journal:
	// every commit waits for the WAL, and every journaled save for the
	// journal, to reach the disk, so an acknowledged write survives a
	// power loss or an OS crash too. The default, synchronous=NORMAL, survives the
	// plugin process dying at any instant (kill -9 included) — see
	// OpenSQLite — and is several times faster.
	FullSync bool
	// BusyTimeout is how long a connection waits for a lock held by
	// another process (another plugin on the same file, a backup tool)
	// before failing. Default 5s.
	BusyTimeout time.Duration
	// Readers is the number of read connections. Default: GOMAXPROCS,
	// at least 4.
	Readers int
	// MaxBatch bounds how many writes the writer takes at once (one
	// journal write for the saves among them); the applier applies up
	// to applyBatches × MaxBatch in one transaction. Default 256.
	MaxBatch int
	// PruneBatch bounds how many tasks or conversations Prune deletes per
	// transaction, so that it never holds the write lock for long.
	// Default 500.
	PruneBatch int
	// CacheKiB is the writer's page cache in KiB. Default 2048.
	CacheKiB int
	// ReaderCacheKiB is the page cache of each read connection and of
	// the checkpointer's, in KiB. Default 512.
	//
	// Caches are sized per role because they are most of the store's
	// memory: a cache fills as its connection touches pages and then
	// stays at its size, and each 4 KiB page takes an 8 KiB slot of the pure-Go C
	// allocator (modernc.org/memory rounds the page and its header up to
	// a power of two), so a cache costs about twice its nominal size.
	// The writer revisits the same pages (the right edges of the indexes
	// that time-ordered ids append to, the count tables) on every batch;
	// a reader mostly reads a task by id or the newest page of a list,
	// and the checkpointer copies WAL frames without caching them. The
	// sizes were measured against memory, throughput and ListTasks
	// latency (docs/performance.md, "Memory").
	ReaderCacheKiB int
	// Logf logs what the store does on its own: a journal replayed at
	// start, a failing apply being retried. Default log.Printf.
	Logf func(format string, args ...any)
}

// SQLite is the durable Store: one SQLite database file in WAL mode,
// written by one goroutine that groups concurrent writes into shared
// transactions, read through a pool of read connections that never wait
// for the writer.
//
// A save without webhook deliveries (nearly all of them) is acknowledged
// once its row is appended to the task journal (sqlite_journal.go), one
// write(2) per group of concurrent saves; the applier goroutine applies
// journaled saves to SQLite behind the callers, in large transactions
// where several saves of one task become one. Until then GetTask answers
// from the pending saves, and every other read of tasks first waits for
// the saves journaled before it (a barrier); every other write runs after
// them, in order. Nothing a caller can observe differs from writing SQLite
// directly, except the time it takes.
//
// Durability: a journaled save, and with the default synchronous=NORMAL in
// WAL mode any other write's commit, is appended to a file with write(2)
// before the call returns; it is then in the kernel's page cache, which
// outlives the process, so a crash of the process (panic, OOM kill, kill
// -9) loses nothing acknowledged and never corrupts the database: the next
// OpenSQLite replays the journal. Only a power loss or kernel crash can
// drop the last writes (never corrupt: WAL frames and journal records are
// checksummed). FullSync closes that window at the price of an fsync per
// batch (of the journal for saves, of the WAL for other writes).
type SQLite struct {
	path string
	wdb  *sql.DB
	rdb  *sql.DB
	w    *writer
	ckpt *sql.Conn // the checkpointer's connection

	readers chan *reader

	reqs        chan *writeReq
	quit        chan struct{}
	writerDone  chan struct{}
	applierDone chan struct{}
	ckptKick    chan struct{}
	ckptDone    chan struct{}
	closeOnce   sync.Once
	closeErr    error

	maxBatch   int
	pruneBatch int
	yields     int
	logf       func(format string, args ...any)

	// The task journal. The writer goroutine owns seq (the last sequence
	// number given), items and jbuf; the applier owns applyErr, reqBuf
	// and latest.
	j          *journal
	unlock     func() // releases the store's lock on its database (lockStore)
	stateKey   string // the journal whose applied seq tryBatch records
	q          *applyQueue
	seq        int64
	items      []applyItem
	acks       []*writeReq
	jbuf       []byte
	applyMax   int // items per apply transaction
	linger     time.Duration
	pendingMax int // bytes of pending saves past which saves wait
	applyErr   error
	reqBuf     []*writeReq
	latest     map[string]int64

	// overlay is the latest journaled, not yet applied save of each
	// task (GetTask reads it first).
	ovMu    sync.Mutex
	overlay map[string]*jrec
	// journaled is the last journaled sequence number; appliedSeq the
	// last applied, appliedCh closed (and replaced) when it advances.
	journaled  atomic.Int64
	appliedMu  sync.Mutex
	appliedSeq int64
	appliedCh  chan struct{}

	// commits and committedOps count write transactions and the writes
	// they carried: their ratio is the group-commit batch size.
	commits, committedOps atomic.Int64
}

var _ Store = (*SQLite)(nil)

// OpenSQLite opens (creating if needed) the database at path, brings its
// schema up to date and starts the writer. The caller passes
// "<data dir>/a2a-plugin.db"; the WAL and shared-memory files live beside
// it. Close releases everything.
func OpenSQLite(path string, opts SQLiteOptions) (*SQLite, error) {
	if path == "" {
		return nil, errors.New("store: OpenSQLite needs a database path")
	}
	// Tasks hold what peers and users said: the database is private to the
	// plugin's user. SQLite gives the WAL and shared-memory files the mode
	// of the database file, so creating that one 0600 covers all three.
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("store: create the data directory of %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	f.Close()
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 5 * time.Second
	}
	if opts.Readers <= 0 {
		opts.Readers = max(4, runtime.GOMAXPROCS(0))
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 256
	}
	if opts.PruneBatch <= 0 {
		opts.PruneBatch = 500
	}
	if opts.CacheKiB <= 0 {
		opts.CacheKiB = 2 << 10
	}
	if opts.ReaderCacheKiB <= 0 {
		opts.ReaderCacheKiB = 512
	}
	if opts.Logf == nil {
		opts.Logf = log.Printf
	}
	syncMode := "NORMAL"
	if opts.FullSync {
		syncMode = "FULL"
	}
	common := url.Values{}
	common.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", opts.BusyTimeout.Milliseconds()))
	common.Add("_pragma", "temp_store(MEMORY)")
	wq, rq := url.Values{}, url.Values{}
	for k, v := range common {
		wq[k] = slices.Clone(v)
		rq[k] = slices.Clone(v)
	}
	wq.Add("_pragma", fmt.Sprintf("cache_size(-%d)", opts.CacheKiB))
	rq.Add("_pragma", fmt.Sprintf("cache_size(-%d)", opts.ReaderCacheKiB))
	wq.Add("_pragma", "journal_mode(WAL)")
	wq.Add("_pragma", "synchronous("+syncMode+")")
	wq.Add("_pragma", "foreign_keys(1)")
	// Checkpoints (copying the WAL back into the database file, with two
	// fsyncs) are done by the checkpointer goroutine on a connection of
	// its own, off the writer's path; the writer checkpoints by itself only
	// when the WAL grows past walBackstopPages regardless, and the WAL file
	// is truncated back to that size after a checkpoint.
	wq.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", walBackstopPages))
	wq.Add("_pragma", fmt.Sprintf("journal_size_limit(%d)", walBackstopPages*4096))
	rq.Add("_pragma", "query_only(1)")
	fileURL := (&url.URL{Scheme: "file", Opaque: url.PathEscape(path)}).String()

	s := &SQLite{
		path:        path,
		readers:     make(chan *reader, opts.Readers),
		reqs:        make(chan *writeReq),
		quit:        make(chan struct{}),
		writerDone:  make(chan struct{}),
		applierDone: make(chan struct{}),
		ckptKick:    make(chan struct{}, 1),
		ckptDone:    make(chan struct{}),
		maxBatch:    opts.MaxBatch,
		pruneBatch:  opts.PruneBatch,
		yields:      writerYields,
		logf:        opts.Logf,
		q:           newApplyQueue(),
		applyMax:    opts.MaxBatch * applyBatches,
		linger:      applyLinger,
		pendingMax:  pendingMaxBytes,
		latest:      make(map[string]int64),
		overlay:     make(map[string]*jrec),
		appliedCh:   make(chan struct{}),
	}
	// One store at a time serves a database: a save is acknowledged once
	// journaled and reaches SQLite later, so two stores would apply their
	// saves of one task in an order neither chose (and a crashed one's
	// journal, replayed at the next start, could undo a later save of the
	// other). Several replicas share PostgreSQL instead.
	if s.unlock, err = lockStore(journalDir(path), opts.BusyTimeout); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	ctx := context.Background()
	if s.wdb, err = sql.Open("sqlite", fileURL+"?"+wq.Encode()); err != nil {
		s.unlock()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	s.wdb.SetMaxOpenConns(2) // the writer and the checkpointer
	s.wdb.SetMaxIdleConns(2)
	s.wdb.SetConnMaxLifetime(0)
	s.wdb.SetConnMaxIdleTime(0)
	fail := func(err error) (*SQLite, error) {
		s.closeConns()
		return nil, err
	}
	conn, err := s.wdb.Conn(ctx)
	if err != nil {
		return fail(fmt.Errorf("store: open %s: %w", path, err))
	}
	s.w = &writer{conn: conn}
	var mode string
	if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fail(fmt.Errorf("store: open %s: %w", path, err))
	}
	if mode != "wal" {
		return fail(fmt.Errorf("store: open %s: the database is in journal mode %q, not WAL: put the data directory on a local file system", path, mode))
	}
	if err := migrate(ctx, conn, path); err != nil {
		return fail(err)
	}
	if err := s.w.prepare(ctx); err != nil {
		return fail(fmt.Errorf("store: open %s: %w", path, err))
	}
	if s.j, err = openJournal(journalDir(path), opts.FullSync); err != nil {
		return fail(fmt.Errorf("store: open the task journal of %s: %w", path, err))
	}
	if err := s.replayJournals(); err != nil {
		return fail(err)
	}
	s.stateKey = s.j.instance
	if err := s.j.start(); err != nil {
		return fail(fmt.Errorf("store: open the task journal of %s: %w", path, err))
	}

	if s.ckpt, err = s.wdb.Conn(ctx); err != nil {
		return fail(fmt.Errorf("store: open %s for checkpoints: %w", path, err))
	}
	if _, err := s.ckpt.ExecContext(ctx, fmt.Sprintf("PRAGMA cache_size(-%d)", opts.ReaderCacheKiB)); err != nil {
		return fail(fmt.Errorf("store: open %s for checkpoints: %w", path, err))
	}
	if s.rdb, err = sql.Open("sqlite", fileURL+"?"+rq.Encode()); err != nil {
		return fail(fmt.Errorf("store: open %s for reading: %w", path, err))
	}
	s.rdb.SetMaxOpenConns(opts.Readers)
	s.rdb.SetMaxIdleConns(opts.Readers)
	s.rdb.SetConnMaxLifetime(0)
	s.rdb.SetConnMaxIdleTime(0)
	for range opts.Readers {
		r, err := newReader(ctx, s.rdb)
		if err != nil {
			return fail(fmt.Errorf("store: open %s for reading: %w", path, err))
		}
		s.readers <- r
	}
	go s.runWriter()
	go s.runApplier()
	go s.runCheckpointer()
	return s, nil
}

// applyBatches is how many MaxBatch the applier applies per transaction
// at most: it takes everything pending, and fewer, larger transactions
// cost less per save (and coalesce more saves of one task).
const applyBatches = 8

// applyLinger is how long journaled saves wait for more before the
// applier applies them, when nothing waits for it (applyQueue.next).
const applyLinger = 4 * time.Millisecond

// pendingMaxBytes bounds the journaled saves not yet applied (about what
// they take in memory): past it the writer waits for the applier, and
// saves wait for it (their contexts still end them). (A variable for the
// tests.)
var pendingMaxBytes = 64 << 20

// writerYields is how many times the writer yields the processor looking
// for more requests before it commits a batch (see fill): enough for
// concurrent writers to join the batch, no more (chosen with
// BenchmarkSaveTask; docs/performance.md, "Decisions the code refers
// to").
const writerYields = 3

// walBackstopPages is the WAL size (in 4 KiB pages, 16 MiB) past which the
// writer checkpoints by itself. Under a steady stream of writes the
// background checkpoints rarely catch up completely, which the WAL needs
// to start over; the writer's own checkpoint then has little left to copy
// and lets it restart.
const walBackstopPages = 4096

// checkpointEvery is how often the checkpointer runs at the latest; the
// writer kicks it sooner after every checkpointKick commits. Small, frequent
// checkpoints keep the WAL short; a WAL left to run up between checkpoints
// is what raised the send p99 (docs/performance.md, "Call streams, WAL,
// reference host").
const (
	checkpointEvery = 250 * time.Millisecond
	checkpointKick  = 16
)

// runCheckpointer copies committed WAL frames back into the database file
// (PRAGMA wal_checkpoint(PASSIVE): it never blocks the writer or readers,
// and backfills what no reader still needs). Once the WAL is fully
// backfilled the writer starts it over from the beginning, so it stays
// small.
func (s *SQLite) runCheckpointer() {
	defer close(s.ckptDone)
	t := time.NewTicker(checkpointEvery)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
		case <-s.ckptKick:
		}
		// A failure (SQLITE_BUSY when another process checkpoints) is
		// retried on the next round; the writer's backstop bounds the WAL.
		_, _ = s.ckpt.ExecContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)")
	}
}

// closeConns closes readers, the writer's statements and both pools.
func (s *SQLite) closeConns() error {
	var errs []error
	for {
		var r *reader
		select {
		case r = <-s.readers:
		default:
		}
		if r == nil {
			break
		}
		r.close()
	}
	if s.ckpt != nil {
		errs = append(errs, s.ckpt.Close())
	}
	if s.j != nil {
		// After a failed Open or apply the journal stays for the next
		// start.
		_ = s.j.close(false)
	}
	if s.w != nil {
		s.w.close()
		if s.w.conn != nil {
			errs = append(errs, s.w.conn.Close())
		}
	}
	if s.rdb != nil {
		errs = append(errs, s.rdb.Close())
	}
	if s.wdb != nil {
		// The last connection to close checkpoints the WAL into the
		// database and removes it.
		errs = append(errs, s.wdb.Close())
	}
	if s.unlock != nil {
		s.unlock()
		s.unlock = nil
	}
	return errors.Join(errs...)
}

// Close stops the writer after the writes already handed to it, applies
// every journaled save, waits for reads in progress and closes the
// database. Calls after Close fail. If a save cannot be applied, Close
// says so and the journal keeps it for the next OpenSQLite.
func (s *SQLite) Close() error {
	s.closeOnce.Do(func() {
		close(s.quit)
		s.q.quit()
		<-s.writerDone
		<-s.applierDone
		<-s.ckptDone
		var jerr error
		if s.applyErr == nil {
			jerr = s.j.close(true)
			if _, err := s.w.conn.ExecContext(context.Background(), `DELETE FROM journal_state WHERE instance = ?1`, s.j.instance); err != nil {
				jerr = errors.Join(jerr, err)
			}
		} else {
			jerr = errors.Join(s.applyErr, s.j.close(false))
		}
		// Take back every reader, so that no read is in progress.
		rs := make([]*reader, 0, cap(s.readers))
		for range cap(s.readers) {
			rs = append(rs, <-s.readers)
		}
		for _, r := range rs {
			r.close()
		}
		s.closeErr = errors.Join(jerr, s.closeConns())
		if s.closeErr != nil {
			s.closeErr = fmt.Errorf("store: close %s: %w", s.path, s.closeErr)
		}
	})
	return s.closeErr
}

// Size returns the bytes the database occupies on disk: the database file
// plus its write-ahead log and task journal.
func (s *SQLite) Size() (int64, error) {
	n := journalSize(journalDir(s.path))
	for _, p := range []string{s.path, s.path + "-wal"} {
		fi, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("store: size of %s: %w", p, err)
		}
		n += fi.Size()
	}
	return n, nil
}

// Path is the database file.
func (s *SQLite) Path() string { return s.path }

// SaveTask implements Store. The task is encoded by the caller's goroutine.
// Without deliveries the save is journaled and acknowledged, and applied
// later (see SQLite); with deliveries it is applied, with them, in order
// after every journaled save, before the call returns.
func (s *SQLite) SaveTask(ctx context.Context, rec *TaskRecord, deliveries []Delivery) error {
	if err := checkRecord(rec, deliveries); err != nil {
		return err
	}
	blob, err := a2a.Marshal(&rec.Task)
	if err != nil {
		return fmt.Errorf("store: encode task %s: %w", rec.Task.ID, err)
	}
	id := rec.Task.ID
	if len(deliveries) == 0 {
		return s.submit(ctx, nil, &jrec{id: id, contextID: rec.Task.ContextID, owner: rec.Owner,
			state: stateName(rec.Task.Status.State), terminal: rec.Task.Status.State.Terminal(),
			statusMs: rec.StatusMillis(), createdMs: toMillis(rec.CreatedAt), blob: blob, agent: rec.Agent})
	}
	args := []any{id, rec.Task.ContextID, rec.Owner, stateName(rec.Task.Status.State),
		rec.Task.Status.State.Terminal(), rec.StatusMillis(), toMillis(rec.CreatedAt), blob, rec.Agent}
	now := time.Now().UnixMilli()
	return s.write(ctx, func(w *writer) error {
		if err := w.saveTaskRow(args); err != nil {
			return fmt.Errorf("store: save task %s: %w", id, err)
		}
		for i := range deliveries {
			d := &deliveries[i]
			created, next := now, now
			if !d.CreatedAt.IsZero() {
				created = d.CreatedAt.UnixMilli()
			}
			if !d.NextTry.IsZero() {
				next = d.NextTry.UnixMilli()
			}
			if _, err := w.insertOutbox.Exec(id, d.ConfigID, d.Body, d.Attempts, next, d.LastError, created,
				d.ContextID, d.Trace.Traceparent, d.Trace.Tracestate); err != nil {
				return fmt.Errorf("store: save task %s: queue delivery for config %s: %w", id, d.ConfigID, err)
			}
		}
		return nil
	})
}

// GetTask implements Store.
func (s *SQLite) GetTask(ctx context.Context, id, owner string) (*TaskRecord, error) {
	if p := s.pendingTask(id); p != nil {
		if s.closing() {
			return nil, errClosed
		}
		if owner != "" && owner != p.owner {
			return nil, fmt.Errorf("store: task %s: %w", id, ErrNotFound)
		}
		return decodeTask(id, p.owner, p.agent, p.createdMs, p.statusMs, p.blob)
	}
	r, err := s.reader(ctx)
	if err != nil {
		return nil, err
	}
	defer s.release(r)
	var (
		recOwner, agent string
		created, ts     int64
		blob            []byte
	)
	err = r.getTask.QueryRowContext(ctx, id).Scan(&recOwner, &agent, &created, &ts, &blob)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && owner != "" && owner != recOwner) {
		return nil, fmt.Errorf("store: task %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get task %s: %w", id, err)
	}
	return decodeTask(id, recOwner, agent, created, ts, blob)
}

// decodeTask rebuilds a record from its row.
func decodeTask(id, owner, agent string, created, ts int64, blob []byte) (*TaskRecord, error) {
	rec := &TaskRecord{Owner: owner, Agent: agent, CreatedAt: fromMillis(created), UpdatedAt: fromMillis(ts)}
	if err := a2a.Unmarshal(blob, &rec.Task); err != nil {
		return nil, fmt.Errorf("store: decode task %s: %w", id, err)
	}
	return rec, nil
}

// ListTasks implements Store. The count and the page are read in one read
// transaction, so TotalSize and the page agree.
func (s *SQLite) ListTasks(ctx context.Context, q TaskQuery) (TaskPage, error) {
	p, err := planQuery(q)
	if err != nil {
		return TaskPage{}, err
	}
	v := listVariant(p)
	if err := s.barrier(ctx); err != nil {
		return TaskPage{}, err
	}
	cts, cid := int64(math.MaxInt64), ""
	if p.hasCursor {
		cts, cid = p.cursor.ts, p.cursor.id
	}
	r, err := s.reader(ctx)
	if err != nil {
		return TaskPage{}, err
	}
	defer s.release(r)
	defer r.endRead() // whatever beginRead returns, see there
	if err := r.beginRead(); err != nil {
		return TaskPage{}, fmt.Errorf("store: list tasks: %w", err)
	}
	var page TaskPage
	hasAfter := p.after != math.MinInt64
	var rows *sql.Rows
	if p.agent != "" {
		// One agent's tasks (a host with several agents): the statements
		// of the variant with the agent as ?8, counted over its index.
		args := []any{p.owner, p.contextID, p.state, p.after, cts, cid, p.size + 1, p.agent}
		if err := r.conn.QueryRowContext(ctx, agentCountSQL(v), args...).Scan(&page.TotalSize); err != nil {
			return TaskPage{}, fmt.Errorf("store: count tasks: %w", err)
		}
		if page.TotalSize == 0 {
			return page, nil
		}
		rows, err = r.conn.QueryContext(ctx, agentListSQL(v), args...)
	} else {
		count := r.count[v]
		if hasAfter {
			count = r.countAfter[v]
		}
		if err := count.QueryRowContext(ctx, countArgs(v, hasAfter, []any{p.owner, p.contextID, p.state, p.after})...).Scan(&page.TotalSize); err != nil {
			return TaskPage{}, fmt.Errorf("store: count tasks: %w", err)
		}
		if page.TotalSize == 0 {
			return page, nil
		}
		rows, err = r.list[v].QueryContext(ctx, p.owner, p.contextID, p.state, p.after, cts, cid, p.size+1)
	}
	if err != nil {
		return TaskPage{}, fmt.Errorf("store: list tasks: %w", err)
	}
	defer rows.Close()
	page.Tasks = make([]*TaskRecord, 0, min(p.size, page.TotalSize))
	var (
		id, owner, agent string
		created, ts      int64
		blob             sql.RawBytes
		last             taskKey
	)
	for rows.Next() {
		if len(page.Tasks) == p.size {
			page.NextPageToken = encodePageToken(last)
			break
		}
		if err := rows.Scan(&id, &owner, &agent, &created, &ts, &blob); err != nil {
			return TaskPage{}, fmt.Errorf("store: list tasks: %w", err)
		}
		rec, err := decodeTask(id, owner, agent, created, ts, blob)
		if err != nil {
			return TaskPage{}, err
		}
		page.Tasks = append(page.Tasks, rec)
		last = taskKey{ts: ts, id: id}
	}
	if err := rows.Err(); err != nil {
		return TaskPage{}, fmt.Errorf("store: list tasks: %w", err)
	}
	return page, nil
}

// AdoptTasks implements Store.
func (s *SQLite) AdoptTasks(ctx context.Context, agent string) (int, error) {
	if agent == "" {
		return 0, nil
	}
	var n int64
	err := s.write(ctx, func(w *writer) error {
		var err error
		if n, err = w.exec(w.adoptTasks, agent); err != nil {
			return fmt.Errorf("store: give the tasks of no agent to agent %q: %w", agent, err)
		}
		if _, err := w.exec(w.adoptConversations, agent); err != nil {
			return fmt.Errorf("store: give the conversations of no agent to agent %q: %w", agent, err)
		}
		if _, err := w.exec(w.adoptEntries, agent); err != nil {
			return fmt.Errorf("store: give the conversations of no agent to agent %q: %w", agent, err)
		}
		return nil
	})
	return int(n), err
}

// ActiveTasks implements Store: every non-terminal task, oldest status
// first.
func (s *SQLite) ActiveTasks(ctx context.Context) ([]*TaskRecord, error) {
	if err := s.barrier(ctx); err != nil {
		return nil, err
	}
	r, err := s.reader(ctx)
	if err != nil {
		return nil, err
	}
	defer s.release(r)
	rows, err := r.active.QueryContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: active tasks: %w", err)
	}
	defer rows.Close()
	return collect(rows, "active tasks", scanTask("active tasks"))
}

// PutPushConfig implements Store. The task must exist (else ErrNotFound).
// Replacing a config keeps its creation time and so its place in
// ListPushConfigs.
func (s *SQLite) PutPushConfig(ctx context.Context, pc *PushConfig) error {
	if pc == nil || pc.Config.TaskID == "" || pc.Config.ID == "" {
		return errors.New("store: PutPushConfig needs a config with a task id and an id")
	}
	blob, err := a2a.Marshal(&pc.Config)
	if err != nil {
		return fmt.Errorf("store: encode push config %s of task %s: %w", pc.Config.ID, pc.Config.TaskID, err)
	}
	taskID, id, owner, created := pc.Config.TaskID, pc.Config.ID, pc.Owner, createdMillis(pc.CreatedAt)
	return s.write(ctx, func(w *writer) error {
		var one int
		err := w.taskExists.QueryRow(taskID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return clean(fmt.Errorf("store: push config %s: task %s: %w", id, taskID, ErrNotFound))
		}
		if err != nil {
			return clean(fmt.Errorf("store: put push config %s of task %s: %w", id, taskID, err))
		}
		if _, err := w.upsertPushConfig.Exec(taskID, id, owner, created, blob); err != nil {
			return fmt.Errorf("store: put push config %s of task %s: %w", id, taskID, err)
		}
		return nil
	})
}

// createdMillis is t in milliseconds, or now when t is unset.
func createdMillis(t time.Time) int64 {
	if t.IsZero() {
		return time.Now().UnixMilli()
	}
	return t.UnixMilli()
}

// GetPushConfig implements Store.
func (s *SQLite) GetPushConfig(ctx context.Context, taskID, id string) (*PushConfig, error) {
	r, err := s.reader(ctx)
	if err != nil {
		return nil, err
	}
	defer s.release(r)
	var (
		owner   string
		created int64
		blob    []byte
	)
	err = r.getPushConfig.QueryRowContext(ctx, taskID, id).Scan(&owner, &created, &blob)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: push config %s of task %s: %w", id, taskID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get push config %s of task %s: %w", id, taskID, err)
	}
	return decodePushConfig(taskID, id, owner, created, blob)
}

// decodePushConfig rebuilds a push config from its row.
func decodePushConfig(taskID, id, owner string, created int64, blob []byte) (*PushConfig, error) {
	pc := &PushConfig{Owner: owner, CreatedAt: fromMillis(created)}
	if err := a2a.Unmarshal(blob, &pc.Config); err != nil {
		return nil, fmt.Errorf("store: decode push config %s of task %s: %w", id, taskID, err)
	}
	return pc, nil
}

// ListPushConfigs implements Store.
func (s *SQLite) ListPushConfigs(ctx context.Context, taskID string) ([]*PushConfig, error) {
	r, err := s.reader(ctx)
	if err != nil {
		return nil, err
	}
	defer s.release(r)
	rows, err := r.listPushConfigs.QueryContext(ctx, taskID)
	if err != nil {
		return nil, fmt.Errorf("store: list push configs of task %s: %w", taskID, err)
	}
	defer rows.Close()
	return collect(rows, "list push configs of task "+taskID, scanPushConfig(taskID))
}

// DeletePushConfig implements Store. Deliveries still pending for the
// config are dropped with it: nobody is listening there any more.
func (s *SQLite) DeletePushConfig(ctx context.Context, taskID, id string) error {
	return s.write(ctx, func(w *writer) error {
		if _, err := w.deletePushConfig.Exec(taskID, id); err != nil {
			return fmt.Errorf("store: delete push config %s of task %s: %w", id, taskID, err)
		}
		if _, err := w.deleteOutboxOf.Exec(taskID, id); err != nil {
			return fmt.Errorf("store: delete deliveries of push config %s of task %s: %w", id, taskID, err)
		}
		return nil
	})
}

// DueDeliveries implements Store. It does not lease what it returns: the
// deliverer must not ask again for a config whose delivery is in flight.
// limit <= 0 means 100.
func (s *SQLite) DueDeliveries(ctx context.Context, now time.Time, limit int) ([]Delivery, error) {
	if limit <= 0 {
		limit = 100
	}
	r, err := s.reader(ctx)
	if err != nil {
		return nil, err
	}
	defer s.release(r)
	rows, err := r.dueDeliveries.QueryContext(ctx, now.UnixMilli(), limit)
	if err != nil {
		return nil, fmt.Errorf("store: due deliveries: %w", err)
	}
	defer rows.Close()
	return collect(rows, "due deliveries", scanDelivery("due deliveries"))
}

// ClaimDeliveries implements Store for a single process: it is
// DueDeliveries (one dispatcher, which tracks what it is delivering).
func (s *SQLite) ClaimDeliveries(ctx context.Context, replica string, now time.Time, lease time.Duration, limit int) ([]Delivery, error) {
	return s.DueDeliveries(ctx, now, limit)
}

// CompleteDelivery implements Store. Completing a delivery that no longer
// exists (its task was pruned or its config deleted meanwhile) is not an
// error.
func (s *SQLite) CompleteDelivery(ctx context.Context, id int64, gaveUp bool, reason string) error {
	now := time.Now().UnixMilli()
	return s.write(ctx, func(w *writer) error {
		if gaveUp {
			if _, err := w.failDelivery.Exec(id, reason, now); err != nil {
				return fmt.Errorf("store: record failed delivery %d: %w", id, err)
			}
		}
		if _, err := w.deleteDelivery.Exec(id); err != nil {
			return fmt.Errorf("store: complete delivery %d: %w", id, err)
		}
		return nil
	})
}

// RetryDelivery implements Store. A delivery that no longer exists gives
// ErrNotFound.
func (s *SQLite) RetryDelivery(ctx context.Context, id int64, attempts int, next time.Time, lastErr string) error {
	nextMs := next.UnixMilli()
	return s.write(ctx, func(w *writer) error {
		n, err := w.exec(w.retryDelivery, id, attempts, nextMs, lastErr)
		if err != nil {
			return fmt.Errorf("store: retry delivery %d: %w", id, err)
		}
		if n == 0 {
			return clean(fmt.Errorf("store: delivery %d: %w", id, ErrNotFound))
		}
		return nil
	})
}

// AppendConversation implements Store. A zero Time is set to now; the
// entry's ID is ignored (the store assigns it).
func (s *SQLite) AppendConversation(ctx context.Context, e *ConversationEntry) (int64, error) {
	if e == nil {
		return 0, errors.New("store: AppendConversation with a nil entry")
	}
	parts, err := encodeEntryParts(e)
	if err != nil {
		return 0, err
	}
	at := createdMillis(e.Time)
	c := *e
	var id int64
	err = s.write(ctx, func(w *writer) error {
		res, err := w.insertEntry.Exec(c.ContextID, c.Peer, c.Direction, c.TaskID, c.MessageID, c.State, c.Text, parts, at, c.Agent)
		if err == nil {
			id, err = res.LastInsertId()
		}
		if err != nil {
			return fmt.Errorf("store: append conversation entry of context %s: %w", c.ContextID, err)
		}
		if _, err := w.upsertConversation.Exec(c.ContextID, c.Peer, c.TaskID, c.State, at, id, c.Agent); err != nil {
			return fmt.Errorf("store: update conversation %s: %w", c.ContextID, err)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return id, nil
}

// Conversation implements Store.
func (s *SQLite) Conversation(ctx context.Context, contextID string, limit int) ([]ConversationEntry, error) {
	return s.agentConversation(ctx, "", contextID, limit)
}

func (s *SQLite) agentConversation(ctx context.Context, agent, contextID string, limit int) ([]ConversationEntry, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	r, err := s.reader(ctx)
	if err != nil {
		return nil, err
	}
	defer s.release(r)
	rows, err := r.conversation.QueryContext(ctx, contextID, limit, agent)
	if err != nil {
		return nil, fmt.Errorf("store: conversation %s: %w", contextID, err)
	}
	defer rows.Close()
	out, err := collect(rows, "conversation "+contextID, scanConversationEntry(contextID))
	if err != nil {
		return nil, err
	}
	slices.Reverse(out) // read newest first to apply the limit; return oldest first
	return out, nil
}

// Conversations implements Store. limit <= 0 means all.
func (s *SQLite) Conversations(ctx context.Context, limit int) ([]ConversationSummary, error) {
	return s.agentConversations(ctx, "", limit)
}

func (s *SQLite) agentConversations(ctx context.Context, agent string, limit int) ([]ConversationSummary, error) {
	if limit <= 0 {
		limit = -1
	}
	r, err := s.reader(ctx)
	if err != nil {
		return nil, err
	}
	defer s.release(r)
	rows, err := r.conversations.QueryContext(ctx, limit, agent)
	if err != nil {
		return nil, fmt.Errorf("store: conversations: %w", err)
	}
	defer rows.Close()
	return collect(rows, "conversations", scanConversationSummary)
}

// Prune implements Store. It deletes in transactions of at most
// SQLiteOptions.PruneBatch tasks or conversations, each queued behind (and
// batched with) ordinary writes, so a large prune never stalls writers for
// long. Records of given-up deliveries older than cutoff go too.
func (s *SQLite) Prune(ctx context.Context, cutoff time.Time) (tasks, entries int, err error) {
	c := cutoff.UnixMilli()
	batch := s.pruneBatch
	for {
		var n int64
		err := s.write(ctx, func(w *writer) error {
			var err error
			n, err = w.pruneTaskRows(c, batch)
			if err != nil {
				return fmt.Errorf("store: prune tasks: %w", err)
			}
			return nil
		})
		if err != nil {
			return tasks, entries, err
		}
		tasks += int(n)
		if n < int64(batch) {
			break
		}
	}
	for {
		var convs, n int
		err := s.write(ctx, func(w *writer) error {
			convs, n = 0, 0
			rows, err := w.staleConversations.Query(c, batch)
			if err != nil {
				return clean(fmt.Errorf("store: prune conversations: %w", err))
			}
			var ids [][2]string // agent, context
			for rows.Next() {
				var id [2]string
				if err := rows.Scan(&id[0], &id[1]); err != nil {
					rows.Close()
					return clean(fmt.Errorf("store: prune conversations: %w", err))
				}
				ids = append(ids, id)
			}
			rows.Close()
			for _, id := range ids {
				k, err := w.exec(w.deleteEntriesOf, id[0], id[1])
				if err != nil {
					return fmt.Errorf("store: prune conversation %s: %w", id[1], err)
				}
				if _, err := w.exec(w.deleteConversation, id[0], id[1]); err != nil {
					return fmt.Errorf("store: prune conversation %s: %w", id[1], err)
				}
				n += int(k)
			}
			convs = len(ids)
			return nil
		})
		if err != nil {
			return tasks, entries, err
		}
		entries += n
		if convs < batch {
			break
		}
	}
	for {
		var n int64
		err := s.write(ctx, func(w *writer) error {
			var err error
			n, err = w.exec(w.pruneFailed, c, batch)
			if err != nil {
				return fmt.Errorf("store: prune failed deliveries: %w", err)
			}
			return nil
		})
		if err != nil {
			return tasks, entries, err
		}
		if n < int64(batch) {
			break
		}
	}
	if err := s.pruneDelegations(ctx, c); err != nil {
		return tasks, entries, err
	}
	return tasks, entries, nil
}
