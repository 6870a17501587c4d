// Package audio is onair's sound: 48 kHz stereo PCM in blocks of exactly one
// video tick (Cadence), the line-up tone of test patterns (Tone), a mixer
// per bus (Mixer: faders in dB, mute, pan, follow-video, always, off, a
// master fader, mix-minus), EBU R128 / ITU-R BS.1770 meters (Meter) and WAV
// files (WAVWriter). Pure Go and host-side: audio is CPU work on every
// backend.
//
// A block is interleaved float32, Channels samples per frame, full scale
// ±1. The outputs read a bus's block of each tick from the frame's
// metadata (frame.Meta.Audio), Cadence.Samples(k) frames long for tick k.
//
// It must never import anything of onair's: everything may use it.
package audio

// Rate is the sample rate of every block, in frames (samples per channel)
// per second.
const Rate = 48000

// Channels is the number of interleaved channels in every block: left,
// right.
const Channels = 2
