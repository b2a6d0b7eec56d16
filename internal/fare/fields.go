package fare

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/airside/airside/internal/money"
)

// Group is a section of the fare form; Parse checks one group at a time.
type Group string

// The form's sections, top to bottom.
const (
	GroupPrices       Group = "prices"
	GroupLevers       Group = "levers" // landing fee and discount
	GroupTiers        Group = "tiers"
	GroupSchedule     Group = "schedule" // peak and off-peak
	GroupCaps         Group = "caps"
	GroupCapabilities Group = "capabilities"
	GroupMarket       Group = "market" // context, quantization, data policy, regions, fees
	GroupFiling       Group = "filing" // justification and effective date
)

// Field declares one field of the fare form. Everything that names, reads,
// writes or checks a fare field is derived from Fields: the web form's
// parser, the error summary's labels and order, the bulk CSV's columns,
// which fields the live preview checks as you type, and the labels of the
// change summary and the listing page. Adding a field means one row here,
// plus the Fare type, its store row and migration, and its template input.
type Field struct {
	// Key is the field's name in the form and the key of its messages.
	Key string
	// Label names the field as a person reads it, everywhere.
	Label string
	// Qualifier follows the label on the form, in parentheses ("%",
	// "UTC, optional"); empty for none.
	Qualifier string
	// Hint is the form's help under the field.
	Hint string
	// Money fields are prices in USD per million tokens.
	Money bool
	Group Group
	// Post is the name the browser posts the field's values under when it
	// differs from Key (checkbox lists post one value per box).
	Post string
	// CSV is the field's column in the bulk file, "" when the bulk format
	// does not carry it (the schedule is kept from the published fare).
	CSV string
	// Live fields are checked as the carrier types on the filing form;
	// Compact ones also sit on the preview page's short form.
	Live, Compact bool
	// Moment fields are a date and time in UTC (fare.TimeLayout): the form
	// offers the browser's picker and echoes the time in the person's zone.
	Moment bool
	// Rows describes a field typed as a table of rows (tiers, windows): its
	// messages are keyed "<RowKey>.<i>.<column>".
	Rows *Rows

	text func(*Form) *string   // a field typed as one value
	list func(*Form) *[]string // a field typed as a set of checkboxes
	// billed is where a billed-only price lives in a Fare. Such a field is
	// typed in Form.Billed under its key, and Parse, FormOf, Diff and the
	// listing page read and write it through the table alone.
	billed func(*Fare) **money.Micros
}

// Rows is a field typed as a table: each row's columns.
type Rows struct {
	// Key prefixes each cell's message key; Label names a row ("Tier 2").
	Key, Label string
	Columns    []Column
	grow       func(*Form, int)                 // makes room for n rows
	at         func(*Form, int, string) *string // row i's cell in column
	count      func(*Form) int
}

// Column is one column of a row field.
type Column struct {
	Name  string // in the message key
	Label string // after the row's label: "Tier 2 input price"
	Post  string // the browser posts each row's cell under this name
	Whole bool   // a whole number (a threshold, an hour), not a price
}

func price(key, label, hint string, g Group, text func(*Form) *string) Field {
	return Field{Key: key, Label: label, Hint: hint, Group: g, Money: true, text: text}
}

// fee declares a schedule block's fee (USD per request or image part).
func fee(key, label string, text func(*Form) *string) Field {
	return Field{Key: key, Label: label, Qualifier: "USD", Group: GroupSchedule, text: text}
}

// BilledHint says what a billed-only price does.
const BilledHint = "Billed, not ranked."

// billedPrice declares an optional price that earnings bill and elections
// never rank: one row here, the Fare field at points to, its store column and
// its template input are all it takes.
func billedPrice(key, label string, at func(*Fare) **money.Micros) Field {
	return Field{Key: key, Label: label, Hint: BilledHint, Group: GroupPrices, Money: true, billed: at}
}

