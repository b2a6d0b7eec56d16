package gateway

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
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
