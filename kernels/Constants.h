//===- Constants.h - constant matrices a kernel ships with -------*- C++
//-*-===//
//
// How constants travel: a kernel's constant matrices (DFT cos/sin, twiddles,
// identity) are HBM arguments of its ncore.program with `ncore.role =
// "constant"` and a `seam.constant` dictionary naming the generator:
//
//   {kind = "cos" | "sin" | "identity", rows, cols, n, scale : f64,
//    [row_period, col_period : i64], [block_diagonal],
//    [odd_kind = "cos" | "sin", odd_scale : f64]}
//
//   cos: value[r][c] = scale * cos(2 pi (r c mod n) / n)   ([rows, cols])
//   sin: value[r][c] = scale * sin(2 pi (r c mod n) / n)
//   identity: value[r][c] = scale * (r == c)
//
// The optional keys describe the structured matrices of the batched DFTs:
//   row_period p / col_period q: the angle uses (r mod p)(c mod q) (a
//     twiddle table repeated over a batch of sequences);
//   block_diagonal: zero unless r / p == c / q (I_G (x) F_q: one DFT per
//     block of partitions);
//   odd_kind / odd_scale: interleaved columns, column 2k is (kind, scale)
//     and column 2k+1 is (odd_kind, odd_scale), both at index k (a DFT
//     whose output is (re, im) pairs, the layout of complex<f32>).
//
// The values are computed in double and rounded once to the binding dtype.
// The emitter (or any caller that launches the program) turns the attribute
// into the binding's contents with `constantValues`; `kernelConstants`
// gives them for every constant argument of a program. Nothing here links
// the runtime.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_KERNELS_CONSTANTS_H
#define SEAM_KERNELS_CONSTANTS_H

#include "mlir/IR/BuiltinAttributes.h"
#include <map>
#include <vector>

namespace mlir::ncore {
class ProgramOp;
}

namespace mlir::seam {

struct ConstantSpec {
  enum class Kind { Cos, Sin, Identity } kind = Kind::Cos;
  int64_t rows = 0, cols = 0, n = 1;
  double scale = 1.0;
  /// Indices reduced modulo these before the product (0: not reduced).
  int64_t rowPeriod = 0, colPeriod = 0;
  /// Zero outside the blocks r / rowPeriod == c / colPeriod.
  bool blockDiagonal = false;
  /// Odd columns are (oddKind, oddScale), even ones (kind, scale), both at
  /// column index c / 2.
  bool interleaved = false;
  Kind oddKind = Kind::Sin;
  double oddScale = 1.0;

  static ConstantSpec cos(int64_t rows, int64_t cols, int64_t n,
                          double scale = 1.0) {
    ConstantSpec s;
    s.kind = Kind::Cos;
    s.rows = rows;
    s.cols = cols;
    s.n = n;
    s.scale = scale;
    return s;
  }
  static ConstantSpec sin(int64_t rows, int64_t cols, int64_t n,
                          double scale = 1.0) {
    ConstantSpec s = cos(rows, cols, n, scale);
    s.kind = Kind::Sin;
    return s;
  }
  static ConstantSpec identity(int64_t n) {
    ConstantSpec s = cos(n, n, 1, 1.0);
    s.kind = Kind::Identity;
    return s;
  }
  /// With indices taken modulo (rowPeriod, colPeriod).
  ConstantSpec periodic(int64_t rp, int64_t cp) const {
    ConstantSpec s = *this;
    s.rowPeriod = rp;
    s.colPeriod = cp;
    return s;
  }
  /// I_G (x) this: blocks of (rp x cp) on the diagonal (rows = G rp).
  ConstantSpec blocks(int64_t rp, int64_t cp) const {
    ConstantSpec s = periodic(rp, cp);
    s.blockDiagonal = true;
    return s;
  }
  /// Columns interleaved with (odd, oddScale); `cols` counts both.
  ConstantSpec interleave(Kind odd, double oddScaleValue) const {
    ConstantSpec s = *this;
    s.interleaved = true;
    s.oddKind = odd;
    s.oddScale = oddScaleValue;
    return s;
  }
  DictionaryAttr toAttr(MLIRContext *ctx) const;
  static std::optional<ConstantSpec> fromAttr(DictionaryAttr attr);
  /// The values, row-major, in double precision.
  std::vector<double> values() const;
};

/// Name of the argument attribute describing a constant.
constexpr llvm::StringLiteral kConstantAttrName = "seam.constant";

/// Values (row-major, as float) of a `seam.constant` description; empty when
/// `attr` is not one.
std::vector<float> constantValues(DictionaryAttr attr);

/// For each constant argument of `program`: its index and values.
std::map<unsigned, std::vector<float>>
kernelConstants(ncore::ProgramOp program);

} // namespace mlir::seam

#endif // SEAM_KERNELS_CONSTANTS_H
