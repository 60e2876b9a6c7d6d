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
	fd, err := compile(context.Background(), "..")
	if err != nil {
		t.Fatal(err)
	}
	want, err := tables(fd)
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

// TestDescriptorSetCurrent fails when the gRPC binding's descriptors are
// not what the proto gives.
func TestDescriptorSetCurrent(t *testing.T) {
	fd, err := compile(context.Background(), "..")
	if err != nil {
		t.Fatal(err)
	}
	want, err := descriptorSet(fd)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../binding/grpc/" + descFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("internal/binding/grpc/%s is not what ../%s gives: run go generate ./internal/a2aproto", descFile, protoFile)
	}
}