// Fields is the fare form, in the order a person reads it.
var Fields = []Field{
	withCSV(live(compact(price("input", "Input price", "", GroupPrices, func(f *Form) *string { return &f.Input }))), "input"),
	withCSV(live(compact(price("output", "Output price", "", GroupPrices, func(f *Form) *string { return &f.Output }))), "output"),
	withCSV(live(compact(price("cached_input", "Cached input price", "What a cache hit costs; ranked for large prompts and sessions.",
		GroupPrices, func(f *Form) *string { return &f.CachedInput }))), "cached_input"),
	withCSV(live(billedPrice("cache_read", "Explicit cache read price", func(f *Fare) **money.Micros { return &f.CacheRead })), "cache_read"),
	withCSV(live(billedPrice("cache_write", "Cache write price", func(f *Fare) **money.Micros { return &f.CacheWrite })), "cache_write"),
	withCSV(live(compact(Field{Key: "landing_fee", Label: "Landing fee", Qualifier: "%", Hint: LandingFeeHint, Group: GroupLevers,
		text: func(f *Form) *string { return &f.LandingFee }})), "landing_fee"),
	withCSV(live(compact(Field{Key: "discount", Label: "Traffic discount", Qualifier: "%", Hint: DiscountHint, Group: GroupLevers,
		text: func(f *Form) *string { return &f.Discount }})), "discount"),
	{Key: "tiers", Label: "Context tiers", Group: GroupTiers, CSV: "tiers", Rows: &Rows{Key: "tier", Label: "Tier",
		Columns: []Column{{"above", "threshold", "tier_above", true}, {"input", "input price", "tier_input", false},
			{"output", "output price", "tier_output", false}, {"cached_input", "cached input price", "tier_cached_input", false},
			{"request", "request fee", "tier_request", false}, {"image", "image fee", "tier_image", false}},
		grow:  func(f *Form, n int) { f.Tiers = slices.Grow(f.Tiers, n)[:n] },
		count: func(f *Form) int { return len(f.Tiers) },
		at: func(f *Form, i int, col string) *string {
			t := &f.Tiers[i]
			return map[string]*string{"above": &t.Above, "input": &t.Input, "output": &t.Output, "cached_input": &t.CachedInput,
				"request": &t.Request, "image": &t.Image}[col]
		}}},
	{Key: "peak_windows", Label: "Peak windows", Group: GroupSchedule, Rows: &Rows{Key: "peak_window", Label: "Peak window",
		Columns: []Column{{"start", "start hour", "peak_start", true}, {"end", "end hour", "peak_end", true}},
		grow:    func(f *Form, n int) { f.PeakWindows = slices.Grow(f.PeakWindows, n)[:n] },
		count:   func(f *Form) int { return len(f.PeakWindows) },
		at: func(f *Form, i int, col string) *string {
			w := &f.PeakWindows[i]
			return map[string]*string{"start": &w.Start, "end": &w.End}[col]
		}}},
	{Key: "off_peak_days", Label: "Off-peak days", Group: GroupSchedule, Post: "off_peak_day",
		list: func(f *Form) *[]string { return &f.OffPeakDays }},
	live(Field{Key: "utc_offset", Label: "Weekday offset", Qualifier: "minutes from UTC", Hint: "480 is UTC+8.", Group: GroupSchedule,
		text: func(f *Form) *string { return &f.UTCOffsetMinutes }}),
	live(Field{Key: "tod_effective_at", Label: "Schedule starts", Qualifier: "UTC", Moment: true, Hint: "Optional, like 2026-12-01T16:00.", Group: GroupSchedule,
		text: func(f *Form) *string { return &f.TODEffectiveAt }}),
	live(price("peak_input", "Peak input price", "", GroupSchedule, func(f *Form) *string { return &f.Peak.Input })),
	live(price("peak_output", "Peak output price", "", GroupSchedule, func(f *Form) *string { return &f.Peak.Output })),
	live(price("peak_cached_input", "Peak cached input price", "", GroupSchedule, func(f *Form) *string { return &f.Peak.CachedInput })),
	live(price("off_peak_input", "Off-peak input price", "", GroupSchedule, func(f *Form) *string { return &f.OffPeak.Input })),
	live(price("off_peak_output", "Off-peak output price", "", GroupSchedule, func(f *Form) *string { return &f.OffPeak.Output })),
	live(price("off_peak_cached_input", "Off-peak cached input price", "", GroupSchedule,
		func(f *Form) *string { return &f.OffPeak.CachedInput })),
	live(fee("peak_request", "Peak price per request", func(f *Form) *string { return &f.Peak.Request })),
	live(fee("peak_image", "Peak price per image", func(f *Form) *string { return &f.Peak.Image })),
	live(fee("off_peak_request", "Off-peak price per request", func(f *Form) *string { return &f.OffPeak.Request })),
	live(fee("off_peak_image", "Off-peak price per image", func(f *Form) *string { return &f.OffPeak.Image })),
	withCSV(live(Field{Key: "max_rpm", Label: "Max requests per minute", Group: GroupCaps,
		text: func(f *Form) *string { return &f.MaxRPM }}), "max_rpm"),
	withCSV(live(Field{Key: "max_rpd", Label: "Max requests per day", Group: GroupCaps,
		text: func(f *Form) *string { return &f.MaxRPD }}), "max_rpd"),
	{Key: "cap_scope", Label: "Cap scope", Group: GroupCaps, CSV: "cap_scope", text: func(f *Form) *string { return &f.CapScope }},
	{Key: "capabilities", Label: "Capabilities", Group: GroupCapabilities, Post: "capability", CSV: "capabilities",
		list: func(f *Form) *[]string { return &f.Capabilities }},
	withCSV(live(Field{Key: "context_length", Label: "Context length", Qualifier: "tokens", Group: GroupMarket,
		Hint: "Prompt plus output the listing holds; longer requests are not routed to it. Empty: no limit declared.",
		text: func(f *Form) *string { return &f.Market.ContextLength }}), "context_length"),
	withCSV(live(Field{Key: "max_output_tokens", Label: "Max output", Qualifier: "tokens", Group: GroupMarket,
		Hint: "Requests asking for more output (max_tokens) are not routed to it.",
		text: func(f *Form) *string { return &f.Market.MaxOutputTokens }}), "max_output_tokens"),
	withCSV(live(Field{Key: "quantization", Label: "Quantization", Group: GroupMarket,
		Hint: "One of " + QuantizationChoices + ". Developers may ask for some only.",
		text: func(f *Form) *string { return &f.Market.Quantization }}), "quantization"),
	withCSV(live(Field{Key: "retention_days", Label: "Prompts kept", Qualifier: "days", Group: GroupMarket,
		Hint: "0 means prompts and outputs are not kept. With no training that is zero data retention (ZDR). Your declaration: the reviewer sees it as such.",
		text: func(f *Form) *string { return &f.Market.RetentionDays }}), "retention_days"),
	withCSV(Field{Key: "trains_on_prompts", Label: "Trains on prompts", Group: GroupMarket,
		text: func(f *Form) *string { return &f.Market.TrainsOnPrompts }}, "trains_on_prompts"),
	withCSV(live(Field{Key: "regions", Label: "Regions", Qualifier: "country codes", Group: GroupMarket,
		Hint: "Where the datacenters serving this listing are, like DE, US. Projects with data residency route only to their regions.",
		text: func(f *Form) *string { return &f.Market.Regions }}), "regions"),
	withCSV(live(Field{Key: "request_price", Label: "Price per request", Qualifier: "USD", Group: GroupMarket,
		Hint: "Billed on every request and ranked: spread over the prompt, it adds to your token price.",
		text: func(f *Form) *string { return &f.Market.RequestPrice }}), "request_price"),
	withCSV(live(Field{Key: "image_price", Label: "Price per image", Qualifier: "USD", Group: GroupMarket,
		Hint: "Billed per image in the prompt and ranked like the request price.",
		text: func(f *Form) *string { return &f.Market.ImagePrice }}), "image_price"),
	{Key: "justification", Label: "Justification", Group: GroupFiling, CSV: "justification",
		text: func(f *Form) *string { return &f.Justification }},
	withCSV(live(Field{Key: "effective_at", Label: "Effective date", Qualifier: "UTC, optional", Moment: true,
		Hint: "A future date schedules the change; empty applies it once approved.", Group: GroupFiling,
		text: func(f *Form) *string { return &f.EffectiveAt }}), "effective_at"),
}

