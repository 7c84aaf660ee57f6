//===- Onnx.cpp - an ONNX model into seam primitive ops -------------------===//
//
// Reads an ONNX ModelProto (Debian's libonnx protobuf classes) and maps its
// nodes onto seam ops one to one: exported primitives (MatMul, Softmax,
// ReduceMean, Erf, ...) become seam's primitive ops, the ops seam already
// has (Add, Mul, Reshape, LayerNormalization, ...) become those. Nothing is
// fused here: the seam-recognize-* passes recover linear, the norms, the
// activations and attention from the primitive graph.
//
// Values the graph computes from constants alone (shapes, slice bounds,
// axes) are folded here, as the shape inference of any ONNX front end does;
// float initializers become seam.param ops with their real values
// (init data, a dense_resource blob), evaluated at load time like any
// other parameter.
//
//===----------------------------------------------------------------------===//
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "passes/Passes.h"
#include "tools/seam-import/Import.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include <cctype>
#include <cmath>
#include <cstring>
#include <map>
#include <onnx/onnx_pb.h>

using namespace mlir;
using namespace seamimport;
namespace sm = mlir::seam;

namespace {

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::string dimsText(llvm::ArrayRef<int64_t> dims) {
  std::string s;
  for (int64_t d : dims)
    s += (s.empty() ? "" : "x") + std::to_string(d);
  return s.empty() ? "scalar" : s;
}

/// A tensor whose values the importer knows: an initializer, a Constant
/// node's value, or what the importer folded from them. Floats and integers
/// are both kept as double (ONNX shape tensors are int64; every value the
/// importer folds fits a double exactly).
struct Known {
  std::vector<int64_t> shape;
  std::vector<double> data;
  bool isFloat = true;
};

/// A known integer as int64: values past the range a double holds exactly
/// (an exporter's INT64_MAX "to the end" bound) saturate.
int64_t toInt(double d) {
  if (d >= 9.2e18)
    return INT64_MAX;
  if (d <= -9.2e18)
    return INT64_MIN;
  return int64_t(d);
}

/// The element count of a shape, saturating at INT64_MAX (a shape read
/// from a file may overflow; every size check then fails cleanly).
int64_t count(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n))
      return INT64_MAX;
  return n;
}

/// Most elements the importer folds or reads into one constant.
constexpr int64_t kMaxKnownElements = int64_t(1) << 30;
/// Most indices of a Gather of computed data (each is a slice).
constexpr int64_t kMaxGatherIndices = 4096;

class Importer {
public:
  Importer(ModuleOp module, const OnnxOptions &options, std::string baseDir)
      : module(module), b(module.getContext()), options(options),
        baseDir(std::move(baseDir)) {}

  llvm::Error run(const onnx::ModelProto &model);

private:
  ModuleOp module;
  OpBuilder b;
  const OnnxOptions &options;
  std::string baseDir;
  int64_t opset = 0;
  Type f32;
  /// ONNX value name -> seam value (float tensors the graph computes).
  llvm::StringMap<Value> values;
  /// ONNX value name -> known contents (initializers, constants, folds).
  llvm::StringMap<Known> known;
  /// Known float tensors already materialised as seam.param.
  llvm::StringMap<Value> params;
  /// The node being imported (errors name it).
  const onnx::NodeProto *node = nullptr;
  std::string nodeLabel;

  llvm::Error fail(const llvm::Twine &message) {
    return error("node '" + nodeLabel + "' (" + node->op_type() +
                 "): " + message);
  }

  // Tensors ------------------------------------------------------------------
  llvm::Expected<Known> readTensor(const onnx::TensorProto &t);
  llvm::Error readGraphInput(const onnx::ValueInfoProto &vi,
                             std::vector<std::pair<std::string, Type>> &in);

  bool hasInput(int i) const {
    return i < node->input_size() && !node->input(i).empty();
  }
  bool isKnown(int i) const {
    return hasInput(i) && known.count(node->input(i));
  }
  const Known *knownInput(int i) const {
    if (!hasInput(i))
      return nullptr;
    auto it = known.find(node->input(i));
    return it == known.end() ? nullptr : &it->second;
  }
  /// The seam value of input i: computed, or a known float tensor as a
  /// seam.param.
  llvm::Expected<Value> input(int i);
  Value paramOf(llvm::StringRef name, const Known &k);
  static llvm::ArrayRef<int64_t> shapeOf(Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  }
  RankedTensorType tensor(llvm::ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, f32);
  }
  void define(int i, Value v) {
    if (i < node->output_size() && !node->output(i).empty())
      values[node->output(i)] = v;
  }
  void defineKnown(int i, Known k) {
    if (i < node->output_size() && !node->output(i).empty())
      known[node->output(i)] = std::move(k);
  }

  // Attributes ---------------------------------------------------------------
  const onnx::AttributeProto *attr(llvm::StringRef name) const {
    for (const auto &a : node->attribute())
      if (a.name() == name)
        return &a;
    return nullptr;
  }
  int64_t intAttr(llvm::StringRef name, int64_t dflt) const {
    auto *a = attr(name);
    return a ? a->i() : dflt;
  }
  double floatAttr(llvm::StringRef name, double dflt) const {
    auto *a = attr(name);
    return a ? double(a->f()) : dflt;
  }
  std::optional<std::vector<int64_t>> intsAttr(llvm::StringRef name) const {
    auto *a = attr(name);
    if (!a)
      return std::nullopt;
    return std::vector<int64_t>(a->ints().begin(), a->ints().end());
  }
  /// Integers from attribute `name` (opsets before `inputSince`) or from
  /// constant input `index`; nullopt when neither is given.
  llvm::Expected<std::optional<std::vector<int64_t>>>
  intsFrom(llvm::StringRef name, int index, int64_t inputSince);
  llvm::Expected<int64_t> axis(int64_t a, int64_t rank);

  // Op mapping ---------------------------------------------------------------
  llvm::Error importNode();
  // One op (family) each, called by importNode().
  llvm::Error importConstant();
  llvm::Error importShapeOf();
  llvm::Error importPassThrough();
  llvm::Error importMatMul();
  llvm::Error importGemm();
  llvm::Error importSoftmax();
  llvm::Error importReduce();
  llvm::Error importReshape();
  llvm::Error importTranspose();
  llvm::Error importConcat();
  llvm::Error importSlice();
  llvm::Error importGather();
  llvm::Error unary(Operation *(*make)(OpBuilder &, Location, Value));
  llvm::Error binary(llvm::StringRef op);
  llvm::Error legacyBroadcast(Value &lhs, Value &rhs);
  llvm::Expected<bool> foldKnown();
  llvm::Expected<std::vector<int64_t>> newShape(llvm::ArrayRef<int64_t> in);

  Value emitBinary(llvm::StringRef op, Value lhs, Value rhs);
  llvm::Error layerNormalization();
  llvm::Error dft();
  /// A seam.param of zeros (init zeros: no data in the file).
  Value zerosOf(llvm::ArrayRef<int64_t> shape);
  Value reshape(Value x, llvm::ArrayRef<int64_t> shape) {
    if (shapeOf(x) == shape)
      return x;
    return b.create<sm::ReshapeOp>(loc(), tensor(shape), x);
  }
  Value transpose(Value x, llvm::ArrayRef<int64_t> perm) {
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i)
      identity &= perm[i] == int64_t(i);
    if (identity)
      return x;
    SmallVector<int64_t> out;
    for (int64_t p : perm)
      out.push_back(shapeOf(x)[p]);
    return b.create<sm::TransposeOp>(loc(), tensor(out), x,
                                     b.getDenseI64ArrayAttr(perm));
  }
  Value scalar(float v) {
    Known k;
    k.data = {double(v)};
    std::string name = "const." + std::to_string(constCount++);
    known[name] = k;
    return paramOf(name, known[name]);
  }
  int64_t constCount = 0;
  Location loc() {
    return NameLoc::get(b.getStringAttr(nodeLabel), b.getUnknownLoc());
  }
};

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

