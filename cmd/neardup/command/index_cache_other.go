//go:build !linux

package command

import "errors"

func dropPageCache(string) error {
	return errors.New("--cold needs Linux (posix_fadvise)")
}
