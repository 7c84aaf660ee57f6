//===- FuzzImportOnnx.cpp - libFuzzer target: seam-import on an ONNX model ===//
//
// The input is an ONNX ModelProto's bytes. It goes through what
// `seam-import model.onnx` does (seamimport::importOnnxBuffer: protobuf
// parse, opset checks, node by node mapping) and the built module is
// verified. A model the importer accepts must give IR that verifies, and a
// model it refuses must say why: an empty error, a crash or a sanitizer
// report is a finding. External data is looked up under a directory that
// does not exist, so a fuzzed location never reads the machine's files.
//
//===----------------------------------------------------------------------===//
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "tools/seam-import/Import.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>

using namespace mlir;
namespace imp = seamimport;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 64 * 1024)
    return 0;
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  MLIRContext context(MLIRContext::Threading::DISABLED);
  context.loadDialect<mlir::seam::SeamDialect, func::FuncDialect>();
  std::string diags;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    if (diags.size() < 4096)
      diags += d.str() + "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&context));
  imp::OnnxOptions options;
  if (llvm::Error err = imp::importOnnxBuffer(
          bytes, "/nonexistent-seam-fuzz-dir", options, *module)) {
    std::string msg = llvm::toString(std::move(err));
    if (msg.empty()) {
      fprintf(stderr, "ONNX import failed without a message\n");
      abort();
    }
    return 0;
  }
  if (failed(verify(*module))) {
    fprintf(stderr, "accepted ONNX model gives invalid IR:\n%s", diags.c_str());
    abort();
  }
  return 0;
}
