// Package apperr is Airside's error vocabulary: a code a handler maps to a
// status in one place, and a message that is safe to show a person.
package apperr

import (
	"errors"
	"fmt"
)

// The error codes.
const (
	EINVALID = "invalid"
	// EBADREQUEST is a request that cannot be read at all: not JSON, or a
	// value of the wrong type (EINVALID is a value out of range).
	EBADREQUEST   = "bad_request"
	ENOTFOUND     = "not_found"
	ECONFLICT     = "conflict"
	EFORBIDDEN    = "forbidden"
	EUNAUTHORIZED = "unauthorized"
	ETHROTTLED    = "throttled"
	// EUNAVAILABLE is a passing refusal of the service itself (the database
	// cannot take writes); RetryAfter says when to try again.
	EUNAVAILABLE = "unavailable"
	EINTERNAL    = "internal"
)

// Error is a domain error with a user-safe message. Fields holds per-field
// messages for forms.
type Error struct {
	Code    string
	Message string
	Fields  map[string]string
	// Ref names another object the message is about (e.g. the filing already
	// in flight), so the page can link to it.
	Ref int64
	// RetryAfter, for ETHROTTLED and EUNAVAILABLE, is how many seconds to wait before trying
	// again (sent as the Retry-After header).
	RetryAfter int
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// Errorf builds an *Error.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Code returns the code of the first *Error in err's chain, EINTERNAL for any
// other error, and "" for nil.
func Code(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// Message returns the user-safe message of err; internal errors never leak.
func Message(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "Something went wrong on our side. It has been logged; please try again."
}

// FieldErrors returns the per-field messages of err, if any.
func FieldErrors(err error) map[string]string {
	var e *Error
	if errors.As(err, &e) {
		return e.Fields
	}
	return nil
}

// Invalid builds an EINVALID error with per-field messages.
func Invalid(fields map[string]string) *Error {
	return &Error{Code: EINVALID, Message: "Some fields need attention.", Fields: fields}
}

// RefOf returns the Ref of err's *Error, 0 when none.
func RefOf(err error) int64 {
	var e *Error
	if errors.As(err, &e) {
		return e.Ref
	}
	return 0
}

// RetryAfterOf returns the seconds to wait of the first *Error in err's
// chain, 0 when it says none.
func RetryAfterOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.RetryAfter
	}
	return 0
}
