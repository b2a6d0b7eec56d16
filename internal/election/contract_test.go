package election_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/airside/airside/internal/election"
)

func TestDecodeBallotErrorsNameTheField(t *testing.T) {
	const okFare = `"fare":{"inputPrice":"0.5","outputPrice":"1"}`
	for _, test := range []struct {
		name, input, wantField string
	}{
		{"malformed JSON", `{"request":`, ""},
		{"empty input", ``, ""},
		{"missing request", `{"candidates":[]}`, "request"},
		{"unknown routing mode", `{"request":{"routing":"cheapest"},"candidates":[]}`, "request.routing"},
		{"unknown workload", `{"request":{"workload":"batch"},"candidates":[]}`, "request.workload"},
		{"unknown capability", `{"request":{"requires":["telepathy"]},"candidates":[]}`, "request.requires[0]"},
		{"bad time", `{"request":{"at":"yesterday"},"candidates":[]}`, "request.at"},
		{"negative prompt", `{"request":{"promptTokens":-1},"candidates":[]}`, "request.promptTokens"},
		{"negative price", `{"request":{},"candidates":[{"id":"a",` + okFare + `},{"id":"b","fare":{"inputPrice":"-0.1","outputPrice":"1"}}]}`, "candidates[1].fare.inputPrice"},
		{"price not a decimal", `{"request":{},"candidates":[{"id":"a","fare":{"inputPrice":"NaN","outputPrice":"1"}}]}`, "candidates[0].fare.inputPrice"},
		{"missing output price", `{"request":{},"candidates":[{"id":"a","fare":{"inputPrice":"1"}}]}`, "candidates[0].fare.outputPrice"},
		{"landing fee below 5%", `{"request":{},"candidates":[{"id":"a","fare":{"inputPrice":"1","outputPrice":"1","landingFee":"0.04"}}]}`, "candidates[0].fare.landingFee"},
		{"landing fee above 50%", `{"request":{},"candidates":[{"id":"a","fare":{"inputPrice":"1","outputPrice":"1","landingFee":0.51}}]}`, "candidates[0].fare.landingFee"},
		{"discount above 50%", `{"request":{},"candidates":[{"id":"a","fare":{"inputPrice":"1","outputPrice":"1","discount":"0.6"}}]}`, "candidates[0].fare.discount"},
		{"negative tier price", `{"request":{},"candidates":[{"id":"a","fare":{"inputPrice":"1","outputPrice":"1","tiers":[{"aboveTokens":10,"inputPrice":"-1"}]}}]}`, "candidates[0].fare.tiers[0].inputPrice"},
		{"peak window backwards", `{"request":{},"candidates":[{"id":"a","fare":{"inputPrice":"1","outputPrice":"1","timeBased":{"peakHoursUtc":[[5,3]]}}}]}`, "candidates[0].fare.timeBased.peakHoursUtc[0]"},
		{"weekday out of range", `{"request":{},"candidates":[{"id":"a","fare":{"inputPrice":"1","outputPrice":"1","timeBased":{"offPeakDays":{"daysOfWeek":[7]}}}}]}`, "candidates[0].fare.timeBased.offPeakDays.daysOfWeek[0]"},
		{"uptime above 100", `{"request":{},"candidates":[{"id":"a","metrics":{"uptime":101},` + okFare + `}]}`, "candidates[0].metrics.uptime"},
		{"wrong type", `{"request":{"promptTokens":"many"},"candidates":[]}`, "request.promptTokens"},
		{"negative weight", `{"request":{},"weights":{"price":-1},"candidates":[]}`, "weights.price"},
		{"unknown policy", `{"request":{},"policy":"lottery","candidates":[]}`, "policy"},
		{"a share figure past 1", `{"request":{},"candidates":[{"id":"a","shareMetrics":{"errorRate":1.5},` + okFare + `}]}`, "candidates[0].shareMetrics.errorRate"},
		{"negative successes", `{"request":{},"candidates":[{"id":"a","shareMetrics":{"successes":-1},` + okFare + `}]}`, "candidates[0].shareMetrics.successes"},
		{"unknown breaker state", `{"request":{},"candidates":[{"id":"a","state":{"breaker":"ajar"},` + okFare + `}]}`, "candidates[0].state.breaker"},
		{"unknown quantization", `{"request":{},"candidates":[{"id":"a","fare":{"inputPrice":"1","outputPrice":"1","quantization":"fp3"}}]}`, "candidates[0].fare.quantization"},
		{"negative retention", `{"request":{},"candidates":[{"id":"a","fare":{"inputPrice":"1","outputPrice":"1","retentionDays":-1}}]}`, "candidates[0].fare.retentionDays"},
		{"malformed region", `{"request":{},"candidates":[{"id":"a","fare":{"inputPrice":"1","outputPrice":"1","regions":["DE","usa"]}}]}`, "candidates[0].fare.regions[1]"},
		{"empty regions", `{"request":{},"candidates":[{"id":"a","fare":{"inputPrice":"1","outputPrice":"1","regions":[]}}]}`, "candidates[0].fare.regions"},
		{"negative request fee", `{"request":{},"candidates":[{"id":"a","fare":{"inputPrice":"1","outputPrice":"1","requestPrice":"-0.001"}}]}`, "candidates[0].fare.requestPrice"},
		{"negative image fee in a tier", `{"request":{},"candidates":[{"id":"a","fare":{"inputPrice":"1","outputPrice":"1","tiers":[{"aboveTokens":10,"imagePrice":"-1"}]}}]}`, "candidates[0].fare.tiers[0].imagePrice"},
		{"zero context", `{"request":{},"candidates":[{"id":"a","fare":{"inputPrice":"1","outputPrice":"1","contextLength":0}}]}`, "candidates[0].fare.contextLength"},
		{"zero max tokens", `{"request":{"maxTokens":0},"candidates":[]}`, "request.maxTokens"},
		{"negative images", `{"request":{"images":-2},"candidates":[]}`, "request.images"},
		{"lowercase residency", `{"request":{"regions":["de"]},"candidates":[]}`, "request.regions[0]"},
		{"unknown wanted quantization", `{"request":{"provider":{"quantizations":["fp8","q4"]}},"candidates":[]}`, "request.provider.quantizations[1]"},
		{"data collection neither allow nor deny", `{"request":{"provider":{"data_collection":"maybe"}},"candidates":[]}`, "request.provider.data_collection"},
		{"unknown sort", `{"request":{"provider":{"sort":"cheapest"}},"candidates":[]}`, "request.provider.sort"},
		{"negative max price", `{"request":{"provider":{"max_price":{"completion":"-1"}}},"candidates":[]}`, "request.provider.max_price.completion"},
		{"empty order entry", `{"request":{"provider":{"order":["orbit",""]}},"candidates":[]}`, "request.provider.order[1]"},
		{"a limit flag not a boolean", `{"request":{},"candidates":[{"id":"a","state":{"backoff":"yes"},` + okFare + `}]}`, "candidates.state.backoff"}, // encoding/json names no index in a type error
	} {
		t.Run(test.name, func(t *testing.T) {
			_, err := election.DecodeBallot(strings.NewReader(test.input))
			var inputErr *election.InputError
			if !errors.As(err, &inputErr) {
				t.Fatalf("error %v, want an InputError", err)
			}
			if inputErr.Field != test.wantField {
				t.Errorf("field %q, want %q (%v)", inputErr.Field, test.wantField, err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("message is not one line: %q", err)
			}
		})
	}
}

func TestDecodeBallotAcceptsStringsAndNumbers(t *testing.T) {
	b, err := election.DecodeBallot(strings.NewReader(`{"request":{"model":"m","promptTokens":20000,"at":"2026-11-30T02:00:00Z"},
		"candidates":[{"id":"a","priority":2,"capabilities":{"tools":true,"vision":false},"usage":{"rpm":3},
		"fare":{"inputPrice":0.55,"outputPrice":"2.20","cachedInputPrice":null,"maxRpm":600,
		"tiers":[{"aboveTokens":32768,"inputPrice":"1.10"}],
		"timeBased":{"effectiveAt":"2026-08-16T16:00:00Z","peakHoursUtc":[[1,4]],"offPeakDays":{"daysOfWeek":[0,6],"utcOffsetMinutes":480},
		"peak":{"inputPrice":"0.66"},"offPeak":{"outputPrice":1.32}}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	c := b.Candidates[0]
	if c.Fare.Input != 0.55 || c.Fare.Output != 2.2 || c.Fare.CachedInput != nil || *c.Priority != 2 ||
		!c.Capabilities.Has(election.CapTools) || c.Capabilities.Has(election.CapVision) || *c.Fare.MaxRPM != 600 ||
		c.Usage.RPM != 3 || *c.Fare.Tiers[0].Input != 1.1 || c.Fare.TimeBased.OffPeakDays.Days != 1|1<<6 ||
		*c.Fare.TimeBased.Peak.Input != 0.66 || *c.Fare.TimeBased.OffPeak.Output != 1.32 {
		t.Errorf("decoded candidate %+v", c)
	}
}

// TestContractEdgeRules: the bad inputs section 5 names, each refused with
// the field it is about.
func TestContractEdgeRules(t *testing.T) {
	const fare = `"inputPrice":"1","outputPrice":"2"`
	for _, test := range []struct {
		name, input, field string
	}{
		{"tiers at one threshold", `{"request":{"model":"m"},"candidates":[{"id":"a","fare":{` + fare + `,"tiers":[{"aboveTokens":32768,"inputPrice":"2"},{"aboveTokens":32768,"inputPrice":"3"}]}}]}`, "candidates[0].fare.tiers[1].aboveTokens"},
		{"tiers going down", `{"request":{"model":"m"},"candidates":[{"id":"a","fare":{` + fare + `,"tiers":[{"aboveTokens":65536,"inputPrice":"2"},{"aboveTokens":32768,"inputPrice":"3"}]}}]}`, "candidates[0].fare.tiers[1].aboveTokens"},
		{"a tier at zero", `{"request":{"model":"m"},"candidates":[{"id":"a","fare":{` + fare + `,"tiers":[{"aboveTokens":0,"inputPrice":"2"}]}}]}`, "candidates[0].fare.tiers[0].aboveTokens"},
		{"weights {}", `{"request":{"model":"m"},"weights":{},"candidates":[{"id":"a","fare":{` + fare + `}}]}`, "weights"},
		{"weights all zero", `{"request":{"model":"m"},"weights":{"price":0,"uptime":0},"candidates":[{"id":"a","fare":{` + fare + `}}]}`, "weights"},
		{"a negative weight", `{"request":{"model":"m"},"weights":{"price":-1,"uptime":2},"candidates":[{"id":"a","fare":{` + fare + `}}]}`, "weights.price"},
		// F7: each finite, their sum not: normalised, every weight would be 0.
		{"weights overflowing their sum", `{"request":{"model":"m"},"weights":{"price":1e308,"uptime":1e308},"candidates":[{"id":"a","fare":{` + fare + `}}]}`, "weights"},
	} {
		_, err := election.UnmarshalBallot([]byte(test.input))
		var ie *election.InputError
		if !errors.As(err, &ie) || ie.Field != test.field {
			t.Errorf("%s: %v, want an error naming %s", test.name, err, test.field)
		}
	}
	// Increasing tiers and one positive weight are fine.
	ok := `{"request":{"model":"m"},"weights":{"price":1},"candidates":[{"id":"a","fare":{` + fare + `,"tiers":[{"aboveTokens":32768,"inputPrice":"2"},{"aboveTokens":65536,"inputPrice":"3"}]}}]}`
	if _, err := election.UnmarshalBallot([]byte(ok)); err != nil {
		t.Errorf("a good ballot: %v", err)
	}
}

// TestTheGatewaysLimitsInTheContract: a candidate's state (election.md sec.
// 8) excludes it "backoff" or "breaker" in the contract's output, a
// half-open probe stays eligible, and the rest of the result is sec. 5's.
func TestTheGatewaysLimitsInTheContract(t *testing.T) {
	const fare = `"fare":{"inputPrice":"0.5","outputPrice":"1"}`
	b, err := election.DecodeBallot(strings.NewReader(`{"request":{},"candidates":[
		{"id":"held","state":{"backoff":true},` + fare + `},
		{"id":"open","state":{"breaker":"open"},` + fare + `},
		{"id":"probe","state":{"breaker":"half_open","probe":true,"slow":true},` + fare + `},
		{"id":"half","state":{"breaker":"half_open"},` + fare + `}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res := election.Elect(b)
	reasons := map[string][]string{}
	for _, o := range res.Candidates {
		reasons[o.ID] = o.Excluded.Reasons()
	}
	want := map[string][]string{"held": {"backoff"}, "open": {"breaker"}, "probe": {}, "half": {"breaker"}}
	for id, w := range want {
		if !slices.Equal(reasons[id], w) {
			t.Errorf("%s excluded %v, want %v", id, reasons[id], w)
		}
	}
	if res.WinnerID() != "probe" {
		t.Errorf("winner %q, want the probe", res.WinnerID())
	}
}
