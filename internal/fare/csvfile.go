package fare

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"github.com/airside/airside/internal/csvsafe"
	"io"
	"strings"
	"unicode/utf8"
)

// CSVHeader is the bulk filing format, one row per listing, in this order.
var CSVHeader = []string{
	"carrier", "model", "input", "output", "cached_input", "cache_read", "cache_write",
	"landing_fee", "discount", "max_rpm", "max_rpd", "cap_scope", "capabilities", "tiers",
	"justification", "effective_at",
}

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
}

// CSVError is one problem in a bulk file, by row and column.
type CSVError struct {
	Row    int
	Column string
	Msg    string
}

// fieldColumn maps a form field to the CSV column it came from.
func fieldColumn(field string) string {
	switch {
	case strings.HasPrefix(field, "tier."):
		return "tiers"
	case strings.HasPrefix(field, "peak") || strings.HasPrefix(field, "off_peak") || field == "utc_offset" || field == "tod_effective_at":
		return "(schedule kept from the published fare)"
	}
	return field
}

// ColumnErrors turns a row's form errors into CSV errors.
func ColumnErrors(line int, errs FieldErrors) []CSVError {
	var out []CSVError
	for field, msg := range errs {
		out = append(out, CSVError{Row: line, Column: fieldColumn(field), Msg: msg})
	}
	return out
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
	if strings.Join(header, ",") != strings.Join(CSVHeader, ",") {
		return nil, []CSVError{{Row: 1, Column: "header", Msg: "The header must be exactly: " + strings.Join(CSVHeader, ",")}}
	}
	var rows []CSVRow
	var errs []CSVError
	for line := 2; ; line++ {
		record, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			errs = append(errs, CSVError{Row: line, Column: "file", Msg: "Not valid CSV here: " + err.Error()})
			break
		}
		if len(rows) >= MaxCSVRows {
			return nil, []CSVError{{Row: line, Column: "file", Msg: fmt.Sprintf("At most %d rows per file; split it.", MaxCSVRows)}}
		}
		if len(record) != len(CSVHeader) {
			errs = append(errs, CSVError{Row: line, Column: "file", Msg: fmt.Sprintf("Expected %d columns, found %d.", len(CSVHeader), len(record))})
			continue
		}
		cell := map[string]string{}
		for i, name := range CSVHeader {
			cell[name] = strings.TrimSpace(record[i])
			switch {
			case len(record[i]) > MaxCSVCell:
				errs = append(errs, CSVError{Row: line, Column: name, Msg: fmt.Sprintf("At most %d characters per cell.", MaxCSVCell)})
			case isFormula(record[i]) || isFormula(cell[name]): // as written and as trimmed: leading blanks hide nothing
				errs = append(errs, CSVError{Row: line, Column: name, Msg: "Starts like a spreadsheet formula (=, +, -, @, tab); remove the leading character."})
			}
		}
		row := CSVRow{Line: line, Carrier: cell["carrier"], Model: cell["model"], Form: Form{
			Input: cell["input"], Output: cell["output"], CachedInput: cell["cached_input"], CacheRead: cell["cache_read"],
			CacheWrite: cell["cache_write"], LandingFee: cell["landing_fee"], Discount: cell["discount"],
			MaxRPM: cell["max_rpm"], MaxRPD: cell["max_rpd"], CapScope: cell["cap_scope"],
			Justification: cell["justification"], EffectiveAt: cell["effective_at"],
		}}
		for _, c := range strings.Split(cell["capabilities"], ";") {
			if c = strings.TrimSpace(c); c != "" {
				row.Form.Capabilities = append(row.Form.Capabilities, c)
			}
		}
		tiers, err := parseTiersCell(cell["tiers"])
		if err != nil {
			errs = append(errs, CSVError{Row: line, Column: "tiers", Msg: err.Error()})
		}
		row.Form.Tiers = tiers
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

// parseTiersCell reads "32768:1.10/4.40/0.60;131072:2.20//".
func parseTiersCell(s string) ([]TierForm, error) {
	var tiers []TierForm
	for _, part := range strings.Split(s, ";") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		above, prices, ok := strings.Cut(part, ":")
		p := strings.Split(prices, "/")
		if !ok || len(p) > 3 {
			return nil, fmt.Errorf("write each tier as above:input/output/cached, e.g. 32768:1.10/4.40/0.60")
		}
		for len(p) < 3 {
			p = append(p, "")
		}
		tiers = append(tiers, TierForm{Above: strings.TrimSpace(above), Input: strings.TrimSpace(p[0]), Output: strings.TrimSpace(p[1]), CachedInput: strings.TrimSpace(p[2])})
	}
	return tiers, nil
}

// WriteCSV writes rows in the bulk format. Any cell that a spreadsheet would
// run as a formula is prefixed with a quote (csvsafe), so the file is inert
// when opened.
func WriteCSV(w io.Writer, rows []CSVRow) error {
	cw := csvsafe.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	for _, r := range rows {
		f := r.Form
		tiers := make([]string, len(f.Tiers))
		for i, t := range f.Tiers {
			tiers[i] = fmt.Sprintf("%s:%s/%s/%s", t.Above, t.Input, t.Output, t.CachedInput)
		}
		record := []string{r.Carrier, r.Model, f.Input, f.Output, f.CachedInput, f.CacheRead, f.CacheWrite, f.LandingFee, f.Discount,
			f.MaxRPM, f.MaxRPD, f.CapScope, strings.Join(f.Capabilities, ";"), strings.Join(tiers, ";"), f.Justification, f.EffectiveAt}
		if err := cw.Write(record); err != nil {
			return err
		}
	}
	return cw.Flush()
}