llvm::Expected<Known> Importer::readTensor(const onnx::TensorProto &t) {
  Known k;
  for (int64_t d : t.dims()) {
    if (d < 0)
      return error("tensor '" + t.name() + "' has a negative dimension");
    k.shape.push_back(d);
  }
  int64_t n = count(k.shape);
  if (n > kMaxKnownElements)
    return error("tensor '" + t.name() + "' of shape " + dimsText(k.shape) +
                 " is too large (at most 2^30 elements)");
  std::string raw;
  bool hasRaw = t.has_raw_data();
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto &e : t.external_data()) {
      if (e.key() == "location")
        location = e.value();
      else if (e.key() == "offset")
        offset = std::atoll(e.value().c_str());
      else if (e.key() == "length")
        length = std::atoll(e.value().c_str());
    }
    llvm::SmallString<256> path(baseDir);
    llvm::sys::path::append(path, location);
    auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
    if (!buf)
      return error("tensor '" + t.name() +
                   "': cannot read its external data '" + path +
                   "': " + buf.getError().message());
    int64_t size = int64_t((*buf)->getBufferSize());
    if (offset < 0 || offset > size || (length >= 0 && length > size - offset))
      return error("tensor '" + t.name() + "': external data '" + path +
                   "' is shorter than its offset and length");
    raw.assign((*buf)->getBufferStart() + offset,
               length >= 0 ? size_t(length) : size_t(size - offset));
    hasRaw = true;
  } else if (hasRaw) {
    raw = t.raw_data();
  }
  // The data must match the shape before anything is allocated for it.
  auto expectBytes = [&](int64_t width) -> llvm::Error {
    if (int64_t(raw.size()) != n * width)
      return error("tensor '" + t.name() + "' holds " +
                   std::to_string(raw.size()) + " bytes, its shape " +
                   dimsText(k.shape) + " needs " + std::to_string(n * width));
    k.data.resize(n);
    return llvm::Error::success();
  };
  auto expectCount = [&](int64_t have) -> llvm::Error {
    if (have != n)
      return error("tensor '" + t.name() + "' holds " + std::to_string(have) +
                   " values, its shape " + dimsText(k.shape) + " needs " +
                   std::to_string(n));
    k.data.resize(n);
    return llvm::Error::success();
  };
  // Raw little-endian bytes of element type T, or the proto's typed field.
  auto copy = [&](auto tag, const auto &field) -> llvm::Expected<Known> {
    using T = decltype(tag);
    if (hasRaw) {
      if (auto e = expectBytes(int64_t(sizeof(T))))
        return e;
      for (int64_t i = 0; i < n; ++i) {
        T v;
        std::memcpy(&v, raw.data() + sizeof(T) * i, sizeof(T));
        k.data[i] = double(v);
      }
    } else {
      if (auto e = expectCount(field.size()))
        return e;
      for (int64_t i = 0; i < n; ++i)
        k.data[i] = double(field.Get(int(i)));
    }
    return k;
  };
  switch (t.data_type()) {
  case onnx::TensorProto::FLOAT:
    return copy(float(), t.float_data());
  case onnx::TensorProto::DOUBLE:
    return copy(double(), t.double_data());
  case onnx::TensorProto::INT64:
    k.isFloat = false;
    return copy(int64_t(), t.int64_data());
  case onnx::TensorProto::INT32:
    k.isFloat = false;
    return copy(int32_t(), t.int32_data());
  default:
    return error("tensor '" + t.name() + "' has element type " +
                 onnx::TensorProto::DataType_Name(
                     onnx::TensorProto::DataType(t.data_type())) +
                 ", which seam does not import (float, double, int32, int64)");
  }
}

Value Importer::paramOf(llvm::StringRef name, const Known &k) {
  auto it = params.find(name);
  if (it != params.end())
    return it->second;
  OpBuilder::InsertionGuard g(b);
  // Parameters go first in the function, so any op may read them.
  Block &entry = module.lookupSymbol<func::FuncOp>("forward").front();
  b.setInsertionPointToStart(&entry);
  auto type = tensor(k.shape);
  std::vector<float> data(k.data.begin(), k.data.end());
  ElementsAttr value;
  if (data.size() <= 16) {
    value = DenseElementsAttr::get(type, llvm::ArrayRef<float>(data));
  } else {
    auto blob = HeapAsmResourceBlob::allocateAndCopyInferAlign(
        llvm::ArrayRef<float>(data));
    // A resource key is printed bare: letters, digits, '_' and '.' only.
    std::string key = "onnx.";
    for (char c : name)
      key += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'
                 ? c
                 : '_';
    value = DenseResourceElementsAttr::get(type, key, std::move(blob));
  }
  auto p = b.create<sm::ParamOp>(
      NameLoc::get(b.getStringAttr(name), b.getUnknownLoc()), type, name,
      sm::ParamInit::data, llvm::APFloat(0.0), 0, value);
  params[name] = p;
  return p;
}

llvm::Expected<Value> Importer::input(int i) {
  if (!hasInput(i))
    return fail("input " + std::to_string(i) + " is missing");
  llvm::StringRef name = node->input(i);
  auto v = values.find(name);
  if (v != values.end())
    return v->second;
  auto k = known.find(name);
  if (k != known.end()) {
    // An integer constant where a float is read: Pow's exponent may be an
    // integer tensor; its values are exact as floats.
    if (!k->second.isFloat && !(node->op_type() == "Pow" && i == 1))
      return fail("input '" + name +
                  "' is an integer tensor where seam needs a float one");
    return paramOf(name, k->second);
  }
  return fail("input '" + name + "' is not defined by an earlier node");
}

llvm::Error
Importer::readGraphInput(const onnx::ValueInfoProto &vi,
                         std::vector<std::pair<std::string, Type>> &in) {
  const std::string &name = vi.name();
  if (!vi.type().has_tensor_type())
    return error("graph input '" + name + "' is not a tensor");
  const auto &tt = vi.type().tensor_type();
  if (tt.elem_type() != onnx::TensorProto::FLOAT)
    return error("graph input '" + name + "' has element type " +
                 onnx::TensorProto::DataType_Name(
                     onnx::TensorProto::DataType(tt.elem_type())) +
                 ": seam's step inputs are float");
  std::vector<int64_t> shape;
  auto given = options.shapes.find(name);
  if (given != options.shapes.end()) {
    shape = given->second;
    if (tt.has_shape() && tt.shape().dim_size() != int(shape.size()))
      return error("--shape " + name + "=" + dimsText(shape) + " has rank " +
                   std::to_string(shape.size()) + ", the input has rank " +
                   std::to_string(tt.shape().dim_size()));
    if (tt.has_shape())
      for (int d = 0; d < tt.shape().dim_size(); ++d) {
        const auto &dim = tt.shape().dim(d);
        if (dim.has_dim_value() && dim.dim_value() != shape[d])
          return error("--shape " + name + "=" + dimsText(shape) +
                       ": dimension " + std::to_string(d) + " is fixed at " +
                       std::to_string(dim.dim_value()) + " by the model");
      }
  } else {
    if (!tt.has_shape())
      return error("graph input '" + name + "' has no shape: give --shape " +
                   name + "=AxBxC");
    for (const auto &dim : tt.shape().dim()) {
      if (dim.has_dim_value() && dim.dim_value() == 0)
        return error("graph input '" + name +
                     "' has a dimension of size 0: seam does not run empty "
                     "tensors");
      if (!dim.has_dim_value() || dim.dim_value() < 0)
        return error("graph input '" + name + "' has symbolic dimension '" +
                     (dim.has_dim_param() ? dim.dim_param() : "?") +
                     "': give --shape " + name + "=AxBxC");
      shape.push_back(dim.dim_value());
    }
  }
  if (count(shape) > sm::kMaxTensorElements)
    return error("graph input '" + name + "' of shape " + dimsText(shape) +
                 " is too large (at most 2^36 elements)");
  in.push_back({name, tensor(shape)});
  return llvm::Error::success();
}

