package postgres_test

import (
	"testing"

	"github.com/a2abridge/a2abridge/internal/pgtest"
	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return pgtest.Open(t) })
}
