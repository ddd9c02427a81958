package keptset

// SetMergeHook sets the hook a merge calls at each step of its switch
// (mergeHook), until the returned function restores the one before.
func SetMergeHook(f func(step string)) (restore func()) {
	old := mergeHook
	mergeHook = f
	return func() { mergeHook = old }
}
