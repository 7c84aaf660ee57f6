//===- FftCommon.h - DFT matmul stages shared by the FFT kernels -*- C++
//-*-===//
//
// BatchedDft: the N = n1 x n2 DFT of many sequences at once, every stage a
// full-width Tensor Engine matmul and no transposes. The sequences sit side
// by side as columns of one SBUF tile, each loaded by one row-major DMA:
//
//   A[t1, (c, t2)] = x_c[n2 t1 + t2]                   [n1, seqs x n2]
//
// G = 128 / n2 sequences form a group (G n2 = M <= 128 columns of A); a
// lane is up to two groups, a tile two lanes. Per group j:
//
//   1: B[(g,t2), f1] = sum_t1 A[t1, (g,t2)] F_n1[t1, f1]   A stationary
//   2: C = B (.) W,  W[(g,t2), f1] = W_N^(t2 f1)            Vector engine
//   3: D[(g,f2), f1] = sum_t2 (I_G (x) F_n2)[(g,t2), (g,f2)] C[(g,t2), f1]
//                                                  block diagonal stationary
//   D[(g,f2), f1] = X_(jG+g)[f1 + n1 f2]
//
// Stage 1 keeps the data stationary so its output has the (sequence, t2)
// columns on partitions, where stage 3 contracts t2 with a block-diagonal
// DFT (one n2-point DFT per sequence, G of them in one 128-row matmul);
// stage 3's moving operand is a whole lane (2 n1 columns). The row of D of
// sequence g is (g, f2): a group's spectra are one contiguous HBM block in
// natural order.
//
// For a convolution (fftconv) the inverse goes back to A's layout, again
// without transposes (the factors swap roles):
//
//   1': E[f1, (g,t')] = sum_f2 P[(g,f2), f1] (I_G (x) Finv_n2)[(g,f2),(g,t')]
//                                                             P stationary
//   2': E' = E (.) Winv, Winv[f1, (g,t')] = W_N^-(t' f1) / N
//   3': y[t'', (g,t')] = Re sum_f1 Finv_n1[f1, t''] E'[f1, (g,t')]
//   y[t'', (c, t')] = y_c[n2 t'' + t']
//
// Half spectra: for a convolution of real sequences the spectra are
// Hermitian, X[N - k] = conj X[k]. With k = f1 + n1 f2 the partner of
// (f1, f2) is (n1 - f1, n2 - 1 - f2) for 0 < f1 < n1 / 2, while the columns
// f1 = 0 and f1 = n1 / 2 pair among themselves. Stages 1 and 3 therefore
// compute only f1 <= n1 / 2 (f1Cols = n1 / 2 + 1 columns per group), and the
// inverse takes the real part of the half sum with the weights 2 for
// 0 < f1 < n1 / 2 and 1 for the two self-paired columns, carried by its
// twiddles Winv: the same real result, with stage 1, the twiddles, stage 3
// and the spectrum product over half the columns and inverse stage 3
// contracting f1Cols rows.
//
// Each stage is a method over one lane; a kernel runs a stage over both
// lanes of a tile before the next stage, so the Tensor engine works on one
// lane while the Vector engine does the other's twiddles.
//
// Complex values are separate re/im tiles; with F = C + i sigma S (sigma =
// -1 forward, +1 inverse) a complex product is four real matmuls
// accumulating in fp32 PSUM. The twiddles are fp32 on the Vector engine.
//
// FourStepDft: the same decomposition for one sequence per call, [n1, n2]
// tiles (the inner DFT of the three-factor sizes).
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

class BatchedDft {
public:
  struct Config {
    int64_t n = 0;
    bool inverse = false; ///< Forward transform direction (sigma = +1).
    double scale = 1.0;   ///< Multiplies the forward transform.
    Type dtype;           ///< Matmul operand dtype of the forward stages.
    bool complexInput = false;
    /// Rows of A holding data (<= n1); the rows after them are the zero
    /// padding of a linear convolution and are not read.
    int64_t inRows = 0;
    /// Also build the inverse stages (a real result of `outRows` rows in
    /// A's layout, scaled by 1/N); fp32 only.
    bool convolution = false;
    int64_t outRows = 0;
    /// Some lane's last group has fewer than G sequences (the caller's
    /// count is not a multiple of G). Stage 1 then zeroes the PSUM rows of
    /// the absent sequences: the block-diagonal stages contract over all M
    /// rows, and 0 x a NaN left there by an earlier program is NaN.
    bool partialGroups = false;
  };
  /// Up to two groups of sequences; `index` selects the half of the work
  /// tiles (and of the PSUM banks) the lane uses.
  struct Lane {
    unsigned index = 0;
    Index seq0;           ///< First sequence (column seq0 n2 of A).
    Index group0;         ///< Its group number (seq0 / G).
    int64_t groups = 0;   ///< 1 or 2.
    int64_t lastSeqs = 0; ///< Sequences in the last group (<= G).
  };
  static constexpr int64_t kGroupsPerLane = 2, kLanes = 2;

