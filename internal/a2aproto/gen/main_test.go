package main

import (
	"bytes"
	"context"
	"os"
	"testing"
)

// TestTablesCurrent fails when the committed tables are not what the proto
// beside them gives.
func TestTablesCurrent(t *testing.T) {
	want, err := tables(context.Background(), "..")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../" + tablesFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("../%s is not what ../%s gives: run go generate ./internal/a2aproto", tablesFile, protoFile)
	}
}
