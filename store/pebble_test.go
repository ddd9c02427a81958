package store_test

import (
	"testing"

	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/storetest"
)

func TestPebbleStore(t *testing.T) {
	storetest.RunDurable(t, func(dir, settings string) (store.Store, error) {
		return store.OpenPebble(dir, store.PebbleOptions{Settings: settings, MemTableSize: 1 << 20})
	})
}
