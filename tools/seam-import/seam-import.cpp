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
#include "mlir/Support/FileUtilities.h"
#include "tools/seam-import/Import.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"
#include <chrono>

using namespace mlir;
namespace cl = llvm::cl;
namespace imp = seamimport;

namespace {

cl::OptionCategory importCategory("seam-import options");
cl::opt<std::string> modelName("model",
                               cl::desc("Bundled model (--list-models)"),
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
cl::opt<std::string>
    fourier("fourier",
            cl::desc("FNet mixing: exact (one seam.fourier_mix, the exact 2-D "
                     "DFT; default) or seed (the FNet source's structure: two "
                     "1-D FFTs, hidden then sequence, padded to the next power "
                     "of two for the radix-2 kernels)"),
            cl::cat(importCategory));
cl::opt<std::string> onnxPath(cl::Positional, cl::desc("[model.onnx]"),
                              cl::init(""), cl::cat(importCategory));
cl::list<std::string>
    shapes("shape",
           cl::desc("ONNX: the shape of a graph input, name=AxBxC (fixes "
                    "its symbolic dimensions)"),
           cl::value_desc("name=AxBxC"), cl::cat(importCategory));
cl::opt<std::string> outputPath("o", cl::desc("Output file (default stdout)"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::cat(importCategory));
cl::opt<std::string> nameOpt(
    "name",
    cl::desc("The name seam.model records (default: the bundled name, the "
             "config file's stem, or its model directory: for a diffusers "
             "transformer/ directory the repository around it)"),
    cl::value_desc("name"), cl::cat(importCategory));
cl::opt<bool> listModels("list-models",
                         cl::desc("Print the bundled model names and exit"),
                         cl::cat(importCategory));

int fail(const llvm::Twine &message) {
  llvm::errs() << "seam-import: " << message << "\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  cl::HideUnrelatedOptions(importCategory);
  static const std::string modelHelp =
      "Bundled model: " + imp::bundledModelNames();
  modelName.setDescription(modelHelp);
  cl::ParseCommandLineOptions(argc, argv,
                              "seam-import: model IR from a config.json\n");

  if (listModels) {
    for (llvm::StringRef name : imp::bundledModels())
      llvm::outs() << name << "\n";
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

  imp::ImportOptions options;
  struct {
    cl::opt<long long> &opt;
    std::optional<int64_t> &dst;
  } sizes[] = {{layers, options.layers},
               {seq, options.seq},
               {txtSeq, options.txtSeq},
               {batch, options.batch},
               {tp, options.tp}};
  for (auto &s : sizes)
    if (s.opt.getNumOccurrences())
      s.dst = s.opt.getValue();
  if (dtype.getNumOccurrences())
    options.dtype = dtype.getValue();
  if (fourier.getNumOccurrences())
    options.fourier = fourier.getValue();
  options.onBlock = [&](int64_t blocks) {
    progress(llvm::Twine(blocks) + " blocks built");
  };
  options.onWarning = [](const std::string &w) {
    llvm::errs() << "seam-import: warning: " << w << "\n";
  };

  MLIRContext context;
  if (!onnxPath.empty()) {
    if (!imp::isOnnxPath(onnxPath))
      return fail("'" + onnxPath +
                  "' is not a .onnx file (a config goes to --config)");
    if (!modelName.empty() || !configPath.empty())
      return fail("give one of --model, --config or a model.onnx");
    for (auto *o : {&layers, &seq, &txtSeq, &batch})
      if (o->getNumOccurrences())
        return fail("--" + o->ArgStr +
                    " shapes a config import; an ONNX model's shapes are "
                    "its own (fix symbolic ones with --shape)");
    if (dtype.getNumOccurrences() || fourier.getNumOccurrences())
      return fail("--dtype and --fourier shape a config import, not an ONNX "
                  "model");
  } else if (shapes.getNumOccurrences()) {
    return fail("--shape applies to an ONNX model (seam-import model.onnx)");
  }
  llvm::Expected<OwningOpRef<ModuleOp>> module = OwningOpRef<ModuleOp>();
  if (!onnxPath.empty()) {
    imp::OnnxOptions onnxOptions;
    onnxOptions.tp = options.tp;
    for (const std::string &s : shapes)
      if (auto e = imp::parseShapeOption(s, onnxOptions))
        return fail(llvm::toString(std::move(e)));
    module = imp::importOnnxModel(context, onnxPath, onnxOptions);
  } else {
    module = imp::importModel(
        context, imp::ConfigSource{modelName, configPath, nameOpt}, options,
        [&](llvm::StringRef what) { progress(what); });
  }
  if (!module)
    return fail(llvm::toString(module.takeError()));
  // --name names an ONNX model too (a config's is set by importModel).
  if (!nameOpt.empty() && !onnxPath.empty())
    (**module)->setAttr("seam.model",
                        mlir::StringAttr::get(&context, nameOpt.getValue()));

  std::string error;
  auto output = openOutputFile(outputPath, &error);
  if (!output)
    return fail("cannot write '" + outputPath + "': " + error);
  progress("writing the module");
  (*module)->print(output->os(), OpPrintingFlags().assumeVerified());
  output->os() << "\n";
  output->keep();
  return 0;
}
