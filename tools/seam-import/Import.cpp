//===- Import.cpp - config reading and the seam graph builder -------------===//
#include "tools/seam-import/Import.h"
#include "llvm/Support/FormatVariadic.h"
#include <cmath>
#include <limits>

using namespace mlir;
using namespace seamimport;
namespace json = llvm::json;
using mlir::seam::ParamInit;

//===----------------------------------------------------------------------===//
// ConfigReader
//===----------------------------------------------------------------------===//

std::string seamimport::describeJson(const json::Value &v) {
  std::string text = llvm::formatv("{0}", v).str();
  if (text.size() > 40)
    text = text.substr(0, 37) + "...";
  switch (v.kind()) {
  case json::Value::Null:
    return "null";
  case json::Value::Boolean:
    return "boolean " + text;
  case json::Value::Number:
    return "number " + text;
  case json::Value::String:
    return "string " + text;
  case json::Value::Array:
    return "array " + text;
  case json::Value::Object:
    return "object " + text;
  }
  return text;
}

void ConfigReader::fail(const llvm::Twine &message) {
  if (!error)
    error = message.str();
}

llvm::Error ConfigReader::takeError() {
  if (!failed())
    return llvm::Error::success();
  std::string msg;
  if (!missing.empty()) {
    msg = missing.size() == 1 ? "missing required field "
                              : "missing required fields ";
    for (size_t i = 0; i < missing.size(); ++i)
      msg += (i == 0                    ? ""
              : i + 1 == missing.size() ? " and "
                                        : ", ") +
             missing[i];
  }
  if (error)
    msg += (msg.empty() ? "" : "; ") + *error;
  error.reset();
  missing.clear();
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

Dim ConfigReader::missingField(llvm::StringRef field,
                               llvm::StringRef alternative) {
  std::string entry = ("'" + field + "'").str();
  if (!alternative.empty())
    entry += (" (" + alternative + ")").str();
  if (!llvm::is_contained(missing, entry))
    missing.push_back(entry);
  return Dim{1, ("field '" + field + "'").str()};
}

const json::Value *ConfigReader::require(llvm::StringRef field) {
  const json::Value *v = obj.get(field);
  if (!v)
    missingField(field);
  return v;
}

std::optional<int64_t> ConfigReader::asInt(llvm::StringRef field,
                                           const json::Value &v,
                                           bool allowZero) {
  // Not v.getAsInteger() alone: for a JSON number parsed as a double it
  // accepts values up to double(INT64_MAX), which rounds to 2^63, and then
  // converts 2^63 to int64_t -- undefined behaviour (LLVM 19; e.g. a config
  // field 9223372036854775807.0). Integers in the text are range-checked
  // through getAsUINT64; a double is converted only when below 2^63.
  std::optional<int64_t> i;
  std::optional<double> n = v.getAsNumber();
  if (std::optional<uint64_t> u = v.getAsUINT64()) {
    if (*u <= uint64_t(std::numeric_limits<int64_t>::max()))
      i = static_cast<int64_t>(*u);
  } else if (n && *n < 0x1p63) {
    i = v.getAsInteger();
  }
  if (!i) {
    // A whole number here is one of magnitude >= 2^63.
    if (n && std::trunc(*n) == *n && *n < 0)
      fail("field '" + field + "' must be " +
           (allowZero ? "non-negative" : "positive") + ", got " +
           describeJson(v));
    else if (n && std::trunc(*n) == *n)
      fail("field '" + field + "' must be an integer below 2^63, got " +
           describeJson(v));
    else
      fail("field '" + field + "' must be an integer, got " + describeJson(v));
    return std::nullopt;
  }
  if (*i < 0 || (*i == 0 && !allowZero)) {
    fail("field '" + field + "' must be " +
         (allowZero ? "non-negative" : "positive") + ", got " +
         llvm::Twine(*i));
    return std::nullopt;
  }
  return i;
}

Dim ConfigReader::positiveInt(llvm::StringRef field) {
  Dim d{1, ("field '" + field + "'").str()};
  if (const json::Value *v = require(field))
    if (auto i = asInt(field, *v))
      d.value = *i;
  return d;
}

Dim ConfigReader::positiveInt(llvm::StringRef field, int64_t dflt) {
  if (!obj.get(field))
    return Dim{dflt, ("field '" + field + "' (default)").str()};
  return positiveInt(field);
}

std::optional<Dim> ConfigReader::nestedPositiveInt(llvm::StringRef outer,
                                                   llvm::StringRef field) {
  const json::Object *o = obj.getObject(outer);
  const json::Value *v = o ? o->get(field) : nullptr;
  if (!v)
    return std::nullopt;
  std::string name = (outer + "." + field).str();
  Dim d{1, "field '" + name + "'"};
  if (auto i = asInt(name, *v))
    d.value = *i;
  return d;
}

Dim ConfigReader::nonNegativeInt(llvm::StringRef field) {
  Dim d{0, ("field '" + field + "'").str()};
  if (const json::Value *v = require(field))
    if (auto i = asInt(field, *v, /*allowZero=*/true))
      d.value = *i;
  return d;
}

double ConfigReader::positiveNumber(llvm::StringRef field) {
  const json::Value *v = require(field);
  if (!v)
    return 1.0;
  std::optional<double> n = v->getAsNumber();
  if (!n) {
    fail("field '" + field + "' must be a number, got " + describeJson(*v));
    return 1.0;
  }
  if (!(*n > 0) || !std::isfinite(*n)) {
    fail("field '" + field + "' must be a positive number, got " +
         describeJson(*v));
    return 1.0;
  }
  return *n;
}

double ConfigReader::positiveNumber(llvm::StringRef field, double dflt) {
  return obj.get(field) ? positiveNumber(field) : dflt;
}

std::string ConfigReader::string(llvm::StringRef field) {
  const json::Value *v = require(field);
  if (!v)
    return "";
  std::optional<llvm::StringRef> s = v->getAsString();
  if (!s) {
    fail("field '" + field + "' must be a string, got " + describeJson(*v));
    return "";
  }
  return s->str();
}

std::string ConfigReader::string(llvm::StringRef field, llvm::StringRef dflt) {
  return obj.get(field) ? string(field) : dflt.str();
}

bool ConfigReader::boolean(llvm::StringRef field, bool dflt) {
  const json::Value *v = obj.get(field);
  if (!v)
    return dflt;
  if (std::optional<bool> b = v->getAsBoolean())
    return *b;
  fail("field '" + field + "' must be true or false, got " + describeJson(*v));
  return dflt;
}

Dim ConfigReader::withOption(Dim fromConfig, std::optional<int64_t> option,
                             llvm::StringRef optionName) {
  if (!option)
    return fromConfig;
  return Dim{*option, optionName.str()};
}

void seamimport::checkTensorSize(ConfigReader &reader, llvm::StringRef what,
                                 llvm::ArrayRef<Dim> dims) {
  if (reader.failed())
    return;
  SmallVector<int64_t> shape;
  for (const Dim &d : dims)
    shape.push_back(d.value);
  FailureOr<int64_t> n = mlir::seam::elementCount(shape);
  if (succeeded(n) && *n <= mlir::seam::kMaxTensorElements)
    return;
  const Dim *largest = &dims.front();
  for (const Dim &d : dims)
    if (d.value > largest->value)
      largest = &d;
  reader.fail(largest->origin + " (" + llvm::Twine(largest->value) +
              ") is too large: " + what + " " +
              mlir::seam::describeShape(shape) +
              " would have more than 2^36 elements");
}

void seamimport::checkAtMost(ConfigReader &reader, const Dim &dim, int64_t max,
                             llvm::StringRef what) {
  if (!reader.failed() && dim.value > max)
    reader.fail(dim.origin + " (" + llvm::Twine(dim.value) +
                ") is too large: at most " + llvm::Twine(max) + " " + what);
}

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

uint64_t seamimport::paramSeed(llvm::StringRef name) {
  uint32_t h = 2166136261u;
  for (unsigned char c : name) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

Type seamimport::resolveDtype(ConfigReader &reader,
                              const ImportOptions &options, MLIRContext *ctx,
                              llvm::StringRef dflt) {
  std::string name;
  if (options.dtype) {
    name = *options.dtype == "bf16" ? "bfloat16" : "float32";
  } else {
    name = reader.string("torch_dtype", dflt);
    if (!reader.failed() && name != "float32" && name != "bfloat16")
      reader.fail("field 'torch_dtype' must be \"float32\" or \"bfloat16\", "
                  "got \"" +
                  name + "\"");
  }
  if (name == "bfloat16")
    return BFloat16Type::get(ctx);
  return Float32Type::get(ctx);
}

func::FuncOp seamimport::createForward(
    OpBuilder &b, ModuleOp module,
    llvm::ArrayRef<std::pair<llvm::StringRef, Type>> inputs) {
  b.setInsertionPointToEnd(module.getBody());
  SmallVector<Type> types;
  for (auto &in : inputs)
    types.push_back(in.second);
  auto func = b.create<func::FuncOp>(module.getLoc(), "forward",
                                     b.getFunctionType(types, {}));
  for (auto [i, in] : llvm::enumerate(inputs))
    func.setArgAttr(i, "seam.input", b.getStringAttr(in.first));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToEnd(entry);
  return func;
}

void seamimport::finishForward(
    OpBuilder &b, func::FuncOp func,
    llvm::ArrayRef<std::pair<llvm::StringRef, Value>> outputs) {
  SmallVector<Value> values;
  for (auto &out : outputs)
    values.push_back(out.second);
  b.create<func::ReturnOp>(func.getLoc(), values);
  func.setType(b.getFunctionType(func.getArgumentTypes(),
                                 ValueRange(values).getTypes()));
  for (auto [i, out] : llvm::enumerate(outputs))
    func.setResultAttr(i, "seam.output", b.getStringAttr(out.first));
}

//===----------------------------------------------------------------------===//
// GraphBuilder
//===----------------------------------------------------------------------===//

Value GraphBuilder::param(const llvm::Twine &name,
                          llvm::ArrayRef<int64_t> shape, ParamInit init,
                          double scale) {
  std::string n = name.str();
  return b.create<mlir::seam::ParamOp>(loc, tensor(shape), n, init,
                                       llvm::APFloat(scale), paramSeed(n),
                                       /*value=*/nullptr);
}

Value GraphBuilder::weight(const llvm::Twine &name,
                           llvm::ArrayRef<int64_t> shape) {
  return param(name, shape, ParamInit::normal, initRange);
}
Value GraphBuilder::ones(const llvm::Twine &name,
                         llvm::ArrayRef<int64_t> shape) {
  return param(name, shape, ParamInit::ones, 1.0);
}
Value GraphBuilder::zeros(const llvm::Twine &name,
                          llvm::ArrayRef<int64_t> shape) {
  return param(name, shape, ParamInit::zeros, 0.0);
}

Value GraphBuilder::linear(Value x, const llvm::Twine &prefix, int64_t n,
                           bool bias) {
  llvm::ArrayRef<int64_t> in = shapeOf(x);
  Value w = weight(prefix + ".weight", {in.back(), n});
  Value bv = bias ? zeros(prefix + ".bias", {n}) : Value();
  SmallVector<int64_t> out(in.drop_back());
  out.push_back(n);
  return b.create<mlir::seam::LinearOp>(loc, tensor(out), x, w, bv,
                                        /*scale=*/Value(),
                                        /*activation=*/StringAttr());
}

Value GraphBuilder::columnLinear(Value x, const llvm::Twine &prefix, int64_t n,
                                 bool bias) {
  return linear(x, prefix, n / tp, bias);
}

Value GraphBuilder::rowLinear(Value x, const llvm::Twine &prefix, int64_t n,
                              bool bias) {
  if (tp == 1)
    return linear(x, prefix, n, bias);
  Value partial = linear(x, prefix, n, /*bias=*/false);
  Value sum = allReduce(partial);
  if (!bias)
    return sum;
  return add(sum, zeros(prefix + ".bias", {n}));
}

Value GraphBuilder::layerNorm(Value x, double eps, const llvm::Twine &prefix) {
  Value scale, bias;
  if (!prefix.isTriviallyEmpty() && !prefix.str().empty()) {
    int64_t d = shapeOf(x).back();
    scale = ones(prefix + ".weight", {d});
    bias = zeros(prefix + ".bias", {d});
  }
  return b.create<mlir::seam::LayerNormOp>(loc, x.getType(), x, scale, bias,
                                           b.getF64FloatAttr(eps),
                                           /*scale_offset=*/FloatAttr());
}

Value GraphBuilder::rmsNorm(Value x, double eps, const llvm::Twine &prefix) {
  Value scale = ones(prefix + ".weight", {shapeOf(x).back()});
  return b.create<mlir::seam::RmsNormOp>(loc, x.getType(), x, scale,
                                         b.getF64FloatAttr(eps));
}

Value GraphBuilder::gelu(Value x) {
  return b.create<mlir::seam::GeluOp>(loc, x.getType(), x);
}
Value GraphBuilder::geluTanh(Value x) {
  return b.create<mlir::seam::GeluTanhOp>(loc, x.getType(), x);
}
Value GraphBuilder::silu(Value x) {
  return b.create<mlir::seam::SiluOp>(loc, x.getType(), x);
}

Value GraphBuilder::add(Value a, Value c) {
  auto shape = mlir::seam::broadcastShapes(shapeOf(a), shapeOf(c));
  assert(succeeded(shape) && "import builds broadcastable operands");
  return b.create<mlir::seam::AddOp>(loc, tensor(*shape), a, c);
}
Value GraphBuilder::mul(Value a, Value c) {
  auto shape = mlir::seam::broadcastShapes(shapeOf(a), shapeOf(c));
  assert(succeeded(shape) && "import builds broadcastable operands");
  return b.create<mlir::seam::MulOp>(loc, tensor(*shape), a, c);
}

Value GraphBuilder::reshape(Value x, llvm::ArrayRef<int64_t> shape) {
  return b.create<mlir::seam::ReshapeOp>(loc, tensor(shape), x);
}

Value GraphBuilder::transpose(Value x, llvm::ArrayRef<int64_t> perm) {
  llvm::ArrayRef<int64_t> in = shapeOf(x);
  SmallVector<int64_t> out;
  for (int64_t p : perm)
    out.push_back(in[p]);
  return b.create<mlir::seam::TransposeOp>(loc, tensor(out), x, perm);
}

Value GraphBuilder::concat(ValueRange xs, int64_t dim) {
  SmallVector<int64_t> out(shapeOf(xs.front()));
  out[dim] = 0;
  for (Value x : xs)
    out[dim] += shapeOf(x)[dim];
  return b.create<mlir::seam::ConcatOp>(loc, tensor(out), xs, uint64_t(dim));
}

Value GraphBuilder::slice(Value x, llvm::ArrayRef<int64_t> offsets,
                          llvm::ArrayRef<int64_t> sizes) {
  return b.create<mlir::seam::SliceOp>(loc, tensor(sizes), x, offsets);
}

Value GraphBuilder::rope(Value x, Value cos, Value sin) {
  return b.create<mlir::seam::RopeOp>(loc, x.getType(), x, cos, sin);
}

Value GraphBuilder::attention(Value q, Value k, Value v, double scale) {
  llvm::ArrayRef<int64_t> qs = shapeOf(q);
  return b.create<mlir::seam::AttentionOp>(
      loc, tensor({qs[0], qs[1], qs[2], shapeOf(v)[3]}), q, k, v, Value(),
      Value(), llvm::APFloat(scale), /*causal=*/false);
}

Value GraphBuilder::fourierMix(Value x, llvm::ArrayRef<int64_t> dims) {
  return b.create<mlir::seam::FourierMixOp>(loc, x.getType(), x, dims);
}

Value GraphBuilder::fft(Value x, int64_t axis, bool realResult, int64_t padTo,
                        llvm::StringRef variant) {
  auto t = cast<RankedTensorType>(x.getType());
  Type et =
      realResult ? b.getF32Type() : Type(ComplexType::get(b.getF32Type()));
  auto op = b.create<mlir::seam::FftOp>(
      loc, RankedTensorType::get(t.getShape(), et), x,
      b.getI64IntegerAttr(axis),
      padTo > 0 ? b.getI64IntegerAttr(padTo) : IntegerAttr());
  if (!variant.empty())
    op->setAttr("variant", b.getStringAttr(variant));
  return op;
}

Value GraphBuilder::fftConv(Value u, Value k, Value d, int64_t fftSize) {
  return b.create<mlir::seam::FftConvOp>(loc, u.getType(), u, k, d, Value(),
                                         Value(), Value(), uint64_t(fftSize));
}

Value GraphBuilder::allReduce(Value x) {
  if (tp == 1)
    return x;
  return b.create<mlir::seam::AllReduceOp>(loc, x.getType(), x, uint64_t(tp));
}

Value GraphBuilder::allGather(Value x, int64_t dim) {
  if (tp == 1)
    return x;
  SmallVector<int64_t> shape(shapeOf(x));
  shape[dim] *= tp;
  return b.create<mlir::seam::AllGatherOp>(loc, tensor(shape), x, uint64_t(dim),
                                           uint64_t(tp));
}

SmallVector<Value>
GraphBuilder::block(llvm::StringRef kind, int64_t index, llvm::StringRef name,
                    llvm::function_ref<SmallVector<Value>()> body) {
  OpBuilder::InsertPoint outer = b.saveInsertionPoint();
  Location outerLoc = loc;
  loc = NameLoc::get(b.getStringAttr(name));

  // Fill a detached region block first: the results' types are known only
  // once the body exists.
  auto *region = new Block();
  b.setInsertionPointToEnd(region);
  SmallVector<Value> results = body();
  b.create<mlir::seam::YieldOp>(loc, results);

  b.restoreInsertionPoint(outer);
  auto op = b.create<mlir::seam::BlockOp>(loc, ValueRange(results).getTypes(),
                                          kind, uint64_t(index));
  op.getBody().push_back(region);
  loc = outerLoc;
  if (onBlock)
    onBlock(++blocksBuilt);
  return SmallVector<Value>(op.getResults());
}
