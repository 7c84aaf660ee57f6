//===- Import.h - seam-import: config reading and IR building ---*- C++ -*-===//
//
// seam-import turns an HF-style config.json into one `func.func @forward`
// of seam.block regions. This header holds what the model builders share:
// the command-line overrides, a config reader that names the offending field
// in its one error, and a builder that computes result types and creates
// seeded seam.param weights.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_TOOLS_SEAM_IMPORT_IMPORT_H
#define SEAM_TOOLS_SEAM_IMPORT_IMPORT_H

#include "dialect/seam/SeamOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace seamimport {

/// Command-line overrides of the config; unset means "the config decides".
struct ImportOptions {
  std::optional<int64_t> layers, seq, txtSeq, batch, tp;
  /// "f32" or "bf16" (already checked by the driver).
  std::optional<std::string> dtype;
  /// FNet's Fourier mixing: "exact" (default: one seam.fourier_mix, the
  /// exact 2-D DFT) or "seed" (the FNet source's structure: two 1-D FFTs,
  /// hidden then sequence, on complex data, each axis that is not a power
  /// of two zero-padded to the next one and truncated, radix-2 kernels).
  std::optional<std::string> fourier;
  /// Called after each block is built with the number built so far (the
  /// driver prints progress on long imports).
  std::function<void(int64_t blocks)> onBlock;
  /// Told about config fields that are read but change nothing the IR can
  /// show (e.g. FNet's use_tpu_fourier_optimizations); the drivers print
  /// them as warnings. Unset: dropped.
  std::function<void(const std::string &)> onWarning;
};

/// A size together with where it came from ("field 'hidden_size'",
/// "--seq"), so that a size error can name its cause.
struct Dim {
  int64_t value;
  std::string origin;
};

/// Reads fields of one config object. Every missing required field is
/// collected, and the first other problem is kept (reads return harmless
/// defaults after it); the driver reports them in one message.
class ConfigReader {
public:
  explicit ConfigReader(const llvm::json::Object &obj) : obj(obj) {}

  /// A required integer field > 0.
  Dim positiveInt(llvm::StringRef field);
  /// An optional integer field > 0.
  Dim positiveInt(llvm::StringRef field, int64_t dflt);
  /// A required integer field >= 0.
  Dim nonNegativeInt(llvm::StringRef field);
  /// A required / optional number > 0.
  double positiveNumber(llvm::StringRef field);
  double positiveNumber(llvm::StringRef field, double dflt);
  /// A required / optional string.
  std::string string(llvm::StringRef field);
  std::string string(llvm::StringRef field, llvm::StringRef dflt);
  /// An optional boolean field.
  bool boolean(llvm::StringRef field, bool dflt);
  bool has(llvm::StringRef field) const { return obj.get(field); }
  /// A nested object (`layer` in the original hyena-dna configs), or null.
  const llvm::json::Object *object(llvm::StringRef field) const {
    return obj.getObject(field);
  }
  /// An optional integer field > 0 of the nested object `outer`, named
  /// "outer.field" in errors and in its origin; nullopt when absent.
  std::optional<Dim> nestedPositiveInt(llvm::StringRef outer,
                                       llvm::StringRef field);
  /// Records `field` as missing (`alternative` says what else would do, e.g.
  /// "or give --seq") and returns a placeholder.
  Dim missingField(llvm::StringRef field, llvm::StringRef alternative = "");

  /// Records an error unless one is already recorded.
  void fail(const llvm::Twine &message);
  bool failed() const { return error.has_value() || !missing.empty(); }
  /// "missing required fields 'a', 'b' and 'c'", then the first other
  /// problem, in one error.
  llvm::Error takeError();

  /// A command-line override of a config size (positive checked by the
  /// driver): the option wins and becomes the origin.
  static Dim withOption(Dim fromConfig, std::optional<int64_t> option,
                        llvm::StringRef optionName);

private:
  const llvm::json::Value *require(llvm::StringRef field);
  std::optional<int64_t> asInt(llvm::StringRef field,
                               const llvm::json::Value &v,
                               bool allowZero = false);
  const llvm::json::Object &obj;
  std::optional<std::string> error;
  std::vector<std::string> missing; ///< "'field'" or "'field' (or ...)"
};

/// "string \"768\"", "number 1.5": a JSON value in an error message.
std::string describeJson(const llvm::json::Value &v);

/// Checks that a tensor built from these dims stays within the dialect's
/// size limit; on failure names the largest contributing dim.
void checkTensorSize(ConfigReader &reader, llvm::StringRef what,
                     llvm::ArrayRef<Dim> dims);

/// Most blocks a model may have (keeps a typo from building for minutes).
constexpr int64_t kMaxBlocks = 4096;

/// Bounds a count (blocks, ...) so that a typo cannot ask for a model that
/// takes minutes to build: "<origin> (N) is too large: at most M <what>".
void checkAtMost(ConfigReader &reader, const Dim &dim, int64_t max,
                 llvm::StringRef what);

