// Package playout is the clock of a bus: the grid of ticks a compositor
// draws on, which frame of each input a tick shows, transitions between
// scenes, and the counters and histograms that say whether deadlines held.
//
// It is pure logic over nanosecond times and frame timestamps, so every rule
// here is tested with a simulated clock; the compositor nodes of each backend
// drive it from their event loop.
//
// The rules, as the seeds' mixer ran them:
//   - ticks sit on an exact frame grid: tick k presents at origin + k·period,
//     computed in 128-bit arithmetic from the rational rate, so 30000/1001
//     never drifts;
//   - a tick is drawn at its deadline, a latency of two frame periods after
//     its presentation time, so inputs have two periods to arrive;
//   - each input shows the newest frame whose timestamp is at or before the
//     tick; an input with nothing newer repeats its last frame, and the repeat
//     is counted;
//   - a tick is committed only after the bus's outputs accepted it; a tick
//     whose draw starts after the next tick's deadline is missed and counted;
//   - a cut lands on the first tick drawn after it was asked for; fades and
//     wipes run over a whole number of ticks.
//
// playout must never import runtime/, lang/ or a backend: it is imported by
// them.
package playout
