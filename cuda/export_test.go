package cuda

import (
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/playout"
)

// The host run of the kernel code, for the external tests.

// HostCompositor runs the compositor's kernel code on the CPU.
type HostCompositor struct{ h *hostCompositor }

func NewHostCompositor() *HostCompositor { return &HostCompositor{newHostCompositor()} }

func (h *HostCompositor) Draw(dst *Frame, layers []Layer) error { return h.h.draw(dst, layers) }

// TableWords is how many words the compositor's filter tables hold.
func (h *HostCompositor) TableWords() int {
	n := 0
	for _, t := range h.h.plan.tables {
		n += t.cap
	}
	for _, t := range h.h.plan.spare {
		n += t.cap
	}
	return n
}

func (h *HostCompositor) Transition(dst, from, to *Frame, t playout.Kind, progress float64) error {
	return h.h.transition(dst, from, to, t, progress)
}

// NewHostFrame is a frame in host memory for HostCompositor.
func NewHostFrame(f frame.Format, w, h, pitch int) *Frame { return newHostFrame(f, w, h, pitch, false) }

// NewHostAlphaFrame is NewHostFrame with an alpha plane (HostPlane 2).
func NewHostAlphaFrame(f frame.Format, w, h, pitch int) *Frame {
	return newHostFrame(f, w, h, pitch, true)
}

// HostPlane is plane p of a host frame (pitch × rows bytes).
func HostPlane(fr *Frame, p int) []byte { return hostPlane(fr, p) }

// FreeHostFrame frees a frame from NewHostFrame.
func FreeHostFrame(fr *Frame) { freeHostFrame(fr) }

// Version checks and loading a library that is not a driver.
var (
	CheckVersion = checkVersion
	LoadDriver   = func(lib string) error { _, err := loadDriver(lib); return err }
	PTXInfo      = ptxInfo
)

// ThreadCPU is the CPU time of the calling OS thread.
var ThreadCPU = threadCPU

// PrimaryActive reports whether device 0's primary context is running.
func PrimaryActive() (bool, error) {
	d, err := load()
	if err != nil {
		return false, err
	}
	return d.primaryActive(0)
}

// HostPicture runs the picture conversion's kernel code on the CPU, into a
// frame from NewHostFrame; pic.Src is a host address.
var HostPicture = hostPicture
