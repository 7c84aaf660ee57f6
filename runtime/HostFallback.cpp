//===- HostFallback.cpp - Eigen FFT host fallbacks ------------------------===//

#include "runtime/HostFallback.h"

#include <algorithm>
#include <unsupported/Eigen/FFT>

namespace seam::rt {

void fftAlongAxis(std::vector<std::complex<float>> &data,
                  const std::vector<int64_t> &shape, unsigned axis,
                  bool inverse, int64_t padTo) {
  if (axis >= shape.size())
    return;
  int64_t n = shape[axis];
  int64_t inner = 1, outer = 1;
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
  for (size_t d = 0; d < axis; ++d)
    outer *= shape[d];
  if (n <= 0)
    return;
  int64_t len = std::max(n, padTo);
  // A one-point DFT (and its inverse) is the identity; Eigen's FFT does not
  // take a length of 1.
  if (len == 1)
    return;
  Eigen::FFT<float> fft;
  std::vector<std::complex<float>> line(len), result(len);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      std::complex<float> *base = data.data() + o * n * inner + i;
      for (int64_t k = 0; k < n; ++k)
        line[k] = base[k * inner];
      for (int64_t k = n; k < len; ++k)
        line[k] = 0.0f;
      if (inverse)
        fft.inv(result, line);
      else
        fft.fwd(result, line);
      for (int64_t k = 0; k < n; ++k)
        base[k * inner] = result[k];
    }
}

std::vector<float> fourierMixReal(const std::vector<float> &x,
                                  const std::vector<int64_t> &shape,
                                  const std::vector<unsigned> &axes) {
  std::vector<std::complex<float>> c(x.begin(), x.end());
  for (unsigned axis : axes)
    fftAlongAxis(c, shape, axis, false);
  std::vector<float> out(c.size());
  for (size_t i = 0; i < c.size(); ++i)
    out[i] = c[i].real();
  return out;
}

} // namespace seam::rt
