# The portal as a container: `docker build -t airside .` then
#   docker run -p 8080:8080 -e AIRSIDE_DATABASE_URL=postgres://... \
#     -e AIRSIDE_SECRET_KEY=... -e AIRSIDE_BASE_URL=https://fares.example.com airside
# serve migrates the database on start. The image holds one static binary
# (pure-Go SQLite and PostgreSQL drivers, no cgo) and CA certificates for
# probing carriers' endpoints and sending webhooks over TLS.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/airside ./cmd/airside

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --home /var/lib/airside --create-home airside
COPY --from=build /out/airside /usr/local/bin/airside
USER airside
WORKDIR /var/lib/airside
# The embedded SQLite default lives here when no AIRSIDE_DATABASE_URL is set.
VOLUME /var/lib/airside
ENV AIRSIDE_ADDR=:8080 AIRSIDE_DATABASE_URL=sqlite:/var/lib/airside/airside.db
EXPOSE 8080
# A drain (SIGTERM) turns /readyz to 503 and answers held long polls before
# the process exits: give it the grace period (AIRSIDE_SHUTDOWN_GRACE).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/airside"]
CMD ["serve"]
