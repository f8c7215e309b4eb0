package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// The task journal (issue 32). A SaveTask without webhook deliveries is
// acknowledged once its row is appended to an append-only journal file
// (one write(2) per group of concurrent saves): the bytes are then in the
// kernel, which outlives the process, exactly as a synchronous=NORMAL
// commit's WAL frames are. The applier (sqlite_apply.go) writes the
// journaled rows into SQLite behind the callers.
//
// The journals are in a directory beside the database, "<db>.tasklog"
// (not "-journal", "-wal" or "-shm": SQLite owns those names): each open
// store has one, a directory named by a time-ordered id that it holds
// locked while open (one store at a time opens a database: the store lock,
// lockStore; a journal no store holds is one a crash left, replayed at the
// next open), of segments
// NNNNNNNNNN.log, each a sequence of records:
//
//	uint32 LE  payload length
//	uint32 LE  CRC-32C (Castagnoli) of the payload
//	payload:   uvarint seq, then id, context id, owner, state (each a
//	           uvarint length and the bytes), terminal (one byte), status
//	           and creation time in Unix ms (varints), the task blob and
//	           the agent (uvarint length and bytes)
//
// seq numbers the saves of one journal, increasing across its segments;
// the database keeps the highest seq of each journal it has applied
// (journal_state, migration 9) in the transaction that applies it, so a
// replay skips what was applied already, even when a later write (a
// prune, a save with deliveries) changed the same task since.

// journalSegmentMax is the size past which the writer starts a new
// segment; a segment all of whose records are applied is deleted. (A
// variable for the tests.)
var journalSegmentMax int64 = 4 << 20

// crc32c is the Castagnoli table (hardware-accelerated on amd64/arm64).
var crc32c = crc32.MakeTable(crc32.Castagnoli)

// jrec is one journaled save: the row saveTaskRow writes, and its place
// in the journal.
type jrec struct {
	seq                         int64
	id, contextID, owner, state string
	terminal                    bool
	statusMs, createdMs         int64
	blob                        []byte
	agent                       string
}

// args are the arguments of writer.saveTaskRow.
func (r *jrec) args() []any {
	return []any{r.id, r.contextID, r.owner, r.state, r.terminal, r.statusMs, r.createdMs, r.blob, r.agent}
}

// size is about what r holds in memory (for the applier's backpressure).
func (r *jrec) size() int {
	return 128 + len(r.id) + len(r.contextID) + len(r.owner) + len(r.state) + len(r.blob) + len(r.agent)
}

// appendRecord appends r's journal record to buf.
func appendRecord(buf []byte, r *jrec) []byte {
	start := len(buf)
	buf = append(buf, 0, 0, 0, 0, 0, 0, 0, 0)
	buf = binary.AppendUvarint(buf, uint64(r.seq))
	for _, s := range [...]string{r.id, r.contextID, r.owner, r.state} {
		buf = binary.AppendUvarint(buf, uint64(len(s)))
		buf = append(buf, s...)
	}
	t := byte(0)
	if r.terminal {
		t = 1
	}
	buf = append(buf, t)
	buf = binary.AppendVarint(buf, r.statusMs)
	buf = binary.AppendVarint(buf, r.createdMs)
	buf = binary.AppendUvarint(buf, uint64(len(r.blob)))
	buf = append(buf, r.blob...)
	buf = binary.AppendUvarint(buf, uint64(len(r.agent)))
	buf = append(buf, r.agent...)
	payload := buf[start+8:]
	binary.LittleEndian.PutUint32(buf[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(buf[start+4:], crc32.Checksum(payload, crc32c))
	return buf
}

// errBadRecord marks a record that is cut short or fails its checksum.
var errBadRecord = errors.New("torn or damaged record")

// readRecord decodes the record at the start of b and returns it and its
// length in b.
func readRecord(b []byte) (*jrec, int, error) {
	if len(b) < 8 {
		return nil, 0, errBadRecord
	}
	n := int(binary.LittleEndian.Uint32(b))
	if n > len(b)-8 {
		return nil, 0, errBadRecord
	}
	payload := b[8 : 8+n]
	if crc32.Checksum(payload, crc32c) != binary.LittleEndian.Uint32(b[4:]) {
		return nil, 0, errBadRecord
	}
	d := decoder{b: payload}
	r := &jrec{seq: int64(d.uvarint())}
	r.id, r.contextID, r.owner, r.state = d.str(), d.str(), d.str(), d.str()
	r.terminal = d.byte() == 1
	r.statusMs, r.createdMs = d.varint(), d.varint()
	r.blob = []byte(d.str())
	r.agent = d.str()
	if d.bad || len(d.b) != 0 {
		return nil, 0, errBadRecord
	}
	return r, 8 + n, nil
}

// decoder reads the fields of a record payload; bad is set by any
// field that runs past the end.
type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.bad = true
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) str() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.bad, d.b = true, nil
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// journal is the segment files. The writer goroutine appends (append,
// rotate); the applier deletes the segments it has applied (release).
type journal struct {
	dir      string // this store's journal: root/instance
	instance string
	fullSync bool
	segMax   int64

	// Owned by the writer goroutine.
	f       *os.File
	num     int   // number of the open segment
	size    int64 // its length
	lastSeq int64 // the last seq written to it
	broken  error // a failed append that could not be undone

	mu     sync.Mutex
	closed []segment // rotated segments, oldest first

	unlock func() // releases the directory's lock (lockJournal)
}

// segment is a rotated segment and the last seq it holds.
type segment struct {
	path    string
	lastSeq int64
}

// journalDir is the directory of the journals of the database at path.
func journalDir(path string) string { return path + ".tasklog" }

// segmentPath is segment number n of dir.
func segmentPath(dir string, n int) string {
	return filepath.Join(dir, fmt.Sprintf("%010d.log", n))
}

// listSegments returns the segment files of dir in order, with their
// numbers.
func listSegments(dir string) ([]string, []int, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var nums []int
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".log")
		if !ok || e.IsDir() {
			continue
		}
		n, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		nums = append(nums, n)
	}
	slices.Sort(nums)
	paths := make([]string, len(nums))
	for i, n := range nums {
		paths[i] = segmentPath(dir, n)
	}
	return paths, nums, nil
}

