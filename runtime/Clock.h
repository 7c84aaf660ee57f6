//===- Clock.h - Wall-clock time for measuring intervals --------*- C++ -*-===//
//
// The one clock the compiler's phase timings and seam-run's reports read:
// the steady clock (monotonic, arbitrary epoch), in ns as a double, so that
// an interval is the difference of two calls.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_RUNTIME_CLOCK_H
#define SEAM_RUNTIME_CLOCK_H

#include <chrono>

namespace seam::rt {

/// Now on the steady clock, in ns (only differences mean anything).
inline double nowNs() {
  return std::chrono::duration<double, std::nano>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

} // namespace seam::rt

#endif // SEAM_RUNTIME_CLOCK_H
