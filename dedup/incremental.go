package dedup

import (
	"context"
	"errors"
)

func (r *runner) matchIndex(ctx context.Context) error {
	return errors.New("dedup: incremental mode: index not available yet")
}

func (r *runner) updateIndex(ctx context.Context) error {
	return errors.New("dedup: incremental mode: index not available yet")
}
