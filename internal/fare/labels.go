package fare

import (
	"sort"
	"strconv"
	"strings"
)

// fieldLabels name the form's fields as a person reads them.
var fieldLabels = map[string]string{
	"input": "Input price", "output": "Output price", "cached_input": "Cached input price", "cache_read": "Explicit cache read price",
	"cache_write": "Cache write price", "landing_fee": "Landing fee", "discount": "Discount", "max_rpm": "Requests per minute cap",
	"max_rpd": "Requests per day cap", "cap_scope": "Cap scope", "capabilities": "Capabilities", "justification": "Justification",
	"effective_at": "Effective date", "tod_effective_at": "Peak pricing starts", "utc_offset_minutes": "Off-peak days' UTC offset",
	"off_peak_days": "Off-peak days", "peak_input": "Peak input price", "peak_output": "Peak output price",
	"peak_cached_input": "Peak cached input price", "off_peak_input": "Off-peak input price", "off_peak_output": "Off-peak output price",
	"off_peak_cached_input": "Off-peak cached input price", "tiers": "Context tiers", "peak_windows": "Peak windows",
}

var rowFields = map[string]string{"above": "threshold", "input": "input price", "output": "output price", "cached_input": "cached input price",
	"start": "start hour", "end": "end hour"}

// FieldLabel names a field key ("tier.0.input") as a person reads it
// ("Tier 1 input price"): rows count from 1.
func FieldLabel(key string) string {
	if l, ok := fieldLabels[key]; ok {
		return l
	}
	parts := strings.Split(key, ".")
	if len(parts) == 3 {
		n, err := strconv.Atoi(parts[1])
		if err == nil {
			row := map[string]string{"tier": "Tier", "peak_window": "Peak window"}[parts[0]]
			if row != "" {
				return row + " " + strconv.Itoa(n+1) + " " + rowFields[parts[2]]
			}
		}
	}
	return strings.ReplaceAll(key, "_", " ")
}

// FieldID is the HTML id of a field key's input: "tier.0.input" is
// "tier-0-input", a plain key is itself.
func FieldID(key string) string { return strings.ReplaceAll(key, ".", "-") }

// Problem is one field's message with its label and id, for an error
// summary.
type Problem struct {
	Key, Label, ID, Message string
}

// formOrder is the order fields appear in the form, so the summary reads
// top to bottom.
var formOrder = []string{"input", "output", "cached_input", "cache_read", "cache_write", "tier", "landing_fee", "discount",
	"max_rpm", "max_rpd", "cap_scope", "peak_window", "tod_effective_at", "off_peak_days", "utc_offset_minutes", "peak_input",
	"peak_output", "peak_cached_input", "off_peak_input", "off_peak_output", "off_peak_cached_input", "capabilities", "justification", "effective_at"}

// Problems lists errs as a summary in form order.
func Problems(errs FieldErrors) []Problem {
	out := make([]Problem, 0, len(errs))
	for k, msg := range errs {
		out = append(out, Problem{Key: k, Label: FieldLabel(k), ID: FieldID(k), Message: msg})
	}
	rank := func(k string) int {
		head := strings.Split(k, ".")[0]
		for i, f := range formOrder {
			if f == head {
				return i
			}
		}
		return len(formOrder)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if ri, rj := rank(out[i].Key), rank(out[j].Key); ri != rj {
			return ri < rj
		}
		return out[i].Key < out[j].Key
	})
	return out
}