func live(f Field) Field                { f.Live = true; return f }
func compact(f Field) Field             { f.Compact = true; return f }
func withCSV(f Field, col string) Field { f.CSV = col; return f }

// csvOrder is the bulk file's column order after carrier and model. It is a
// published format (carriers keep files in it), so it is fixed here rather
// than following the form's order; every name must be a Field's CSV column.
// The market's columns (sec. 7) came later and follow the first fourteen.
var csvOrder = []string{"input", "output", "cached_input", "cache_read", "cache_write", "landing_fee", "discount",
	"max_rpm", "max_rpd", "cap_scope", "capabilities", "tiers", "justification", "effective_at",
	"context_length", "max_output_tokens", "quantization", "retention_days", "trains_on_prompts", "regions",
	"request_price", "image_price"}

// CSVHeader is the bulk filing format, one row per listing, in this order.
var CSVHeader = append([]string{"carrier", "model"}, csvOrder...)

// LegacyCSVHeader is the format before the market's columns: files in it
// still read, and their rows keep the listing's published market.
var LegacyCSVHeader = CSVHeader[:2+14]

var fieldIndex = func() map[string]int {
	idx := map[string]int{}
	for i, f := range Fields {
		if _, dup := idx[f.Key]; dup {
			panic("fare: two fields keyed " + f.Key)
		}
		idx[f.Key] = i
		if f.Rows != nil {
			idx[f.Rows.Key] = i
		}
	}
	return idx
}()

