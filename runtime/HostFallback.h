//===- HostFallback.h - Host fallback ops (FFT on the CPU) -----*- C++ -*-===//
//
// FFT ops with no device kernel run on the host (the compiler lowers no
// DFT itself; complex<f32> tensors cross to and from it as interleaved
// f32). They run for real with Eigen's FFT; Device::runFallback times them.
//
//===----------------------------------------------------------------------===//

#ifndef SEAM_RUNTIME_HOSTFALLBACK_H
#define SEAM_RUNTIME_HOSTFALLBACK_H

#include <complex>
#include <cstdint>
#include <vector>

namespace seam::rt {

/// In-place 1-D DFT along `axis` of a row-major tensor of `shape`. The
/// inverse is scaled by 1/N (numpy.fft.ifft convention). With `padTo` > N
/// each line is zero-padded to padTo points, transformed, and its first N
/// bins kept (seam.fft's pad_to: the FNet source's pad-to-next-power-of-two).
void fftAlongAxis(std::vector<std::complex<float>> &data,
                  const std::vector<int64_t> &shape, unsigned axis,
                  bool inverse, int64_t padTo = 0);

/// FNet mixing: real part of the DFT of real `x` over each axis in `axes`.
std::vector<float> fourierMixReal(const std::vector<float> &x,
                                  const std::vector<int64_t> &shape,
                                  const std::vector<unsigned> &axes);

} // namespace seam::rt

#endif // SEAM_RUNTIME_HOSTFALLBACK_H
