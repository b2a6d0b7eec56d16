package fare

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/money"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func validForm() Form {
	return Form{Input: "0.55", Output: "2.20", CachedInput: "0.30", LandingFee: "20", Discount: "0", CapScope: "global"}
}

func TestParseRules(t *testing.T) {
	for _, test := range []struct {
		name      string
		edit      func(f *Form)
		wantField string // "" means valid
		wantMsg   string
	}{
		{"valid", func(f *Form) {}, "", ""},
		{"input required", func(f *Form) { f.Input = "" }, "input", "Enter a price"},
		{"output required", func(f *Form) { f.Output = " " }, "output", "Enter a price"},
		{"negative price", func(f *Form) { f.Output = "-1" }, "output", "negative"},
		{"seven decimals", func(f *Form) { f.Input = "0.1234567" }, "input", "6 decimal places"},
		{"not a number", func(f *Form) { f.Input = "cheap" }, "input", "not a number"},
		{"dollar sign accepted", func(f *Form) { f.Input = "$0.55" }, "", ""},
		{"cached above input", func(f *Form) { f.CachedInput = "0.56" }, "cached_input", "cannot be above"},
		{"cached equal to input", func(f *Form) { f.CachedInput = "0.55" }, "", ""},
		{"cache read above input", func(f *Form) { MustField("cache_read").Set(f, "0.6") }, "cache_read", "cannot be above"},
		{"landing fee below 5", func(f *Form) { f.LandingFee = "4.99" }, "landing_fee", "5 to 50"},
		{"landing fee above 50", func(f *Form) { f.LandingFee = "50.01" }, "landing_fee", "5 to 50"},
		{"landing fee 5", func(f *Form) { f.LandingFee = "5" }, "", ""},
		{"landing fee 50 with sign", func(f *Form) { f.LandingFee = "50 %" }, "", ""},
		{"discount above 50", func(f *Form) { f.Discount = "51" }, "discount", "0 to 50"},
		{"cap zero", func(f *Form) { f.MaxRPM = "0" }, "max_rpm", "above 0"},
		{"cap fractional", func(f *Form) { f.MaxRPD = "1.5" }, "max_rpd", "whole number"},
		{"cap scope unknown", func(f *Form) { f.CapScope = "planet" }, "cap_scope", "global or per organization"},
		{"unknown capability", func(f *Form) { f.Capabilities = []string{"telepathy"} }, "capabilities", "Unknown"},
		{"tier threshold zero", func(f *Form) { f.Tiers = []TierForm{{Above: "0", Input: "1"}} }, "tier.0.above", "above 0"},
		{"tiers must increase", func(f *Form) {
			f.Tiers = []TierForm{{Above: "32768", Input: "1"}, {Above: "32768", Input: "2"}}
		}, "tier.1.above", "must go up"},
		{"tier needs a price", func(f *Form) { f.Tiers = []TierForm{{Above: "1000"}} }, "tier.0.input", "at least one price"},
		{"tier negative price", func(f *Form) { f.Tiers = []TierForm{{Above: "1000", Output: "-2"}} }, "tier.0.output", "negative"},
		{"empty tier rows are ignored", func(f *Form) { f.Tiers = []TierForm{{}, {}} }, "", ""},
		{"window start before end", func(f *Form) {
			f.PeakWindows = []WindowForm{{Start: "10", End: "6"}}
			f.Peak = PricesForm{Input: "0.6"}
		}, "peak_window.0.end", "end after it starts"},
		{"window past 24", func(f *Form) {
			f.PeakWindows = []WindowForm{{Start: "1", End: "25"}}
			f.Peak = PricesForm{Input: "0.6"}
		}, "peak_window.0.end", "1 to 24"},
		{"windows overlap", func(f *Form) {
			f.PeakWindows = []WindowForm{{Start: "1", End: "4"}, {Start: "3", End: "6"}}
			f.Peak = PricesForm{Input: "0.6"}
		}, "peak_window.1.start", "overlaps"},
		{"touching windows are fine", func(f *Form) {
			f.PeakWindows = []WindowForm{{Start: "1", End: "4"}, {Start: "4", End: "6"}}
			f.Peak = PricesForm{Input: "0.6"}
		}, "", ""},
		{"weekday 7", func(f *Form) {
			f.OffPeakDays = []string{"7"}
			f.OffPeak = PricesForm{Input: "0.3"}
		}, "off_peak_days", "0 (Sunday) to 6"},
		{"offset out of range", func(f *Form) {
			f.OffPeakDays = []string{"0"}
			f.OffPeak = PricesForm{Input: "0.3"}
			f.UTCOffsetMinutes = "900"
		}, "utc_offset", "-720 to 840"},
		{"schedule without prices", func(f *Form) { f.PeakWindows = []WindowForm{{Start: "1", End: "4"}} }, "peak_input", "need peak or off-peak prices"},
		{"prices without schedule", func(f *Form) { f.Peak = PricesForm{Input: "1"} }, "peak_windows", "need peak windows"},
		{"effective date in the past", func(f *Form) { f.EffectiveAt = "2026-11-29" }, "effective_at", "in the past"},
		{"effective date later today", func(f *Form) { f.EffectiveAt = "2026-11-30T18:00" }, "", ""},
		{"effective date garbled", func(f *Form) { f.EffectiveAt = "soon" }, "effective_at", "UTC date"},
		{"note too long", func(f *Form) { f.Justification = strings.Repeat("x", MaxJustification+1) }, "justification", "under"},
		{"note not UTF-8", func(f *Form) { f.Justification = "caf\xe9" }, "justification", "UTF-8"},
		{"NUL in note", func(f *Form) { f.Justification = "a\x00b" }, "justification", "NUL"},
	} {
		t.Run(test.name, func(t *testing.T) {
			form := validForm()
			test.edit(&form)
			parsed, errs := form.Parse(now)
			if test.wantField == "" {
				if len(errs) > 0 {
					t.Fatalf("valid form refused: %v", errs)
				}
				if parsed == nil || parsed.Fare == nil {
					t.Fatal("no fare")
				}
				return
			}
			if parsed != nil {
				t.Fatalf("invalid form accepted: %+v", parsed.Fare)
			}
			if msg := errs[test.wantField]; !strings.Contains(msg, test.wantMsg) {
				t.Errorf("error on %s = %q, want %q (all: %v)", test.wantField, msg, test.wantMsg, errs)
			}
		})
	}
}

