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

// SessionTTL is how long a session lives without a new login.
const SessionTTL = 12 * time.Hour

// dbSessionStore is a gorilla/sessions store that keeps session data in our
// database: the cookie holds only a random id, the database only its hash, so
// every serve process shares sessions and a logout ends one everywhere.
type dbSessionStore struct {
	store sessionRecords
	now   func() time.Time
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
	values := map[string]string{}
	if err := json.Unmarshal([]byte(rec.Data), &values); err != nil {
		return sess, nil
	}
	for k, v := range values {
		sess.Values[k] = v
	}
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
	rec := account.Session{Data: string(data), ExpiresAt: s.now().Add(time.Duration(sess.Options.MaxAge) * time.Second)}
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
		MaxAge:   int(SessionTTL.Seconds()),
		HttpOnly: true,
		Secure:   isTLS(r),
		SameSite: http.SameSiteLaxMode,
	}
}

const (
	sessionUserKey  = "uid"
	sessionFlashKey = "flash"
)
