package payout

import (
	"fmt"
	"io"
	"strconv"

	"github.com/airside/airside/internal/csvsafe"
	"github.com/airside/airside/internal/earnings"
)

// WriteCSV writes a document as CSV: the statement's columns and a last
// one naming the document each row belongs to (the statement's number, or
// "provisional"); its lines and total, then each credit note's lines and
// total, then, with notes, the net. Amounts are USD with six decimals,
// exact.
func WriteCSV(w io.Writer, d Document) error {
	cw := csvsafe.NewWriter(w)
	write := func(l earnings.Line, id, document string) error {
		if err := cw.Write(append(d.CSVRecord(l, id), document)); err != nil {
			return fmt.Errorf("write statement %s: %w", document, err)
		}
		return nil
	}
	if err := cw.Write(append(append([]string(nil), earnings.CSVHeader...), "document")); err != nil {
		return fmt.Errorf("write statement: %w", err)
	}
	number := d.Number
	if number == "" {
		number = "provisional"
	}
	for _, l := range d.Lines {
		if err := write(l, strconv.FormatInt(l.ID, 10), number); err != nil {
			return err
		}
	}
	if err := write(d.Total, "", number); err != nil {
		return err
	}
	for _, n := range d.Notes {
		for _, l := range n.Lines {
			if err := write(l, strconv.FormatInt(l.ID, 10), n.Number); err != nil {
				return err
			}
		}
		if err := write(n.Total, "", n.Number); err != nil {
			return err
		}
	}
	if len(d.Notes) > 0 {
		if err := write(d.Net(), "", "net"); err != nil {
			return err
		}
	}
	return cw.Flush()
}
