package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is the Store of several replicas: keys live under a prefix in one Redis database;
// Update is an optimistic transaction (WATCH, MULTI/EXEC), retried when another writer changed
// the key in between.
type Redis struct {
	client *redis.Client
	prefix string
}

// redisUpdateAttempts bounds the retries of one Update under contention.
const redisUpdateAttempts = 50

// NewRedis connects to the Redis server at rawURL (redis:// or rediss://); every key is
// stored under prefix (e.g. "cpq:state:").
func NewRedis(rawURL, prefix string) (*Redis, error) {
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("store: redis URL: %w", err)
	}
	return &Redis{client: redis.NewClient(opts), prefix: prefix}, nil
}

// Get implements Store.
func (r *Redis) Get(ctx context.Context, key string) ([]byte, error) {
	value, err := r.client.Get(ctx, r.prefix+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: get %s: %w", key, err)
	}
	return value, nil
}

// Put implements Store.
func (r *Redis) Put(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if err := r.client.Set(ctx, r.prefix+key, value, max(ttl, 0)).Err(); err != nil {
		return fmt.Errorf("store: put %s: %w", key, err)
	}
	return nil
}

// Update implements Store.
func (r *Redis) Update(ctx context.Context, key string, ttl time.Duration, fn func(old []byte) ([]byte, error)) error {
	full := r.prefix + key
	for attempt := range redisUpdateAttempts {
		if attempt > 0 {
			// Back off a random moment that grows with the attempts: writers that retry in
			// lockstep keep invalidating each other's WATCH, and one can lose every round.
			backoff := time.Duration(rand.Int64N(int64(min(attempt, 10)) * int64(time.Millisecond)))
			select {
			case <-ctx.Done():
				return fmt.Errorf("store: update %s: %w", key, ctx.Err())
			case <-time.After(backoff):
			}
		}
		err := r.client.Watch(ctx, func(tx *redis.Tx) error {
			old, err := tx.Get(ctx, full).Bytes()
			if err != nil && !errors.Is(err, redis.Nil) {
				return err
			}
			if errors.Is(err, redis.Nil) {
				old = nil
			}
			next, err := fn(old)
			if err != nil {
				return err
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				if next == nil {
					p.Del(ctx, full)
					return nil
				}
				p.Set(ctx, full, next, max(ttl, 0))
				return nil
			})
			return err
		}, full)
		switch {
		case errors.Is(err, redis.TxFailedErr):
			continue
		case errors.Is(err, ErrSkip):
			return nil
		case err != nil:
			return fmt.Errorf("store: update %s: %w", key, err)
		}
		return nil
	}
	return fmt.Errorf("store: update %s: too much contention", key)
}

// Keys implements Store (SCAN, so a large database is not blocked).
func (r *Redis) Keys(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	iter := r.client.Scan(ctx, 0, r.prefix+prefix+"*", 500).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val()[len(r.prefix):])
	}
	if err := iter.Err(); err != nil {
		return nil, fmt.Errorf("store: keys %s: %w", prefix, err)
	}
	return keys, nil
}

// Delete implements Store.
func (r *Redis) Delete(ctx context.Context, key string) error {
	if err := r.client.Del(ctx, r.prefix+key).Err(); err != nil {
		return fmt.Errorf("store: delete %s: %w", key, err)
	}
	return nil
}

// Close implements Store.
func (r *Redis) Close() error { return r.client.Close() }

// RedisLogger routes go-redis's own messages (connection pool and reconnection notes, which it
// otherwise prints as plain text on standard error, in the middle of a JSON log) to logger, as
// warnings with component=redis. Install it once at start-up with redis.SetLogger (go-redis keeps
// one logger per process).
func RedisLogger(logger *slog.Logger) interface {
	Printf(ctx context.Context, format string, v ...any)
} {
	return redisLogger{logger.With(slog.String("component", "redis"))}
}

type redisLogger struct{ logger *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.logger.WarnContext(ctx, strings.TrimSpace(fmt.Sprintf(format, v...)))
}