llvm::Expected<std::optional<std::vector<int64_t>>>
Importer::intsFrom(llvm::StringRef name, int index, int64_t inputSince) {
  if (opset < inputSince || attr(name)) {
    auto a = intsAttr(name);
    if (a)
      return a;
    return std::optional<std::vector<int64_t>>();
  }
  if (!hasInput(index))
    return std::optional<std::vector<int64_t>>();
  const Known *k = knownInput(index);
  if (!k)
    return fail("its " + name +
                " input must be a constant (seam imports static graphs)");
  std::vector<int64_t> out;
  out.reserve(k->data.size());
  for (double d : k->data)
    out.push_back(toInt(d));
  return std::optional<std::vector<int64_t>>(std::move(out));
}

llvm::Expected<int64_t> Importer::axis(int64_t a, int64_t rank) {
  if (rank == 0)
    return fail("its input is a scalar, which has no axis " +
                std::to_string(a));
  if (a < -rank || a >= rank)
    return fail("axis " + std::to_string(a) + " is out of range for rank " +
                std::to_string(rank));
  return a < 0 ? a + rank : a;
}

//===----------------------------------------------------------------------===//
// Nodes
//===----------------------------------------------------------------------===//

Value Importer::zerosOf(llvm::ArrayRef<int64_t> shape) {
  OpBuilder::InsertionGuard g(b);
  Block &entry = module.lookupSymbol<func::FuncOp>("forward").front();
  b.setInsertionPointToStart(&entry);
  std::string name = "const." + std::to_string(constCount++);
  return b.create<sm::ParamOp>(
      NameLoc::get(b.getStringAttr(name), b.getUnknownLoc()), tensor(shape),
      name, sm::ParamInit::zeros, llvm::APFloat(0.0), 0, ElementsAttr());
}

/// DFT (opset 17): x [..., 1] real or [..., 2] (re, im), `axis` a signal
/// axis, the optional dft_length input (a constant: the signal zero-padded
/// or truncated to it along the axis), `inverse` (1/N normalised),
/// `onesided` (the first N/2 + 1 bins, which determine the rest for a real
/// signal, forward or inverse: both transforms of a real signal are
/// conjugate-symmetric); the output [..., 2]. seam.fft / seam.ifft between
/// seam.as_complex and seam.as_real. The inverse of a real signal is
/// conj(fft(x)) / N: seam.ifft takes complex input only.
llvm::Error Importer::dft() {
  auto shapeStr = [](llvm::ArrayRef<int64_t> s) {
    std::string r = "[";
    for (size_t i = 0; i < s.size(); ++i)
      r += (i ? ", " : "") + std::to_string(s[i]);
    return r + "]";
  };
  auto x = input(0);
  if (!x)
    return x.takeError();
  llvm::ArrayRef<int64_t> in = shapeOf(*x);
  int64_t rank = int64_t(in.size());
  if (rank < 2 || (in.back() != 1 && in.back() != 2))
    return fail("its input " + shapeStr(in) +
                " must end in an axis of 1 (real) or 2 (real, imaginary)");
  int64_t a = intAttr("axis", 1);
  if (a < 0)
    a += rank;
  if (a < 0 || a >= rank - 1)
    return fail("axis " + std::to_string(intAttr("axis", 1)) +
                " is not a signal axis of " + shapeStr(in));
  bool inverse = intAttr("inverse", 0), onesided = intAttr("onesided", 0);
  bool real = in.back() == 1;
  if (onesided && !real)
    return fail(std::string("onesided with a complex input [..., 2]") +
                (inverse ? " (inverse)" : "") +
                " is not defined: ONNX keeps half the bins only of a real "
                "signal's transform, which is conjugate-symmetric");
  Value v = *x;
  int64_t n = in[a];
  if (hasInput(1)) {
    const Known *k = knownInput(1);
    if (!k)
      return fail("its dft_length input must be a constant (seam imports "
                  "static graphs)");
    if (k->data.size() != 1)
      return fail("its dft_length input must be a scalar, it holds " +
                  std::to_string(k->data.size()) + " values");
    int64_t len = toInt(k->data[0]);
    SmallVector<int64_t> shape(in);
    shape[a] = len;
    if (len < 1 || count(shape) > sm::kMaxTensorElements)
      return fail("dft_length " + std::to_string(len) +
                  (len < 1 ? " must be positive"
                           : " makes the signal too large (at most 2^36 "
                             "elements)"));
    if (len < n) {
      v = b.create<sm::SliceOp>(loc(), tensor(shape), v,
                                SmallVector<int64_t>(rank, 0));
    } else if (len > n) {
      SmallVector<int64_t> pad(in);
      pad[a] = len - n;
      v = b.create<sm::ConcatOp>(loc(), tensor(shape),
                                 ValueRange{v, zerosOf(pad)}, uint64_t(a));
    }
    n = len;
  }
  SmallVector<int64_t> sig(shapeOf(v).drop_back());
  auto complexTy = RankedTensorType::get(sig, ComplexType::get(b.getF32Type()));
  SmallVector<int64_t> outShape(sig);
  outShape.push_back(2);
  if (real) {
    v = b.create<sm::FftOp>(loc(), complexTy, reshape(v, sig),
                            b.getI64IntegerAttr(a), IntegerAttr());
    v = b.create<sm::AsRealOp>(loc(), tensor(outShape), v);
    if (inverse) { // conj(fft(x)) / N: (re, im) * (1/N, -1/N)
      Known k;
      k.shape = {2};
      k.data = {1.0 / double(n), -1.0 / double(n)};
      std::string name = "const." + std::to_string(constCount++);
      known[name] = k;
      v = emitBinary("Mul", v, paramOf(name, known[name]));
    }
  } else {
    v = b.create<sm::AsComplexOp>(loc(), complexTy, v);
    if (inverse)
      v = b.create<sm::IfftOp>(loc(), complexTy, v, b.getI64IntegerAttr(a));
    else
      v = b.create<sm::FftOp>(loc(), complexTy, v, b.getI64IntegerAttr(a),
                              IntegerAttr());
    v = b.create<sm::AsRealOp>(loc(), tensor(outShape), v);
  }
  if (onesided) {
    SmallVector<int64_t> half(outShape);
    half[a] = n / 2 + 1;
    v = b.create<sm::SliceOp>(loc(), tensor(half), v,
                              SmallVector<int64_t>(outShape.size(), 0));
  }
  define(0, v);
  return llvm::Error::success();
}

