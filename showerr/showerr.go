// Package showerr holds the errors a request to a show on air fails with
// (a switch, a snapshot, a change): the backends return them, wrapped with
// what went wrong, and control answers each with its HTTP status code. It
// imports nothing of onair.
package showerr

import "errors"

var (
	ErrNotFound = errors.New("not found")       // 404: no such bus, scene, output or source
	ErrInvalid  = errors.New("invalid request") // 400: the request cannot be carried out as asked
	// ErrConflict: the request is well formed, but the show on air cannot
	// carry it out (409).
	ErrConflict = errors.New("cannot be done on air")
	// ErrNotReady is what a Snapshotter returns before its first snapshot (503).
	ErrNotReady = errors.New("not ready yet")
)
