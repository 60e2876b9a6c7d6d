// Package pgtest gives tests a PostgreSQL schema of their own: DSN
// creates a schema with a random name in the database of
// $A2ABRIDGE_TEST_POSTGRES (default DefaultDSN), returns a DSN whose
// search_path is that schema, and drops it when the test ends.
//
// When PostgreSQL cannot be reached, the test is skipped with a message
// saying how to run it; when the environment variable CI is set, it
// fails instead.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/a2abridge/a2abridge/store/postgres"
)

// EnvDSN is the environment variable naming the test database.
const EnvDSN = "A2ABRIDGE_TEST_POSTGRES"

// DefaultDSN is the test database when EnvDSN is unset: the local
// PostgreSQL's database test, trust authentication.
const DefaultDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// BaseDSN returns $A2ABRIDGE_TEST_POSTGRES, or DefaultDSN.
func BaseDSN() string {
	if d := os.Getenv(EnvDSN); d != "" {
		return d
	}
	return DefaultDSN
}

// DSN returns a DSN for a new, empty schema that is dropped when t ends
// (see the package doc for what happens without PostgreSQL).
func DSN(t testing.TB) string {
	t.Helper()
	base := BaseDSN()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		msg := "PostgreSQL is not reachable at " + postgres.RedactDSN(base) + " (" + postgres.RedactDSN(err.Error()) + "); " +
			"start it (pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start) or set " + EnvDSN + " to a database this test may create schemas in"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	defer conn.Close(context.Background())
	var b [8]byte
	_, _ = rand.Read(b[:])
	schema := "a2abridge_test_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return WithSearchPath(base, schema)
}

// WithSearchPath returns dsn with the search_path parameter set to
// schema (appended: a URL's query parameter, or a key=value pair).
func WithSearchPath(dsn, schema string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		return dsn + sep + "search_path=" + schema
	}
	return dsn + " search_path=" + schema
}

// Open opens a postgres.Store on a new schema (DSN), closed and dropped
// when t ends.
func Open(t testing.TB) *postgres.Store {
	t.Helper()
	return OpenWith(t, postgres.Options{})
}

// OpenWith is Open with opts: Exclusive, say, as serve without --replica
// opens its store (the engine then queues its appends).
func OpenWith(t testing.TB, opts postgres.Options) *postgres.Store {
	t.Helper()
	return OpenDSN(t, DSN(t), opts)
}

// OpenDSN opens a postgres.Store with opts on dsn (a DSN of DSN's, for
// tests that open several stores on one schema), closed when t ends; it
// fails t when Open does.
func OpenDSN(t testing.TB, dsn string, opts postgres.Options) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), dsn, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
