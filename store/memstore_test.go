package store_test

import (
	"testing"

	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/storetest"
)

func TestMemStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return store.NewMemStore() }, nil)
}