// FieldOf is the declaration of a field key; row keys ("tier.0.input") name
// their table's field.
func FieldOf(key string) (Field, bool) {
	head, _, _ := strings.Cut(key, ".")
	i, ok := fieldIndex[head]
	if !ok {
		return Field{}, false
	}
	f := Fields[i]
	if head != key { // a row cell: the table's own key has no dots
		if f.Rows == nil || head != f.Rows.Key || rowColumn(f.Rows, key) == nil {
			return Field{}, false
		}
	}
	return f, true
}

// KnownKey reports whether key is a field's key or one of its row cells.
func KnownKey(key string) bool { _, ok := FieldOf(key); return ok }

// rowColumn is the column a row cell key ("tier.3.input") names, or nil.
func rowColumn(r *Rows, key string) *Column {
	parts := strings.Split(key, ".")
	if len(parts) != 3 || parts[0] != r.Key {
		return nil
	}
	if n, err := strconv.Atoi(parts[1]); err != nil || n < 0 {
		return nil
	}
	for i := range r.Columns {
		if r.Columns[i].Name == parts[2] {
			return &r.Columns[i]
		}
	}
	return nil
}

// FormLabel is the label with its qualifier, as the form shows it.
func (f Field) FormLabel() string {
	if f.Qualifier == "" {
		return f.Label
	}
	return f.Label + " (" + f.Qualifier + ")"
}

// PostName is the name the browser posts a field under.
func (f Field) PostName() string {
	if f.Post != "" {
		return f.Post
	}
	return f.Key
}

// oneValue reports whether the field is typed as one value.
func (f Field) oneValue() bool { return f.text != nil || f.billed != nil }

// Value is what is typed in a one-value field of form.
func (f Field) Value(form *Form) string {
	switch {
	case f.text != nil:
		return *f.text(form)
	case f.billed != nil:
		return form.Billed[f.Key]
	}
	return ""
}

// Set types v into a one-value field of form (other fields ignore it).
func (f Field) Set(form *Form, v string) {
	switch {
	case f.text != nil:
		*f.text(form) = v
	case f.billed != nil && v == "":
		// A blank billed price is no entry, so forms compare equal
		// however they were filled.
		if delete(form.Billed, f.Key); len(form.Billed) == 0 {
			form.Billed = nil
		}
	case f.billed != nil:
		if form.Billed == nil {
			form.Billed = map[string]string{}
		}
		form.Billed[f.Key] = v
	}
}

// BilledPrice is a billed-only price of a fare, as the table names it.
type BilledPrice struct {
	Key, Label string
	Price      *money.Micros // nil when not filed
}

