// Package lang is onair's show language: it reads show files written in HCL,
// resolves variables, locals and references, expands count, for_each and
// dynamic blocks, checks every value against the schema and returns the typed
// model of model.go, or hcl.Diagnostics that say what is wrong, where and what
// to do.
//
// The schema (schema.go) declares every block, kind, attribute, type,
// default, range and doc string once; the decoder and the reference generator
// (`onair docs`, docs/REFERENCE.md) both read it, so the docs cannot drift.
//
// No input may crash it, exhaust memory or keep it busy: the limits of
// limits.go (file size, nesting, string and value sizes, number digits,
// expansion and evaluation work) are declared there once, documented in the
// reference, and enforced with a diagnostic where a show goes past one.
// Nesting is checked on the raw text before hcl parses it (nesting.go);
// expressions are rewritten to check what they build as they evaluate
// (guard.go), and functions check their arguments before they build
// (funcguard.go).
//
// lang is the bottom of onair's dependency graph: it must never import
// compiler/, runtime/, nodes/, cuda/ or the CLI, and it never touches the GPU
// or the network. It reads only the show files and var files it is given,
// through internal/files (regular files only, of a bounded size).
package lang