/// Creates seam ops at an insertion point, computing result types. Weights
/// are seam.param ops whose seed is the FNV-1a hash of their name.
class GraphBuilder {
public:
  GraphBuilder(mlir::OpBuilder &b, mlir::Type elementType, double initRange,
               int64_t tp)
      : b(b), loc(b.getUnknownLoc()), elementType(elementType),
        initRange(initRange), tp(tp) {}

  mlir::OpBuilder &b;
  mlir::Location loc;
  mlir::Type elementType;
  double initRange;
  /// Tensor-parallel degree: the IR is one rank's shard.
  int64_t tp;
  /// ImportOptions::onBlock, called by block().
  std::function<void(int64_t blocks)> onBlock;
  int64_t blocksBuilt = 0;

  mlir::RankedTensorType tensor(llvm::ArrayRef<int64_t> shape) const {
    return mlir::RankedTensorType::get(shape, elementType);
  }
  static llvm::ArrayRef<int64_t> shapeOf(mlir::Value v) {
    return mlir::cast<mlir::RankedTensorType>(v.getType()).getShape();
  }

  mlir::Value param(const llvm::Twine &name, llvm::ArrayRef<int64_t> shape,
                    mlir::seam::ParamInit init, double scale);
  /// normal(initRange) weight, ones, zeros.
  mlir::Value weight(const llvm::Twine &name, llvm::ArrayRef<int64_t> shape);
  mlir::Value ones(const llvm::Twine &name, llvm::ArrayRef<int64_t> shape);
  mlir::Value zeros(const llvm::Twine &name, llvm::ArrayRef<int64_t> shape);

  /// x [..., K] times `<prefix>.weight` [K, n] (+ `<prefix>.bias` [n]).
  mlir::Value linear(mlir::Value x, const llvm::Twine &prefix, int64_t n,
                     bool bias);
  /// Column-parallel linear: each rank computes n / tp output features.
  mlir::Value columnLinear(mlir::Value x, const llvm::Twine &prefix, int64_t n,
                           bool bias);
  /// Row-parallel linear: x holds this rank's slice of the input features;
  /// the partial products are summed by an explicit seam.all_reduce (tp > 1)
  /// and the bias is added once, after the sum.
  mlir::Value rowLinear(mlir::Value x, const llvm::Twine &prefix, int64_t n,
                        bool bias);

  /// Layer norm; affine (`<prefix>.weight`, `<prefix>.bias`) unless the
  /// prefix is empty.
  mlir::Value layerNorm(mlir::Value x, double eps, const llvm::Twine &prefix);
  /// RMS norm with scale `<prefix>.weight`.
  mlir::Value rmsNorm(mlir::Value x, double eps, const llvm::Twine &prefix);

  mlir::Value gelu(mlir::Value x);
  mlir::Value geluTanh(mlir::Value x);
  mlir::Value silu(mlir::Value x);
  mlir::Value add(mlir::Value a, mlir::Value c);
  mlir::Value mul(mlir::Value a, mlir::Value c);

  mlir::Value reshape(mlir::Value x, llvm::ArrayRef<int64_t> shape);
  mlir::Value transpose(mlir::Value x, llvm::ArrayRef<int64_t> perm);
  mlir::Value concat(mlir::ValueRange xs, int64_t dim);
  mlir::Value slice(mlir::Value x, llvm::ArrayRef<int64_t> offsets,
                    llvm::ArrayRef<int64_t> sizes);

  mlir::Value rope(mlir::Value x, mlir::Value cos, mlir::Value sin);
  mlir::Value attention(mlir::Value q, mlir::Value k, mlir::Value v,
                        double scale);
  mlir::Value fourierMix(mlir::Value x, llvm::ArrayRef<int64_t> dims);
  /// seam.fft along `axis`: a complex result, or its real part when
  /// `realResult`; `padTo` > 0 sets pad_to; `variant` (non-empty) is the
  /// kernel variant attribute the call inherits (e.g. "radix2").
  mlir::Value fft(mlir::Value x, int64_t axis, bool realResult,
                  int64_t padTo = 0, llvm::StringRef variant = "");
  mlir::Value fftConv(mlir::Value u, mlir::Value k, mlir::Value d,
                      int64_t fftSize);
  /// seam.all_reduce over the tp ranks (identity when tp == 1).
  mlir::Value allReduce(mlir::Value x);
  /// The ranks' shards of `x` concatenated along `dim` (x when tp == 1).
  mlir::Value allGather(mlir::Value x, int64_t dim);

  /// A seam.block of `kind` and `index` whose region is filled by `body`
  /// (which returns the values to yield). Returns the block's results.
  llvm::SmallVector<mlir::Value>
  block(llvm::StringRef kind, int64_t index, llvm::StringRef name,
        llvm::function_ref<llvm::SmallVector<mlir::Value>()> body);
};

/// FNV-1a (32 bit) of a parameter name: its init seed.
uint64_t paramSeed(llvm::StringRef name);

/// The dtype of a model: --dtype wins, else the config's `torch_dtype`
/// (float32 | bfloat16), else `dflt`.
mlir::Type resolveDtype(ConfigReader &reader, const ImportOptions &options,
                        mlir::MLIRContext *ctx, llvm::StringRef dflt);