// BilledPrices are f's billed-only prices in the form's order.
func BilledPrices(f *Fare) []BilledPrice {
	var out []BilledPrice
	for _, fl := range Fields {
		if fl.billed != nil {
			out = append(out, BilledPrice{Key: fl.Key, Label: fl.Label, Price: *fl.billed(f)})
		}
	}
	return out
}

// MustField is the declaration of a key the code names literally (a
// template's input); an unknown key is a programming error.
func MustField(key string) Field {
	f, ok := FieldOf(key)
	if !ok || f.Key != key {
		panic("fare: no field keyed " + key)
	}
	return f
}

// CellKey is the message key of row i's cell in column col.
func (r *Rows) CellKey(i int, col string) string { return r.Key + "." + strconv.Itoa(i) + "." + col }

// Cell is what is typed in row i's column col ("" past the last row).
func (r *Rows) Cell(form *Form, i int, col string) string {
	if i < 0 || i >= r.count(form) {
		return ""
	}
	return *r.at(form, i, col)
}

// LiveFields are the keys the live preview keeps checked on the filing
// form; CompactFields those of the preview page's short form.
func LiveFields() []string    { return keysWhere(func(f Field) bool { return f.Live }) }
func CompactFields() []string { return keysWhere(func(f Field) bool { return f.Compact }) }

func keysWhere(keep func(Field) bool) []string {
	var out []string
	for _, f := range Fields {
		if keep(f) {
			out = append(out, f.Key)
		}
	}
	return out
}

// FormOfValues reads a posted filing form (the browser's name -> values):
// every field of the table, rows included, as typed.
func FormOfValues(values map[string][]string) Form {
	var form Form
	first := func(name string) string {
		if v := values[name]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	for _, f := range Fields {
		switch {
		case f.oneValue():
			f.Set(&form, first(f.PostName()))
		case f.list != nil:
			*f.list(&form) = values[f.PostName()]
		case f.Rows != nil:
			n := 0
			for _, c := range f.Rows.Columns {
				n = max(n, len(values[c.Post]))
			}
			f.Rows.grow(&form, n)
			for i := range n {
				for _, c := range f.Rows.Columns {
					if v := values[c.Post]; i < len(v) {
						*f.Rows.at(&form, i, c.Name) = v[i]
					}
				}
			}
		}
	}
	return form
}

// FieldLabel names a field key ("tier.0.input") as a person reads it
// ("Tier 1 input price"): rows count from 1.
func FieldLabel(key string) string {
	f, ok := FieldOf(key)
	if !ok {
		return strings.ReplaceAll(key, "_", " ")
	}
	if key == f.Key || f.Rows == nil {
		return f.Label
	}
	n, _ := strconv.Atoi(strings.Split(key, ".")[1])
	return fmt.Sprintf("%s %d %s", f.Rows.Label, n+1, rowColumn(f.Rows, key).Label)
}

// csvColumn is the bulk file's column a message key came from.
func csvColumn(key string) string {
	if f, ok := FieldOf(key); ok && f.CSV != "" {
		return f.CSV
	}
	return "(schedule kept from the published fare)"
}

// readCSVCells fills a form from one bulk row's cells by column name; a
// cell that cannot be read is named by its column.
func readCSVCells(form *Form, cell map[string]string) (column string, err error) {
	for _, f := range Fields {
		if f.CSV == "" {
			continue
		}
		v := cell[f.CSV]
		switch {
		case f.oneValue():
			f.Set(form, v)
		case f.list != nil:
			for _, item := range strings.Split(v, ";") {
				if item = strings.TrimSpace(item); item != "" {
					*f.list(form) = append(*f.list(form), item)
				}
			}
		case f.Rows != nil:
			if err := readRowsCell(form, f.Rows, v); err != nil {
				return f.CSV, err
			}
		}
	}
	return "", nil
}

// csvCells writes a form's bulk columns by name.
func csvCells(form *Form) map[string]string {
	out := map[string]string{}
	for _, f := range Fields {
		switch {
		case f.CSV == "":
		case f.oneValue():
			out[f.CSV] = f.Value(form)
		case f.list != nil:
			out[f.CSV] = strings.Join(*f.list(form), ";")
		case f.Rows != nil:
			out[f.CSV] = writeRowsCell(form, f.Rows)
		}
	}
	return out
}

// readRowsCell reads a table typed in one cell: rows split by ";", the
// first column before ":", the rest split by "/", e.g.
// "32768:1.10/4.40/0.60;131072:2.20//".
func readRowsCell(form *Form, r *Rows, s string) error {
	var rows [][]string
	for _, part := range strings.Split(s, ";") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		head, rest, ok := strings.Cut(part, ":")
		cells := append([]string{head}, strings.Split(rest, "/")...)
		if !ok || len(cells) > len(r.Columns) {
			return fmt.Errorf("write each %s as %s, e.g. 32768:1.10/4.40/0.60", strings.ToLower(r.Label), rowsCellPattern(r))
		}
		rows = append(rows, cells)
	}
	r.grow(form, len(rows))
	for i, cells := range rows {
		for j, c := range r.Columns {
			if j < len(cells) {
				*r.at(form, i, c.Name) = strings.TrimSpace(cells[j])
			}
		}
	}
	return nil
}

