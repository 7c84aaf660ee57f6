//===- Constants.cpp - generators of kernel constant matrices -------------===//
#include "kernels/Constants.h"
#include "dialect/ncore/NcoreOps.h"
#include "mlir/IR/Builders.h"
#include <cmath>

using namespace mlir;
using namespace mlir::seam;

DictionaryAttr ConstantSpec::toAttr(MLIRContext *ctx) const {
  Builder b(ctx);
  StringRef k = kind == Kind::Cos   ? "cos"
                : kind == Kind::Sin ? "sin"
                                    : "identity";
  return b.getDictionaryAttr({
      b.getNamedAttr("kind", b.getStringAttr(k)),
      b.getNamedAttr("rows", b.getI64IntegerAttr(rows)),
      b.getNamedAttr("cols", b.getI64IntegerAttr(cols)),
      b.getNamedAttr("n", b.getI64IntegerAttr(n)),
      b.getNamedAttr("scale", b.getF64FloatAttr(scale)),
  });
}

std::optional<ConstantSpec> ConstantSpec::fromAttr(DictionaryAttr attr) {
  if (!attr)
    return std::nullopt;
  auto kind = attr.getAs<StringAttr>("kind");
  auto rows = attr.getAs<IntegerAttr>("rows");
  auto cols = attr.getAs<IntegerAttr>("cols");
  auto n = attr.getAs<IntegerAttr>("n");
  auto scale = attr.getAs<FloatAttr>("scale");
  if (!kind || !rows || !cols || !n || !scale || n.getInt() <= 0)
    return std::nullopt;
  ConstantSpec s;
  if (kind.getValue() == "cos")
    s.kind = Kind::Cos;
  else if (kind.getValue() == "sin")
    s.kind = Kind::Sin;
  else if (kind.getValue() == "identity")
    s.kind = Kind::Identity;
  else
    return std::nullopt;
  s.rows = rows.getInt();
  s.cols = cols.getInt();
  s.n = n.getInt();
  s.scale = scale.getValueAsDouble();
  return s;
}

std::vector<double> ConstantSpec::values() const {
  std::vector<double> v(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      double x;
      if (kind == Kind::Identity) {
        x = r == c ? 1.0 : 0.0;
      } else {
        // Reduce r*c modulo n exactly before the angle.
        int64_t m = (r % n) * (c % n) % n;
        double a = 2.0 * M_PI * double(m) / double(n);
        x = kind == Kind::Cos ? std::cos(a) : std::sin(a);
      }
      v[r * cols + c] = scale * x;
    }
  return v;
}

std::vector<float> seam::constantValues(DictionaryAttr attr) {
  auto spec = ConstantSpec::fromAttr(attr);
  if (!spec)
    return {};
  std::vector<double> d = spec->values();
  return std::vector<float>(d.begin(), d.end());
}

std::map<unsigned, std::vector<float>>
seam::kernelConstants(ncore::ProgramOp program) {
  std::map<unsigned, std::vector<float>> out;
  for (unsigned i = 0, e = program.getNumArguments(); i < e; ++i)
    if (program.getArgRole(i) == "constant")
      if (auto a =
              program.getArgAttrOfType<DictionaryAttr>(i, kConstantAttrName))
        out[i] = constantValues(a);
  return out;
}