/// LayerNormalization (opset 17): seam.layer_norm when it normalises the
/// last axis and only Y is read; otherwise its definition in primitives
/// (mean and variance over axes axis.., Mean and InvStdDev as outputs),
/// which seam-recognize leaves to the host.
llvm::Error Importer::layerNormalization() {
  auto x = input(0);
  if (!x)
    return x.takeError();
  SmallVector<int64_t> shape(shapeOf(*x));
  int64_t rank = int64_t(shape.size());
  auto ax = axis(intAttr("axis", -1), rank);
  if (!ax)
    return ax.takeError();
  double eps = floatAttr("epsilon", 1e-5);
  llvm::ArrayRef<int64_t> normShape = llvm::ArrayRef(shape).drop_front(*ax);
  int64_t d = count(normShape);
  Value scale, bias;
  for (int i = 1; i <= 2; ++i) {
    if (!hasInput(i))
      continue;
    auto v = input(i);
    if (!v)
      return v.takeError();
    if (count(shapeOf(*v)) != d)
      return fail("its " + std::string(i == 1 ? "scale" : "bias") +
                  " must have " + std::to_string(d) + " elements, got " +
                  sm::describeShape(shapeOf(*v)));
    (i == 1 ? scale : bias) = *v;
  }
  bool extraOutputs = false;
  for (int i = 1; i < node->output_size(); ++i)
    extraOutputs |= !node->output(i).empty();
  if (*ax == rank - 1 && !extraOutputs) {
    if (scale)
      scale = reshape(scale, {d});
    if (bias)
      bias = reshape(bias, {d});
    define(0, b.create<sm::LayerNormOp>(loc(), x->getType(), *x, scale, bias,
                                        b.getF64FloatAttr(eps),
                                        b.getF64FloatAttr(0.0)));
    return llvm::Error::success();
  }
  SmallVector<int64_t> axes, kept(shape);
  for (int64_t a = *ax; a < rank; ++a) {
    axes.push_back(a);
    kept[a] = 1;
  }
  auto mean = [&](Value v) {
    return b
        .create<sm::ReduceOp>(loc(), tensor(kept), v, sm::ReduceKind::mean,
                              b.getDenseI64ArrayAttr(axes), true)
        .getResult();
  };
  Value mu = mean(*x);
  Value c = emitBinary("Sub", *x, mu);
  Value var = mean(emitBinary("Mul", c, c));
  Value invStd = b.create<sm::ReciprocalOp>(
      loc(), tensor(kept),
      b.create<sm::SqrtOp>(loc(), tensor(kept),
                           emitBinary("Add", var, scalar(float(eps)))));
  Value y = emitBinary("Mul", c, invStd);
  SmallVector<int64_t> paramShape(normShape);
  if (scale)
    y = emitBinary("Mul", y, reshape(scale, paramShape));
  if (bias)
    y = emitBinary("Add", y, reshape(bias, paramShape));
  define(0, y);
  define(1, mu);
  define(2, invStd);
  return llvm::Error::success();
}

Value Importer::emitBinary(llvm::StringRef op, Value lhs, Value rhs) {
  auto shape = sm::broadcastShapes(shapeOf(lhs), shapeOf(rhs));
  auto type = tensor(*shape);
  Location l = loc();
  if (op == "Add")
    return b.create<sm::AddOp>(l, type, lhs, rhs);
  if (op == "Mul")
    return b.create<sm::MulOp>(l, type, lhs, rhs);
  if (op == "Sub")
    return b.create<sm::SubOp>(l, type, lhs, rhs);
  if (op == "Div")
    return b.create<sm::DivOp>(l, type, lhs, rhs);
  if (op == "Pow")
    return b.create<sm::PowOp>(l, type, lhs, rhs);
  if (op == "Max")
    return b.create<sm::MaxOp>(l, type, lhs, rhs);
  return b.create<sm::MinOp>(l, type, lhs, rhs);
}

/// Opsets before 7: `broadcast = 1` with `axis` aligns the rhs at `axis`
/// of the lhs instead of at its end.
llvm::Error Importer::legacyBroadcast(Value &lhs, Value &rhs) {
  if (opset >= 7 || !intAttr("broadcast", 0))
    return llvm::Error::success();
  auto ls = shapeOf(lhs), rs = shapeOf(rhs);
  if (!attr("axis"))
    return llvm::Error::success();
  auto a = axis(intAttr("axis", 0), int64_t(ls.size()));
  if (!a)
    return a.takeError();
  SmallVector<int64_t> shape(rs);
  while (int64_t(shape.size()) + *a < int64_t(ls.size()))
    shape.push_back(1);
  rhs = reshape(rhs, shape);
  return llvm::Error::success();
}

llvm::Error Importer::binary(llvm::StringRef op) {
  // Max, Min and Sum take any number of inputs.
  auto first = input(0);
  if (!first)
    return first.takeError();
  Value acc = *first;
  if (node->input_size() == 1) {
    define(0, acc);
    return llvm::Error::success();
  }
  for (int i = 1; i < node->input_size(); ++i) {
    auto next = input(i);
    if (!next)
      return next.takeError();
    Value rhs = *next;
    if (auto e = legacyBroadcast(acc, rhs))
      return e;
    if (failed(sm::broadcastShapes(shapeOf(acc), shapeOf(rhs))))
      return fail(
          "operands do not broadcast: " + sm::describeShape(shapeOf(acc)) +
          " and " + sm::describeShape(shapeOf(rhs)));
    acc = emitBinary(op, acc, rhs);
  }
  define(0, acc);
  return llvm::Error::success();
}

template <typename OpT>
Operation *makeUnary(OpBuilder &b, Location l, Value x) {
  return b.create<OpT>(l, x.getType(), x);
}

llvm::Error Importer::unary(Operation *(*make)(OpBuilder &, Location, Value)) {
  auto x = input(0);
  if (!x)
    return x.takeError();
  define(0, make(b, loc(), *x)->getResult(0));
  return llvm::Error::success();
}

/// The result shape of a Reshape, Flatten, Squeeze or Unsqueeze node of
/// an input of shape `in`.
llvm::Expected<std::vector<int64_t>>
Importer::newShape(llvm::ArrayRef<int64_t> in) {
  const std::string &op = node->op_type();
  std::vector<int64_t> shape(in.begin(), in.end());
  if (op == "Reshape") {
    const Known *s = knownInput(1);
    if (!s)
      return fail("its shape input must be a constant");
    std::vector<int64_t> want;
    int64_t infer = -1, prod = 1;
    for (size_t i = 0; i < s->data.size(); ++i) {
      int64_t d = toInt(s->data[i]);
      if (d == 0 && !intAttr("allowzero", 0))
        d = i < shape.size() ? shape[i] : 0;
      if (d == -1) {
        if (infer >= 0)
          return fail("its shape has more than one -1");
        infer = int64_t(i);
      } else if (d < 0) {
        return fail("its shape has the dimension " + std::to_string(d));
      } else if (__builtin_mul_overflow(prod, d, &prod)) {
        return fail("its shape overflows");
      }
      want.push_back(d);
    }
    if (infer >= 0)
      want[infer] = prod ? count(shape) / prod : 0;
    shape = want;
  } else if (op == "Flatten") {
    auto ax = axis(intAttr("axis", 1), int64_t(shape.size()) + 1);
    if (!ax)
      return ax.takeError();
    int64_t lead = count(llvm::ArrayRef(shape).take_front(*ax));
    shape = {lead, count(shape) / std::max<int64_t>(lead, 1)};
  } else {
    auto axes = intsFrom("axes", 1, 13);
    if (!axes)
      return axes.takeError();
    std::vector<int64_t> ax = axes->value_or(std::vector<int64_t>());
    if (op == "Unsqueeze") {
      int64_t rank = int64_t(shape.size() + ax.size());
      for (int64_t &x : ax) {
        if (x < -rank || x >= rank)
          return fail("axis " + std::to_string(x) +
                      " is out of range for rank " + std::to_string(rank));
        x = x < 0 ? x + rank : x;
      }
      llvm::sort(ax);
      for (int64_t x : ax)
        shape.insert(shape.begin() + std::min<int64_t>(x, shape.size()), 1);
    } else {
      int64_t rank = int64_t(shape.size());
      std::vector<int64_t> kept;
      for (int64_t d = 0; d < rank; ++d) {
        bool drop = ax.empty() ? shape[d] == 1
                               : llvm::is_contained(ax, d) ||
                                     llvm::is_contained(ax, d - rank);
        if (drop && shape[d] != 1)
          return fail("cannot squeeze axis " + std::to_string(d) + " of " +
                      dimsText(in) + ": it is not 1");
        if (!drop)
          kept.push_back(shape[d]);
      }
      shape = kept;
    }
  }
  if (count(shape) != count(in))
    return fail("cannot reshape " + dimsText(in) + " to " + dimsText(shape));
  return shape;
}

