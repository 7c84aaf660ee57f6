//===- seam-import.cpp - model IR from an HF-style config.json ------------===//
//
//   seam-import --model flux2-klein --tp 4 | seam-opt
//   seam-import --config my-fnet.json --layers 2 --seq 128 -o fnet.mlir
//
// Prints one module holding `func.func @forward`: a sequence of seam.block
// regions with every weight a seeded seam.param. A bad config or option gets
// one error naming the field, a non-zero exit and nothing on stdout.
//
//===----------------------------------------------------------------------===//
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Support/FileUtilities.h"
#include "tools/seam-import/Import.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"
#include <chrono>

using namespace mlir;
namespace cl = llvm::cl;
namespace json = llvm::json;
namespace imp = seamimport;

namespace {

/// models/*.json, embedded at build time (EmbedModels.cmake).
struct BundledModel {
  const char *name;
  const char *json;
};
const BundledModel kBundledModels[] = {
#include "EmbeddedModels.inc"
};

cl::OptionCategory importCategory("seam-import options");
cl::opt<std::string> modelName("model",
                               cl::desc("Bundled model: fnet-base, "
                                        "fnet-large, flux2-klein, hyena"),
                               cl::value_desc("name"), cl::cat(importCategory));
cl::opt<std::string> configPath("config",
                                cl::desc("HF-style config.json to import, or "
                                         "a model directory holding one"),
                                cl::value_desc("file"),
                                cl::cat(importCategory));
cl::opt<long long>
    layers("layers",
           cl::desc("Number of blocks (flux: the first N blocks, double-stream "
                    "first)"),
           cl::cat(importCategory));
cl::opt<long long> seq("seq", cl::desc("Sequence length (flux: image tokens)"),
                       cl::cat(importCategory));
cl::opt<long long> txtSeq("txt-seq", cl::desc("flux: text tokens"),
                          cl::cat(importCategory));
cl::opt<long long> batch("batch", cl::desc("Batch size (default 1)"),
                         cl::cat(importCategory));
cl::opt<long long> tp("tp",
                      cl::desc("Tensor-parallel degree: the IR is one rank's "
                               "shard (default 1)"),
                      cl::cat(importCategory));
cl::opt<std::string> dtype("dtype",
                           cl::desc("Element type: f32 or bf16 (default: the "
                                    "config's torch_dtype)"),
                           cl::cat(importCategory));
cl::opt<std::string> outputPath("o", cl::desc("Output file (default stdout)"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::cat(importCategory));
cl::opt<bool> listModels("list-models",
                         cl::desc("Print the bundled model names and exit"),
                         cl::cat(importCategory));

int fail(const llvm::Twine &message) {
  llvm::errs() << "seam-import: " << message << "\n";
  return 1;
}

std::string bundledNames() {
  std::string s;
  for (const BundledModel &m : kBundledModels)
    s += (s.empty() ? "" : ", ") + std::string(m.name);
  return s;
}

/// The builder for a config's model_type (or diffusers `_class_name`).
using ImportFn = llvm::Error (*)(imp::ConfigReader &,
                                 const imp::ImportOptions &, ModuleOp);
ImportFn selectModel(imp::ConfigReader &r, const json::Object &obj) {
  std::string type;
  if (!obj.get("model_type") && obj.get("_class_name")) {
    if (llvm::StringRef(r.string("_class_name")).starts_with("Flux"))
      return imp::importFlux;
    type = r.string("_class_name");
  } else {
    type = r.string("model_type");
  }
  if (r.failed())
    return nullptr;
  if (type == "fnet")
    return imp::importFNet;
  if (type == "flux" || type == "flux2")
    return imp::importFlux;
  if (type == "hyena" || type == "hyenadna")
    return imp::importHyena;
  r.fail("field 'model_type' must be \"fnet\", \"flux2\" or \"hyena\", got \"" +
         type + "\"");
  return nullptr;
}

/// What `seam.model` says: the bundled name, else the config file's stem,
/// or its directory's name for a `config.json` (`--config x/flux-dev`).
std::string modelLabel() {
  if (modelName.getNumOccurrences())
    return modelName;
  llvm::StringRef path = llvm::StringRef(configPath).rtrim('/');
  if (llvm::sys::fs::is_directory(path))
    return llvm::sys::path::filename(path).str();
  if (llvm::sys::path::filename(path) == "config.json" &&
      !llvm::sys::path::parent_path(path).empty())
    return llvm::sys::path::filename(llvm::sys::path::parent_path(path)).str();
  return llvm::sys::path::stem(path).str();
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  cl::HideUnrelatedOptions(importCategory);
  cl::ParseCommandLineOptions(argc, argv,
                              "seam-import: model IR from a config.json\n");

  if (listModels) {
    for (const BundledModel &m : kBundledModels)
      llvm::outs() << m.name << "\n";
    return 0;
  }

  // Progress on stderr once the import has run for 2 s (a model of
  // thousands of blocks), at most once a second.
  auto start = std::chrono::steady_clock::now();
  double lastReport = 0;
  auto progress = [&](const llvm::Twine &what) {
    double sec =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (sec < 2.0 || sec - lastReport < 1.0)
      return;
    lastReport = sec;
    llvm::errs() << llvm::formatv("seam-import: [{0:F1} s] ", sec) << what
                 << "\n";
  };

  // Options first: they do not depend on the config.
  imp::ImportOptions options;
  options.onBlock = [&](int64_t blocks) {
    progress(llvm::Twine(blocks) + " blocks built");
  };
  struct {
    cl::opt<long long> &opt;
    std::optional<int64_t> &dst;
  } sizes[] = {{layers, options.layers},
               {seq, options.seq},
               {txtSeq, options.txtSeq},
               {batch, options.batch},
               {tp, options.tp}};
  for (auto &s : sizes) {
    if (!s.opt.getNumOccurrences())
      continue;
    if (s.opt <= 0)
      return fail("--" + s.opt.ArgStr + " must be positive, got " +
                  llvm::Twine(s.opt.getValue()));
    s.dst = s.opt.getValue();
  }
  if (dtype.getNumOccurrences()) {
    if (dtype != "f32" && dtype != "bf16")
      return fail("--dtype '" + dtype + "' is not supported: use f32 or bf16");
    options.dtype = dtype.getValue();
  }

  // The config text and how errors name it.
  std::string label, text;
  if (modelName.getNumOccurrences() == configPath.getNumOccurrences())
    return fail("give exactly one of --model NAME (" + bundledNames() +
                ") or --config FILE");
  if (modelName.getNumOccurrences()) {
    const BundledModel *found = nullptr;
    for (const BundledModel &m : kBundledModels)
      if (modelName == m.name)
        found = &m;
    if (!found)
      return fail("unknown model '" + modelName +
                  "' (bundled: " + bundledNames() + ")");
    label = "model '" + modelName + "'";
    text = found->json;
  } else {
    // A model directory (the Hugging Face layout) holds config.json.
    std::string path = configPath;
    if (llvm::sys::fs::is_directory(path)) {
      llvm::SmallString<256> file(path);
      llvm::sys::path::append(file, "config.json");
      if (!llvm::sys::fs::exists(file))
        return fail("config directory '" + configPath + "' has no config.json");
      path = std::string(file);
    }
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (!buffer)
      return fail("cannot read config '" + path +
                  "': " + buffer.getError().message());
    label = "config '" + path + "'";
    text = (*buffer)->getBuffer().str();
  }

  llvm::Expected<json::Value> parsed = json::parse(text);
  if (!parsed)
    return fail(label +
                ": malformed JSON: " + llvm::toString(parsed.takeError()));
  const json::Object *obj = parsed->getAsObject();
  if (!obj)
    return fail(label +
                ": malformed config: the top level must be a JSON "
                "object, got " +
                imp::describeJson(*parsed));

  MLIRContext context;
  context.loadDialect<mlir::seam::SeamDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&context));

  imp::ConfigReader reader(*obj);
  ImportFn importModel = selectModel(reader, *obj);
  if (!importModel)
    return fail(label + ": " + llvm::toString(reader.takeError()));
  if (llvm::Error err = importModel(reader, options, *module))
    return fail(label + ": " + llvm::toString(std::move(err)));

  // What the IR is, for the tools downstream (seam-run reports it).
  OpBuilder b(&context);
  (*module)->setAttr("seam.model", b.getStringAttr(modelLabel()));
  (*module)->setAttr("seam.tp", b.getI64IntegerAttr(options.tp.value_or(1)));

  progress("verifying the module");
  std::string diagnostics;
  {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      if (diagnostics.empty())
        diagnostics = diag.str();
      return success();
    });
    if (failed(verify(*module)))
      return fail(label +
                  ": internal error: the generated IR does not "
                  "verify: " +
                  diagnostics);
  }

  std::string error;
  auto output = openOutputFile(outputPath, &error);
  if (!output)
    return fail("cannot write '" + outputPath + "': " + error);
  progress("writing the module");
  module->print(output->os(), OpPrintingFlags().assumeVerified());
  output->os() << "\n";
  output->keep();
  return 0;
}
