package csvsafe

import (
	"bytes"
	"encoding/csv"
	"testing"
)

func TestEveryCellIsInert(t *testing.T) {
	hostile := []string{"=cmd|'/ccalc'!a0@x.example", "+1+1", "-1+cmd|x", "@SUM(A1)", "\t=1", "\r=1", "  =HYPERLINK(\"x\")"}
	safe := []string{"", "plain", "-1.5", "+2", "0.000001", "a=b", "ada@example.com"}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, cell := range hostile {
		if !IsFormula(cell) {
			t.Errorf("%q is not seen as a formula", cell)
		}
		// In every column, not only the first.
		if err := w.Write([]string{"x", cell, "y", cell}); err != nil {
			t.Fatal(err)
		}
	}
	for _, cell := range safe {
		if IsFormula(cell) {
			t.Errorf("%q is seen as a formula", cell)
		}
		if err := w.Write([]string{cell, "end"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r := csv.NewReader(bytes.NewReader(buf.Bytes()))
	r.FieldsPerRecord = -1
	records, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i, rec := range records {
		for j, cell := range rec {
			if IsFormula(cell) {
				t.Errorf("row %d column %d is written as a formula: %q", i, j, cell)
			}
		}
	}
	if got := records[len(hostile)][0]; got != "" || records[len(hostile)+2][0] != "-1.5" {
		t.Errorf("safe cells were changed: %q, %q", got, records[len(hostile)+2][0])
	}
}