/// Integer and shape arithmetic on known tensors (Shape, Gather of
/// constants, Concat of shape pieces, Unsqueeze of a scalar, Cast, ...):
/// what an exporter leaves for a runtime to compute from constants.
/// Returns false when the node is not one it folds.
llvm::Expected<bool> Importer::foldKnown() {
  const std::string &op = node->op_type();
  const Known *a = knownInput(0);
  if (op == "Cast" || op == "Identity") {
    Known k = *a;
    if (op == "Cast") {
      int64_t to = intAttr("to", onnx::TensorProto::FLOAT);
      k.isFloat =
          to == onnx::TensorProto::FLOAT || to == onnx::TensorProto::DOUBLE ||
          to == onnx::TensorProto::FLOAT16 || to == onnx::TensorProto::BFLOAT16;
      if (!k.isFloat)
        for (double &d : k.data)
          d = std::trunc(d);
    }
    defineKnown(0, std::move(k));
    return true;
  }
  if (op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" ||
      op == "Flatten") {
    auto shape = newShape(a->shape);
    if (!shape)
      return shape.takeError();
    Known k = *a;
    k.shape = *shape;
    defineKnown(0, std::move(k));
    return true;
  }
  if (op == "Concat") {
    Known k;
    k.isFloat = a->isFloat;
    for (int i = 0; i < node->input_size(); ++i) {
      const Known *p = knownInput(i);
      if (!p || p->shape.size() > 1)
        return false;
      k.data.insert(k.data.end(), p->data.begin(), p->data.end());
    }
    k.shape = {int64_t(k.data.size())};
    defineKnown(0, std::move(k));
    return true;
  }
  if (op == "Gather") {
    const Known *idx = knownInput(1);
    auto ax = axis(intAttr("axis", 0), int64_t(a->shape.size()));
    if (!ax)
      return ax.takeError();
    int64_t outer = count(llvm::ArrayRef(a->shape).take_front(*ax));
    int64_t n = a->shape[*ax];
    int64_t inner = count(llvm::ArrayRef(a->shape).drop_front(*ax + 1));
    Known k;
    k.isFloat = a->isFloat;
    k.shape.assign(a->shape.begin(), a->shape.begin() + *ax);
    k.shape.insert(k.shape.end(), idx->shape.begin(), idx->shape.end());
    k.shape.insert(k.shape.end(), a->shape.begin() + *ax + 1, a->shape.end());
    if (count(k.shape) > kMaxKnownElements)
      return fail("gathering constants of shape " + dimsText(k.shape) +
                  " is too large to fold");
    for (int64_t o = 0; o < outer; ++o)
      for (double di : idx->data) {
        int64_t i = toInt(di);
        if (i < -n || i >= n)
          return fail("index " + std::to_string(i) + " is out of range [" +
                      std::to_string(-n) + ", " + std::to_string(n) + ")");
        i = i < 0 ? i + n : i;
        for (int64_t in = 0; in < inner; ++in)
          k.data.push_back(a->data[(o * n + i) * inner + in]);
      }
    defineKnown(0, std::move(k));
    return true;
  }
  const Known *c = knownInput(1);
  if (c && a && (op == "Add" || op == "Sub" || op == "Mul" || op == "Div")) {
    auto shape = sm::broadcastShapes(a->shape, c->shape);
    if (failed(shape) || count(a->shape) > 64 || count(c->shape) > 64 ||
        (count(a->shape) != 1 && count(c->shape) != 1 && a->shape != c->shape))
      return false;
    Known k;
    k.isFloat = a->isFloat || c->isFloat;
    k.shape.assign(shape->begin(), shape->end());
    int64_t n = count(k.shape);
    for (int64_t i = 0; i < n; ++i) {
      double x = a->data[count(a->shape) == 1 ? 0 : i];
      double y = c->data[count(c->shape) == 1 ? 0 : i];
      double r = op == "Add"   ? x + y
                 : op == "Sub" ? x - y
                 : op == "Mul" ? x * y
                               : x / y;
      if (!k.isFloat && op == "Div")
        r = std::trunc(r);
      k.data.push_back(r);
    }
    defineKnown(0, std::move(k));
    return true;
  }
  return false;
}

/// Constant: the value of its attribute, folded.
llvm::Error Importer::importConstant() {
  Known k;
  if (auto *a = attr("value")) {
    auto t = readTensor(a->t());
    if (!t)
      return fail(llvm::toString(t.takeError()));
    k = *t;
  } else if (auto *a = attr("value_float")) {
    k.data = {double(a->f())};
  } else if (auto *a = attr("value_floats")) {
    k.data.assign(a->floats().begin(), a->floats().end());
    k.shape = {int64_t(k.data.size())};
  } else if (auto *a = attr("value_int")) {
    k.data = {double(a->i())};
    k.isFloat = false;
  } else if (auto *a = attr("value_ints")) {
    k.data.assign(a->ints().begin(), a->ints().end());
    k.shape = {int64_t(k.data.size())};
    k.isFloat = false;
  } else {
    return fail("only tensor, float and int values are supported");
  }
  defineKnown(0, std::move(k));
  return llvm::Error::success();
}

/// Shape: its input's shape, a known value.
llvm::Error Importer::importShapeOf() {
  std::vector<int64_t> shape;
  if (const Known *k = knownInput(0))
    shape = k->shape;
  else if (auto x = input(0))
    shape.assign(shapeOf(*x).begin(), shapeOf(*x).end());
  else
    return x.takeError();
  int64_t rank = int64_t(shape.size());
  int64_t start = intAttr("start", 0), end = intAttr("end", rank);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  Known k;
  k.isFloat = false;
  for (int64_t d = start; d < end; ++d)
    k.data.push_back(double(shape[d]));
  k.shape = {int64_t(k.data.size())};
  defineKnown(0, std::move(k));
  return llvm::Error::success();
}

/// Identity, Dropout (inference) and Cast to float: the input itself.
llvm::Error Importer::importPassThrough() {
  const std::string &op = node->op_type();
  if (op == "Dropout" && node->output_size() > 1 && !node->output(1).empty())
    return fail("its mask output is not supported (inference only)");
  if (op == "Cast") {
    int64_t to = intAttr("to", onnx::TensorProto::FLOAT);
    if (to != onnx::TensorProto::FLOAT)
      return fail(
          "casting a computed tensor to " +
          onnx::TensorProto::DataType_Name(onnx::TensorProto::DataType(to)) +
          " is not supported (seam computes in float)");
  }
  auto x = input(0);
  if (!x)
    return x.takeError();
  define(0, *x);
  return llvm::Error::success();
}

