package web

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/apitoken"
	"github.com/airside/airside/internal/apperr"
)

// credentialsBody is the answer of GET /api/v1/listings/{id}/credentials.
type credentialsBody struct {
	ListingID     int64  `json:"listingId"`
	BaseURL       string `json:"baseUrl"`
	UpstreamModel string `json:"upstreamModel"`
	APIKey        string `json:"apiKey"`
}

// handleAPICredentials hands a listing's published endpoint and key to a
// token with the credentials scope; the read is audited in the store.
func (s *Server) handleAPICredentials(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("listingId"), 10, 64)
	if err != nil || id < 1 {
		return apperr.Invalid(map[string]string{"listingId": "a listing id is a positive whole number"})
	}
	tok, _ := c.Get(ctxToken).(*apitoken.Token)
	var tokenID int64
	if tok != nil {
		tokenID = tok.ID
	}
	ep, key, err := s.Endpoints.Credentials(c.Request().Context(), tokenID, id)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, credentialsBody{ListingID: id, BaseURL: ep.BaseURL, UpstreamModel: ep.UpstreamModel, APIKey: key})
}