func writeRowsCell(form *Form, r *Rows) string {
	rows := make([]string, r.count(form))
	for i := range rows {
		cells := make([]string, len(r.Columns))
		for j, c := range r.Columns {
			cells[j] = *r.at(form, i, c.Name)
		}
		rows[i] = joinRow(cells)
	}
	return strings.Join(rows, ";")
}

// rowsCellPattern is how a row is written, for the message on a bad one:
// "threshold:input/output/cached".
func rowsCellPattern(r *Rows) string {
	words := make([]string, len(r.Columns))
	for j, c := range r.Columns {
		words[j] = strings.Fields(c.Label)[0]
	}
	return joinRow(words)
}

// joinRow writes a row's cells: the first, ":", the rest split by "/".
func joinRow(cells []string) string {
	if len(cells) == 0 {
		return ""
	}
	return cells[0] + ":" + strings.Join(cells[1:], "/")
}

// RowCell is one typed cell of a table field, as the browser posts it.
type RowCell struct {
	Key  string // its message key: "tier.1.input"
	Post string // the posted name its row's values share
	Row  int    // its row, counting from 0 in posted order
}

// RowCells are every cell typed in form's table fields (tiers, peak
// windows), for the live checks beside them.
func RowCells(form *Form) []RowCell {
	var out []RowCell
	for _, f := range Fields {
		if f.Rows == nil {
			continue
		}
		for i := range f.Rows.count(form) {
			for _, c := range f.Rows.Columns {
				out = append(out, RowCell{Key: f.Rows.CellKey(i, c.Name), Post: c.Post, Row: i})
			}
		}
	}
	return out
}

// Difference is one field typed differently in two forms.
type Difference struct {
	Key, Label string
	A, B       string
}

// Differences lists the fields a and b hold differently, in the form's
// order: what someone else saved beside what was typed, when an edit
// crossed another.
func Differences(a, b *Form) []Difference {
	var out []Difference
	for _, f := range Fields {
		var va, vb string
		switch {
		case f.oneValue():
			va, vb = f.Value(a), f.Value(b)
		case f.list != nil:
			va, vb = strings.Join(*f.list(a), ", "), strings.Join(*f.list(b), ", ")
		case f.Rows != nil:
			va, vb = rowsText(f.Rows, a), rowsText(f.Rows, b)
		}
		if strings.TrimSpace(va) != strings.TrimSpace(vb) {
			out = append(out, Difference{Key: f.Key, Label: f.Label, A: va, B: vb})
		}
	}
	return out
}

// rowsText writes a table-typed field's rows as "a / b; c / d".
func rowsText(r *Rows, form *Form) string {
	var rows []string
	for i := range r.count(form) {
		cells := make([]string, len(r.Columns))
		empty := true
		for j, c := range r.Columns {
			cells[j] = *r.at(form, i, c.Name)
			empty = empty && cells[j] == ""
		}
		if !empty {
			rows = append(rows, strings.Join(cells, " / "))
		}
	}
	return strings.Join(rows, "; ")
}
