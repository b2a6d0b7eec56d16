package fare

import (
	"encoding/json"
	"fmt"
	"slices"
)

// The carrier API reads and writes a fare by the same table as the form and
// the bulk file: each field under its Key, typed as the form types it (a
// string as written in the form's box; a list of strings for checkboxes; a
// list of objects by column name for a table of rows), so every field the
// form files the API files, under the same checks and messages.

// ValuesOf is a form's fields by key, for the API: every field present
// ("" or an empty list when not set).
func ValuesOf(form *Form) map[string]any {
	out := make(map[string]any, len(Fields))
	for _, f := range Fields {
		switch {
		case f.oneValue():
			out[f.Key] = f.Value(form)
		case f.list != nil:
			out[f.Key] = append([]string{}, *f.list(form)...)
		case f.Rows != nil:
			rows := make([]map[string]string, f.Rows.count(form))
			for i := range rows {
				rows[i] = map[string]string{}
				for _, c := range f.Rows.Columns {
					rows[i][c.Name] = *f.Rows.at(form, i, c.Name)
				}
			}
			out[f.Key] = rows
		}
	}
	return out
}

// Apply types the fields given into form (the others keep what it
// holds): a field given null is cleared. A key the table does not know,
// or a value of the wrong shape, is named in the errors and nothing of
// it is typed.
func Apply(form *Form, fields map[string]json.RawMessage) FieldErrors {
	errs := FieldErrors{}
	for key, raw := range fields {
		f, ok := FieldOf(key)
		if !ok || f.Key != key {
			errs[key] = fmt.Sprintf("%s is not a fare field (the fields are listed in GET /api/v1/carrier/listings).", key)
			continue
		}
		null := string(raw) == "null"
		switch {
		case f.oneValue():
			var v string
			if !null && json.Unmarshal(raw, &v) != nil {
				errs[key] = fmt.Sprintf("%s is a string, as typed in the form (e.g. \"0.50\").", f.Label)
				continue
			}
			f.Set(form, v)
		case f.list != nil:
			var v []string
			if !null && json.Unmarshal(raw, &v) != nil {
				errs[key] = fmt.Sprintf("%s is a list of strings.", f.Label)
				continue
			}
			*f.list(form) = v
		case f.Rows != nil:
			var rows []map[string]string
			if !null && json.Unmarshal(raw, &rows) != nil {
				errs[key] = fmt.Sprintf("%s is a list of objects of strings.", f.Label)
				continue
			}
			if col := unknownColumn(f.Rows, rows); col != "" {
				errs[key] = fmt.Sprintf("%s has no column %q.", f.Label, col)
				continue
			}
			f.Rows.grow(form, len(rows))
			for i, row := range rows {
				for _, c := range f.Rows.Columns {
					*f.Rows.at(form, i, c.Name) = row[c.Name]
				}
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

func unknownColumn(r *Rows, rows []map[string]string) string {
	for _, row := range rows {
		for col := range row {
			if !slices.ContainsFunc(r.Columns, func(c Column) bool { return c.Name == col }) {
				return col
			}
		}
	}
	return ""
}
