package fare

import (
	"sort"
	"strings"
)

// FieldID is the HTML id of a field key's input: "tier.0.input" is
// "tier-0-input", a plain key is itself.
func FieldID(key string) string { return strings.ReplaceAll(key, ".", "-") }

// Problem is one field's message with its label and id, for an error
// summary.
type Problem struct {
	Key, Label, ID, Message string
}

// Problems lists errs as a summary in form order.
func Problems(errs FieldErrors) []Problem {
	out := make([]Problem, 0, len(errs))
	for k, msg := range errs {
		out = append(out, Problem{Key: k, Label: FieldLabel(k), ID: FieldID(k), Message: msg})
	}
	rank := func(k string) int {
		if i, ok := fieldIndex[strings.Split(k, ".")[0]]; ok {
			return i
		}
		return len(Fields)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if ri, rj := rank(out[i].Key), rank(out[j].Key); ri != rj {
			return ri < rj
		}
		return out[i].Key < out[j].Key
	})
	return out
}
