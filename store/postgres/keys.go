package postgres

import (
	"context"
	"errors"
	"time"
)

// Published keys: replicas of a server each sign push
// notifications with keys of their own, and a webhook fetches the JWK Set
// from whichever replica its request reaches; each process publishes its
// public JWK Set here, and each serves the union of the sets not expired.

// PublishKeys records publisher's public JWK Set (a JSON object, {"keys":
// […]}) until ttl from now by the database's clock, replacing what it
// published before; sets expired for an hour are deleted. ErrClosed after
// Close.
func (s *Store) PublishKeys(ctx context.Context, publisher string, jwks []byte, ttl time.Duration) error {
	if s.isShut.Load() {
		return ErrClosed
	}
	if publisher == "" {
		return errors.New("postgres: publish keys: empty publisher")
	}
	us := max(ttl.Microseconds(), 1)
	_, err := s.pool.Exec(ctx, `WITH d AS (
		DELETE FROM published_keys WHERE until < now() - interval '1 hour' AND publisher <> $1
	)
	INSERT INTO published_keys (publisher, jwks, until) VALUES ($1, $2, now() + make_interval(secs => $3::double precision / 1e6))
	ON CONFLICT (publisher) DO UPDATE SET jwks = excluded.jwks, until = excluded.until`, bs(publisher), jwks, us)
	return wrap("publish keys", err)
}

// PublishedKeys returns the JWK Sets published (PublishKeys) that have not
// expired, in the order of their publishers. ErrClosed after Close.
func (s *Store) PublishedKeys(ctx context.Context) ([][]byte, error) {
	if s.isShut.Load() {
		return nil, ErrClosed
	}
	rows, err := s.pool.Query(ctx, "SELECT jwks FROM published_keys WHERE until > now() ORDER BY publisher")
	if err != nil {
		return nil, wrap("published keys", err)
	}
	defer rows.Close()
	var out [][]byte
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, wrap("published keys", err)
		}
		out = append(out, b)
	}
	return out, wrap("published keys", rows.Err())
}
