package fare

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// badForm types something wrong into every field of the table, rows
// included, so that every rule that can speak does.
func badForm() Form {
	var f Form
	for _, field := range Fields {
		switch {
		case field.oneValue():
			field.Set(&f, "bad,1")
		case field.list != nil:
			*field.list(&f) = []string{"nonsense"}
		case field.Rows != nil:
			field.Rows.grow(&f, 2)
			for i := range 2 {
				for _, c := range field.Rows.Columns {
					*field.Rows.at(&f, i, c.Name) = "-1"
				}
			}
		}
	}
	return f
}

// TestEveryMessageIsKeyedByTheTable: every key Parse reports, for wrong,
// missing, contradictory and too many values, is a field of the table (or a
// cell of one of its rows), so the summary can label it and sort it in form
// order. A rule that invents a key fails here.
func TestEveryMessageIsKeyedByTheTable(t *testing.T) {
	tooMany := Form{Input: "1", Output: "1"}
	for range MaxTiers + 1 {
		tooMany.Tiers = append(tooMany.Tiers, TierForm{Above: "1", Input: "1"})
	}
	for range MaxPeakWindows + 1 {
		tooMany.PeakWindows = append(tooMany.PeakWindows, WindowForm{Start: "1", End: "2"})
	}
	cases := map[string]Form{
		"everything wrong":   badForm(),
		"nothing typed":      {},
		"schedule no prices": {Input: "1", Output: "1", PeakWindows: []WindowForm{{Start: "8", End: "18"}}},
		"prices no schedule": {Input: "1", Output: "1", Peak: PricesForm{Input: "2"}},
		"cache above input":  {Input: "1", Output: "1", CachedInput: "2", Billed: map[string]string{"cache_read": "3"}},
		"overlap":            {Input: "1", Output: "1", PeakWindows: []WindowForm{{"8", "12"}, {"10", "14"}}, Peak: PricesForm{Input: "2"}},
		"falling tiers":      {Input: "1", Output: "1", Tiers: []TierForm{{Above: "100", Input: "1"}, {Above: "50"}}},
		"too many rows":      tooMany,
		"past date":          {Input: "1", Output: "1", EffectiveAt: "2000-01-01"},
		"control in note":    {Input: "1", Output: "1", Justification: "a\x00b"},
	}
	seen := map[string]bool{}
	for name, form := range cases {
		_, errs := form.Parse(now)
		if len(errs) == 0 {
			t.Errorf("%s: no message", name)
		}
		for key := range errs {
			seen[strings.Split(key, ".")[0]] = true
			if !KnownKey(key) {
				t.Errorf("%s: message keyed %q, which the table does not declare", name, key)
			}
			if FieldLabel(key) == strings.ReplaceAll(key, "_", " ") && !strings.Contains(key, " ") {
				// FieldLabel falls back to the key itself only for unknown keys.
				t.Errorf("%s: %q has no label", name, key)
			}
		}
	}
	// Every field that can be wrong is reached by the cases above (a new
	// rule on a new field is covered as soon as badForm types into it).
	for _, f := range Fields {
		key := f.Key
		if f.Rows != nil {
			key = f.Rows.Key
		}
		if !seen[key] && !seen[f.Key] {
			t.Errorf("no case makes %q wrong", f.Key)
		}
	}
	if KnownKey("utc_offset_minutes") || KnownKey("tier.x.input") || KnownKey("tier.0.colour") || KnownKey("nope") {
		t.Error("KnownKey accepts keys no field declares")
	}
}

// TestProblemsFollowTheTable: the error summary lists messages in the
// table's order, rows by their table.
func TestProblemsFollowTheTable(t *testing.T) {
	bad := badForm()
	_, errs := bad.Parse(now)
	ps := Problems(errs)
	last := -1
	for _, p := range ps {
		i := fieldIndex[strings.Split(p.Key, ".")[0]]
		if i < last {
			t.Errorf("%s listed after a later field", p.Key)
		}
		last = i
	}
	if len(ps) != len(errs) {
		t.Errorf("%d problems for %d messages", len(ps), len(errs))
	}
}

// TestFormOfValuesReadsEveryField: a form posted under each field's post
// names (rows as parallel lists) reads back exactly as typed.
func TestFormOfValuesReadsEveryField(t *testing.T) {
	want := Form{}
	values := map[string][]string{}
	n := 0
	next := func() string { n++; return fmt.Sprintf("v%d", n) }
	for _, f := range Fields {
		switch {
		case f.text != nil:
			v := next()
			*f.text(&want) = v
			values[f.PostName()] = []string{v}
		case f.list != nil:
			vs := []string{next(), next()}
			*f.list(&want) = vs
			values[f.PostName()] = vs
		case f.Rows != nil:
			f.Rows.grow(&want, 2)
			for i := range 2 {
				for _, c := range f.Rows.Columns {
					v := next()
					*f.Rows.at(&want, i, c.Name) = v
					values[c.Post] = append(values[c.Post], v)
				}
			}
		}
	}
	if diff := cmp.Diff(want, FormOfValues(values)); diff != "" {
		t.Errorf("posted form read back differently (-want +got):\n%s", diff)
	}
}

