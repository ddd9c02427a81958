//go:build !linux

package pagecache

import (
	"errors"
	"fmt"
)

// Drop needs Linux (posix_fadvise): elsewhere it returns an error wrapping
// errors.ErrUnsupported.
func Drop(string) error {
	return fmt.Errorf("dropping a file's pages from the page cache needs Linux (posix_fadvise): %w", errors.ErrUnsupported)
}
