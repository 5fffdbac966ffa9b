// Package fuzzrun holds no code: its test runs every fuzz target of the
// project for a few seconds, so that the plain `go test ./...` of CI
// fuzzes too. Set REWIND_FUZZTIME to the time per target (seconds, or a
// duration such as 1m), or to 0 to skip it; -short skips it as well.
package fuzzrun
