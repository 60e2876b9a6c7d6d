package client_test

import (
	"context"
	"testing"
)

// BenchmarkSendMessage measures a blocking SendMessage round trip to
// a2abridge's echo agent over each interface (client and server in one
// process: compare runs of one machine only).
func BenchmarkSendMessage(b *testing.B) {
	for _, in := range interfaces {
		b.Run(in.name, func(b *testing.B) {
			ts := newServer(b)
			c := dial(b, ts.URL, in.opts)
			p := text("hello")
			b.ReportAllocs()
			for b.Loop() {
				p.Message.MessageID = ""
				if _, err := c.SendMessage(context.Background(), p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStream measures a SendStreamingMessage round trip (Task,
// artifact, final status) over each interface.
func BenchmarkStream(b *testing.B) {
	for _, in := range interfaces {
		b.Run(in.name, func(b *testing.B) {
			ts := newServer(b)
			c := dial(b, ts.URL, in.opts)
			b.ReportAllocs()
			for b.Loop() {
				for _, err := range c.SendStreamingMessage(context.Background(), text("hello")) {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
