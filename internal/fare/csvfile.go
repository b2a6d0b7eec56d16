package fare

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/airside/airside/internal/csvsafe"
)

// Bulk file limits.
const (
	MaxCSVBytes = 1 << 20
	MaxCSVRows  = 1000
	// MaxCSVCell bounds one cell (a justification is the longest).
	MaxCSVCell = MaxJustification + 100
)

// CSVRow is one row of a bulk filing: which listing, and its typed form.
type CSVRow struct {
	Line    int // the file's line, header = 1
	Carrier string
	Model   string
	Form    Form
	// KeepMarket says the file is in the format before the market's
	// columns (LegacyCSVHeader): the listing keeps its published market
	// attributes, as it keeps its schedule.
	KeepMarket bool
}

// CSVError is one problem in a bulk file, by row and column.
type CSVError struct {
	Row    int
	Column string
	Msg    string
}

// ColumnErrors turns a row's form errors into CSV errors.
func ColumnErrors(line int, errs FieldErrors) []CSVError {
	var out []CSVError
	for field, msg := range errs {
		if m, ok := csvWording[field]; ok {
			msg = m // the form's words name its choices, not the file's values
		}
		out = append(out, CSVError{Row: line, Column: csvColumn(field), Msg: msg})
	}
	return out
}

// csvWording are messages worded for the file where the form's would name
// what the file does not use.
var csvWording = map[string]string{
	"cap_scope":         "Write global or per_org (or leave it empty for global).",
	"trains_on_prompts": "Write yes or no (or leave it empty: not declared).",
}

// csvSyntaxMessage says in a person's words what encoding/csv found wrong.
func csvSyntaxMessage(err error) string {
	switch {
	case errors.Is(err, csv.ErrBareQuote):
		return `A quote (") inside a cell that does not start with one: wrap the whole cell in quotes and double the quote inside ("").`
	case errors.Is(err, csv.ErrQuote):
		return `A quoted cell does not end where it should: close its quote before the next comma, and double any quote inside it ("").`
	}
	return "This line is not valid CSV."
}

// columnCountMessage explains a row of the wrong width, guessing the
// likely cause from the raw line.
func columnCountMessage(header []string, found int, raw string, comma rune) string {
	msg := fmt.Sprintf("Expected %d columns (%s), found %d.", len(header), strings.Join(header, ", "), found)
	switch {
	case comma == ',' && strings.Count(raw, ";") >= len(header)-1:
		return msg + " This row separates its cells with semicolons while the header uses commas: save the whole file with commas."
	case found > len(header):
		return msg + " A cell that contains a comma must be wrapped in quotes."
	}
	return msg + " Leave an empty cell for a value you do not set, but keep its comma."
}

