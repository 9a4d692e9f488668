# CPQ Portal container image.
#   docker build --build-arg VERSION=$(git describe --tags --always) -t cpq-portal .
# `make docker-check` replays the build stage without Docker; keep the two in step.

# --- build: a static binary -------------------------------------------------------------
FROM golang:1.26 AS build
WORKDIR /src
# Dependencies first, so source edits reuse this layer. go.mod's tool line brings templ along.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN go tool templ generate \
 && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/portal ./cmd/portal

# --- run: distroless static (CA certificates, tzdata, no shell), as the nonroot user -------
# The portal writes only to PORTAL_DATA_DIR (sessions with the default file store): mount a volume
# there; the root filesystem can stay read-only.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/portal /portal
USER nonroot:nonroot
ENV PORTAL_ADDR=0.0.0.0:8080 PORTAL_DATA_DIR=/home/nonroot/data
EXPOSE 8080
ENTRYPOINT ["/portal"]
