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
// lang is the bottom of onair's dependency graph: it must never import
// compiler/, runtime/, nodes/, cuda/ or the CLI, and it never touches the GPU
// or the network. It reads only the show files and var files it is given.
package lang