// ReadCSV reads a bulk filing file. It refuses the whole file on a bad
// header, non-UTF-8 text, more than MaxCSVRows rows, or cells a spreadsheet
// would run as formulas; per-row problems are listed by row and column.
func ReadCSV(r io.Reader) ([]CSVRow, []CSVError) {
	data, err := io.ReadAll(io.LimitReader(r, MaxCSVBytes+1))
	if err != nil {
		return nil, []CSVError{{Row: 0, Column: "file", Msg: "The file could not be read."}}
	}
	if len(data) > MaxCSVBytes {
		return nil, []CSVError{{Row: 0, Column: "file", Msg: fmt.Sprintf("The file is larger than %d KiB.", MaxCSVBytes>>10)}}
	}
	if !utf8.Valid(data) {
		return nil, []CSVError{{Row: 0, Column: "file", Msg: "The file is not UTF-8 text; save it as CSV UTF-8."}}
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	// Spreadsheets in many locales save CSV with semicolons (their decimal
	// separator is the comma): a header with semicolons and no comma says so.
	if first, _, _ := bytes.Cut(data, []byte("\n")); bytes.Contains(first, []byte(";")) && !bytes.Contains(first, []byte(",")) {
		cr.Comma = ';'
	}
	header, err := cr.Read()
	if err != nil {
		return nil, []CSVError{{Row: 1, Column: "header", Msg: "The file is empty or not CSV."}}
	}
	for i := range header {
		header[i] = strings.ToLower(strings.TrimSpace(header[i]))
	}
	columns := CSVHeader
	legacy := strings.Join(header, ",") == strings.Join(LegacyCSVHeader, ",")
	if legacy {
		columns = LegacyCSVHeader // files kept before the market's columns still read
	} else if strings.Join(header, ",") != strings.Join(CSVHeader, ",") {
		return nil, []CSVError{{Row: 1, Column: "header", Msg: "The header must be exactly: " + strings.Join(CSVHeader, ",")}}
	}
	var rows []CSVRow
	var errs []CSVError
	lines := strings.Split(string(data), "\n")
	lastBad := 0
	for {
		record, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			// The reader goes on at the next line, so every bad line of
			// the file is reported in one pass; a quote left open to the
			// end of the file is reported once.
			if pe.StartLine == lastBad {
				break
			}
			lastBad = pe.StartLine
			errs = append(errs, CSVError{Row: pe.StartLine, Column: "file", Msg: csvSyntaxMessage(pe.Err)})
			continue
		}
		if err != nil {
			errs = append(errs, CSVError{Row: lastBad + 1, Column: "file", Msg: "This line is not valid CSV."})
			break
		}
		line, _ := cr.FieldPos(0) // the file's line where the record starts
		if len(rows) >= MaxCSVRows {
			return nil, []CSVError{{Row: line, Column: "file", Msg: fmt.Sprintf("At most %d rows per file; split it.", MaxCSVRows)}}
		}
		if len(record) != len(columns) {
			raw := ""
			if line-1 < len(lines) {
				raw = lines[line-1]
			}
			errs = append(errs, CSVError{Row: line, Column: "file", Msg: columnCountMessage(columns, len(record), raw, cr.Comma)})
			continue
		}
		cell := map[string]string{}
		for i, name := range columns {
			cell[name] = strings.TrimSpace(record[i])
			switch {
			case len(record[i]) > MaxCSVCell:
				errs = append(errs, CSVError{Row: line, Column: name, Msg: fmt.Sprintf("At most %d characters per cell.", MaxCSVCell)})
			case isFormula(record[i]) || isFormula(cell[name]): // as written and as trimmed: leading blanks hide nothing
				errs = append(errs, CSVError{Row: line, Column: name, Msg: "Starts like a spreadsheet formula (=, +, -, @, tab); remove the leading character."})
			}
		}
		row := CSVRow{Line: line, Carrier: cell["carrier"], Model: cell["model"], KeepMarket: legacy}
		if column, err := readCSVCells(&row.Form, cell); err != nil {
			errs = append(errs, CSVError{Row: line, Column: column, Msg: err.Error()})
		}
		if row.Model == "" {
			errs = append(errs, CSVError{Row: line, Column: "model", Msg: "Name the model by its slug."})
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 && len(errs) == 0 {
		errs = append(errs, CSVError{Row: 2, Column: "file", Msg: "The file has a header but no rows."})
	}
	return rows, errs
}

// isFormula reports a cell a spreadsheet would evaluate (csvsafe says
// which).
func isFormula(s string) bool { return csvsafe.IsFormula(s) }

// WriteCSV writes rows in the bulk format. Any cell that a spreadsheet would
// run as a formula is prefixed with a quote (csvsafe), so the file is inert
// when opened.
func WriteCSV(w io.Writer, rows []CSVRow) error {
	cw := csvsafe.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	for _, r := range rows {
		cells := csvCells(&r.Form)
		record := []string{r.Carrier, r.Model}
		for _, col := range csvOrder {
			record = append(record, cells[col])
		}
		if err := cw.Write(record); err != nil {
			return err
		}
	}
	return cw.Flush()
}