/// MatMul: seam.matmul with NumPy broadcasting.
llvm::Error Importer::importMatMul() {
  auto x = input(0), w = input(1);
  if (!x)
    return x.takeError();
  if (!w)
    return w.takeError();
  auto shape = sm::matmulShape(shapeOf(*x), shapeOf(*w));
  if (failed(shape))
    return fail("operands do not multiply: " + sm::describeShape(shapeOf(*x)) +
                " and " + sm::describeShape(shapeOf(*w)));
  define(0, b.create<sm::MatmulOp>(loc(), tensor(*shape), *x, *w));
  return llvm::Error::success();
}

/// Gemm: alpha op(A) op(B) + beta C.
llvm::Error Importer::importGemm() {
  auto x = input(0), w = input(1);
  if (!x)
    return x.takeError();
  if (!w)
    return w.takeError();
  Value a = *x, bm = *w;
  if (shapeOf(a).size() != 2 || shapeOf(bm).size() != 2)
    return fail("A and B must be matrices");
  if (intAttr("transA", 0))
    a = transpose(a, {1, 0});
  if (intAttr("transB", 0))
    bm = transpose(bm, {1, 0});
  if (shapeOf(a)[1] != shapeOf(bm)[0])
    return fail("A and B do not multiply: " + sm::describeShape(shapeOf(a)) +
                " and " + sm::describeShape(shapeOf(bm)));
  Value y = b.create<sm::MatmulOp>(
      loc(), tensor({shapeOf(a)[0], shapeOf(bm)[1]}), a, bm);
  double alpha = floatAttr("alpha", 1.0), beta = floatAttr("beta", 1.0);
  if (alpha != 1.0)
    y = emitBinary("Mul", y, scalar(float(alpha)));
  if (hasInput(2) && beta != 0.0) {
    auto c = input(2);
    if (!c)
      return c.takeError();
    Value cv = *c;
    if (beta != 1.0)
      cv = emitBinary("Mul", cv, scalar(float(beta)));
    if (failed(sm::broadcastShapes(shapeOf(y), shapeOf(cv))))
      return fail("C " + sm::describeShape(shapeOf(cv)) +
                  " does not broadcast to " + sm::describeShape(shapeOf(y)));
    y = emitBinary("Add", y, cv);
  }
  define(0, y);
  return llvm::Error::success();
}

/// Softmax and LogSoftmax over one axis.
llvm::Error Importer::importSoftmax() {
  const std::string &op = node->op_type();
  auto x = input(0);
  if (!x)
    return x.takeError();
  int64_t rank = int64_t(shapeOf(*x).size());
  auto ax = axis(intAttr("axis", opset < 13 ? 1 : -1), rank);
  if (!ax)
    return ax.takeError();
  Value v = *x;
  SmallVector<int64_t> orig(shapeOf(v));
  if (opset < 13 && *ax != rank - 1) {
    // Before opset 13: the input is coerced to 2-D at `axis`.
    int64_t lead = count(llvm::ArrayRef(orig).take_front(*ax));
    v = reshape(v, {lead, count(orig) / std::max<int64_t>(lead, 1)});
    ax = 1;
  }
  v = b.create<sm::SoftmaxOp>(loc(), v.getType(), v, int64_t(*ax));
  if (op == "LogSoftmax")
    v = b.create<sm::LogOp>(loc(), v.getType(), v);
  define(0, reshape(v, orig));
  return llvm::Error::success();
}

/// ReduceMean, ReduceSum and ReduceMax.
llvm::Error Importer::importReduce() {
  const std::string &op = node->op_type();
  auto x = input(0);
  if (!x)
    return x.takeError();
  int64_t rank = int64_t(shapeOf(*x).size());
  auto axesOr = intsFrom("axes", 1, op == "ReduceSum" ? 13 : 18);
  if (!axesOr)
    return axesOr.takeError();
  std::vector<int64_t> axes;
  if (*axesOr && !(*axesOr)->empty()) {
    for (int64_t a : **axesOr) {
      auto n = axis(a, rank);
      if (!n)
        return n.takeError();
      axes.push_back(*n);
    }
  } else if (intAttr("noop_with_empty_axes", 0)) {
    define(0, *x);
    return llvm::Error::success();
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  llvm::sort(axes);
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  bool keep = intAttr("keepdims", 1);
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(axes, d))
      shape.push_back(shapeOf(*x)[d]);
    else if (keep)
      shape.push_back(1);
  auto kind = op == "ReduceMean"  ? sm::ReduceKind::mean
              : op == "ReduceSum" ? sm::ReduceKind::sum
                                  : sm::ReduceKind::max;
  define(0, b.create<sm::ReduceOp>(loc(), tensor(shape), *x, kind,
                                   b.getDenseI64ArrayAttr(axes), keep));
  return llvm::Error::success();
}

/// Reshape, Flatten, Squeeze and Unsqueeze.
llvm::Error Importer::importReshape() {
  auto x = input(0);
  if (!x)
    return x.takeError();
  auto shape = newShape(shapeOf(*x));
  if (!shape)
    return shape.takeError();
  define(0, reshape(*x, *shape));
  return llvm::Error::success();
}

/// Transpose.
llvm::Error Importer::importTranspose() {
  auto x = input(0);
  if (!x)
    return x.takeError();
  int64_t rank = int64_t(shapeOf(*x).size());
  std::vector<int64_t> perm;
  if (auto p = intsAttr("perm"))
    perm = *p;
  else
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  std::vector<int64_t> sorted = perm;
  llvm::sort(sorted);
  for (int64_t d = 0; d < rank; ++d)
    if (int64_t(sorted.size()) != rank || sorted[d] != d)
      return fail("perm is not a permutation of 0.." +
                  std::to_string(rank - 1));
  define(0, transpose(*x, perm));
  return llvm::Error::success();
}

/// Concat.
llvm::Error Importer::importConcat() {
  SmallVector<Value> xs;
  for (int i = 0; i < node->input_size(); ++i) {
    auto x = input(i);
    if (!x)
      return x.takeError();
    if (count(shapeOf(*x)) > 0)
      xs.push_back(*x);
  }
  if (xs.empty())
    return fail("every input is empty");
  int64_t rank = int64_t(shapeOf(xs[0]).size());
  auto ax = axis(intAttr("axis", 0), rank);
  if (!ax)
    return ax.takeError();
  SmallVector<int64_t> shape(shapeOf(xs[0]));
  shape[*ax] = 0;
  for (Value x : xs) {
    auto s = shapeOf(x);
    for (int64_t d = 0; d < rank; ++d)
      if (d != *ax && (int64_t(s.size()) != rank || s[d] != shape[d]))
        return fail("inputs differ off the concatenation axis");
    shape[*ax] += s[*ax];
  }
  define(0, xs.size() == 1 ? xs[0]
                           : Value(b.create<sm::ConcatOp>(loc(), tensor(shape),
                                                          xs, int64_t(*ax))));
  return llvm::Error::success();
}

