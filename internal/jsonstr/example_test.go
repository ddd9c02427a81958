package jsonstr_test

import (
	"fmt"

	"github.com/neardup/neardup/internal/jsonstr"
)

func Example() {
	b := []byte(`{"text":"caf\u00e9 \ud83d\ude00\n"}`)
	i := 8 // the opening quote of the value
	end, esc, err := jsonstr.Scan(b, i)
	if err != nil {
		fmt.Println(err, "at", end)
		return
	}
	raw := b[i+1 : end-1]
	s := string(raw)
	if esc {
		s = jsonstr.Unescape(raw)
	}
	fmt.Printf("%q %q\n", s, b[end:])

	_, _, err = jsonstr.Scan([]byte(`"a\x"`), 0)
	fmt.Println(err)
	// Output:
	// "café 😀\n" "}"
	// invalid escape \x
}
