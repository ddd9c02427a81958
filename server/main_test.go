package server

import (
	"os"
	"testing"

	"github.com/neardup/neardup/internal/redistest"
)

// TestMain stops the Redis server and cluster that the tests share
// (startRedis, startCluster).
func TestMain(m *testing.M) {
	code := m.Run()
	redistest.StopShared()
	os.Exit(code)
}
