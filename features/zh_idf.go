package features

import (
	"strconv"
	"strings"
	"sync"

	"github.com/go-ego/gse"
)

var zhIDF struct {
	once sync.Once
	t    *IDF
}

// ChineseIDF returns the Chinese IDF table shipped with gse (gse.ZhIdf: the
// idf.txt of jieba's keyword extractor, about 270,000 Simplified Chinese
// words, IDFs from 0.88 for 的 to 13.9, average 11.7). Words missing from it
// get the average IDF, as in seed 004. The table is parsed on first use
// (about 0.1 s) and shared; it is safe for concurrent use.
func ChineseIDF() *IDF {
	zhIDF.once.Do(func() { zhIDF.t = NewIDF(parseGseIDF(gse.ZhIdf)) })
	return zhIDF.t
}

// parseGseIDF parses gse's IDF text: one "word idf" per line, separated by a
// space. Malformed lines are skipped (the shipped table has none).
func parseGseIDF(s string) map[string]float64 {
	m := make(map[string]float64, strings.Count(s, "\n")+1)
	for len(s) > 0 {
		line, rest, _ := strings.Cut(s, "\n")
		s = rest
		line = strings.TrimSpace(line)
		i := strings.LastIndexByte(line, ' ')
		if i <= 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		m[strings.TrimSpace(line[:i])] = v
	}
	return m
}
