package sqlite

// WithBatchHook returns o with a hook called before COMMIT of every
// transaction holding n > 1 Appends; an error from it fails the transaction.
func WithBatchHook(o Options, hook func(n int) error) Options {
	o.batchHook = hook
	return o
}
