//===- Model.cpp - from a config source to a verified module --------------===//
//
// What seam-import does before printing, as a library that seam-run links
// (no child process) and the import-config fuzz target shares: the bundled
// configs, reading a config file or model directory, choosing the builder
// from `model_type`, building, annotating and verifying.
//
//===----------------------------------------------------------------------===//
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "tools/seam-import/Import.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace seamimport;
namespace json = llvm::json;

namespace {

/// models/*.json, embedded at build time (EmbedModels.cmake).
struct BundledModel {
  const char *name;
  const char *json;
};
const BundledModel kBundledModels[] = {
#include "EmbeddedModels.inc"
};

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The builder for a config's model_type (or diffusers `_class_name`).
using BuildFn = llvm::Error (*)(ConfigReader &, const ImportOptions &,
                                ModuleOp);
BuildFn selectModel(ConfigReader &r, const json::Object &obj) {
  std::string type;
  const char *accepted =
      "\"fnet\", \"flux\", \"flux2\", \"hyena\" or \"hyenadna\" (or a "
      "diffusers _class_name starting with \"Flux\")";
  if (!obj.get("model_type") && obj.get("_class_name")) {
    if (llvm::StringRef(r.string("_class_name")).starts_with("Flux"))
      return importFlux;
    if (r.failed())
      return nullptr;
    r.fail("field '_class_name' (\"" + r.string("_class_name") +
           "\") names no model seam imports; field 'model_type' must be " +
           accepted);
    return nullptr;
  }
  // The original hyena-dna configs (HazyResearch/hyena-dna) have no
  // model_type: their operator is the object "layer": {"_name_": "hyena"}.
  if (!obj.get("model_type"))
    if (const json::Object *layer = obj.getObject("layer"))
      if (auto name = layer->getString("_name_"); name && *name == "hyena")
        return importHyena;
  type = r.string("model_type");
  if (r.failed())
    return nullptr;
  if (type == "fnet")
    return importFNet;
  if (type == "flux" || type == "flux2")
    return importFlux;
  if (type == "hyena" || type == "hyenadna")
    return importHyena;
  r.fail("field 'model_type' must be " + llvm::Twine(accepted) + ", got \"" +
         type + "\"");
  return nullptr;
}

/// The diffusers pipeline components that hold a model's config.json.
constexpr llvm::StringLiteral kComponents[] = {"transformer", "unet"};

/// For a directory without config.json: the subdirectories that have one
/// (a diffusers pipeline's root holds model_index.json and transformer/).
std::string componentHint(llvm::StringRef dir) {
  std::vector<std::string> found;
  for (llvm::StringRef sub : kComponents) {
    llvm::SmallString<256> file(dir);
    llvm::sys::path::append(file, sub, "config.json");
    if (llvm::sys::fs::exists(file))
      found.push_back(sub.str());
  }
  if (found.empty())
    return "";
  llvm::SmallString<256> index(dir);
  llvm::sys::path::append(index, "model_index.json");
  std::string what = llvm::sys::fs::exists(index)
                         ? " (a diffusers pipeline: its model is in a "
                           "component directory)"
                         : "";
  llvm::SmallString<256> suggestion(dir);
  llvm::sys::path::append(suggestion, found.front());
  return what + "; give --config " + std::string(suggestion);
}

/// The name `seam.model` records for a config.json in `dir`: the directory,
/// or for a diffusers component directory ("transformer") the repository
/// around it: its directory, the repository of a Hugging Face cache
/// snapshot (models--org--name/snapshots/HASH/transformer), or the config's
/// `_name_or_path`.
std::string nameOfModelDirectory(llvm::StringRef dir, llvm::StringRef text) {
  namespace path = llvm::sys::path;
  llvm::SmallString<256> abs(dir);
  // Best effort: without the working directory the path stays relative, and
  // its own last component still names the model.
  if (std::error_code ec = llvm::sys::fs::make_absolute(abs))
    (void)ec;
  path::remove_dots(abs, /*remove_dot_dot=*/true);
  llvm::StringRef base = path::filename(abs);
  if (!llvm::is_contained(kComponents, base))
    return base.str();
  llvm::StringRef repo = path::parent_path(abs);
  // A Hugging Face cache: .../models--org--name/snapshots/HASH/transformer.
  if (path::filename(path::parent_path(repo)) == "snapshots") {
    llvm::StringRef cached =
        path::filename(path::parent_path(path::parent_path(repo)));
    if (cached.consume_front("models--") && !cached.empty())
      return cached.rsplit("--").second.empty()
                 ? cached.str()
                 : cached.rsplit("--").second.str();
  }
  // `_name_or_path` ("black-forest-labs/FLUX.1-dev", or the path it was
  // saved from, ".../FLUX.1-dev/transformer").
  if (llvm::Expected<json::Value> v = json::parse(text)) {
    if (const json::Object *o = v->getAsObject())
      if (auto n = o->getString("_name_or_path")) {
        llvm::StringRef name = n->rtrim('/');
        if (llvm::is_contained(kComponents, path::filename(name)))
          name = path::parent_path(name);
        if (!path::filename(name).empty())
          return path::filename(name).str();
      }
  } else {
    llvm::consumeError(v.takeError());
  }
  if (!path::filename(repo).empty() && path::filename(repo) != "/")
    return path::filename(repo).str();
  return base.str();
}

} // namespace

std::vector<llvm::StringRef> seamimport::bundledModels() {
  std::vector<llvm::StringRef> names;
  for (const BundledModel &m : kBundledModels)
    names.push_back(m.name);
  return names;
}

