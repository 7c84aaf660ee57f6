//===- NcoreEmitPasses.cpp - ncore-emit and ncore-dump --------------------===//
#include "lowering/target/NcoreEmit.h"
#include "lowering/target/NcoreTargetPasses.h"
#include "passes/Statistics.h"
#include "runtime/ProgramFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <sstream>

namespace mlir::ncore {
#define GEN_PASS_DEF_NCOREEMIT
#define GEN_PASS_DEF_NCOREDUMP
#include "lowering/target/NcoreTargetPasses.h.inc"
} // namespace mlir::ncore

using namespace mlir;
using namespace mlir::ncore;
namespace rt = ::seam::rt;

namespace {

/// Emits every defined program of `module`; calls `use` on each.
LogicalResult forEachProgram(
    ModuleOp module, const Pass::Option<std::string> &target, StringRef pass,
    llvm::function_ref<LogicalResult(ProgramOp, rt::Program &)> use) {
  FailureOr<rt::Profile> profile =
      getTargetProfile(module, target.getValue(), target.hasValue(), pass);
  if (failed(profile))
    return failure();
  WalkResult r = module.walk([&](ProgramOp program) {
    if (program.isDeclaration())
      return WalkResult::advance();
    FailureOr<rt::Program> p = emitProgram(program, profile->target);
    if (failed(p) || failed(use(program, *p)))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

class NcoreEmitPass : public mlir::ncore::impl::NcoreEmitBase<NcoreEmitPass> {
public:
  using NcoreEmitBase::NcoreEmitBase;
  void runOnOperation() override {
    if (auto ec = llvm::sys::fs::create_directories(dir)) {
      getOperation().emitError()
          << "cannot create " << dir << ": " << ec.message();
      return signalPassFailure();
    }
    auto write = [&](ProgramOp program, rt::Program &p) -> LogicalResult {
      SmallString<256> path(dir);
      llvm::sys::path::append(path, p.name + ".seamprg");
      rt::Status st = rt::writeProgramFile(p, std::string(path));
      if (!st)
        return program.emitOpError()
               << "cannot write " << path << ": " << st.error();
      ++numWritten;
      numInstructions += static_cast<int64_t>(p.instructionCount());
      return success();
    };
    if (failed(forEachProgram(getOperation(), target, "ncore-emit", write)))
      signalPassFailure();
  }

private:
  mlir::seam::PassCounter numWritten{"ncore-emit", "programs",
                                     "Program files written"};
  mlir::seam::PassCounter numInstructions{
      "ncore-emit", "instructions", "Instructions in the written programs"};
};

class NcoreDumpPass : public mlir::ncore::impl::NcoreDumpBase<NcoreDumpPass> {
public:
  using NcoreDumpBase::NcoreDumpBase;
  void runOnOperation() override {
    std::error_code ec;
    llvm::raw_fd_ostream os(file, ec);
    if (ec) {
      getOperation().emitError()
          << "cannot open " << file << ": " << ec.message();
      return signalPassFailure();
    }
    auto dump = [&](ProgramOp, rt::Program &p) -> LogicalResult {
      std::ostringstream ss;
      rt::dumpProgram(p, ss);
      os << ss.str();
      return success();
    };
    if (failed(forEachProgram(getOperation(), target, "ncore-dump", dump)))
      signalPassFailure();
    os.flush();
  }
};

} // namespace
