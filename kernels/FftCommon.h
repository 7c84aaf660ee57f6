//===- FftCommon.h - DFT matmul stages shared by the FFT kernels -*- C++
//-*-===//
//
// The four-step DFT of one length-N sequence, N = N1 x N2 (both <= 128), as
// Tensor Engine matmuls with no transposes: the data is the *stationary*
// operand of the first stage, so its output comes out transposed.
//
//   in:   A[n1, n2] = x[N2 n1 + n2]          (SBUF [N1, N2]: a row-major load)
//   1:    B^T[n2, k1] = sum_n1 A[n1, n2] F_N1[n1, k1]   matmul(stat A, mov F)
//   2:    C[n2, k1] = B^T[n2, k1] W_N^(n2 k1)            Vector engine
//   3:    D[k2, k1] = sum_n2 F_N2[n2, k2] C[n2, k1]      matmul(stat F, mov C)
//   out:  D[k2, k1] = X[k1 + N1 k2]          (PSUM [N2, N1]: row-major order)
//
// Complex values are separate re/im tiles; a complex product is four real
// matmuls accumulating in fp32 PSUM: with F = C + i sigma S (sigma = -1
// forward, +1 inverse), Re = C Re(x) - sigma S Im(x), Im = sigma S Re(x) +
// C Im(x). N2 = 1 is allowed (a single DFT).
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_KERNELS_FFTCOMMON_H
#define SEAM_KERNELS_FFTCOMMON_H

#include "kernels/KernelBuilder.h"

namespace mlir::seam {

/// The n x n DFT matrices C, sigma S and -sigma S (times `scale`) in SBUF.
struct DftMatrices {
  Value c, s, ns;
  static DftMatrices load(KernelBuilder &kb, int64_t n, bool inverse,
                          double scale, Type dtype);
};

class FourStepDft {
public:
  /// Allocates the constants and work tiles (once per kernel). `scale`
  /// multiplies the result (1/N for a normalised inverse).
  FourStepDft(KernelBuilder &kb, int64_t n1, int64_t n2, bool inverse,
              double scale, Type dtype);
  /// Transforms A = (ar, ai) ([n1, n2] SBUF tiles in `dtype`; ai may be
  /// null for real input). The result is in `dr`, `di` ([n2, n1] PSUM).
  void run(Value ar, Value ai);

  int64_t n1, n2;
  Type dtype;
  Value dr, di;

private:
  KernelBuilder &kb;
  DftMatrices m1, m2;
  Value twr, twi, br, bi, cr, ci, tmpA, tmpB;
};

} // namespace mlir::seam

#endif // SEAM_KERNELS_FFTCOMMON_H
