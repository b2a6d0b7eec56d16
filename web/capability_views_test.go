package web

import (
	"testing"
	"time"

	"github.com/airside/airside/internal/workflow"
)

func TestOverrideTextSaysWhoWhenWhyAndUntil(t *testing.T) {
	at := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	for _, test := range []struct {
		name         string
		o            workflow.Override
		contradicted bool
		want         string
	}{
		{"live", workflow.Override{State: "verified", Note: "checked by hand", At: at, By: "judge@airside.example", Until: at.AddDate(0, 0, 30)}, false,
			"verified by judge@airside.example on 2026-11-20 (checked by hand); counts until 2026-12-20"},
		{"contradicted", workflow.Override{State: "verified", At: at, By: "judge@airside.example", Until: at.AddDate(0, 0, 30)}, true,
			"verified by judge@airside.example on 2026-11-20; counts until 2026-12-20. Contradicted: the probe failed after this override; check the endpoint"},
		{"expired", workflow.Override{State: "failed", At: at, By: "judge@airside.example", Until: at.AddDate(0, 0, 1), Expired: true}, false,
			"failed by judge@airside.example on 2026-11-20; expired on 2026-11-21: the probes decide again"},
		{"reviewer gone", workflow.Override{State: "verified", At: at, Until: at.AddDate(0, 0, 30)}, false,
			"verified by a reviewer on 2026-11-20; counts until 2026-12-20"},
	} {
		if got := overrideText(test.o, test.contradicted); got != test.want {
			t.Errorf("%s:\n got %q\nwant %q", test.name, got, test.want)
		}
	}
}