  /// Loads the constants and allocates the work tiles; `n` must factor
  /// (fftFactors) into n1 x n2 with n2 > 1.
  BatchedDft(KernelBuilder &kb, const Config &config);

  int64_t n1, n2;
  /// Spectrum columns (f1) computed per group: n1, or n1 / 2 + 1 for a
  /// convolution of real sequences (Hermitian spectra, see above).
  int64_t f1Cols;
  int64_t seqsPerGroup; ///< G
  int64_t groupRows;    ///< M = G n2
  int64_t seqsPerTile() const { return kLanes * kGroupsPerLane * seqsPerGroup; }
  /// The lanes of the `seqs` (<= seqsPerTile) sequences from `seq0` (a
  /// multiple of G; `group0` = seq0 / G).
  SmallVector<Lane, 2> lanes(Index seq0, Index group0, int64_t seqs) const;

  /// Stage 1 of the lane's groups from A ([n1, seqs, n2, parts] SBUF in
  /// `dtype`: parts = 2, re/im interleaved, for complex input), contracting
  /// its first `rows` rows (0: Config::inRows).
  void stage1(const Lane &l, Value a, int64_t rows = 0);
  void twiddle(const Lane &l);
  void stage3(const Lane &l);
  /// D of the lane: [M, groups n1] PSUM views.
  Value spectrumRe(const Lane &l), spectrumIm(const Lane &l);

  /// Inverse stages from the lane's spectra P ([M, groups n1] views, fp32).
  void inverse1(const Lane &l, Value pr, Value pi);
  void inverseTwiddle(const Lane &l);
  void inverse3(const Lane &l);
  /// y of the lane: [outRows, groups M] PSUM view.
  Value output(const Lane &l);

  /// (dr, di) = (ar, ai) (br, bi) over `rows` x the lane's width, through
  /// the lane's fp32 temporaries (a and b may be in PSUM).
  void complexMultiply(const Lane &l, int64_t rows, Value dr, Value di,
                       Value ar, Value ai, Value br, Value bi);

private:
  KernelBuilder &kb;
  Config cfg;
  // Constants (SBUF, each loaded once).
  Value c1, s1, ns1;       ///< F_n1 [n1, n1] (rows >= inRows unused).
  Value twr, twi;          ///< W [M, n1], the same for every group
  Value bdc, bds, bdns;    ///< I_G (x) F_n2 [M, M] (times scale)
  Value ibdc, ibds, ibdns; ///< I_G (x) Finv_n2 [M, M]
  Value iwr, iwi;          ///< Winv / N [n1, n2], the same for every (j, g)
  Value ic1, ins1;         ///< Finv_n1: cos and -sin [n1, n1]
  llvm::DenseMap<Attribute, Value> loaded;
  Value load(ArrayRef<int64_t> shape, const ConstantSpec &spec, Type type);
  // Work tiles ([128, 512], one half per lane).
  Value br, bi, dr, di, y; ///< PSUM (E reuses B)
  Value cr, ci;            ///< SBUF in dtype (E' reuses them: fp32)
  Value zeros;             ///< [1, 512] zeros in dtype (partialGroups)
  SmallVector<Value, 4> tmp;

  int64_t widthB(const Lane &l) const { return l.groups * f1Cols; }
  int64_t widthE(const Lane &l) const { return l.groups * groupRows; }
  int64_t colB(const Lane &l) const { return l.index * kGroupsPerLane * n1; }
  int64_t colE(const Lane &l) const {
    return l.index * kGroupsPerLane * groupRows;
  }
  int64_t seqsOf(const Lane &l, int64_t j) const {
    return j + 1 == l.groups ? l.lastSeqs : seqsPerGroup;
  }
  Value half(Value t, const Lane &l, int64_t rows, int64_t col, int64_t width);
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
