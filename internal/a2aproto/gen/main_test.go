package main

import (
	"bytes"
	"context"
	"os"
	"testing"
)

// TestDescriptorCurrent fails when the embedded descriptor is not the
// compiled proto beside it.
func TestDescriptorCurrent(t *testing.T) {
	want, err := descriptor(context.Background(), "..")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../" + descriptorFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("../%s is not the compiled ../%s: run go generate ./internal/a2aproto", descriptorFile, protoFile)
	}
}
