package gateway

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestTheCarrierGetsTheBodyAsSentWithItsOwnModel: the carrier's body is
// the caller's with the listing's model name, usage asked for in a stream,
// and the gateway's own directives removed; every other member passes as
// it came, in its order.
func TestTheCarrierGetsTheBodyAsSentWithItsOwnModel(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		stream     bool
		want       string
	}{
		{"model replaced, order kept", `{"messages":[{"role":"user","content":"hi \"there\""}],"model":"m","temperature":0.2}`, false,
			`{"messages":[{"role":"user","content":"hi \"there\""}],"model":"up-m","temperature":0.2}`},
		{"directives dropped", `{"model":"m","routing":{"mode":"cheapest"},"provider":{"order":["a"]},"x-vendor":{"k":[1,2]}}`, false,
			`{"model":"up-m","x-vendor":{"k":[1,2]}}`},
		{"usage asked in a stream", `{"model":"m","stream":true,"messages":[]}`, true,
			`{"model":"up-m","stream":true,"messages":[],"stream_options":{"include_usage":true}}`},
		{"stream options kept, usage set", `{"stream_options":{"include_usage":false,"continuous_usage_stats":true},"model":"m","stream":true}`, true,
			`{"stream_options":{"continuous_usage_stats":true,"include_usage":true},"model":"up-m","stream":true}`},
		{"not a stream: options as sent", `{"model":"m","stream_options":{"include_usage":false}}`, false,
			`{"model":"up-m","stream_options":{"include_usage":false}}`},
		{"names escaped as they must be", `{"model":"m","we\u0022ird":1}`, false, `{"model":"up-m","we\"ird":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			members, err := splitBody([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			got := upstreamBody(members, "up-m", tc.stream)
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			var a, b any
			if json.Unmarshal(got, &a) != nil || json.Unmarshal([]byte(tc.want), &b) != nil || !reflect.DeepEqual(a, b) {
				t.Errorf("not the same JSON: %s", got)
			}
		})
	}
	for _, bad := range []string{`[1]`, `{"model":"m"`, `"m"`, `{"model":}`, `{"Model":"m"}`, `{"model":"m"} x`} {
		if _, err := splitBody([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
