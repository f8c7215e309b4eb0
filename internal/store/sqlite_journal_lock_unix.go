//go:build unix

package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// lockJournal takes an exclusive lock on the journal directory dir, held
// until release: two processes on one database would replay and delete
// each other's journal. The lock ends with the process too.
func lockJournal(dir string) (release func(), err error) {
	path := filepath.Join(dir, "lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s is in use by another process (or another store in this one) on the same database", dir)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}

// lockStore takes the database's store lock (root/store.lock, root being
// its journal directory), waiting up to wait for a store that is closing
// (a plugin restarting) to let go; it fails with what to do when another
// store keeps it. The lock ends with the process too.
func lockStore(root string, wait time.Duration) (release func(), err error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(root, "store.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("the database is open in another store (another a2a-plugin process, or a tool, on the same data directory; %s stayed locked for %v): "+
				"a SQLite store serves one process at a time — stop the other one, or use the PostgreSQL store for several replicas", path, wait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
