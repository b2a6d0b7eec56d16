package fare

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// everyFieldTyped types a distinct value into every field of the table,
// billed prices and rows included.
func everyFieldTyped() Form {
	var form Form
	n := 0
	next := func() string { n++; return fmt.Sprintf("v%d", n) }
	for _, f := range Fields {
		switch {
		case f.oneValue():
			f.Set(&form, next())
		case f.list != nil:
			*f.list(&form) = []string{next(), next()}
		case f.Rows != nil:
			f.Rows.grow(&form, 2)
			for i := range 2 {
				for _, c := range f.Rows.Columns {
					*f.Rows.at(&form, i, c.Name) = next()
				}
			}
		}
	}
	return form
}

// TestTheAPIFilesEveryFieldOfTheTable: every field the form files, the
// API's JSON carries under the table's key and reads back the same, billed
// prices and rows included (a field added to the table is in the API at
// once, or this fails).
func TestTheAPIFilesEveryFieldOfTheTable(t *testing.T) {
	want := everyFieldTyped()
	body, err := json.Marshal(ValuesOf(&want))
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		t.Fatal(err)
	}
	if len(fields) != len(Fields) {
		t.Errorf("%d fields in the API's JSON, %d in the table", len(fields), len(Fields))
	}
	var got Form
	if errs := Apply(&got, fields); errs != nil {
		t.Fatalf("apply: %v", errs)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the API's JSON read back differently (-want +got):\n%s", diff)
	}
}

func TestApplyChangesOnlyWhatItIsGiven(t *testing.T) {
	base := Form{Input: "0.5", Output: "2", Capabilities: []string{"tools"}, Tiers: []TierForm{{Above: "32768", Input: "1"}, {Above: "131072", Input: "2"}},
		Billed: map[string]string{"cache_read": "0.05"}}
	tests := []struct {
		name   string
		body   string
		want   func(f *Form)
		errKey string
	}{
		{"a price", `{"input":"0.4"}`, func(f *Form) { f.Input = "0.4" }, ""},
		{"null clears", `{"cached_input":null,"capabilities":null,"tiers":null,"cache_read":null}`,
			func(f *Form) { f.Capabilities, f.Tiers, f.Billed = nil, []TierForm{}, nil }, ""},
		{"rows replace rows", `{"tiers":[{"above":"65536","input":"3"}]}`,
			func(f *Form) { f.Tiers = []TierForm{{Above: "65536", Input: "3"}} }, ""},
		{"an unknown field", `{"input_price":"0.4"}`, nil, "input_price"},
		{"a row cell's key is not a field", `{"tier.0.input":"0.4"}`, nil, "tier.0.input"},
		{"a number where the form types text", `{"input":0.4}`, nil, "input"},
		{"an unknown column", `{"tiers":[{"above":"65536","price":"3"}]}`, nil, "tiers"},
		{"a list of numbers", `{"capabilities":[1]}`, nil, "capabilities"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fields map[string]json.RawMessage
			if err := json.Unmarshal([]byte(tt.body), &fields); err != nil {
				t.Fatal(err)
			}
			got := base
			got.Capabilities = append([]string(nil), base.Capabilities...)
			got.Tiers = append([]TierForm(nil), base.Tiers...)
			got.Billed = map[string]string{"cache_read": "0.05"}
			errs := Apply(&got, fields)
			if tt.errKey != "" {
				if errs[tt.errKey] == "" {
					t.Errorf("errors %v, want one for %s", errs, tt.errKey)
				}
				return
			}
			if errs != nil {
				t.Fatalf("errors %v", errs)
			}
			want := base
			want.Capabilities = append([]string(nil), base.Capabilities...)
			want.Tiers = append([]TierForm(nil), base.Tiers...)
			want.Billed = map[string]string{"cache_read": "0.05"}
			tt.want(&want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
