//===- FuzzMlirPipeline.cpp - libFuzzer target: parse, verify, seam-pipeline
//===//
//
// The input is `.mlir` text. It is parsed and verified as seam-opt would;
// a module that verifies then goes through the full seam-pipeline in both
// modes (eager, compile) with a kernel set picked from the input's hash,
// followed by seam-report, and is printed. Errors are fine (they are
// diagnostics); a crash, a sanitizer report, or a pipeline that succeeds but
// leaves IR that does not verify is a finding.
//
//===----------------------------------------------------------------------===//
#include "dialect/ncore/NcoreOps.h"
#include "dialect/seam/SeamOps.h"
#include "kernels/Registry.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "passes/Passes.h"
#include "tools/common/NestingGuard.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

using namespace mlir;

namespace {
const char *const kKernelSets[] = {
    "",
    "qkv",
    "qkv,rope,flash-attn",
    "fft,fftconv,fourier-mix",
    "qkv,rope,flash-attn,fft,fftconv,fourier-mix",
};

uint32_t fnv1a(const uint8_t *data, size_t size) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < size; ++i)
    h = (h ^ data[i]) * 16777619u;
  return h;
}

[[noreturn]] void finding(const char *what, llvm::StringRef pipeline,
                          const std::string &diags) {
  std::fprintf(stderr, "FINDING: %s\npipeline: %s\ndiagnostics:\n%s\n", what,
               pipeline.str().c_str(), diags.c_str());
  std::abort();
}
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  mlir::seam::registerSeamPassesAndPipelines();
  return 0;
}

/// The context is shared by kMaxUses inputs, then made afresh: building one
/// (registry, dialects) per input was most of an execution's cost, and a
/// context that lives forever would keep every input's uniqued types and
/// attributes. What an input leaves in the context is uniqued storage only,
/// which does not change how the next input parses or lowers.
MLIRContext &sharedContext() {
  constexpr unsigned kMaxUses = 256;
  static std::unique_ptr<MLIRContext> context;
  static unsigned uses = 0;
  if (!context || ++uses % kMaxUses == 0) {
    DialectRegistry registry;
    registry.insert<mlir::seam::SeamDialect, ncore::NcoreDialect,
                    func::FuncDialect>();
    mlir::seam::registerKernelRegistry(registry);
    context.reset();
    context = std::make_unique<MLIRContext>(registry,
                                            MLIRContext::Threading::DISABLED);
    context->allowUnregisteredDialects(false);
    context->loadAllAvailableDialects();
  }
  return *context;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Huge inputs only slow the fuzzer down; the interesting ones are small.
  if (size > 64 * 1024)
    return 0;
  MLIRContext &context = sharedContext();
  std::string diags;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    if (diags.size() < 4096)
      diags += d.str() + "\n";
    return success();
  });

  // MLIR's lexer relies on a NUL after the buffer, as files read by
  // seam-opt have; libFuzzer's data has none, a std::string does.
  std::string owned(reinterpret_cast<const char *>(data), size);
  llvm::StringRef text(owned.c_str(), size);
  // What seam-opt and seam-run refuse before parsing (the parser would
  // overflow the stack on deep nesting).
  if (!::mlir::seam::checkNesting(text))
    return 0;
  ParserConfig config(&context, /*verifyAfterParse=*/true);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, config);
  if (!module)
    return 0;

  const char *kernels = kKernelSets[fnv1a(data, size) % 5];
  for (const char *mode : {"eager", "compile"}) {
    OwningOpRef<ModuleOp> copy = module->clone();
    std::string pipeline = std::string("builtin.module(seam-pipeline{mode=") +
                           mode + " kernels=" + kernels +
                           "},seam-report{file=/dev/null})";
    PassManager pm(&context);
    // Verification is ours: a pass that reports success must leave valid IR.
    pm.enableVerifier(false);
    std::string err;
    llvm::raw_string_ostream errs(err);
    if (failed(parsePassPipeline(pipeline, pm, errs)))
      finding("pipeline does not parse", pipeline, err);
    diags.clear();
    if (failed(pm.run(*copy)))
      continue;
    if (failed(verify(*copy)))
      finding("seam-pipeline succeeded but left IR that does not verify",
              pipeline, diags);
    std::string printed;
    llvm::raw_string_ostream os(printed);
    copy->print(os);
  }
  return 0;
}
