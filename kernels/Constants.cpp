//===- Constants.cpp - generators of kernel constant matrices -------------===//
#include "kernels/Constants.h"
#include "dialect/ncore/NcoreOps.h"
#include "mlir/IR/Builders.h"
#include <cmath>

using namespace mlir;
using namespace mlir::seam;

static StringRef kindName(ConstantSpec::Kind k) {
  return k == ConstantSpec::Kind::Cos   ? "cos"
         : k == ConstantSpec::Kind::Sin ? "sin"
                                        : "identity";
}

static std::optional<ConstantSpec::Kind> parseKind(StringAttr a) {
  if (!a)
    return std::nullopt;
  if (a.getValue() == "cos")
    return ConstantSpec::Kind::Cos;
  if (a.getValue() == "sin")
    return ConstantSpec::Kind::Sin;
  if (a.getValue() == "identity")
    return ConstantSpec::Kind::Identity;
  return std::nullopt;
}

DictionaryAttr ConstantSpec::toAttr(MLIRContext *ctx) const {
  Builder b(ctx);
  // The optional keys only when set, so the plain matrices keep their
  // attributes (and the program hashes) of before.
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("kind", b.getStringAttr(kindName(kind))),
      b.getNamedAttr("rows", b.getI64IntegerAttr(rows)),
      b.getNamedAttr("cols", b.getI64IntegerAttr(cols)),
      b.getNamedAttr("n", b.getI64IntegerAttr(n)),
      b.getNamedAttr("scale", b.getF64FloatAttr(scale)),
  };
  if (rowPeriod)
    attrs.push_back(
        b.getNamedAttr("row_period", b.getI64IntegerAttr(rowPeriod)));
  if (colPeriod)
    attrs.push_back(
        b.getNamedAttr("col_period", b.getI64IntegerAttr(colPeriod)));
  if (blockDiagonal)
    attrs.push_back(b.getNamedAttr("block_diagonal", b.getUnitAttr()));
  if (interleaved) {
    attrs.push_back(
        b.getNamedAttr("odd_kind", b.getStringAttr(kindName(oddKind))));
    attrs.push_back(b.getNamedAttr("odd_scale", b.getF64FloatAttr(oddScale)));
  }
  return b.getDictionaryAttr(attrs);
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
  std::optional<Kind> k = parseKind(kind);
  if (!k)
    return std::nullopt;
  s.kind = *k;
  s.rows = rows.getInt();
  s.cols = cols.getInt();
  s.n = n.getInt();
  s.scale = scale.getValueAsDouble();
  if (auto rp = attr.getAs<IntegerAttr>("row_period"))
    s.rowPeriod = rp.getInt();
  if (auto cp = attr.getAs<IntegerAttr>("col_period"))
    s.colPeriod = cp.getInt();
  s.blockDiagonal = attr.get("block_diagonal") != nullptr;
  if (s.rowPeriod < 0 || s.colPeriod < 0 ||
      (s.blockDiagonal && (!s.rowPeriod || !s.colPeriod)))
    return std::nullopt;
  if (auto odd = attr.getAs<StringAttr>("odd_kind")) {
    std::optional<Kind> ok = parseKind(odd);
    auto os = attr.getAs<FloatAttr>("odd_scale");
    if (!ok || !os)
      return std::nullopt;
    s.interleaved = true;
    s.oddKind = *ok;
    s.oddScale = os.getValueAsDouble();
  }
  return s;
}

std::vector<double> ConstantSpec::values() const {
  std::vector<double> v(rows * cols);
  // cos and sin of 2 pi m / n for each residue m, computed once when there
  // are fewer residues than entries (a 768 x 768 DFT matrix is 590k entries
  // of 768 angles); each entry is one of them.
  std::vector<double> cosOf, sinOf;
  if (n > 0 && n <= rows * cols) {
    cosOf.resize(n);
    sinOf.resize(n);
    for (int64_t m = 0; m < n; ++m) {
      double a = 2.0 * M_PI * double(m) / double(n);
      cosOf[m] = std::cos(a);
      sinOf[m] = std::sin(a);
    }
  }
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t col = 0; col < cols; ++col) {
      bool odd = interleaved && col % 2 == 1;
      int64_t c = interleaved ? col / 2 : col;
      Kind k = odd ? oddKind : kind;
      double sc = odd ? oddScale : scale;
      int64_t rr = rowPeriod ? r % rowPeriod : r;
      int64_t cc = colPeriod ? c % colPeriod : c;
      double x;
      if (blockDiagonal && r / rowPeriod != c / colPeriod) {
        x = 0.0;
      } else if (k == Kind::Identity) {
        x = rr == cc ? 1.0 : 0.0;
      } else {
        // Reduce r*c modulo n exactly before the angle.
        int64_t m = (rr % n) * (cc % n) % n;
        if (!cosOf.empty()) {
          x = k == Kind::Cos ? cosOf[m] : sinOf[m];
        } else {
          double a = 2.0 * M_PI * double(m) / double(n);
          x = k == Kind::Cos ? std::cos(a) : std::sin(a);
        }
      }
      v[r * cols + col] = sc * x;
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
