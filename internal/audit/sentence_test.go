package audit

import (
	"slices"
	"testing"
)

func TestSentences(t *testing.T) {
	for _, test := range []struct {
		e    Event
		want string
		link string
	}{
		{Event{ActorEmail: "ada@airside.example", Action: "filing.approve", SubjectType: "filing", SubjectID: 12,
			Before: `{"state":"submitted"}`, After: `{"state":"published","note":""}`},
			"ada@airside.example approved filing #12: state submitted → published", "/filings/12"},
		{Event{ActorEmail: "m@nebula.example", Action: "filing.edit", SubjectType: "filing", SubjectID: 3,
			Before: `{"state":"draft","fareId":4}`, After: `{"state":"draft","fareId":5,"changes":[{"field":"input","old":"0.50","new":"0.45"}]}`},
			"m@nebula.example edited filing #3: changes input 0.50 → 0.45, fare id 4 → 5", "/filings/3"},
		{Event{ActorEmail: "admin@airside.example", Action: "listing.priority", SubjectType: "listing", SubjectID: 7,
			Before: `{"priorityBp":10000}`, After: `{"priorityBp":5000}`},
			"admin@airside.example set the routing priority of listing 7: priority bp 10000 → 5000", "/listings/7"},
		{Event{Action: "filing.publish", SubjectType: "filing", SubjectID: 9},
			"Airside published to routing filing #9", "/filings/9"},
		{Event{ActorEmail: "x@y.z", Action: "something.new", SubjectType: "api_token", SubjectID: 2},
			"x@y.z something new API token 2", ""},
	} {
		if got := Sentence(test.e); got != test.want {
			t.Errorf("Sentence = %q\n want %q", got, test.want)
		}
		if got := Link(test.e); got != test.link {
			t.Errorf("Link = %q, want %q", got, test.link)
		}
	}
	if !slices.Contains(Actions(), "filing.approve") || !slices.IsSorted(Actions()) {
		t.Error("Actions is not the sorted list of known actions")
	}
}
