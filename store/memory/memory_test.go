package memory_test

import (
	"testing"

	"github.com/a2abridge/a2abridge/store"
	"github.com/a2abridge/a2abridge/store/memory"
	"github.com/a2abridge/a2abridge/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return memory.New() })
}

func BenchmarkAppend(b *testing.B) {
	storetest.BenchmarkAppend(b, memory.New())
}
