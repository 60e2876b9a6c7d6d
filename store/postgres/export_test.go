package postgres

// ListenPing lets tests shorten how long Watch waits before it pings its
// connection.
var ListenPing = &listenPing

// PauseWriters keeps the writers of s from taking a batch until resume:
// what is queued meanwhile goes in the next batches.
func PauseWriters(s *Store) (resume func()) {
	for _, w := range s.writers {
		w.paused.Lock()
	}
	return func() {
		for _, w := range s.writers {
			w.paused.Unlock()
		}
	}
}

// Stats counts the statements and batches s has sent.
func Stats(s *Store) (statements, batches int64) {
	return s.statements.Load(), s.batches.Load()
}

// MessageFilter reports whether s filters message ids (Exclusive), once
// its scan has ended, whether the filter is ready, and whether it answers
// (agent, id) as absent.
func MessageFilter(s *Store, agent, id string) (filtered, ready, absent bool) {
	if s.msgs == nil {
		return false, false, false
	}
	<-s.msgs.Done()
	return true, s.msgs.Ready(), s.msgs.Absent(agent, id)
}

// SettleWait lets tests shorten how long an exclusive Open waits for the
// transactions of earlier sessions.
var SettleWait = &settleWait
