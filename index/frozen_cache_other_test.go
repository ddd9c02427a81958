//go:build !linux

package index

// dropCache does nothing here: cold opens are measured on Linux only.
func dropCache(string) error { return nil }
