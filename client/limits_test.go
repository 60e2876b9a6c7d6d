package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/a2abridge/a2abridge/client"
)

// A card over Options.MaxCardBytes (1 MiB by default) and a response over
// Options.MaxResponseBytes are refused by name, not read whole and not
// truncated into a decoding error.
func TestSizeLimits(t *testing.T) {
	pad := func(n int) string { return fmt.Sprintf(`,"metadata":{"pad":%q}`, strings.Repeat("x", n)) }
	big := cardServer(t, func(base string) string { return cardJSON(base, pad(2<<20)) }, http.NotFound)
	_, err := client.Dial(context.Background(), big.URL, client.Options{NoCardCache: true})
	var pe *client.ProtocolError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "over 1048576 bytes (Options.MaxCardBytes)") {
		t.Fatalf("Dial of a 2 MiB card: %v; want a ProtocolError naming MaxCardBytes", err)
	}
	if _, err := client.Dial(context.Background(), big.URL, client.Options{NoCardCache: true, MaxCardBytes: 4 << 20}); err != nil {
		t.Fatalf("Dial with MaxCardBytes 4 MiB: %v", err)
	}

	huge := strings.Repeat("y", 200<<10)
	ts := cardServer(t, func(base string) string { return cardJSON(base, "") }, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"text","text":%q}]}}`, rpcID(r), huge)
	})
	c := dial(t, ts.URL, client.Options{NoCardCache: true, MaxResponseBytes: 100 << 10, MaxRetries: -1})
	if _, err := c.SendMessage(context.Background(), text("hi")); !errors.As(err, &pe) || !strings.Contains(err.Error(), "over 102400 bytes (Options.MaxResponseBytes)") {
		t.Fatalf("SendMessage of a 200 KiB answer with a 100 KiB limit: %v", err)
	}
	c = dial(t, ts.URL, client.Options{NoCardCache: true})
	if _, err := c.SendMessage(context.Background(), text("hi")); err != nil {
		t.Fatalf("SendMessage with the default limit: %v", err)
	}

	// A stream event over the limit ends the stream with that error: it is
	// not a broken connection to resume (which would read it again).
	var streams atomic.Int32
	st := cardServer(t, func(base string) string { return cardJSON(base, "") }, func(w http.ResponseWriter, r *http.Request) {
		streams.Add(1)
		id := rpcID(r)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"kind\":\"task\",\"id\":\"t1\",\"contextId\":\"c\",\"status\":{\"state\":\"working\"}}}\n\n", id)
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"kind\":\"message\",\"messageId\":\"m\",\"role\":\"agent\",\"parts\":[{\"kind\":\"text\",\"text\":%q}]}}\n\n", id, huge)
	})
	c = dial(t, st.URL, client.Options{NoCardCache: true, MaxResponseBytes: 100 << 10})
	var last error
	for _, err := range c.SendStreamingMessage(context.Background(), text("hi")) {
		if err != nil {
			last = err
		}
	}
	if !errors.Is(last, client.ErrResponseTooLarge) || !errors.As(last, &pe) || !strings.Contains(last.Error(), "a stream event is over 102400 bytes (Options.MaxResponseBytes)") {
		t.Fatalf("stream with an event over the limit: %v", last)
	}
	if n := streams.Load(); n != 1 {
		t.Fatalf("%d stream requests; want 1 (no resubscription)", n)
	}
}
