package web

import (
	"net/http"
	"testing"
)

// TestPrefersAsyncReadsRFC7240: respond-async is a preference token, in any
// case, among others, with or without parameters; a longer name or a value
// is not it.
func TestPrefersAsyncReadsRFC7240(t *testing.T) {
	for _, test := range []struct {
		headers []string
		want    bool
	}{
		{[]string{"respond-async"}, true},
		{[]string{"Respond-Async"}, true},
		{[]string{"wait=10, respond-async"}, true},
		{[]string{"return=minimal", " respond-async ; foo=bar"}, true},
		{[]string{"respond-asynchronously"}, false},
		{[]string{"return=respond-async"}, false},
		{[]string{"handling=lenient"}, false},
		{nil, false},
	} {
		h := http.Header{}
		for _, v := range test.headers {
			h.Add("Prefer", v)
		}
		if got := prefersAsync(h); got != test.want {
			t.Errorf("Prefer %q: %v, want %v", test.headers, got, test.want)
		}
	}
}
