package rule

// TokenHashes exposes the verification tokenizer to the external tests that
// compare it with package eval's ground truth (eval imports dedup, which
// imports this package, so they cannot live in it): the FNV-1a 64 hashes of
// text's tokens.
func TokenHashes(text string) []uint64 {
	var s shingler
	s.tokens(text)
	return s.toks
}