func TestParseAllFields(t *testing.T) {
	form := Form{
		Input: "0.55", Output: "2.2", CachedInput: "0.1", Billed: map[string]string{"cache_read": "0.05", "cache_write": "0.7"},
		LandingFee: "30", Discount: "10", MaxRPM: "600", MaxRPD: "100000", CapScope: "per_org",
		Capabilities: []string{"vision", "tools", "tools"},
		Tiers:        []TierForm{{Above: "32768", Input: "1.1", Output: "4.4", CachedInput: "0.2"}, {}},
		PeakWindows:  []WindowForm{{Start: "6", End: "10"}, {Start: "1", End: "4"}},
		OffPeakDays:  []string{"6", "0"}, UTCOffsetMinutes: "480", TODEffectiveAt: "2026-12-01T16:00",
		Peak: PricesForm{Input: "0.66", Output: "2.64"}, OffPeak: PricesForm{Input: "0.33", CachedInput: "0.05"},
		Justification: "  New hardware.  ", EffectiveAt: "2026-12-15",
	}
	parsed, errs := form.Parse(now)
	if errs != nil {
		t.Fatal(errs)
	}
	f := parsed.Fare
	if f.Input != 550000 || *f.CacheWrite != 700000 || f.LandingFee != 3000 || f.Discount != 1000 || *f.MaxRPD != 100000 || f.CapScope != ScopePerOrg {
		t.Errorf("fare %+v", f)
	}
	if diff := cmp.Diff([]election.Capability{election.CapTools, election.CapVision}, f.Capabilities); diff != "" {
		t.Errorf("capabilities (-want +got):\n%s", diff)
	}
	if len(f.Tiers) != 1 || *f.Tiers[0].CachedInput != 200000 {
		t.Errorf("tiers %+v", f.Tiers)
	}
	if tb := f.TimeBased; tb == nil || len(tb.PeakHours) != 2 || tb.OffPeakDays[0] != time.Sunday || tb.UTCOffsetMinutes != 480 || tb.EffectiveAt.Hour() != 16 {
		t.Errorf("time block %+v", f.TimeBased)
	}
	if parsed.Justification != "New hardware." || !parsed.EffectiveAt.Equal(time.Date(2026, 12, 15, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("note %q effective %v", parsed.Justification, parsed.EffectiveAt)
	}
	// The form of a fare parses back to the same fare.
	round := FormOf(f)
	again, errs := round.Parse(now)
	if errs != nil {
		t.Fatal(errs)
	}
	if diff := cmp.Diff(f, again.Fare); diff != "" {
		t.Errorf("FormOf round trip (-want +got):\n%s", diff)
	}
}

func TestDiff(t *testing.T) {
	p := func(s string) *money.Micros { m, _ := money.ParsePrice(s); return &m }
	old := &Fare{Input: *p("0.50"), Output: *p("2.00"), CachedInput: p("0.10"), LandingFee: 2000, CapScope: ScopeGlobal}
	rpm := int64(600)
	updated := &Fare{Input: *p("0.45"), Output: *p("2.00"), CachedInput: nil, LandingFee: 3000, Discount: 500, MaxRPM: &rpm,
		CapScope: ScopeGlobal, Capabilities: []election.Capability{election.CapTools}}
	changes := Diff(old, updated)
	got := map[string]Change{}
	for _, c := range changes {
		got[c.Field] = c
	}
	if c := got["input"]; c.Old != "$0.5000" || c.New != "$0.4500" || c.Direction != -1 || c.Percent == nil || *c.Percent != -10 {
		t.Errorf("input change %+v", c)
	}
	if _, ok := got["output"]; ok {
		t.Error("unchanged output listed")
	}
	if c := got["cached_input"]; c.New != "none" || c.Percent != nil {
		t.Errorf("removed cached price %+v", c)
	}
	// Percentages change by points, not by a share of themselves: 20 % to
	// 30 % is +10 points (it read "+50 %").
	if c := got["landing_fee"]; c.Direction != 1 || c.Percent != nil || c.Points == nil || *c.Points != 10 {
		t.Errorf("landing fee %+v", c)
	}
	if c := got["discount"]; c.Old != "0 %" || c.Percent != nil || c.Points == nil || *c.Points != 5 {
		t.Errorf("discount from zero %+v", c)
	}
	if diff := cmp.Diff([]Kind{KindPrice, KindFares, KindCaps, KindCapabilities}, KindsOf(changes)); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	if len(Diff(updated, updated)) != 0 {
		t.Error("a fare differs from itself")
	}
}

func TestKeptAndEffective(t *testing.T) {
	f := &Fare{LandingFee: 3000, Discount: 1000}
	if f.KeptPerDollar() != 6300 {
		t.Errorf("kept %v", f.KeptPerDollar())
	}
	if got := f.Effective(500000); got != 405000 {
		t.Errorf("effective of 0.50 = %v, want 0.405", got)
	}
}

// TestFareFormula: the one exact fare formula, at the levers' bounds.
func TestFareFormula(t *testing.T) {
	for _, test := range []struct {
		name                string
		filed               money.Micros
		discount, fee       money.BasisPoints
		wantRoutes          money.Micros
		wantKeptBasisPoints money.BasisPoints
	}{
		{"baseline", 500000, 0, BaselineLandingFee, 500000, 8000},
		{"30% landing fee", 500000, 0, 3000, 450000, 7000},
		{"30% landing fee and 10% discount", 500000, 1000, 3000, 405000, 6300},
		{"lowest landing fee", 1000000, 0, MinLandingFee, 1150000, 9500},
		{"highest landing fee and discount", 1000000, MaxDiscount, MaxLandingFee, 350000, 2500},
		{"0.1 stays exact", 100000, 0, BaselineLandingFee, 100000, 8000},
	} {
		f := &Fare{Discount: test.discount, LandingFee: test.fee}
		if got := f.Effective(test.filed); got != test.wantRoutes {
			t.Errorf("%s: routes at %v, want %v", test.name, got, test.wantRoutes)
		}
		if got := f.KeptPerDollar(); got != test.wantKeptBasisPoints {
			t.Errorf("%s: keeps %v, want %v", test.name, got, test.wantKeptBasisPoints)
		}
	}
}

func TestFareSizeAndDateBounds(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	base := Form{Input: "1", Output: "2", LandingFee: "20", Discount: "0", CapScope: "global"}
	many := base
	for i := range MaxTiers + 1 {
		many.Tiers = append(many.Tiers, TierForm{Above: strconv.Itoa(1000 * (i + 1)), Input: "1"})
	}
	if _, errs := many.Parse(now); errs["tiers"] == "" {
		t.Errorf("%d tiers accepted: %v", MaxTiers+1, errs)
	}
	many.Tiers = many.Tiers[:MaxTiers]
	if _, errs := many.Parse(now); errs != nil {
		t.Errorf("%d tiers refused: %v", MaxTiers, errs)
	}
	windows := base
	for range MaxPeakWindows + 1 {
		windows.PeakWindows = append(windows.PeakWindows, WindowForm{Start: "1", End: "2"})
	}
	if _, errs := windows.Parse(now); errs["peak_windows"] == "" {
		t.Errorf("%d peak windows accepted: %v", MaxPeakWindows+1, errs)
	}
	for _, test := range []struct {
		at string
		ok bool
	}{{"2027-11-30", true}, {"2027-12-02", false}, {"9999-12-31", false}, {"2026-11-30", false}} {
		f := base
		f.EffectiveAt = test.at
		_, errs := f.Parse(now)
		if (errs["effective_at"] == "") != test.ok {
			t.Errorf("effective %s: %v", test.at, errs)
		}
	}
}

func TestCSVFormulaGuard(t *testing.T) {
	for _, test := range []struct {
		cell    string
		formula bool
	}{
		{"=1+1", true}, {" =1+1", true}, {"\n=1+1", true}, {"\t=cmd", true}, {"-1+1+cmd|' /C calc'!A0", true},
		{"+41 20 555", true}, {"@SUM(A1)", true}, {"\r=1", true},
		{"-1.5", false}, {"+2", false}, {"0.40", false}, {"plain note", false}, {"", false},
	} {
		header := strings.Join(LegacyCSVHeader, ",") // rows of the format before the market's columns
		file := header + "\nnebula,kimi,0.40,2.00,,,,20,0,,,global,,,\"" + strings.ReplaceAll(test.cell, "\"", "\"\"") + "\",\n"
		_, problems := ReadCSV(strings.NewReader(file))
		flagged := false
		for _, p := range problems {
			if p.Column == "justification" && strings.Contains(p.Msg, "formula") {
				flagged = true
			}
		}
		if flagged != test.formula {
			t.Errorf("%q: flagged %v, want %v (%v)", test.cell, flagged, test.formula, problems)
		}
	}
}

// TestCSVProblemsInPlainWords: a bad quote, a row of the wrong width, a row
// saved with semicolons under a comma header and a cap scope are each
// explained in the file's words, on the file's line, and checking goes on
// past a bad line so every problem is listed in one pass.
func TestCSVProblemsInPlainWords(t *testing.T) {
	header := strings.Join(LegacyCSVHeader, ",") // rows of the format before the market's columns
	good := "nebula,kimi,0.40,2.00,,,,20,0,,,global,,,Fine,"
	for _, test := range []struct {
		name     string
		rows     []string
		wantRow  int
		wantCol  string
		wantText string
	}{
		{"a bare quote", []string{`nebula,kimi,0.40,2.00,,,,20,0,,,global,,,He said "cheaper",`}, 2, "file", "wrap the whole cell in quotes"},
		{"a quote left open", []string{`nebula,kimi,0.40,2.00,,,,20,0,,,global,,,"Fine,`}, 2, "file", "close its quote"},
		{"a comma inside a cell", []string{"nebula,kimi,0.40,2.00,,,,20,0,,,global,,,Cheaper, faster,"}, 2, "file", "wrapped in quotes"},
		{"semicolons under a comma header", []string{strings.ReplaceAll(good, ",", ";")}, 2, "file", "semicolons"},
		{"a missing cell", []string{"nebula,kimi,0.40,2.00,,,,20,0,,,global,,Fine,"}, 2, "file", "keep its comma"},
		{"goes on past a bad line", []string{`nebula,kimi,0.40,2.00,,,,20,0,,,global,,,He said "x",`, good,
			"nebula,kimi,0.40,2.00,,,,20,0,,,global,,Fine,"}, 4, "file", "keep its comma"},
	} {
		t.Run(test.name, func(t *testing.T) {
			file := header + "\n" + strings.Join(test.rows, "\n") + "\n"
			_, problems := ReadCSV(strings.NewReader(file))
			if problems == nil {
				t.Fatalf("no problem found in %q", file)
			}
			for _, p := range problems {
				if p.Row == test.wantRow && p.Column == test.wantCol && strings.Contains(p.Msg, test.wantText) {
					if strings.Contains(p.Msg, "parse error") || strings.Contains(p.Msg, "bare \"") {
						t.Errorf("Go's own error text reached the carrier: %q", p.Msg)
					}
					return
				}
			}
			t.Errorf("no %q on row %d, column %s: %+v", test.wantText, test.wantRow, test.wantCol, problems)
		})
	}
}

// TestCSVWordsForFormMessages: a form message that names the form's choices
// is worded with the file's values in a bulk file.
func TestCSVWordsForFormMessages(t *testing.T) {
	var form Form
	form.Input, form.Output, form.LandingFee, form.CapScope = "0.40", "2.00", "20", "per organization"
	_, errs := form.Parse(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	if errs["cap_scope"] == "" {
		t.Fatal("the form accepts an unknown cap scope")
	}
	for _, p := range ColumnErrors(2, errs) {
		if p.Column == "cap_scope" {
			if !strings.Contains(p.Msg, "per_org") || strings.Contains(p.Msg, "per organization") {
				t.Errorf("the file's cap scope message %q does not name the file's values", p.Msg)
			}
			return
		}
	}
	t.Error("no cap_scope problem in the file's terms")
}

func TestLeversAreParsedWithinTheirBounds(t *testing.T) {
	for _, test := range []struct {
		fee, discount string
		wantFee       money.BasisPoints
		wantDiscount  money.BasisPoints
		ok            bool
	}{
		{"", "", BaselineLandingFee, 0, true},
		{" 12.5 ", "3", 1250, 300, true},
		{MinLandingFee.Percent(), MaxDiscount.Percent(), MinLandingFee, MaxDiscount, true},
		{MaxLandingFee.Percent(), "0", MaxLandingFee, 0, true},
		{"4.99", "", 0, 0, false},
		{"50.01", "", 0, 0, false},
		{"20", "-1", 0, 0, false},
		{"20", "ten", 0, 0, false},
	} {
		f := Form{LandingFee: test.fee, Discount: test.discount}
		fee, discount, ok := f.Levers()
		if ok != test.ok || ok && (fee != test.wantFee || discount != test.wantDiscount) {
			t.Errorf("fee %q discount %q: %v %v %v, want %v %v %v", test.fee, test.discount, fee, discount, ok, test.wantFee, test.wantDiscount, test.ok)
		}
		// The same verdict as the form's own parse gives those fields.
		_, errs := f.Parse(time.Now())
		if parsedOK := errs["landing_fee"] == "" && errs["discount"] == ""; parsedOK != ok {
			t.Errorf("fee %q discount %q: Levers says %v, Parse's messages %q / %q", test.fee, test.discount, ok, errs["landing_fee"], errs["discount"])
		}
	}
}

// TestDiffWritesNumbersAsThePagesDo: the change summary writes prices with
// four decimals and separators, caps and tier sizes with separators, and a
// cap's scope in words, as every page does (never "2000000" beside
// "65,536", "$0.119" beside "$0.1190", or "per_org").
func TestDiffWritesNumbersAsThePagesDo(t *testing.T) {
	p := func(s string) *money.Micros { m, _ := money.ParsePrice(s); return &m }
	rpd := int64(2_000_000)
	old := &Fare{Input: *p("0.119"), Output: *p("1250"), LandingFee: 2000, CapScope: ScopeGlobal}
	updated := &Fare{Input: *p("0.12"), Output: *p("1250"), LandingFee: 2000, CapScope: ScopePerOrg, MaxRPD: &rpd,
		Tiers: []Tier{{AboveTokens: 65536, Prices: Prices{Input: p("0.25"), Output: p("1250")}}}}
	got := map[string]Change{}
	for _, c := range Diff(old, updated) {
		got[c.Field] = c
	}
	for field, want := range map[string][2]string{
		"input":     {"$0.1190", "$0.1200"},
		"max_rpd":   {"no cap", "2,000,000"},
		"cap_scope": {"global", "per organization"},
		"tiers":     {"none", "above 65,536: in $0.2500, out $1,250.0000, cached none"},
	} {
		if c := got[field]; c.Old != want[0] || c.New != want[1] {
			t.Errorf("%s: %q -> %q, want %q -> %q", field, c.Old, c.New, want[0], want[1])
		}
	}
}

// TestCSVMarketColumns: the market's columns read into the form and parse
// as the form's fields do, a bad one named by its column; a file in the
// format before them still reads, its rows marked to keep the published
// market.
func TestCSVMarketColumns(t *testing.T) {
	header := strings.Join(CSVHeader, ",")
	row := "nebula,kimi,0.40,2.00,,,,20,0,,,global,,,,,131072,16384,fp8,0,no,\"DE, US\",0.0005,0.002"
	rows, problems := ReadCSV(strings.NewReader(header + "\n" + row + "\n"))
	if problems != nil {
		t.Fatalf("problems: %v", problems)
	}
	if rows[0].KeepMarket {
		t.Error("a file with the market's columns keeps the published market")
	}
	parsed, errs := rows[0].Form.Parse(time.Now())
	if errs != nil {
		t.Fatalf("parse: %v", errs)
	}
	m := parsed.Fare.Market
	if *m.ContextLength != 131072 || *m.MaxOutputTokens != 16384 || m.Quantization != "fp8" || !m.ZDR() ||
		strings.Join(m.Regions, ",") != "DE,US" || m.RequestPrice.String() != "0.0005" || m.ImagePrice.String() != "0.002" {
		t.Errorf("market read as %+v", m)
	}
	var out strings.Builder
	if err := WriteCSV(&out, rows); err != nil {
		t.Fatal(err)
	}
	again, problems := ReadCSV(strings.NewReader(out.String()))
	if problems != nil || again[0].Form.Market != rows[0].Form.Market {
		t.Errorf("written and read again: %+v, %v", again[0].Form.Market, problems)
	}

	bad := strings.Replace(row, "fp8", "q5", 1)
	rows, _ = ReadCSV(strings.NewReader(header + "\n" + bad + "\n"))
	_, errs = rows[0].Form.Parse(time.Now())
	found := false
	for _, p := range ColumnErrors(2, errs) {
		found = found || p.Column == "quantization" && strings.Contains(p.Msg, "fp8")
	}
	if !found {
		t.Errorf("an unknown quantization is not named by its column: %v", errs)
	}

	legacy := strings.Join(LegacyCSVHeader, ",") + "\nnebula,kimi,0.40,2.00,,,,20,0,,,global,,,,\n"
	rows, problems = ReadCSV(strings.NewReader(legacy))
	if problems != nil || !rows[0].KeepMarket {
		t.Errorf("a file in the earlier format: keep market %v, problems %v", rows != nil && rows[0].KeepMarket, problems)
	}
}
