//go:build !unix

package outfiletest

import "errors"

var errUnsupported = errors.New("not supported on this platform")

func mknodNull(string) error { return errUnsupported }
func mkfifo(string) error    { return errUnsupported }
func releaseReader(string)   {}
