package audio

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// WAVWriter writes blocks into a WAV file of 32-bit float samples (format
// 3, IEEE float) at Rate and Channels. The header's sizes are written when
// it is closed; until then they are the largest a header holds, which
// readers such as ffmpeg read as "to the end of the file".
type WAVWriter struct {
	w     io.WriteSeeker
	bytes int64
	buf   []byte
}

const wavHeader = 44

// NewWAVWriter writes the header into w.
func NewWAVWriter(w io.WriteSeeker) (*WAVWriter, error) {
	h := make([]byte, wavHeader)
	copy(h[0:], "RIFF")
	copy(h[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(h[16:], 16)
	binary.LittleEndian.PutUint16(h[20:], 3) // IEEE float
	binary.LittleEndian.PutUint16(h[22:], Channels)
	binary.LittleEndian.PutUint32(h[24:], Rate)
	binary.LittleEndian.PutUint32(h[28:], Rate*Channels*4)
	binary.LittleEndian.PutUint16(h[32:], Channels*4)
	binary.LittleEndian.PutUint16(h[34:], 32)
	copy(h[36:], "data")
	// Until Close writes them, the sizes say "to the end of the file".
	binary.LittleEndian.PutUint32(h[4:], math.MaxUint32)
	binary.LittleEndian.PutUint32(h[40:], math.MaxUint32)
	if _, err := w.Write(h); err != nil {
		return nil, fmt.Errorf("audio: writing a WAV header: %w", err)
	}
	return &WAVWriter{w: w}, nil
}

// ContinueWAVWriter continues a WAV file this writer made (its 44-byte
// header, float samples after it), appending after its last whole sample
// frame.
func ContinueWAVWriter(f interface {
	io.WriteSeeker
	Truncate(int64) error
}) (*WAVWriter, error) {
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, fmt.Errorf("audio: continuing a WAV: %w", err)
	}
	if end < wavHeader {
		return nil, fmt.Errorf("audio: continuing a WAV of %d bytes: it has no header", end)
	}
	data := end - wavHeader
	data -= data % (Channels * 4)
	if err := f.Truncate(wavHeader + data); err != nil {
		return nil, fmt.Errorf("audio: continuing a WAV: %w", err)
	}
	if _, err := f.Seek(wavHeader+data, io.SeekStart); err != nil {
		return nil, fmt.Errorf("audio: continuing a WAV: %w", err)
	}
	return &WAVWriter{w: f, bytes: data}, nil
}

// Write appends a block of interleaved samples.
func (w *WAVWriter) Write(block []float32) error {
	w.buf = AppendF32LE(w.buf[:0], block)
	n, err := w.w.Write(w.buf)
	w.bytes += int64(n)
	if err != nil {
		return fmt.Errorf("audio: writing WAV samples: %w", err)
	}
	return nil
}

// Close writes the sizes into the header (it does not close the file).
func (w *WAVWriter) Close() error {
	var b [4]byte
	for _, f := range []struct {
		at int64
		v  int64
	}{{4, w.bytes + wavHeader - 8}, {40, w.bytes}} {
		binary.LittleEndian.PutUint32(b[:], uint32(min(f.v, math.MaxUint32)))
		if _, err := w.w.Seek(f.at, io.SeekStart); err != nil {
			return fmt.Errorf("audio: finishing a WAV header: %w", err)
		}
		if _, err := w.w.Write(b[:]); err != nil {
			return fmt.Errorf("audio: finishing a WAV header: %w", err)
		}
	}
	_, err := w.w.Seek(0, io.SeekEnd)
	return err
}

// AppendF32LE appends the block as little-endian float32, the bytes of
// ffmpeg's f32le format.
func AppendF32LE(dst []byte, block []float32) []byte {
	for _, v := range block {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(v))
	}
	return dst
}

// AppendS16LE appends the block as little-endian signed 16-bit samples
// (ffmpeg's s16le), clipped to full scale and rounded.
func AppendS16LE(dst []byte, block []float32) []byte {
	for _, v := range block {
		x := math.Round(float64(v) * 32767)
		x = math.Max(-32768, math.Min(32767, x))
		dst = binary.LittleEndian.AppendUint16(dst, uint16(int16(x)))
	}
	return dst
}
