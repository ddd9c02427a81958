package dedup

// TokenHashes exposes the verification tokenizer to the external tests that
// compare it with package eval's ground truth (eval imports dedup, so they
// cannot live in this package): the FNV-1a 64 hashes of text's tokens.
func TokenHashes(text string) []uint64 {
	var s shingler
	s.tokens(text)
	return s.toks
}
