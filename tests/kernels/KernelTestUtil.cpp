//===- KernelTestUtil.cpp - compile and run kernel programs ---------------===//
#include "KernelTestUtil.h"
#include "lowering/target/NcoreCodegen.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::ncore;

namespace seam::kt {

RunResult runProgram(ProgramOp prog,
                     const std::map<unsigned, std::vector<float>> &inputs,
                     rt::ExecMode mode, rt::Target target) {
  return runProgramOnRanks(prog, {inputs}, mode, target);
}

RunResult runProgramOnRanks(
    ProgramOp prog,
    const std::vector<std::map<unsigned, std::vector<float>>> &inputsPerRank,
    rt::ExecMode mode, rt::Target target) {
  RunResult r;
  unsigned ranks = std::max<unsigned>(1, unsigned(inputsPerRank.size()));
  if (failed(mlir::verify(prog))) {
    r.error = "program does not verify";
    return r;
  }
  rt::Program p;
  std::vector<std::string> names(prog.getNumArguments());
  std::string diags;
  ScopedDiagnosticHandler h(prog.getContext(), [&](Diagnostic &d) {
    diags += d.str() + "\n";
    return success();
  });
  EmitOptions emitOpts;
  emitOpts.constantValues = [](ProgramOp program, unsigned arg) {
    auto a = program.getArgAttrOfType<DictionaryAttr>(
        arg, ::mlir::seam::kConstantAttrName);
    return a ? ::mlir::seam::constantValues(a) : std::vector<float>();
  };
  auto compiled = compileNcoreProgram(prog, target, emitOpts);
  if (failed(compiled))
    r.error = "compileNcoreProgram failed: " + diags;
  else
    p = std::move(*compiled);
  for (unsigned i = 0; i < names.size(); ++i)
    names[i] = bindingName(prog, i);
  if (!r.error.empty())
    return r;
  r.instructions = p.instructionCount();
  rt::DeviceOptions opts;
  opts.mode = mode;
  opts.cores = ranks;
  opts.collectEvents = false;
  rt::Device device(rt::Profile::builtin(p.target), opts);
  auto id = device.loadProgram(p, ranks);
  if (!id) {
    r.error = id.error();
    return r;
  }
  std::vector<rt::TensorMap> in(ranks);
  for (unsigned rank = 0; rank < inputsPerRank.size(); ++rank)
    for (auto &[i, vals] : inputsPerRank[rank]) {
      auto t = cast<TileType>(prog.getArgumentTypes()[i]);
      in[rank][names[i]] = rt::HostTensor{
          std::vector<int64_t>(t.getShape().begin(), t.getShape().end()), vals};
    }
  auto res = device.launch(*id, in);
  if (!res) {
    r.error = res.error();
    return r;
  }
  if (res->fault) {
    r.error = res->fault->str();
    return r;
  }
  r.nonFinite = res->nonFiniteWrites;
  for (auto &[name, count] : res->nonFiniteOutputs)
    r.nonFiniteOutput += count;
  r.deviceNs = res->deviceNs;
  if (!res->timeline.cores.empty())
    r.tensorBusyNs =
        res->timeline.cores[0].busyNs[unsigned(rt::Engine::Tensor)];
  r.rankOutputs.resize(res->outputs.size());
  for (size_t rank = 0; rank < res->outputs.size(); ++rank)
    for (unsigned i = 0; i < prog.getNumArguments(); ++i)
      if (prog.getArgRole(i) == "output")
        r.rankOutputs[rank][i] = res->outputs[rank].at(names[i]).data;
  if (!r.rankOutputs.empty())
    r.outputs = r.rankOutputs.front();
  r.ok = true;
  return r;
}

KernelEnv::KernelEnv() : builder(&ctx) {
  ctx.loadDialect<::mlir::seam::SeamDialect, NcoreDialect>();
  module = ModuleOp::create(UnknownLoc::get(&ctx));
}

RankedTensorType KernelEnv::tensor(llvm::ArrayRef<int64_t> shape, Type elt) {
  return RankedTensorType::get(shape, elt ? elt : f32());
}

ProgramOp KernelEnv::build(llvm::StringRef kernel,
                           const ::mlir::seam::KernelSignature &sig) {
  auto sym = ::mlir::seam::getOrBuildKernelProgram(*module, kernel, sig);
  if (failed(sym))
    return {};
  return module->lookupSymbol<ProgramOp>(sym->getValue());
}

} // namespace seam::kt
