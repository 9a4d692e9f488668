package handlers

import (
	"context"
	"log/slog"
)

// NewLogHandler wraps a slog.Handler so that every record logged with a request's context
// (logger.InfoContext(c.Request.Context(), ...)) carries that request's request_id, also from
// packages that know nothing of the handlers (auth, the API client). cmd/portal builds the
// process logger with it. Loggers that already carry request_id (the handlers' own h.log(c))
// are left alone, so the attribute never appears twice.
func NewLogHandler(next slog.Handler) slog.Handler {
	return &requestIDLogHandler{next: next}
}

type requestIDLogHandler struct {
	next  slog.Handler
	hasID bool // request_id was added with WithAttrs
}

func (h *requestIDLogHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

func (h *requestIDLogHandler) Handle(ctx context.Context, r slog.Record) error {
	if !h.hasID {
		if id := RequestIDFrom(ctx); id != "" {
			r = r.Clone()
			r.AddAttrs(slog.String("request_id", id))
		}
	}
	return h.next.Handle(ctx, r)
}

func (h *requestIDLogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	hasID := h.hasID
	for _, a := range attrs {
		if a.Key == "request_id" {
			hasID = true
		}
	}
	return &requestIDLogHandler{next: h.next.WithAttrs(attrs), hasID: hasID}
}

func (h *requestIDLogHandler) WithGroup(name string) slog.Handler {
	return &requestIDLogHandler{next: h.next.WithGroup(name), hasID: h.hasID}
}
