package alerting

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/airside/airside/internal/netguard"
)

// Inbox messages of the alert evaluator, one function per event: the store
// persists these words and writes none of its own.

// NoticeOpened tells a carrier an alert opened on one of its listings.
func NoticeOpened(listing string, kind Kind, detail string) string {
	return fmt.Sprintf("Alert: %s is %s: %s.", listing, kind.Label(), detail)
}

// EmailSubjectOpened and EmailSubjectRecovered head an alert's e-mail.
func EmailSubjectOpened(listing string, kind Kind) string {
	return fmt.Sprintf("Airside alert: %s is %s", listing, kind.Label())
}

func EmailSubjectRecovered(listing string, kind Kind) string {
	return fmt.Sprintf("Airside: %s recovered (%s)", listing, kind.Label())
}

// EmailFooter ends every alert e-mail: where to see it and how to stop.
const EmailFooter = "Your alerts, with their history, their rules and their mutes, are on the Alerts page. " +
	"You get these e-mails by your choice on your Account page (a carrier's admins get the daily digest unless they chose otherwise); change it there."

// NoticeRecovered tells a carrier an alert closed.
func NoticeRecovered(listing string, kind Kind, detail string) string {
	return fmt.Sprintf("Recovered: %s is no longer %s: %s.", listing, kind.Label(), detail)
}

// NoticeFlapping tells a carrier an alert that had recovered opened again
// within FoldWindow: said once, and the alert stays one alert until its
// condition has been clear for FoldWindow.
func NoticeFlapping(listing string, kind Kind, detail string) string {
	return fmt.Sprintf("Flapping: %s is %s again: %s. It has recovered and come back within the hour, so it stays one alert "+
		"and we tell you again only when it has been clear for an hour.", listing, kind.Label(), detail)
}

// EmailSubjectFlapping heads a flapping alert's e-mail.
func EmailSubjectFlapping(listing string, kind Kind) string {
	return fmt.Sprintf("Airside alert: %s is flapping (%s)", listing, kind.Label())
}

func rankMove(scenario string, now, was int64) string {
	return fmt.Sprintf("%s: rank %d, was %d", scenario, now, was)
}

func rankMovedDetail(moves []string, cause string) string {
	return strings.Join(moves, "; ") + " (" + cause + ")"
}

// errNoWebhook: the carrier removed its webhook while deliveries waited.
var errNoWebhook = errors.New("no webhook configured")

// deliveryProblem says why a webhook delivery failed in words a carrier can
// act on: which step (the name, the connection, TLS, the wait) and the
// receiver's host, never a Go error with the resolver's internal address.
func deliveryProblem(err error) string {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var opErr *net.OpError
	switch {
	case errors.Is(err, errNoWebhook):
		return "No webhook is configured: set one on this page."
	case errors.Is(err, netguard.ErrRefused):
		return "Airside does not send to this address (it resolves to a private or reserved network)."
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return "The receiver's name (" + dnsErr.Name + ") does not resolve: check the address."
		}
		return "The receiver's name (" + dnsErr.Name + ") could not be looked up just now; Airside tries again."
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "The receiver did not answer in time (30 s); Airside tries again."
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostErr):
		return "The receiver's TLS certificate is not valid for its address (expired, self-signed or for another name)."
	case errors.Is(err, syscall.ECONNREFUSED):
		return "The receiver refused the connection (nothing listens on that port)."
	case errors.As(err, &opErr):
		return "The connection to the receiver failed (" + opErr.Op + "); Airside tries again."
	}
	return "The delivery failed before the receiver answered; Airside tries again."
}
