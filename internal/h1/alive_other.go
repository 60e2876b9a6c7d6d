//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package h1

// alive cannot peek at the socket here: an idle connection is taken as
// open, and a request that finds it closed is sent again when it can be
// (see Transport.RoundTrip).
func (c *conn) alive() bool { return c.br.Buffered() == 0 }
