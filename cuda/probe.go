package cuda

/*
#cgo CFLAGS: -I${SRCDIR}
#include "driver.h"
*/
import "C"

import (
	"fmt"
	"sync"
)

// Device describes one GPU the driver reports.
type Device struct {
	Index        int
	Name         string
	MemoryBytes  uint64
	ComputeMajor int
	ComputeMinor int
}

// Driver is what the probe found.
type Driver struct {
	Library string // the library that was loaded
	Version int    // CUDA driver API version, e.g. 13000 for 13.0
	Devices []Device
}

// VersionString renders the driver API version as "13.0".
func (d *Driver) VersionString() string { return versionString(d.Version) }

const (
	attrComputeMajor = 75 // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
	attrComputeMinor = 76 // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
)

var (
	probeOnce sync.Once
	probed    *Driver
	probeErr  error
)

// Probe loads the CUDA driver and lists its devices. It runs once per
// process; later calls return the first answer. The error says why no GPU
// is usable (no library, a driver too old, no device, the driver refused to
// start).
func Probe() (*Driver, error) {
	probeOnce.Do(func() {
		d, err := load()
		if err != nil {
			probeErr = err
			return
		}
		probed, probeErr = d.devices()
	})
	return probed, probeErr
}

// probe loads lib (not the process's shared driver) and lists its devices.
func probe(lib string) (*Driver, error) {
	d, err := loadDriver(lib)
	if err != nil {
		return nil, err
	}
	return d.devices()
}

func (d *driver) devices() (*Driver, error) {
	out := &Driver{Library: d.lib, Version: d.version}
	var n C.int
	if rc := C.onair_dev_count(d.t, &n); rc != 0 {
		return nil, d.err("cuDeviceGetCount", rc)
	}
	if n == 0 {
		return nil, fmt.Errorf("the CUDA driver %s reports no devices: no GPU is visible to this process", out.VersionString())
	}
	for i := 0; i < int(n); i++ {
		var dev C.int
		if rc := C.onair_dev_get(d.t, &dev, C.int(i)); rc != 0 {
			return nil, fmt.Errorf("device %d: %w", i, d.err("cuDeviceGet", rc))
		}
		var buf [256]C.char
		if rc := C.onair_dev_name(d.t, &buf[0], C.int(len(buf)), dev); rc != 0 {
			return nil, fmt.Errorf("device %d: %w", i, d.err("cuDeviceGetName", rc))
		}
		var mem C.size_t
		if rc := C.onair_dev_mem(d.t, &mem, dev); rc != 0 {
			return nil, fmt.Errorf("device %d: %w", i, d.err("cuDeviceTotalMem", rc))
		}
		var major, minor C.int
		if rc := C.onair_dev_attr(d.t, &major, attrComputeMajor, dev); rc != 0 {
			return nil, fmt.Errorf("device %d: %w", i, d.err("cuDeviceGetAttribute", rc))
		}
		if rc := C.onair_dev_attr(d.t, &minor, attrComputeMinor, dev); rc != 0 {
			return nil, fmt.Errorf("device %d: %w", i, d.err("cuDeviceGetAttribute", rc))
		}
		out.Devices = append(out.Devices, Device{
			Index: i, Name: C.GoString(&buf[0]), MemoryBytes: uint64(mem),
			ComputeMajor: int(major), ComputeMinor: int(minor),
		})
	}
	return out, nil
}
