package fare

import (
	"bytes"
	"encoding/csv"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// FuzzFormParse: any typed form either fails with field messages or yields a
// fare inside every rule, which round-trips exactly through FormOf.
func FuzzFormParse(f *testing.F) {
	f.Add("0.55", "2.20", "0.30", "20", "10", "600", "32768", "1.10", "1", "4", "0", "480", "note")
	f.Add("0.1", "0.2", "", "5", "0", "", "", "", "", "", "", "", "")
	f.Add("-1", "x", "9", "51", "60", "0", "-5", "1e3", "25", "3", "9", "9999", "\x00")
	f.Fuzz(func(t *testing.T, input, output, cached, lf, disc, rpm, above, tierIn, start, end, day, offset, note string) {
		form := Form{Input: input, Output: output, CachedInput: cached, LandingFee: lf, Discount: disc, MaxRPM: rpm,
			Tiers: []TierForm{{Above: above, Input: tierIn}}, PeakWindows: []WindowForm{{Start: start, End: end}},
			OffPeakDays: []string{day}, UTCOffsetMinutes: offset, Peak: PricesForm{Input: tierIn}, Justification: note}
		parsed, errs := form.Parse(now)
		if errs != nil {
			if parsed != nil {
				t.Fatal("both a fare and errors")
			}
			for key := range errs {
				if !KnownKey(key) {
					t.Fatalf("a message keyed %q, which no field of the table declares", key)
				}
			}
			return
		}
		fr := parsed.Fare
		if fr.LandingFee < MinLandingFee || fr.LandingFee > MaxLandingFee || fr.Discount < 0 || fr.Discount > MaxDiscount {
			t.Fatalf("rates out of range: %+v", fr)
		}
		if fr.CachedInput != nil && *fr.CachedInput > fr.Input || fr.MaxRPM != nil && *fr.MaxRPM <= 0 {
			t.Fatalf("accepted a fare breaking a rule: %+v", fr)
		}
		if !utf8.ValidString(parsed.Justification) || strings.ContainsRune(parsed.Justification, 0) {
			t.Fatalf("accepted a bad note %q", parsed.Justification)
		}
		if tb := fr.TimeBased; tb != nil {
			for _, w := range tb.PeakHours {
				if w.Start < 0 || w.End > 24 || w.Start >= w.End {
					t.Fatalf("bad window %+v", w)
				}
			}
		}
		round := FormOf(fr)
		again, errs := round.Parse(now)
		if errs != nil {
			t.Fatalf("the form of an accepted fare is refused: %v", errs)
		}
		if diff := cmp.Diff(fr, again.Fare); diff != "" {
			t.Fatalf("round trip (-first +again):\n%s", diff)
		}
	})
}

// FuzzReadCSV: any file either fails with row/column problems or yields rows
// with no formula cells, at most MaxCSVRows of them.
func FuzzReadCSV(f *testing.F) {
	header := strings.Join(CSVHeader, ",")
	f.Add([]byte(header + "\nnebula,kimi-k2.5,0.40,2.00,0.08,,,25,5,600,,per_org,tools;json_output,131072:0.80/4.00/0.16,note,\n"))
	f.Add([]byte(header + "\nnebula,kimi-k2.5,0.40,2.00,,,,20,0,,,global,,,\"=cmd|' /C calc'!A0\",\n"))
	f.Add([]byte("\ufeff" + header + "\n\"unterminated\n"))
	f.Add([]byte("model,input\nx,1\n"))
	f.Add([]byte{0xff, 0xfe, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, problems := ReadCSV(bytes.NewReader(data))
		if len(rows) > MaxCSVRows {
			t.Fatalf("%d rows", len(rows))
		}
		if len(problems) > 0 {
			for _, p := range problems {
				if p.Msg == "" || p.Column == "" {
					t.Fatalf("a problem without column or message: %+v", p)
				}
			}
			return
		}
		for _, r := range rows {
			if isFormula(r.Form.Justification) || isFormula(r.Carrier) || isFormula(r.Model) {
				t.Fatalf("a formula cell was accepted: %+v", r)
			}
		}
		var out bytes.Buffer
		if err := WriteCSV(&out, rows); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzFormulaGuard: a cell the guard lets through starts with no character a
// spreadsheet evaluates, or is a plain number, however it is padded.
func FuzzFormulaGuard(f *testing.F) {
	for _, seed := range []string{"=1", " =1", "\n=1", "-1+1+cmd|x", "-1.5", "+2", "@A1", "note", "\t=x"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, cell string) {
		for _, s := range []string{cell, strings.TrimSpace(cell)} {
			if s == "" || isFormula(s) {
				continue
			}
			if strings.ContainsRune("=+-@\t\r", rune(s[0])) && !regexp.MustCompile(`^[-+]?(\d+\.?\d*|\.\d+)$`).MatchString(s) {
				t.Fatalf("%q passes the guard", s)
			}
		}
		header := strings.Join(CSVHeader, ",")
		var b strings.Builder
		w := csv.NewWriter(&b)
		w.Write([]string{"nebula", "kimi", "0.40", "2.00", "", "", "", "20", "0", "", "", "global", "", "", cell, ""})
		w.Flush()
		rows, problems := ReadCSV(strings.NewReader(header + "\n" + b.String()))
		if len(problems) == 0 && len(rows) == 1 && isFormula(strings.TrimSpace(rows[0].Form.Justification)) {
			t.Fatalf("a formula justification was accepted: %q", rows[0].Form.Justification)
		}
	})
}
