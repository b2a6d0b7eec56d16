// Package csvsafe writes CSV files that open inert in a spreadsheet: every
// export goes through its Writer, which guards every cell, so no column can
// be forgotten (OWASP's CSV injection advice).
package csvsafe

import (
	"encoding/csv"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// IsFormula reports a cell a spreadsheet would evaluate: one starting, after
// any leading blanks, with =, +, -, @, a tab or a carriage return, unless it
// is a plain number ("-1.5" is a number; "-1+1+cmd|..." is a formula).
func IsFormula(s string) bool {
	t := strings.TrimLeft(s, " ")
	if t == "" {
		return false
	}
	switch t[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return !plainNumber.MatchString(t)
	}
	return false
}

var plainNumber = regexp.MustCompile(`^[-+]?(\d+\.?\d*|\.\d+)$`)

// Inert is the cell as written to a file: a formula is prefixed with a
// quote, which spreadsheets show as text.
func Inert(s string) string {
	if IsFormula(s) {
		return "'" + s
	}
	return s
}

// Writer is a csv.Writer that makes every cell inert.
type Writer struct {
	cw  *csv.Writer
	row []string
}

// NewWriter writes CSV to w.
func NewWriter(w io.Writer) *Writer { return &Writer{cw: csv.NewWriter(w)} }

// Write writes one record, every cell inert.
func (w *Writer) Write(record []string) error {
	w.row = w.row[:0]
	for _, cell := range record {
		w.row = append(w.row, Inert(cell))
	}
	if err := w.cw.Write(w.row); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

// Flush writes what is buffered and reports any error of the whole write.
func (w *Writer) Flush() error {
	w.cw.Flush()
	if err := w.cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}
