package store_test

import (
	"testing"

	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/storetest"
)

func TestBoltStore(t *testing.T) {
	storetest.RunDurable(t, func(dir, settings string) (store.Store, error) {
		return store.OpenBolt(dir, store.BoltOptions{Settings: settings})
	})
}
