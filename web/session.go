package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/gorilla/sessions"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
)

// SessionCookie is the session cookie's name.
const SessionCookie = "airside_session"

// The default session lifetimes: a session ends after SessionIdle without a
// request, and SessionLifetime after its login however busy it is.
const (
	SessionIdle     = 12 * time.Hour
	SessionLifetime = 7 * 24 * time.Hour
)

// sessionTouchEvery is how often a session in use has its idle expiry pushed
// back (a write at most this often per session, not per request).
const sessionTouchEvery = 5 * time.Minute

// Keys of what the session store keeps beside the values, never persisted
// as values.
const (
	sessionCreatedKey = "_created"
	sessionExpiresKey = "_expires"
)

// dbSessionStore is a gorilla/sessions store that keeps session data in our
// database: the cookie holds only a random id, the database only its hash, so
// every serve process shares sessions and a logout ends one everywhere.
type dbSessionStore struct {
	store sessionRecords
	now   func() time.Time
	// idle and lifetime bound a session (SessionIdle, SessionLifetime when 0).
	idle, lifetime time.Duration
}

func (s *dbSessionStore) limits() (idle, lifetime time.Duration) {
	idle, lifetime = s.idle, s.lifetime
	if idle <= 0 {
		idle = SessionIdle
	}
	if lifetime <= 0 {
		lifetime = SessionLifetime
	}
	return idle, lifetime
}

// sessionRecords is where sessions are kept: the database, so every serve
// process shares them and a logout ends a session everywhere.
type sessionRecords interface {
	SaveSession(ctx context.Context, idHash string, sess account.Session) error
	FindSession(ctx context.Context, idHash string) (*account.Session, error)
	DeleteSession(ctx context.Context, idHash string) error
}

var _ sessions.Store = (*dbSessionStore)(nil)

// Get returns the request's session, cached per request by gorilla's registry.
func (s *dbSessionStore) Get(r *http.Request, name string) (*sessions.Session, error) {
	return sessions.GetRegistry(r).Get(s, name)
}

// New loads the session named by the request's cookie, or starts an empty one.
func (s *dbSessionStore) New(r *http.Request, name string) (*sessions.Session, error) {
	sess := sessions.NewSession(s, name)
	sess.Options = cookieOptions(r)
	sess.IsNew = true
	cookie, err := r.Cookie(name)
	if err != nil || cookie.Value == "" {
		return sess, nil
	}
	rec, err := s.store.FindSession(r.Context(), account.HashToken(cookie.Value))
	if apperr.Code(err) == apperr.ENOTFOUND {
		return sess, nil // unknown, expired or logged out: start afresh
	}
	if err != nil {
		return sess, fmt.Errorf("load session: %w", err)
	}
	if _, lifetime := s.limits(); !s.now().Before(rec.CreatedAt.Add(lifetime)) {
		return sess, nil // past its absolute lifetime, however busy: log in again
	}
	values := map[string]string{}
	if err := json.Unmarshal([]byte(rec.Data), &values); err != nil {
		return sess, nil
	}
	for k, v := range values {
		sess.Values[k] = v
	}
	sess.Values[sessionCreatedKey] = rec.CreatedAt
	sess.Values[sessionExpiresKey] = rec.ExpiresAt
	sess.ID = cookie.Value
	sess.IsNew = false
	return sess, nil
}

// Save writes the session, or deletes it when MaxAge < 0.
func (s *dbSessionStore) Save(r *http.Request, w http.ResponseWriter, sess *sessions.Session) error {
	ctx := r.Context()
	if sess.Options.MaxAge < 0 {
		if sess.ID != "" {
			if err := s.store.DeleteSession(ctx, account.HashToken(sess.ID)); err != nil {
				return err
			}
		}
		http.SetCookie(w, sessions.NewCookie(sess.Name(), "", sess.Options))
		return nil
	}
	if sess.ID == "" {
		token, _, err := account.NewToken()
		if err != nil {
			return err
		}
		sess.ID = token
	}
	values := map[string]string{}
	for k, v := range sess.Values {
		ks, ok1 := k.(string)
		vs, ok2 := v.(string)
		if ok1 && ok2 {
			values[ks] = vs
		}
	}
	data, err := json.Marshal(values)
	if err != nil {
		return fmt.Errorf("encode session: %w", err)
	}
	// Idle expiry from now, never past the lifetime from the login.
	now := s.now()
	idle, lifetime := s.limits()
	created, ok := sess.Values[sessionCreatedKey].(time.Time)
	if !ok {
		created = now
	}
	expires := now.Add(idle)
	if end := created.Add(lifetime); end.Before(expires) {
		expires = end
	}
	sess.Values[sessionCreatedKey], sess.Values[sessionExpiresKey] = created, expires
	sess.Options.MaxAge = max(1, int(expires.Sub(now).Seconds()))
	rec := account.Session{Data: string(data), ExpiresAt: expires}
	if uid, ok := values[sessionUserKey]; ok {
		var id int64
		if _, err := fmt.Sscan(uid, &id); err == nil {
			rec.UserID = &id
		}
	}
	if err := s.store.SaveSession(ctx, account.HashToken(sess.ID), rec); err != nil {
		return err
	}
	http.SetCookie(w, sessions.NewCookie(sess.Name(), sess.ID, sess.Options))
	return nil
}

// cookieOptions are the session cookie's flags: HttpOnly, SameSite=Lax, and
// Secure whenever the request came over TLS.
func cookieOptions(r *http.Request) *sessions.Options {
	return &sessions.Options{
		Path:     "/",
		MaxAge:   int(SessionIdle.Seconds()),
		HttpOnly: true,
		Secure:   isTLS(r),
		SameSite: http.SameSiteLaxMode,
	}
}

const (
	sessionUserKey  = "uid"
	sessionFlashKey = "flash"
	// sessionCSRFKey is the CSRF token the session was given at login: a
	// form must carry it, not only match the cookie (which a sibling
	// subdomain could plant).
	sessionCSRFKey = "csrf"
)

// touch pushes back a session's idle expiry when it is in use, at most once
// every sessionTouchEvery, never past its lifetime.
func (s *dbSessionStore) touch(r *http.Request, w http.ResponseWriter, sess *sessions.Session) error {
	expires, ok := sess.Values[sessionExpiresKey].(time.Time)
	idle, _ := s.limits()
	if !ok || expires.Sub(s.now()) > idle-sessionTouchEvery {
		return nil
	}
	return sess.Save(r, w)
}

// SetSessionLimits sets how long a session lives without a request (idle)
// and at most after its login (lifetime); 0 keeps the default.
func (s *Server) SetSessionLimits(idle, lifetime time.Duration) {
	s.sessions.idle, s.sessions.lifetime = idle, lifetime
}
