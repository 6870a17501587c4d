// Package panics is how a goroutine that runs per-frame work survives a
// bug in it: a panic becomes an error (an *Error, with the stack) that
// fails the node the work belongs to, so that its group restarts and the
// rest of the show goes on drawing, where it would have ended the process.
// Every panic recovered is counted and logged once with its stack
// (Recovered: /status's process.panics_recovered, /metrics's
// onair_panics_recovered_total).
//
// The runtime recovers what runs on a node's threads and loop handlers;
// a goroutine a node starts itself (a band of a picture, a pipe to
// ffmpeg, a receiver's thread) defers Catch and hands the error to the
// node, or carries it to the node's own goroutine with Rethrow.
//
// panics imports nothing of onair's: every package may use it.
package panics

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync/atomic"
)

var recovered atomic.Uint64

// Recovered is how many panics the process has recovered.
func Recovered() uint64 { return recovered.Load() }

// Error is a recovered panic.
type Error struct {
	// Where names the work that panicked ("a band of the compositor").
	Where string
	// Value is what was passed to panic.
	Value any
	// Stack is the panicking goroutine's stack, as the log has it.
	Stack []byte

	logged atomic.Bool
}

func (e *Error) Error() string { return fmt.Sprintf("panic in %s: %v", e.Where, e.Value) }

// Unwrap is the panic's value when it was an error (a runtime error: an
// index out of range, a nil dereference).
func (e *Error) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// Log writes the panic and its stack to log (slog's default when nil),
// once: later calls, wherever the error travelled, write nothing.
func (e *Error) Log(log *slog.Logger) {
	if e.logged.Swap(true) {
		return
	}
	if log == nil {
		log = slog.Default()
	}
	log.Error("recovered a panic: the work fails, the process goes on", "in", e.Where, "panic", fmt.Sprint(e.Value), "stack", string(e.Stack))
}

// From is the error for p, what recover returned in the work named where,
// counted, and logged on log unless log is nil: then whoever the error is
// handed to logs it (the runtime does, when it fails a node with it). An
// *Error carried from another goroutine (Rethrow) is returned as it is,
// not counted again. Call it from the deferred function that called
// recover.
func From(where string, p any, log *slog.Logger) *Error {
	e, ok := p.(*Error)
	if !ok {
		e = &Error{Where: where, Value: p, Stack: debug.Stack()}
		recovered.Add(1)
	}
	if log != nil {
		e.Log(log)
	}
	return e
}

// Catch, deferred (directly: `defer panics.Catch(...)`), recovers a panic
// of the work named where and hands its *Error to report, which fails the
// node the work is for (log as for From). report is not called when
// nothing panicked.
func Catch(where string, log *slog.Logger, report func(error)) {
	if p := recover(); p != nil {
		report(From(where, p, log))
	}
}

// Run calls fn and returns its error, or the *Error of a panic in it (log
// as for From).
func Run(where string, log *slog.Logger, fn func() error) (err error) {
	defer Catch(where, log, func(e error) { err = e })
	return fn()
}

// Rethrow panics with err's *Error, when it holds one: a helper
// goroutine's panic, carried to the goroutine that owns the work, whose own
// recovery then fails its node without counting it twice.
func Rethrow(err error) {
	if e := (*Error)(nil); errors.As(err, &e) {
		panic(e)
	}
}