// openJournal creates a new journal in root (private to the user, as the
// database is) and locks it; start opens its first segment.
func openJournal(root string, fullSync bool) (*journal, error) {
	id := a2a.NewID()
	dir := filepath.Join(root, id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	unlock, err := lockJournal(dir)
	if err != nil {
		return nil, err
	}
	if fullSync {
		// The new directory's entry must reach the disk too before a
		// save in it is acknowledged.
		if err := syncDir(root); err != nil {
			unlock()
			return nil, err
		}
	}
	return &journal{dir: dir, instance: id, fullSync: fullSync, segMax: journalSegmentMax, unlock: unlock}, nil
}

// syncDir fsyncs directory dir, so that the entries created in it are on
// the disk (FullSync).
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// start opens segment j.num+1.
func (j *journal) start() error {
	f, err := os.OpenFile(segmentPath(j.dir, j.num+1), os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	if j.fullSync {
		// The segment's entry in the directory, as its bytes, must be
		// on the disk before a save in it is acknowledged.
		if err := syncDir(j.dir); err != nil {
			f.Close()
			return err
		}
	}
	j.f, j.num, j.size, j.lastSeq = f, j.num+1, 0, 0
	return nil
}

// append writes buf (whole records, the last with seq lastSeq) with one
// write(2), and with FullSync waits for it to reach the disk. A failed
// append is cut off again, so that no torn record is ever followed by
// acknowledged ones; if even that fails, the journal refuses every later
// append.
func (j *journal) append(buf []byte, lastSeq int64) error {
	if j.broken != nil {
		return j.broken
	}
	_, err := j.f.Write(buf)
	if err == nil && j.fullSync {
		err = j.f.Sync()
	}
	if err != nil {
		if terr := j.f.Truncate(j.size); terr != nil {
			j.broken = fmt.Errorf("the task journal %s is unusable after a failed write (%v): %w", j.f.Name(), err, terr)
		}
		return err
	}
	j.size += int64(len(buf))
	j.lastSeq = lastSeq
	if j.size >= j.segMax {
		j.rotate()
	}
	return nil
}

// rotate closes the open segment and starts the next. The closed segment
// is synced first, so that whatever befalls the machine, only the last
// segment can end in a torn record (see replayJournal).
func (j *journal) rotate() {
	old, oldf := segment{path: j.f.Name(), lastSeq: j.lastSeq}, j.f
	if err := oldf.Sync(); err != nil {
		return // keep appending to this one; the next append retries
	}
	if err := j.start(); err != nil {
		return
	}
	_ = oldf.Close()
	j.mu.Lock()
	j.closed = append(j.closed, old)
	j.mu.Unlock()
}

// release deletes the rotated segments whose records are all applied.
func (j *journal) release(applied int64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	i := 0
	for ; i < len(j.closed) && j.closed[i].lastSeq <= applied; i++ {
		_ = os.Remove(j.closed[i].path)
	}
	j.closed = j.closed[i:]
}

// journalSize is the size of the journals in root (for SQLite.Size).
func journalSize(root string) int64 {
	ents, _ := os.ReadDir(root)
	var n int64
	for _, e := range ents {
		paths, _, _ := listSegments(filepath.Join(root, e.Name()))
		for _, p := range paths {
			if fi, err := os.Stat(p); err == nil {
				n += fi.Size()
			}
		}
	}
	return n
}

// close closes the open segment and, when everything is applied
// (removeAll), deletes the journal; then it releases the lock.
func (j *journal) close(removeAll bool) error {
	var err error
	if j.f != nil {
		err = j.f.Close()
		j.f = nil
	}
	if removeAll {
		removeJournal(j.dir)
	}
	if j.unlock != nil {
		j.unlock()
		j.unlock = nil
	}
	return err
}

// removeJournal deletes the journal directory dir: its segments, its
// lock file, itself.
func removeJournal(dir string) {
	paths, _, _ := listSegments(dir)
	for _, p := range paths {
		_ = os.Remove(p)
	}
	_ = os.Remove(filepath.Join(dir, "lock"))
	_ = os.Remove(dir)
}

// readSegment returns the records of one segment file and whether it
// ends in a torn or damaged record (tail: the bytes from there on).
func readSegment(path string) (recs []*jrec, tail int, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	for len(b) > 0 {
		r, n, err := readRecord(b)
		if err != nil {
			return recs, len(b), nil
		}
		recs = append(recs, r)
		b = b[n:]
	}
	return recs, 0, nil
}
