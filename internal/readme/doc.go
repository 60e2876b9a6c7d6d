// Package readme holds the tests that keep the repository's README.md and
// the Markdown files under docs/ true: every Go snippet is compiled, so
// that a snippet cannot rot (each ```go block must be a complete file,
// package clause, imports, every argument, that builds against this
// module as it is), and every relative link must lead to a file that
// exists (and, for a link with a #fragment into a Markdown file, to one
// of its headings); and docs/reference/cli.md must be what
// docs/reference/gen-cli.sh makes of the help of every command.
package readme