/// Adds `func.func @forward` to the module with named inputs (arg attribute
/// `seam.input`) and positions `b` in its body. Returns the function.
mlir::func::FuncOp
createForward(mlir::OpBuilder &b, mlir::ModuleOp module,
              llvm::ArrayRef<std::pair<llvm::StringRef, mlir::Type>> inputs);

/// Ends `func` (from createForward) with a return of `outputs`, each named
/// by the result attribute `seam.output` (seam-run names its output files
/// after them), and sets its type.
void finishForward(
    mlir::OpBuilder &b, mlir::func::FuncOp func,
    llvm::ArrayRef<std::pair<llvm::StringRef, mlir::Value>> outputs);

//===----------------------------------------------------------------------===//
// From a config source to a module (Model.cpp): seam-import's main, seam-run
// and the import-config fuzz target all go through these.
//===----------------------------------------------------------------------===//

/// The bundled models (models/*.json, compiled in), in name order.
std::vector<llvm::StringRef> bundledModels();
/// "fnet-base, fnet-large, ..." for messages.
std::string bundledModelNames();

/// Checks the options that do not depend on a config (sizes positive, a
/// known dtype); the error names the option.
llvm::Error checkOptions(const ImportOptions &options);

/// Where a config comes from: a bundled model name or a path (a config file
/// or a model directory holding config.json). Exactly one is set.
struct ConfigSource {
  std::string model, path;
  /// --name: what `seam.model` records, instead of the name the config's
  /// path or `_name_or_path` gives.
  std::string name = {};
};
/// A config's text, how errors name it ("model 'hyena'", "config 'x.json'")
/// and the name `seam.model` records (bundled name, file stem, or the
/// directory of a config.json).
struct ConfigText {
  std::string text, label, modelName;
};
llvm::Expected<ConfigText> readConfig(const ConfigSource &source);

/// JSON parse, model selection (`model_type`, or a diffusers `_class_name`
/// starting with Flux) and the builder, into `module`. Not verified, not
/// annotated; errors do not name the config.
llvm::Error buildModel(llvm::StringRef configText, const ImportOptions &options,
                       mlir::ModuleOp module);

/// Everything seam-import does before printing: checks the options, reads
/// the config, builds the module, records `seam.model` and `seam.tp`, and
/// verifies it. Errors start with the config's label. `progress` (optional)
/// hears of phases after the blocks (options.onBlock hears of blocks).
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
importModel(mlir::MLIRContext &context, const ConfigSource &source,
            const ImportOptions &options,
            llvm::function_ref<void(llvm::StringRef)> progress = {});

/// Verifies an imported module; the error is `what`, then the first
/// diagnostic (diagnostics are collected, not printed).
llvm::Error verifyImported(mlir::ModuleOp module, const llvm::Twine &what);

/// Model builders: read the config, check it against the options, and fill
/// the module. Config problems come back as one error naming the field.
llvm::Error importFNet(ConfigReader &reader, const ImportOptions &options,
                       mlir::ModuleOp module);
llvm::Error importFlux(ConfigReader &reader, const ImportOptions &options,
                       mlir::ModuleOp module);
llvm::Error importHyena(ConfigReader &reader, const ImportOptions &options,
                        mlir::ModuleOp module);

//===----------------------------------------------------------------------===//
// ONNX (Onnx.cpp): an exported graph, node by node, onto seam's ops
//===----------------------------------------------------------------------===//

struct OnnxOptions {
  /// --shape name=AxBxC: the whole shape of a graph input (fixes its
  /// symbolic dimensions).
  std::map<std::string, std::vector<int64_t>> shapes;
  /// --tp (an imported model runs unsharded; > 1 is an error that says so).
  std::optional<int64_t> tp;
};

/// True for a path seam-run and seam-import read as ONNX (`*.onnx`).
bool isOnnxPath(llvm::StringRef path);
/// Adds one `--shape name=AxBxC` to `options`.
llvm::Error parseShapeOption(llvm::StringRef text, OnnxOptions &options);

/// Reads an ONNX model (opsets 6 to 17) into `module`: `func.func @forward`
/// whose arguments are the graph inputs (`seam.input`) and whose results
/// are the graph outputs (`seam.output`), one seam op per node (primitives
/// where seam has no fused op; seam-recognize-* fuses them later), float
/// initializers as seam.param with their values. External data is read
/// relative to the model's directory. Errors name the node and its op.
llvm::Error importOnnx(llvm::StringRef path, const OnnxOptions &options,
                       mlir::ModuleOp module);
/// importOnnx into a new verified module with `seam.model` (the file's
/// stem) and `seam.tp` = 1; errors start with the model's path.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
importOnnxModel(mlir::MLIRContext &context, llvm::StringRef path,
                const OnnxOptions &options);
/// The same from the model's bytes (the ONNX loader's fuzz target).
llvm::Error importOnnxBuffer(llvm::StringRef bytes, llvm::StringRef baseDir,
                             const OnnxOptions &options, mlir::ModuleOp module);

} // namespace seamimport

#endif // SEAM_TOOLS_SEAM_IMPORT_IMPORT_H
