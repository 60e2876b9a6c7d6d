package client

import "time"

// SetCardVerifierClock makes v read the time from now (key set ages).
func SetCardVerifierClock(v *CardVerifier, now func() time.Time) { v.now = now }

// ApplyCredentials is applyCredentials.
var ApplyCredentials = applyCredentials

// SetCardCacheClock makes cc read the time from now (freshness).
func SetCardCacheClock(cc *CardCache, now func() time.Time) { cc.now = now }
