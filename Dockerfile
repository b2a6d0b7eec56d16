# The portal as a container: `docker build -t airside .` then
#   docker run --read-only --tmpfs /tmp -v airside-data:/var/lib/airside -p 8080:8080 \
#     -e AIRSIDE_DATABASE_URL=postgres://... -e AIRSIDE_SECRET_KEY=... \
#     -e AIRSIDE_BASE_URL=https://fares.example.com airside
# The root filesystem can be read-only: the process writes only to the data
# volume (the SQLite default and its lock files). TestDockerfileBuildAndEntrypoint
# (cmd/airside) runs this file's build command and its entrypoint, ENV and
# HEALTHCHECK without Docker.
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
    && groupadd --system --gid 10001 airside \
    && useradd --system --uid 10001 --gid 10001 --home /var/lib/airside --create-home airside
COPY --from=build /out/airside /usr/local/bin/airside
# Numeric, so Kubernetes' runAsNonRoot can check it is not root (a name it
# cannot resolve is refused).
USER 10001:10001
WORKDIR /var/lib/airside
# The embedded SQLite default lives here when no AIRSIDE_DATABASE_URL is set.
VOLUME /var/lib/airside
ENV AIRSIDE_ADDR=:8080 AIRSIDE_DATABASE_URL=sqlite:/var/lib/airside/airside.db
# The Go runtime keeps its memory under this soft limit: a fleet's burst of
# metrics then leaves serve under about 600 MB at 500 listings, not 700
# (docs/benchmarks.md; 256MiB was too tight there: ingest slowed sixfold).
ENV GOMEMLIMIT=512MiB
EXPOSE 8080
# A drain (SIGTERM) turns /readyz to 503 and answers held long polls before
# the process exits: give it the grace period (AIRSIDE_SHUTDOWN_GRACE).
STOPSIGNAL SIGTERM
# Liveness: the binary asks its own /healthz (the image has no curl).
HEALTHCHECK --interval=15s --timeout=6s --start-period=30s --retries=3 CMD ["/usr/local/bin/airside", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/airside"]
CMD ["serve"]
