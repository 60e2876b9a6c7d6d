package gateway

import (
	"strings"
	"testing"
	"time"
)

func TestPairsConfigErrors(t *testing.T) {
	neg := Duration(-time.Second)
	for _, c := range []struct {
		f    PairsConfig
		want string
	}{
		{PairsConfig{Enabled: true, MaxOpen: -1}, "pairs.max_open"},
		{PairsConfig{Enabled: true, MaxTurns: -1}, "pairs.max_turns"},
		{PairsConfig{Enabled: true, IdleTTL: &neg}, "pairs.idle_ttl"},
		{PairsConfig{Enabled: true, MaxMessageBytes: 1 << 30}, "pairs.max_message_bytes"},
		{PairsConfig{Enabled: true, MaxBackchannelBytes: 2 << 30}, "pairs.max_backchannel_bytes"},
		{PairsConfig{Enabled: true, MaxTotalBackchannelBytes: 2 << 30}, "pairs.max_total_backchannel_bytes"},
	} {
		if _, err := c.f.options(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %s", c.f, err, c.want)
		}
	}
	if o, err := (&PairsConfig{MaxOpen: -1}).options(); o != nil || err != nil {
		t.Errorf("a disabled block: %v, %v", o, err)
	}
}
