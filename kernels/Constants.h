//===- Constants.h - constant matrices a kernel ships with -------*- C++
//-*-===//
//
// How constants travel: a kernel's constant matrices (DFT cos/sin, twiddles,
// identity) are HBM arguments of its ncore.program with `ncore.role =
// "constant"` and a `seam.constant` dictionary naming the generator:
//
//   {kind = "cos" | "sin" | "identity", rows, cols, n, scale : f64}
//
//   cos: value[r][c] = scale * cos(2 pi (r c mod n) / n)   ([rows, cols])
//   sin: value[r][c] = scale * sin(2 pi (r c mod n) / n)
//   identity: value[r][c] = scale * (r == c)
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

  static ConstantSpec cos(int64_t rows, int64_t cols, int64_t n,
                          double scale = 1.0) {
    return {Kind::Cos, rows, cols, n, scale};
  }
  static ConstantSpec sin(int64_t rows, int64_t cols, int64_t n,
                          double scale = 1.0) {
    return {Kind::Sin, rows, cols, n, scale};
  }
  static ConstantSpec identity(int64_t n) {
    return {Kind::Identity, n, n, 1, 1.0};
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