/// Slice and Split.
llvm::Error Importer::importSlice() {
  const std::string &op = node->op_type();
  auto x = input(0);
  if (!x)
    return x.takeError();
  SmallVector<int64_t> in(shapeOf(*x));
  int64_t rank = int64_t(in.size());
  auto sliceOf = [&](const SmallVector<int64_t> &off,
                     const SmallVector<int64_t> &size) {
    if (ArrayRef<int64_t>(size) == ArrayRef<int64_t>(in))
      return *x;
    return Value(b.create<sm::SliceOp>(loc(), tensor(size), *x,
                                       b.getDenseI64ArrayAttr(off)));
  };
  if (op == "Split") {
    auto ax = axis(intAttr("axis", 0), rank);
    if (!ax)
      return ax.takeError();
    auto splitOr = intsFrom("split", 1, 13);
    if (!splitOr)
      return splitOr.takeError();
    std::vector<int64_t> split;
    int64_t outs = node->output_size();
    if (*splitOr) {
      split = **splitOr;
    } else {
      if (in[*ax] % outs != 0)
        return fail("axis " + std::to_string(*ax) + " (" +
                    std::to_string(in[*ax]) + ") does not split into " +
                    std::to_string(outs) + " equal parts");
      split.assign(outs, in[*ax] / outs);
    }
    int64_t total = 0;
    for (int64_t s : split) {
      if (s < 0 || s > in[*ax])
        return fail("split size " + std::to_string(s) +
                    " is out of range for axis " + std::to_string(*ax) + " (" +
                    std::to_string(in[*ax]) + ")");
      total += s;
    }
    if (int64_t(split.size()) != outs || total != in[*ax])
      return fail("split sizes do not add up to axis " + std::to_string(*ax) +
                  " (" + std::to_string(in[*ax]) + ")");
    int64_t at = 0;
    for (int64_t i = 0; i < outs; ++i) {
      SmallVector<int64_t> off(rank, 0), size(in);
      off[*ax] = at;
      size[*ax] = split[i];
      define(int(i), sliceOf(off, size));
      at += split[i];
    }
    return llvm::Error::success();
  }
  auto starts = intsFrom("starts", 1, 10), ends = intsFrom("ends", 2, 10);
  if (!starts)
    return starts.takeError();
  if (!ends)
    return ends.takeError();
  auto axesOr = intsFrom("axes", 3, 10), stepsOr = intsFrom("steps", 4, 10);
  if (!axesOr)
    return axesOr.takeError();
  if (!stepsOr)
    return stepsOr.takeError();
  if (!*starts || !*ends || (*starts)->size() != (*ends)->size())
    return fail("starts and ends must be given, of equal length");
  std::vector<int64_t> axes;
  if (*axesOr)
    axes = **axesOr;
  else
    for (size_t i = 0; i < (*starts)->size(); ++i)
      axes.push_back(int64_t(i));
  if (axes.size() != (*starts)->size() ||
      (*stepsOr && (*stepsOr)->size() != axes.size()))
    return fail("starts, ends, axes and steps differ in length");
  SmallVector<int64_t> off(rank, 0), size(in);
  for (size_t i = 0; i < axes.size(); ++i) {
    auto a = axis(axes[i], rank);
    if (!a)
      return a.takeError();
    if (*stepsOr && (**stepsOr)[i] != 1)
      return fail("steps other than 1 are not supported (got " +
                  std::to_string((**stepsOr)[i]) + ")");
    int64_t n = in[*a];
    int64_t s = (**starts)[i], e = (**ends)[i];
    s = std::clamp<int64_t>(s < 0 ? s + n : s, 0, n);
    e = std::clamp<int64_t>(e < 0 ? e + n : e, 0, n);
    off[*a] = s;
    size[*a] = std::max<int64_t>(e - s, 0);
  }
  if (count(size) == 0)
    return fail("the slice is empty");
  define(0, sliceOf(off, size));
  return llvm::Error::success();
}

/// Gather.
llvm::Error Importer::importGather() {
  const Known *idx = knownInput(1);
  auto x = input(0);
  if (!x)
    return x.takeError();
  if (!idx)
    return fail("its indices must be constant (a gather of constants)");
  if (int64_t(idx->data.size()) > kMaxGatherIndices)
    return fail("a gather of " + std::to_string(idx->data.size()) +
                " indices from computed data is not supported (at most " +
                std::to_string(kMaxGatherIndices) + ")");
  int64_t rank = int64_t(shapeOf(*x).size());
  auto ax = axis(intAttr("axis", 0), rank);
  if (!ax)
    return ax.takeError();
  // Each index is a slice along the axis; the pieces are concatenated and
  // the index shape takes the axis' place.
  SmallVector<int64_t> in(shapeOf(*x));
  SmallVector<Value> pieces;
  for (double di : idx->data) {
    int64_t i = toInt(di), n = in[*ax];
    if (i < -n || i >= n)
      return fail("index " + std::to_string(i) + " is out of range [" +
                  std::to_string(-n) + ", " + std::to_string(n) + ")");
    SmallVector<int64_t> off(rank, 0), size(in);
    off[*ax] = i < 0 ? i + n : i;
    size[*ax] = 1;
    pieces.push_back(b.create<sm::SliceOp>(loc(), tensor(size), *x,
                                           b.getDenseI64ArrayAttr(off)));
  }
  SmallVector<int64_t> cat(in);
  cat[*ax] = int64_t(pieces.size());
  Value v = pieces.size() == 1 ? pieces[0]
                               : Value(b.create<sm::ConcatOp>(
                                     loc(), tensor(cat), pieces, int64_t(*ax)));
  SmallVector<int64_t> out(in.begin(), in.begin() + *ax);
  out.append(idx->shape.begin(), idx->shape.end());
  out.append(in.begin() + *ax + 1, in.end());
  define(0, reshape(v, out));
  return llvm::Error::success();
}

llvm::Error Importer::importNode() {
  const std::string &op = node->op_type();
  if (!node->domain().empty() && node->domain() != "ai.onnx")
    return fail("domain '" + node->domain() + "' is not supported");

  // Values computed from constants alone are folded.
  if (op == "Constant")
    return importConstant();
  if (op == "Shape")
    return importShapeOf();
  bool allKnown = node->input_size() > 0;
  for (int i = 0; i < node->input_size(); ++i)
    allKnown &= !hasInput(i) || isKnown(i);
  if (allKnown) {
    auto folded = foldKnown();
    if (!folded)
      return folded.takeError();
    if (*folded)
      return llvm::Error::success();
    // Not folded: the constants feed a computed op (as params).
  }

  // Elementwise -----------------------------------------------------------
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Pow" ||
      op == "Max" || op == "Min" || op == "Sum")
    return binary(op == "Sum" ? "Add" : llvm::StringRef(op));
  static const std::pair<const char *,
                         Operation *(*)(OpBuilder &, Location, Value)>
      unaries[] = {{"Exp", makeUnary<sm::ExpOp>},
                   {"Log", makeUnary<sm::LogOp>},
                   {"Sqrt", makeUnary<sm::SqrtOp>},
                   {"Tanh", makeUnary<sm::TanhOp>},
                   {"Erf", makeUnary<sm::ErfOp>},
                   {"Sigmoid", makeUnary<sm::SigmoidOp>},
                   {"Neg", makeUnary<sm::NegOp>},
                   {"Reciprocal", makeUnary<sm::ReciprocalOp>},
                   {"Relu", makeUnary<sm::ReluOp>},
                   {"Abs", makeUnary<sm::AbsOp>}};
  for (auto &[name, make] : unaries)
    if (op == name)
      return unary(make);
  if (op == "Identity" || op == "Dropout" || op == "Cast")
    return importPassThrough();

  // Dense -------------------------------------------------------------------
  if (op == "MatMul")
    return importMatMul();
  if (op == "Gemm")
    return importGemm();

  // Spectral ------------------------------------------------------------------
  if (op == "DFT")
    return dft();

  // Reductions ----------------------------------------------------------------
  if (op == "Softmax" || op == "LogSoftmax")
    return importSoftmax();
  if (op == "ReduceMean" || op == "ReduceSum" || op == "ReduceMax")
    return importReduce();
  if (op == "LayerNormalization")
    return layerNormalization();

  // Shapes -------------------------------------------------------------------
  if (op == "Reshape" || op == "Flatten" || op == "Squeeze" ||
      op == "Unsqueeze")
    return importReshape();
  if (op == "Transpose")
    return importTranspose();
  if (op == "Concat")
    return importConcat();
  if (op == "Slice" || op == "Split")
    return importSlice();
  if (op == "Gather")
    return importGather();
  return fail("the op is not supported by seam's ONNX import");
}

