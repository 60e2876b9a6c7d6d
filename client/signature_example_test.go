package client_test

import (
	"context"
	"fmt"

	"github.com/a2abridge/a2abridge/client"
)

// Verify an agent's card signatures before using it: keys from the
// agent's published JWK Set (A2A 1.0 §8.4.3).
func ExampleNewCardVerifier() {
	v, err := client.NewCardVerifier(client.CardVerifierOptions{
		JWKSURL: "https://agents.example.com/.well-known/jwks.json",
		Verified: func(s client.CardSignature) {
			fmt.Println("card signed by", s.KeyID, s.Algorithm)
		},
	})
	if err != nil {
		panic(err)
	}
	c, err := client.Dial(context.Background(), "https://agents.example.com/a2a/echo", client.Options{CardVerifier: v})
	if err != nil {
		fmt.Println(err) // a *client.CardSignatureError when no signature verifies
		return
	}
	_ = c
}
