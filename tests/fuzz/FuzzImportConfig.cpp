//===- FuzzImportConfig.cpp - libFuzzer target: seam-import on a config ---===//
//
// The input is a config.json. It goes through what seam-import does:
// seamimport::buildModel (JSON parse, model selection, the model builder;
// the SeamImport library that seam-import and seam-run link), then
// verification of the built module.
// A config the importer accepts must give IR that verifies: anything else is
// a finding, like a crash or a sanitizer report. Options (--layers, --seq,
// --tp, ...) come from the input's hash so they are fuzzed too.
//
//===----------------------------------------------------------------------===//
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "tools/seam-import/Import.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>

using namespace mlir;
namespace json = llvm::json;
namespace imp = seamimport;

namespace {
uint32_t fnv1a(const uint8_t *data, size_t size) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < size; ++i)
    h = (h ^ data[i]) * 16777619u;
  return h;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 16 * 1024)
    return 0;
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);

  // Options: mostly none (the config decides), sometimes small overrides
  // that keep models small, sometimes the driver's extremes.
  imp::ImportOptions options;
  uint32_t h = fnv1a(data, size);
  switch (h % 8) {
  case 0:
    options.layers = 1;
    options.seq = 1 + (h >> 8) % 300;
    break;
  case 1:
    options.tp = 1 + (h >> 8) % 8;
    options.layers = 1;
    break;
  case 2:
    options.dtype = "bf16";
    options.batch = 1 + (h >> 8) % 3;
    options.layers = 2;
    break;
  case 3:
    options.seq = int64_t(1) << 40;
    options.layers = 1;
    break;
  default:
    // Config as is, but never more than two blocks: a fuzzed config can
    // legitimately ask for thousands, which is slow rather than wrong.
    options.layers = 1 + (h >> 8) % 2;
    break;
  }

  MLIRContext context(MLIRContext::Threading::DISABLED);
  context.loadDialect<mlir::seam::SeamDialect, func::FuncDialect>();
  std::string diags;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    if (diags.size() < 4096)
      diags += d.str() + "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&context));
  if (llvm::Error err = imp::buildModel(text, options, *module)) {
    std::string msg = llvm::toString(std::move(err));
    if (msg.empty()) {
      std::fprintf(stderr, "FINDING: import failed with an empty message\n");
      std::abort();
    }
    return 0;
  }
  if (failed(verify(*module))) {
    std::fprintf(
        stderr, "FINDING: accepted config gives IR that does not verify:\n%s\n",
        diags.c_str());
    std::abort();
  }
  std::string printed;
  llvm::raw_string_ostream os(printed);
  module->print(os, OpPrintingFlags().assumeVerified());
  return 0;
}
