package election

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// The contract's JSON for a result, written directly: the gateway encodes a
// result per request, and reflection over the report types cost far more
// than the election itself. The output is byte for byte what encoding/json
// writes for the Report types (a test holds the two side by side).

// MarshalJSON writes the result in the contract's shape.
func (r Result) MarshalJSON() ([]byte, error) {
	return r.AppendJSON(make([]byte, 0, 256+400*len(r.Candidates)))
}

// AppendJSON appends the result in the contract's shape to b. A non-finite
// number (which the engine does not produce from valid input) is an error,
// as it is for encoding/json.
func (r Result) AppendJSON(b []byte) ([]byte, error) {
	w := jsonWriter{b: b}
	w.raw(`{"winner":`)
	if r.Winner >= 0 {
		w.str(r.Candidates[r.Winner].ID)
	} else {
		w.raw("null")
	}
	w.raw(`,"cacheRelevant":`)
	w.boolean(r.CacheRelevant)
	w.raw(`,"fellOpen":`)
	w.boolean(r.FellOpen)
	w.raw(`,"weights":`)
	w.weights(Weights(r.Weights))
	w.raw(`,"candidates":[`)
	for i := range r.Candidates {
		o := &r.Candidates[i]
		if i > 0 {
			w.raw(",")
		}
		w.raw(`{"id":`)
		w.str(o.ID)
		if !o.Eligible {
			w.raw(`,"eligible":false,"excluded":`)
			var reasons [numCapabilities + 5]string // on the stack: every reason at most once
			w.strings(o.Excluded.appendReasons(reasons[:0]))
			w.raw("}")
			continue
		}
		w.raw(`,"eligible":true,"excluded":[],"hitRate":`)
		w.num(o.HitRate)
		w.raw(`,"outputRatio":`)
		w.num(o.OutputRatio)
		w.raw(`,"inputPrice":`)
		w.num(o.Prices.Input)
		w.raw(`,"outputPrice":`)
		w.num(o.Prices.Output)
		w.raw(`,"cachedInputPrice":`)
		if o.Prices.HasCachedInput {
			w.num(o.Prices.CachedInput)
		} else {
			w.raw("null")
		}
		w.raw(`,"tokenPrice":`)
		w.num(o.TokenPrice)
		w.raw(`,"fareFactor":`)
		w.num(o.FareFactor)
		w.raw(`,"routingPrice":`)
		w.num(o.RoutingPrice)
		w.raw(`,"factors":`)
		w.weights(Weights(o.Factors))
		w.raw(`,"uptimePenalty":`)
		w.num(o.UptimePenalty)
		w.raw(`,"priorityPenalty":`)
		w.num(o.PriorityPenalty)
		w.raw(`,"score":`)
		w.num(o.Score)
		w.raw(`,"rank":`)
		w.b = strconv.AppendInt(w.b, int64(o.Rank), 10)
		if r.Extended {
			// Sec. 7's fees as resolved for the request, and what they add
			// to its token price.
			w.raw(`,"requestPrice":`)
			w.num(o.Fees.Request)
			w.raw(`,"imagePrice":`)
			w.num(o.Fees.Image)
			w.raw(`,"feePrice":`)
			w.num(o.FeePrice)
		}
		if o.HasShare {
			s := &o.Share
			w.raw(`,"adjustedPrice":`)
			w.num(s.AdjustedPrice)
			w.raw(`,"speed":`)
			if s.HasSpeed {
				w.num(s.Speed)
			} else {
				w.raw("null")
			}
			w.raw(`,"distance":`)
			w.num(s.Distance)
			w.raw(`,"weight":`)
			w.num(s.Weight)
			w.raw(`,"share":`)
			w.num(s.Share)
		}
		w.raw("}")
	}
	w.raw("]")
	if r.Extended {
		w.raw(`,"policy":`)
		w.str(r.Policy.String())
		w.raw(`,"pinned":`)
		w.boolean(r.Pinned)
		w.raw(`,"order":[`)
		for k, i := range r.Order {
			if k > 0 {
				w.raw(",")
			}
			w.str(r.Candidates[i].ID)
		}
		w.raw("]")
	}
	w.raw("}")
	return w.b, w.err
}

// AppendWinnerJSON appends the winner-only answer, {"winner":ID,"score":S},
// with nulls when no one is eligible (id ""), written as Result's numbers
// and strings are.
func AppendWinnerJSON(b []byte, id string, score float64) ([]byte, error) {
	w := jsonWriter{b: b}
	if id == "" {
		w.raw(`{"winner":null,"score":null}`)
		return w.b, nil
	}
	w.raw(`{"winner":`)
	w.str(id)
	w.raw(`,"score":`)
	w.num(score)
	w.raw("}")
	return w.b, w.err
}

type jsonWriter struct {
	b   []byte
	err error
}

func (w *jsonWriter) raw(s string) { w.b = append(w.b, s...) }

func (w *jsonWriter) boolean(v bool) {
	if v {
		w.raw("true")
	} else {
		w.raw("false")
	}
}

func (w *jsonWriter) weights(v Weights) {
	w.raw(`{"price":`)
	w.num(v.Price)
	w.raw(`,"uptime":`)
	w.num(v.Uptime)
	w.raw(`,"throughput":`)
	w.num(v.Throughput)
	w.raw(`,"latency":`)
	w.num(v.Latency)
	w.raw(`,"cache":`)
	w.num(v.Cache)
	w.raw("}")
}

func (w *jsonWriter) strings(list []string) {
	w.raw("[")
	for i, s := range list {
		if i > 0 {
			w.raw(",")
		}
		w.str(s)
	}
	w.raw("]")
}

// num writes a float64 as encoding/json does: like ES6, 'f' format between
// 1e-6 and 1e21, 'e' format outside with a two-digit exponent trimmed.
func (w *jsonWriter) num(f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		if w.err == nil {
			w.err = fmt.Errorf("election result: unsupported value %v", f)
		}
		w.raw("null")
		return
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	w.b = strconv.AppendFloat(w.b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(w.b)
		if n >= 4 && w.b[n-4] == 'e' && w.b[n-3] == '-' && w.b[n-2] == '0' {
			w.b[n-2] = w.b[n-1]
			w.b = w.b[:n-1]
		}
	}
}

const hexDigits = "0123456789abcdef"

// str writes a JSON string as encoding/json does, HTML-safe: <, > and &
// escaped, as are U+2028 and U+2029 and invalid UTF-8 (as U+FFFD).
func (w *jsonWriter) str(s string) {
	w.b = append(w.b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			w.b = append(w.b, s[start:i]...)
			switch c {
			case '"', '\\':
				w.b = append(w.b, '\\', c)
			case '\n':
				w.b = append(w.b, '\\', 'n')
			case '\r':
				w.b = append(w.b, '\\', 'r')
			case '\t':
				w.b = append(w.b, '\\', 't')
			case '\b':
				w.b = append(w.b, '\\', 'b')
			case '\f':
				w.b = append(w.b, '\\', 'f')
			default:
				w.b = append(w.b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			w.b = append(w.b, s[start:i]...)
			w.raw(`\ufffd`)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			w.b = append(w.b, s[start:i]...)
			w.b = append(w.b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	w.b = append(w.b, s[start:]...)
	w.b = append(w.b, '"')
}