std::string seamimport::bundledModelNames() {
  std::string s;
  for (const BundledModel &m : kBundledModels)
    s += (s.empty() ? "" : ", ") + std::string(m.name);
  return s;
}

llvm::Error seamimport::checkOptions(const ImportOptions &o) {
  const std::pair<const char *, const std::optional<int64_t> *> sizes[] = {
      {"--layers", &o.layers},
      {"--seq", &o.seq},
      {"--txt-seq", &o.txtSeq},
      {"--batch", &o.batch},
      {"--tp", &o.tp}};
  for (auto [name, value] : sizes)
    if (*value && **value <= 0)
      return error(llvm::Twine(name) + " must be positive, got " +
                   llvm::Twine(**value));
  if (o.dtype && *o.dtype != "f32" && *o.dtype != "bf16")
    return error("--dtype '" + *o.dtype +
                 "' is not supported: use f32 or bf16");
  if (o.fourier && *o.fourier != "exact" && *o.fourier != "seed")
    return error("--fourier '" + *o.fourier +
                 "' is not supported: use exact (one fourier_mix, the exact "
                 "2-D DFT) or seed (the FNet source's two padded 1-D FFTs)");
  return llvm::Error::success();
}

llvm::Expected<ConfigText> seamimport::readConfig(const ConfigSource &src) {
  ConfigText c;
  if (!src.model.empty() == !src.path.empty())
    return error("give exactly one of --model NAME (" + bundledModelNames() +
                 ") or --config FILE");
  if (!src.model.empty()) {
    for (const BundledModel &m : kBundledModels)
      if (src.model == m.name) {
        c.text = m.json;
        c.label = "model '" + src.model + "'";
        c.modelName = src.model;
        return c;
      }
    return error("unknown model '" + src.model +
                 "' (bundled: " + bundledModelNames() + ")");
  }
  // A model directory (the Hugging Face layout) holds config.json.
  std::string path = src.path;
  llvm::StringRef trimmed = llvm::StringRef(src.path).rtrim('/');
  std::string dir;
  if (llvm::sys::fs::is_directory(path)) {
    llvm::SmallString<256> file(path);
    llvm::sys::path::append(file, "config.json");
    if (!llvm::sys::fs::exists(file))
      return error("config directory '" + src.path + "' has no config.json" +
                   componentHint(trimmed));
    path = std::string(file);
    dir = trimmed.str();
  } else if (llvm::sys::path::filename(trimmed) == "config.json" &&
             !llvm::sys::path::parent_path(trimmed).empty()) {
    dir = llvm::sys::path::parent_path(trimmed).str();
  } else {
    c.modelName = llvm::sys::path::stem(trimmed).str();
  }
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return error("cannot read config '" + path +
                 "': " + buffer.getError().message());
  c.label = "config '" + path + "'";
  c.text = (*buffer)->getBuffer().str();
  if (!dir.empty())
    c.modelName = nameOfModelDirectory(dir, c.text);
  if (!src.name.empty())
    c.modelName = src.name;
  return c;
}

llvm::Error seamimport::buildModel(llvm::StringRef text,
                                   const ImportOptions &options,
                                   ModuleOp module) {
  llvm::Expected<json::Value> parsed = json::parse(text);
  if (!parsed)
    return error("malformed JSON: " + llvm::toString(parsed.takeError()));
  const json::Object *obj = parsed->getAsObject();
  if (!obj)
    return error("malformed config: the top level must be a JSON object, "
                 "got " +
                 describeJson(*parsed));
  ConfigReader reader(*obj);
  BuildFn build = selectModel(reader, *obj);
  if (!build)
    return reader.takeError();
  if (options.fourier && build != importFNet)
    return error("--fourier shapes FNet's mixing; this model is not an FNet");
  return build(reader, options, module);
}

llvm::Expected<OwningOpRef<ModuleOp>>
seamimport::importModel(MLIRContext &context, const ConfigSource &src,
                        const ImportOptions &options,
                        llvm::function_ref<void(llvm::StringRef)> progress) {
  if (llvm::Error err = checkOptions(options))
    return err;
  llvm::Expected<ConfigText> config = readConfig(src);
  if (!config)
    return config.takeError();
  context.loadDialect<mlir::seam::SeamDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&context));
  // Warnings name the config, as errors do.
  ImportOptions labelled = options;
  if (options.onWarning)
    labelled.onWarning = [&](const std::string &w) {
      options.onWarning(config->label + ": " + w);
    };
  if (llvm::Error err = buildModel(config->text, labelled, *module))
    return error(config->label + ": " + llvm::toString(std::move(err)));

  // What the IR is, for the tools downstream (seam-run reports it and takes
  // its TP degree from it).
  OpBuilder b(&context);
  (*module)->setAttr("seam.model", b.getStringAttr(config->modelName));
  (*module)->setAttr("seam.tp", b.getI64IntegerAttr(options.tp.value_or(1)));

  if (progress)
    progress("verifying the module");
  if (llvm::Error err = verifyImported(
          *module,
          config->label + ": internal error: the generated IR does not verify"))
    return err;
  return module;
}

llvm::Error seamimport::verifyImported(ModuleOp module,
                                       const llvm::Twine &what) {
  std::string diagnostics;
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &diag) {
    if (diagnostics.empty())
      diagnostics = diag.str();
    return success();
  });
  if (failed(verify(module)))
    return error(what + ": " + diagnostics);
  return llvm::Error::success();
}
