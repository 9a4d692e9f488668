package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisKV is the kv in redis, shared by every replica: values are strings with a TTL, sets are redis
// sets whose TTL is extended on every add.
type redisKV struct {
	client     redis.UniversalClient
	ownsClient bool
	prefix     string
}

func (k *redisKV) get(ctx context.Context, key string) ([]byte, error) {
	data, err := k.client.Get(ctx, k.prefix+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("session: redis get: %w", err)
	}
	return data, nil
}

func (k *redisKV) set(ctx context.Context, key string, value []byte, ttl time.Duration, mode setMode) (bool, error) {
	var (
		ok  bool
		err error
	)
	switch mode {
	case setIfAbsent:
		ok, err = k.client.SetNX(ctx, k.prefix+key, value, ttl).Result()
	case setIfPresent:
		ok, err = k.client.SetXX(ctx, k.prefix+key, value, ttl).Result()
	default:
		err, ok = k.client.Set(ctx, k.prefix+key, value, ttl).Err(), true
	}
	if err != nil {
		return false, fmt.Errorf("session: redis set: %w", err)
	}
	return ok, nil
}

func (k *redisKV) del(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	full := make([]string, len(keys))
	for i, key := range keys {
		full[i] = k.prefix + key
	}
	if err := k.client.Del(ctx, full...).Err(); err != nil {
		return fmt.Errorf("session: redis delete: %w", err)
	}
	return nil
}

func (k *redisKV) addMember(ctx context.Context, set, member string, ttl time.Duration) error {
	_, err := k.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.SAdd(ctx, k.prefix+set, member)
		p.Expire(ctx, k.prefix+set, ttl)
		return nil
	})
	if err != nil {
		return fmt.Errorf("session: redis index: %w", err)
	}
	return nil
}

func (k *redisKV) removeMembers(ctx context.Context, set string, members ...string) error {
	if len(members) == 0 {
		return nil
	}
	args := make([]any, len(members))
	for i, m := range members {
		args[i] = m
	}
	if err := k.client.SRem(ctx, k.prefix+set, args...).Err(); err != nil {
		return fmt.Errorf("session: redis index: %w", err)
	}
	return nil
}

func (k *redisKV) members(ctx context.Context, set string) ([]string, error) {
	members, err := k.client.SMembers(ctx, k.prefix+set).Result()
	if err != nil {
		return nil, fmt.Errorf("session: redis index: %w", err)
	}
	return members, nil
}

func (k *redisKV) ping(ctx context.Context) error {
	if err := k.client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("session: redis ping: %w", err)
	}
	return nil
}

func (k *redisKV) close() error {
	if k.ownsClient {
		return k.client.Close()
	}
	return nil
}

// newRedisKV connects (lazily) to url or uses client.
func newRedisKV(url string, client redis.UniversalClient, prefix string) (*redisKV, error) {
	if prefix == "" {
		prefix = defaultKeyPrefix
	}
	k := &redisKV{client: client, prefix: prefix}
	if client == nil {
		opts, err := redis.ParseURL(url)
		if err != nil {
			return nil, fmt.Errorf("session: redis URL: %w", err)
		}
		k.client = redis.NewClient(opts)
		k.ownsClient = true
	}
	return k, nil
}
