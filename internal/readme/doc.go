// Package readme holds the test that compiles every Go snippet of the
// repository's README.md, so that a snippet cannot rot: each ```go block
// must be a complete file (package clause, imports, every argument) that
// builds against this module as it is.
package readme
