//===- HostFallback.h - Host fallback ops (FFT on the CPU) -----*- C++ -*-===//
//
// FFT ops with no device kernel run on the host (the device has no complex
// dtype). They run for real with Eigen's FFT; Device::runFallback times them.
//
//===----------------------------------------------------------------------===//

#ifndef SEAM_RUNTIME_HOSTFALLBACK_H
#define SEAM_RUNTIME_HOSTFALLBACK_H

#include <complex>
#include <cstdint>
#include <vector>

namespace seam::rt {

/// In-place 1-D DFT along `axis` of a row-major tensor of `shape`. The
/// inverse is scaled by 1/N (numpy.fft.ifft convention).
void fftAlongAxis(std::vector<std::complex<float>> &data,
                  const std::vector<int64_t> &shape, unsigned axis,
                  bool inverse);

/// FNet mixing: real part of the DFT of real `x` over each axis in `axes`.
std::vector<float> fourierMixReal(const std::vector<float> &x,
                                  const std::vector<int64_t> &shape,
                                  const std::vector<unsigned> &axes);

} // namespace seam::rt

#endif // SEAM_RUNTIME_HOSTFALLBACK_H
