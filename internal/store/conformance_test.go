package store_test

import (
	"path/filepath"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/store/storetest"
)

func TestMemoryConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return store.NewMemory(0) })
}

func TestSQLiteConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := store.OpenSQLite(filepath.Join(t.TempDir(), "a2a-plugin.db"), store.SQLiteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
