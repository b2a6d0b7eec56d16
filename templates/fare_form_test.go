package templates

import (
	"bytes"
	"context"
	"html"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/airside/airside/internal/election"
	"github.com/airside/airside/internal/fare"
)

func renderFareForm(t *testing.T, v FareFormView) string {
	t.Helper()
	var buf bytes.Buffer
	if err := FareForm(v).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	return html.UnescapeString(buf.String())
}

// TestFareFormFollowsTheTable: the filing form has an input for every field
// of the fare table, posted under the table's names, labelled with the
// table's labels, in the table's order (which is the error summary's).
// A field added to the table but not to the form, or placed elsewhere on
// the page, fails here.
func TestFareFormFollowsTheTable(t *testing.T) {
	form := fare.Form{Tiers: []fare.TierForm{{Above: "32768"}}, PeakWindows: []fare.WindowForm{{Start: "8", End: "18"}}}
	body := renderFareForm(t, FareFormView{Form: form,
		Capabilities: []CapabilityOption{{Name: "tools", Label: "tools"}}, Days: []DayOption{{Value: "0", Label: "Sun"}}})
	// The form proper: the templates of empty rows come after it.
	body, _, _ = strings.Cut(body[strings.Index(body, `id="fare-form"`):], "</form>")

	byPost := map[string]string{}
	for _, f := range fare.Fields {
		byPost[f.PostName()] = f.Key
		if f.Rows != nil {
			for _, c := range f.Rows.Columns {
				byPost[c.Post] = f.Key
			}
		}
	}
	var order []string
	for _, m := range regexp.MustCompile(`<(?:input|textarea)[^>]* name="([a-z_]+)"`).FindAllStringSubmatch(body, -1) {
		name := m[1]
		switch name {
		case "_csrf", "full_form", "lock_version":
			continue
		}
		key, ok := byPost[name]
		if !ok {
			t.Errorf("the form posts %q, which no field of the table reads", name)
			continue
		}
		if len(order) == 0 || order[len(order)-1] != key {
			order = append(order, key)
		}
	}
	var want []string
	for _, f := range fare.Fields {
		want = append(want, f.Key)
	}
	if !slices.Equal(order, want) {
		t.Errorf("form order %v\ntable order %v", order, want)
	}
	for _, f := range fare.Fields {
		if f.Rows == nil && f.Key != "capabilities" && f.Key != "off_peak_days" && f.Key != "cap_scope" && f.Key != "justification" &&
			!strings.Contains(body, ">"+f.FormLabel()+"<") {
			t.Errorf("no label %q for %s", f.FormLabel(), f.Key)
		}
	}
}

// TestEveryFormMessageHasItsPlace: a message on any field of the table,
// rows included, is shown on the page beside its input and linked from the
// summary.
func TestEveryFormMessageHasItsPlace(t *testing.T) {
	form := fare.Form{Tiers: []fare.TierForm{{}}, PeakWindows: []fare.WindowForm{{}}}
	errs := fare.FieldErrors{}
	for _, f := range fare.Fields {
		errs[f.Key] = "wrong " + f.Key
		if f.Rows != nil {
			for _, c := range f.Rows.Columns {
				k := f.Rows.CellKey(0, c.Name)
				errs[k] = "wrong " + k
			}
		}
	}
	body := renderFareForm(t, FareFormView{Form: form, Errors: errs})
	for key, msg := range errs {
		if strings.Count(body, msg) < 2 {
			t.Errorf("%s: message shown %d times, want beside the field and in the summary", key, strings.Count(body, msg))
		}
		if !strings.Contains(body, `href="#`+fare.FieldID(key)+`"`) {
			t.Errorf("%s: the summary does not link the field", key)
		}
	}
}

// TestThresholdSentencesCarryTheConstants: the glossary and the filing form
// state the baseline, the bounds, the uptime lines and the incumbent margin
// with the values of their constants (archrules keeps anyone from writing
// them by hand), so a changed constant changes what people read.
func TestThresholdSentencesCarryTheConstants(t *testing.T) {
	var buf bytes.Buffer
	if err := Glossary(Page{}).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	glossary := html.UnescapeString(buf.String())
	form := renderFareForm(t, FareFormView{})
	margin := strconv.FormatFloat(election.IncumbentMargin, 'f', 2, 64)
	for name, c := range map[string]struct{ page, want string }{
		"baseline in the formula":   {glossary, "(1 + " + strconv.FormatFloat(election.BaselineLandingFee, 'f', 2, 64) + " - landing fee)"},
		"landing fee bounds":        {glossary, fare.MinLandingFee.Percent() + "-" + fare.MaxLandingFee.Percent() + " %"},
		"baseline named":            {glossary, "baseline " + fare.BaselineLandingFee.Percent() + " %"},
		"penalty line":              {glossary, "under " + election.Percent(election.PenaltyUptime) + " % uptime"},
		"stable line":               {glossary, "falls under " + election.Percent(election.StableUptime) + " %"},
		"margin":                    {glossary, "more than " + margin},
		"form hint on the fee":      {form, "the baseline " + fare.BaselineLandingFee.Percent() + " % leaves"},
		"form hint on the discount": {form, "0-" + fare.MaxDiscount.Percent() + " %"},
		"form formula":              {form, election.RoutingPriceFormula},
	} {
		if !strings.Contains(c.page, c.want) {
			t.Errorf("%s: page lacks %q", name, c.want)
		}
	}
}