// TestCSVColumnsAreTheTables: the bulk format's columns are exactly the
// table's CSV columns, and every column survives a write and a read.
func TestCSVColumnsAreTheTables(t *testing.T) {
	var declared []string
	for _, f := range Fields {
		if f.CSV != "" {
			declared = append(declared, f.CSV)
		}
	}
	got := slices.Clone(csvOrder)
	slices.Sort(got)
	slices.Sort(declared)
	if !slices.Equal(got, declared) {
		t.Fatalf("csvOrder %v, table columns %v", got, declared)
	}
	form := Form{Input: "0.5", Output: "2", CachedInput: "0.1", Billed: map[string]string{"cache_read": "0.05", "cache_write": "0.6"}, LandingFee: "25", Discount: "5",
		MaxRPM: "60", MaxRPD: "6000", CapScope: "per_org", Capabilities: []string{"tools", "vision"},
		Tiers:         []TierForm{{Above: "32768", Input: "1", Output: "4", CachedInput: "0.2"}, {Above: "131072", Input: "2"}},
		Justification: "cheaper", EffectiveAt: "2026-12-10"}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, []CSVRow{{Carrier: "acme", Model: "m", Form: form}}); err != nil {
		t.Fatal(err)
	}
	rows, errs := ReadCSV(&buf)
	if len(errs) > 0 || len(rows) != 1 {
		t.Fatalf("read back: %v %v", rows, errs)
	}
	if diff := cmp.Diff(form, rows[0].Form); diff != "" {
		t.Errorf("round trip (-wrote +read):\n%s", diff)
	}
}

// TestLiveFieldsAreOneValueFields: the live check puts one message beside
// one input, so only one-value fields can be live.
func TestLiveFieldsAreOneValueFields(t *testing.T) {
	for _, f := range Fields {
		if (f.Live || f.Compact) && !f.oneValue() {
			t.Errorf("%s is live but not a one-value field", f.Key)
		}
		if f.Compact && !f.Live {
			t.Errorf("%s is on the compact form but not checked live on the filing form", f.Key)
		}
	}
}

// TestBilledPricesGoThroughTheTable: a billed-only price declared in the
// table is parsed into its Fare field, typed back by FormOf, reported by
// Diff and listed by BilledPrices, with no code naming it. A new row of
// billedPrice is covered by this test as soon as it is declared.
func TestBilledPricesGoThroughTheTable(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	var billed []Field
	for _, f := range Fields {
		if f.billed != nil {
			billed = append(billed, f)
		}
	}
	if len(billed) < 2 {
		t.Fatalf("the table declares %d billed prices; cache reads and writes are two", len(billed))
	}
	for i, field := range billed {
		typed := fmt.Sprintf("0.0%d", i+1)
		form := Form{Input: "1", Output: "2"}
		field.Set(&form, typed)
		parsed, errs := form.Parse(now)
		if errs != nil {
			t.Fatalf("%s: %v", field.Key, errs)
		}
		got := *field.billed(parsed.Fare)
		if got == nil || got.String() != typed {
			t.Errorf("%s typed %s parsed to %v", field.Key, typed, got)
		}
		if back := MustField(field.Key).Value(new(FormOf(parsed.Fare))); back != typed {
			t.Errorf("%s: FormOf types %q, want %q", field.Key, back, typed)
		}
		var listed bool
		for _, b := range BilledPrices(parsed.Fare) {
			listed = listed || b.Key == field.Key && b.Label == field.Label && b.Price == got
		}
		if !listed {
			t.Errorf("%s: BilledPrices does not list it", field.Key)
		}
		before := &Fare{Input: parsed.Fare.Input, Output: parsed.Fare.Output, LandingFee: parsed.Fare.LandingFee, CapScope: parsed.Fare.CapScope}
		changes := Diff(before, parsed.Fare)
		if len(changes) != 1 || changes[0].Field != field.Key || changes[0].Label != field.Label {
			t.Errorf("%s: Diff reports %+v", field.Key, changes)
		}
		field.Set(&form, "")
		if form.Billed != nil {
			t.Errorf("%s: a cleared billed price leaves %v", field.Key, form.Billed)
		}
	}
}

// TestDifferencesNameEveryChangedField: two forms apart in a price, a
// capability and a tier are told apart field by field, and a form equals
// itself.
func TestDifferencesNameEveryChangedField(t *testing.T) {
	a := Form{Input: "0.40", Output: "2.00", LandingFee: "20", Capabilities: []string{"tools"},
		Tiers: []TierForm{{Above: "128000", Input: "0.80"}}}
	b := a
	b.Input = "0.35"
	b.Capabilities = []string{"tools", "vision"}
	b.Tiers = []TierForm{{Above: "128000", Input: "0.70"}}
	if d := Differences(&a, &a); len(d) != 0 {
		t.Errorf("a form differs from itself: %+v", d)
	}
	got := map[string]Difference{}
	for _, d := range Differences(&a, &b) {
		got[d.Key] = d
	}
	for _, key := range []string{"input", "capabilities", "tiers"} {
		if _, ok := got[key]; !ok {
			t.Errorf("no difference named for %s (%+v)", key, got)
		}
	}
	if len(got) != 3 {
		t.Errorf("%d differences, want 3: %+v", len(got), got)
	}
	if d := got["input"]; d.A != "0.40" || d.B != "0.35" || d.Label != FieldLabel("input") {
		t.Errorf("input difference %+v", d)
	}
}

func TestOffsetText(t *testing.T) {
	for _, test := range []struct {
		minutes int
		want    string
	}{{0, "UTC"}, {-300, "UTC-05:00"}, {330, "UTC+05:30"}, {-570, "UTC-09:30"}, {60, "UTC+01:00"}} {
		if got := OffsetText(test.minutes); got != test.want {
			t.Errorf("OffsetText(%d) = %q, want %q", test.minutes, got, test.want)
		}
	}
}
