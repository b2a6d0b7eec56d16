package gateway

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/traffic"
)

// TestTheReportCarriesEveryCounter: a closed minute in which the gateway
// counted something of every kind is posted with every counter of the
// metrics contract (catalogue.Counters) non-zero, so a counter the
// catalogue declares and the gateway forgets to send fails here.
func TestTheReportCarriesEveryCounter(t *testing.T) {
	var stat Stat
	v := reflect.ValueOf(&stat).Elem()
	var fill func(reflect.Value)
	fill = func(v reflect.Value) {
		for i := range v.NumField() {
			f := v.Field(i)
			switch f.Kind() {
			case reflect.Struct:
				fill(f)
			case reflect.Int64:
				f.SetInt(int64(10 + i))
			}
		}
	}
	fill(v)
	stat.Attempts = 1000 // every class within the attempts
	body, err := json.Marshal(bucketOf(MinuteStat{ListingID: 7, Minute: time.Now().UTC().Truncate(time.Minute), Stat: stat}))
	if err != nil {
		t.Fatal(err)
	}
	var sent map[string]any
	if err := json.Unmarshal(body, &sent); err != nil {
		t.Fatal(err)
	}
	for _, k := range catalogue.Counters {
		if n, _ := sent[k.Name].(float64); n <= 0 {
			t.Errorf("%s is sent as %v: %s", k.Name, sent[k.Name], body)
		}
	}
}

// TestEveryLimitOpeningIsCounted: each limit the gateway applies is counted
// in the minute it acted (a 429 backoff, a latency backoff, the breaker
// opening and closing), and an event that only ends a backoff is not.
func TestEveryLimitOpeningIsCounted(t *testing.T) {
	at := time.Date(2026, 12, 4, 14, 2, 30, 0, time.UTC)
	r := NewRecorder()
	route := Route{ListingID: 7}
	for _, e := range []traffic.Event{
		{Limit: traffic.LimitBackoff, Opened: true, At: at},
		{Limit: traffic.LimitBackoff, At: at}, // answered again after it
		{Limit: traffic.LimitSlow, Opened: true, At: at},
		{Limit: traffic.LimitSlow, Opened: true, At: at.Add(20 * time.Second)},
		{Limit: traffic.LimitBreaker, Opened: true, At: at},
		{Limit: traffic.LimitBreaker, At: at.Add(time.Minute)},
	} {
		r.Limited(route, e)
	}
	got := r.Totals()[7].GatewayCounts
	want := catalogue.GatewayCounts{Backoffs: 1, SlowBackoffs: 2, BreakerOpenings: 1, BreakerClosings: 1}
	if got != want {
		t.Errorf("counted %+v, want %+v", got, want)
	}
}
