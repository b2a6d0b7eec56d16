// Package traffic holds the rules around one election that decide where a
// gateway's requests go and how what happened is counted (section 4 of
// docs election.md): shapes, stable preference, exploration, sessions, rate
// caps, fallback and error classes. It is pure (no I/O, no clock, no
// randomness of its own: the caller passes time and draws), so the reference
// gateway routes by it and the preview's projection can be held to it.
package traffic

import "net/http"

// Class is what an attempt at a listing came to, as the gateway counts it
// (seed 004, OpenRouter's guide to what carriers are judged on).
type Class uint8

const (
	// Served is an answer the caller got in full.
	Served Class = iota
	// Counted is a failure held against the listing's uptime: 5xx, no
	// response or a timeout, 401, 402, 404, 405, 408, 410, 421, 423, 424,
	// 426, 498, and a stream that fails partway.
	Counted
	// NotCounted is a failure that is the caller's doing: 400, 413, 422,
	// 403, 451 and 499. It is returned to the caller, never retried.
	NotCounted
	// RateLimited is a 429: not an uptime failure, but the request falls
	// back to the next candidate.
	RateLimited
)

// String names the class as the metrics and the README do.
func (c Class) String() string {
	switch c {
	case Served:
		return "served"
	case Counted:
		return "counted"
	case NotCounted:
		return "not counted"
	case RateLimited:
		return "rate limited"
	}
	return "unknown"
}

// StatusClientClosed is nginx's 499: the caller hung up before the answer.
const StatusClientClosed = 499

// statusInvalidToken is 498, an expired or invalid token (Esri's, used by
// some carriers' edges).
const statusInvalidToken = 498

// ClassOfStatus classes an upstream HTTP status. A 2xx is Served; any status
// the guide does not name is counted when it is 5xx and not counted when it
// is another 4xx (an unknown 4xx is taken as the caller's, like 400).
func ClassOfStatus(status int) Class {
	switch {
	case status >= 200 && status < 300:
		return Served
	case status == http.StatusTooManyRequests:
		return RateLimited
	case status >= 500:
		return Counted
	}
	switch status {
	case http.StatusUnauthorized, http.StatusPaymentRequired, http.StatusNotFound, http.StatusMethodNotAllowed,
		http.StatusRequestTimeout, http.StatusGone, http.StatusMisdirectedRequest, http.StatusLocked,
		http.StatusFailedDependency, http.StatusUpgradeRequired, statusInvalidToken:
		return Counted
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity,
		http.StatusForbidden, http.StatusUnavailableForLegalReasons, StatusClientClosed:
		return NotCounted
	}
	if status >= 400 {
		return NotCounted
	}
	// 1xx and 3xx are not answers an OpenAI-compatible server gives.
	return Counted
}

// FallsBack reports whether a request that met this class moves on to the
// next candidate (when the caller allows fallback).
func (c Class) FallsBack() bool { return c == Counted || c == RateLimited }

// MaxTries bounds the attempts of one request, the first one included.
const MaxTries = 3