llvm::Error Importer::run(const onnx::ModelProto &model) {
  for (const auto &o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx")
      opset = o.version();
    else if (o.domain() != "ai.onnx.ml")
      return error("opset domain '" + o.domain() + "' is not supported");
  if (opset == 0)
    return error("the model imports no ai.onnx opset");
  if (opset < 6 || opset > 17)
    return error("opset " + std::to_string(opset) +
                 " is not supported (6 to 17; 13 to 17 are the target)");
  f32 = b.getF32Type();
  const onnx::GraphProto &g = model.graph();
  for (const auto &t : g.initializer()) {
    auto k = readTensor(t);
    if (!k)
      return k.takeError();
    known[t.name()] = std::move(*k);
  }
  for (const auto &[name, dims] : options.shapes) {
    bool found = false;
    for (const auto &vi : g.input())
      found |= vi.name() == name && !known.count(name);
    if (!found)
      return error("--shape " + name + ": the model has no input '" + name +
                   "'");
  }
  std::vector<std::pair<std::string, Type>> inputs;
  for (const auto &vi : g.input()) {
    if (known.count(vi.name()))
      continue; // an initializer listed as an input (IR version < 4)
    if (auto e = readGraphInput(vi, inputs))
      return e;
  }
  std::vector<std::pair<llvm::StringRef, Type>> refs;
  refs.reserve(inputs.size());
  for (auto &in : inputs)
    refs.push_back({in.first, in.second});
  func::FuncOp fn = createForward(b, module, refs);
  for (auto [i, in] : llvm::enumerate(inputs))
    values[in.first] = fn.getArgument(unsigned(i));
  b.setInsertionPointToEnd(&fn.front());
  int index = 0;
  for (const auto &n : g.node()) {
    node = &n;
    nodeLabel =
        n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name();
    ++index;
    if (auto e = importNode())
      return e;
    for (int i = 0; i < n.output_size(); ++i)
      if (!n.output(i).empty() && !values.count(n.output(i)) &&
          !known.count(n.output(i)))
        return fail("output '" + n.output(i) + "' was not produced");
  }
  SmallVector<Value> results;
  SmallVector<Type> types;
  std::vector<std::string> names;
  for (const auto &vi : g.output()) {
    Value v;
    if (auto it = values.find(vi.name()); it != values.end())
      v = it->second;
    else if (auto k = known.find(vi.name()); k != known.end()) {
      if (!k->second.isFloat)
        return error("graph output '" + vi.name() +
                     "' is an integer tensor: seam's outputs are float");
      v = paramOf(vi.name(), k->second);
    } else {
      return error("graph output '" + vi.name() + "' is never computed");
    }
    results.push_back(v);
    types.push_back(v.getType());
    names.push_back(vi.name());
  }
  if (results.empty())
    return error("the graph has no outputs");
  b.create<func::ReturnOp>(b.getUnknownLoc(), results);
  fn.setFunctionType(b.getFunctionType(fn.getArgumentTypes(), types));
  for (auto [i, name] : llvm::enumerate(names))
    fn.setResultAttr(unsigned(i), "seam.output", b.getStringAttr(name));
  return llvm::Error::success();
}

} // namespace

bool seamimport::isOnnxPath(llvm::StringRef path) {
  return path.ends_with_insensitive(".onnx");
}

llvm::Error seamimport::parseShapeOption(llvm::StringRef text,
                                         OnnxOptions &options) {
  auto [name, dims] = text.split('=');
  if (name.empty() || dims.empty())
    return error("--shape '" + text + "' must be name=AxBxC");
  std::vector<int64_t> shape;
  llvm::SmallVector<llvm::StringRef> parts;
  dims.split(parts, 'x');
  for (llvm::StringRef p : parts) {
    int64_t d;
    if (p.getAsInteger(10, d) || d <= 0)
      return error("--shape '" + text + "': '" + p +
                   "' is not a positive dimension");
    shape.push_back(d);
  }
  options.shapes[name.str()] = shape;
  return llvm::Error::success();
}

llvm::Error seamimport::importOnnx(llvm::StringRef path,
                                   const OnnxOptions &options,
                                   ModuleOp module) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf)
    return error("cannot read '" + path + "': " + buf.getError().message());
  return importOnnxBuffer((*buf)->getBuffer(),
                          llvm::sys::path::parent_path(path), options, module);
}

llvm::Error seamimport::importOnnxBuffer(llvm::StringRef bytes,
                                         llvm::StringRef baseDir,
                                         const OnnxOptions &options,
                                         ModuleOp module) {
  onnx::ModelProto model;
  if (bytes.size() > size_t(INT_MAX) ||
      !model.ParseFromArray(bytes.data(), int(bytes.size())))
    return error("not a valid ONNX model (the protobuf does not parse: "
                 "truncated or corrupt)");
  if (!model.has_graph())
    return error("the ONNX model has no graph");
  Importer importer(module, options, baseDir.empty() ? "." : baseDir.str());
  if (auto e = importer.run(model))
    return e;
  module->setAttr("seam.tp",
                  OpBuilder(module.getContext()).getI64IntegerAttr(1));
  if (!options.tp || *options.tp <= 1)
    return llvm::Error::success();
  // --tp N: the structure recovered (seam-recognize), then sharded where it
  // is Megatron's (seam-shard-tp), or the reason it is not, on one line.
  std::string reason;
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error && reason.empty())
      reason = d.str();
    return success();
  });
  PassManager pm(module.getContext());
  sm::SeamRecognizeOptions ro;
  ro.remarks = false;
  pm.addNestedPass<func::FuncOp>(sm::createSeamRecognize(ro));
  sm::SeamShardTpOptions so;
  so.tp = *options.tp;
  so.remarks = false;
  pm.addPass(sm::createSeamShardTp(so));
  if (failed(pm.run(module)))
    return error(reason.empty() ? "--tp " + std::to_string(*options.tp) +
                                      ": sharding failed"
                                : reason);
  return llvm::Error::success();
}

llvm::Expected<OwningOpRef<ModuleOp>>
seamimport::importOnnxModel(MLIRContext &context, llvm::StringRef path,
                            const OnnxOptions &options) {
  context.loadDialect<sm::SeamDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&context));
  std::string label = ("ONNX model '" + path + "'").str();
  if (auto e = importOnnx(path, options, *module))
    return error(label + ": " + llvm::toString(std::move(e)));
  OpBuilder b(&context);
  (*module)->setAttr("seam.model",
                     b.getStringAttr(llvm::sys::path::stem(path)));
  if (auto e = verifyImported(*module, label + ": the imported IR is invalid"))
    return e;
  return module;
}
