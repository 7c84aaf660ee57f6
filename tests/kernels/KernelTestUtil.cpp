//===- KernelTestUtil.cpp - sequential test emitter and runner ------------===//
#include "KernelTestUtil.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Verifier.h"
#ifdef SEAM_HAVE_NCORE_CODEGEN
#include "lowering/NcoreCodegen.h"
#endif
#include <cstdlib>

using namespace mlir;
using namespace mlir::ncore;

namespace seam::kt {
namespace {

rt::DType dtypeOf(Type t) {
  return t.isBF16() ? rt::DType::BF16 : rt::DType::F32;
}

/// A strided window of a root buffer, in elements. On chip dim 0 counts
/// partitions (stride 1) from `part`.
struct Acc {
  Value root;
  int64_t part = 0, off = 0;
  SmallVector<int64_t> sizes, strides;
};

class Emitter {
public:
  Emitter(ProgramOp prog, rt::Target target)
      : prog(prog), pb(prog.getSymName().str(), target) {}

  rt::Program run(std::string &error) {
    for (unsigned i = 0; i < prog.getNumArguments(); ++i) {
      auto t = cast<TileType>(prog.getArgumentTypes()[i]);
      StringRef role = prog.getArgRole(i);
      rt::BindingRole r = role == "output"     ? rt::BindingRole::Output
                          : role == "constant" ? rt::BindingRole::Constant
                          : role == "param"    ? rt::BindingRole::Param
                          : role == "scratch"  ? rt::BindingRole::Scratch
                                               : rt::BindingRole::Input;
      uint32_t b = pb.addBinding(
          "a" + std::to_string(i),
          std::vector<int64_t>(t.getShape().begin(), t.getShape().end()),
          dtypeOf(t.getElementType()), r);
      bindings[prog.getBody().getArgument(i)] = b;
    }
    for (auto &[i, vals] : ::mlir::seam::kernelConstants(prog))
      pb.setConstantValues(bindings[prog.getBody().getArgument(i)], vals);
    walk(prog.getBody().front());
    error = err;
    return pb.take();
  }

private:
  ProgramOp prog;
  rt::ProgramBuilder pb;
  DenseMap<Value, uint32_t> bindings;
  DenseMap<Value, int64_t> allocOffset;
  DenseMap<Value, int64_t> ivValue;
  SmallVector<LoopOp> loopStack;
  int64_t sbufTop = 0, psumTop = 0;
  uint32_t count = 0;
  std::string err;

  void fail(Operation *op, const std::string &what) {
    if (err.empty()) {
      std::string s;
      llvm::raw_string_ostream os(s);
      os << op->getName() << ": " << what;
      err = s;
    }
  }

  void walk(Block &block) {
    for (Operation &op : block) {
      if (!err.empty())
        return;
      if (auto a = dyn_cast<AllocOp>(op)) {
        place(a);
      } else if (auto l = dyn_cast<LoopOp>(op)) {
        loopStack.push_back(l);
        for (int64_t i = 0; i < int64_t(l.getTrips()); ++i) {
          ivValue[l.getInductionVar()] = i;
          walk(*l.getBodyBlock());
        }
        loopStack.pop_back();
      } else if (isa<InstructionOpInterface>(op)) {
        emit(&op);
      }
    }
  }

  void place(AllocOp a) {
    TileType t = a.getType();
    int64_t bytes = t.getFreeBytes();
    if (t.getSpace() == MemSpace::Sbuf) {
      allocOffset[a] = sbufTop;
      sbufTop += (bytes + 63) / 64 * 64;
      if (sbufTop > 192 * 1024)
        fail(a, "SBUF exhausted (bump allocator, " + std::to_string(sbufTop) +
                    " bytes per partition)");
    } else if (t.getSpace() == MemSpace::Psum) {
      if (psumTop / kPsumBankBytes != (psumTop + bytes - 1) / kPsumBankBytes)
        psumTop = (psumTop / kPsumBankBytes + 1) * kPsumBankBytes;
      allocOffset[a] = psumTop;
      psumTop += (bytes + 63) / 64 * 64;
      if (psumTop > kPsumPartitionBytes)
        fail(a, "PSUM exhausted");
    } else {
      bindings[a] = pb.addBinding(
          "s" + std::to_string(bindings.size()),
          std::vector<int64_t>(t.getShape().begin(), t.getShape().end()),
          dtypeOf(t.getElementType()), rt::BindingRole::Scratch);
    }
  }

  static SmallVector<int64_t> rowMajor(ArrayRef<int64_t> shape, bool onChip) {
    SmallVector<int64_t> s(shape.size(), 1);
    for (int i = int(shape.size()) - 2; i >= 0; --i)
      s[i] = s[i + 1] * shape[i + 1];
    if (onChip)
      s[0] = 1;
    return s;
  }

  int64_t evalExpr(AffineExpr e, ValueRange ivs) {
    SmallVector<int64_t> dims;
    for (Value v : ivs)
      dims.push_back(ivValue.lookup(v));
    auto m = AffineMap::get(ivs.size(), 0, e);
    return m.compose(dims)[0];
  }

  std::optional<Acc> resolve(Value v) {
    TileType t = cast<TileType>(v.getType());
    if (auto view = v.getDefiningOp<ViewOp>()) {
      auto a = resolve(view.getSource());
      if (!a)
        return std::nullopt;
      Acc r = *a;
      ArrayRef<int64_t> shape = t.getShape();
      r.sizes.assign(shape.begin(), shape.end());
      for (unsigned d = 0; d < shape.size(); ++d) {
        int64_t o = evalExpr(view.getOffsets().getResult(d), view.getIvs());
        if (d == 0 && t.isOnChip())
          r.part += o;
        else
          r.off += o * a->strides[d];
        r.strides[d] = a->strides[d] * view.getStride(d);
      }
      return r;
    }
    if (auto rs = v.getDefiningOp<ReshapeOp>()) {
      auto a = resolve(rs.getSource());
      if (!a)
        return std::nullopt;
      // Must be contiguous (row-major over the free dims).
      auto srcT = rs.getSource().getType();
      SmallVector<int64_t> want = rowMajor(a->sizes, srcT.isOnChip());
      for (unsigned d = srcT.isOnChip() ? 1 : 0; d < a->sizes.size(); ++d)
        if (a->sizes[d] > 1 && a->strides[d] != want[d])
          return std::nullopt;
      Acc r = *a;
      r.sizes.assign(t.getShape().begin(), t.getShape().end());
      r.strides = rowMajor(r.sizes, t.isOnChip());
      return r;
    }
    Acc r;
    r.root = v;
    r.sizes.assign(t.getShape().begin(), t.getShape().end());
    r.strides = rowMajor(r.sizes, t.isOnChip());
    return r;
  }

  static std::vector<rt::FreeDim> freeDims(ArrayRef<int64_t> sizes,
                                           ArrayRef<int64_t> strides) {
    std::vector<rt::FreeDim> dims;
    for (unsigned d = 0; d < sizes.size(); ++d) {
      if (sizes[d] == 1)
        continue;
      if (!dims.empty() && dims.back().stride == strides[d] * sizes[d]) {
        dims.back().size *= sizes[d];
        dims.back().stride = strides[d];
        continue;
      }
      dims.push_back({uint32_t(sizes[d]), strides[d]});
    }
    if (dims.empty())
      dims.push_back({1, 1});
    return dims;
  }

  std::optional<rt::AccessPattern> ap(Operation *op, Value v) {
    auto a = resolve(v);
    if (!a) {
      fail(op, "non-contiguous reshape");
      return std::nullopt;
    }
    TileType t = cast<TileType>(v.getType());
    rt::DType dt = dtypeOf(t.getElementType());
    if (t.isOnChip()) {
      auto dims = freeDims(ArrayRef<int64_t>(a->sizes).drop_front(),
                           ArrayRef<int64_t>(a->strides).drop_front());
      if (dims.size() > rt::kMaxFreeDims) {
        fail(op, "more than 4 free dims");
        return std::nullopt;
      }
      int64_t base = allocOffset.lookup(a->root);
      rt::AccessPattern p =
          rt::sbuf(dt, uint32_t(a->part), uint32_t(a->sizes[0]),
                   base + a->off * int64_t(rt::byteSize(dt)), dims);
      p.space = t.getSpace() == MemSpace::Psum ? rt::MemSpace::Psum
                                               : rt::MemSpace::Sbuf;
      return p;
    }
    // HBM: dim 0 are the rows unless that leaves too many free dims.
    auto it = bindings.find(a->root);
    if (it == bindings.end()) {
      fail(op, "HBM operand is not a program argument");
      return std::nullopt;
    }
    SmallVector<int64_t> sizes = a->sizes, strides = a->strides;
    uint32_t rows = 1;
    int64_t rowStride = 0;
    // Drop leading unit dims, then take the first dim as rows.
    while (sizes.size() > 1 && sizes.front() == 1) {
      sizes.erase(sizes.begin());
      strides.erase(strides.begin());
    }
    if (sizes.size() > 1) {
      rows = uint32_t(sizes.front());
      rowStride = strides.front();
      sizes.erase(sizes.begin());
      strides.erase(strides.begin());
    }
    auto dims = freeDims(sizes, strides);
    if (dims.size() > rt::kMaxFreeDims) {
      fail(op, "more than 4 free dims in HBM");
      return std::nullopt;
    }
    return rt::hbm(pb.program(), it->second, a->off, rows, rowStride, dims);
  }

  void emit(Operation *op) {
    rt::Instruction inst;
    auto set = [&](rt::Instruction::Slot s, Value v) {
      if (!v)
        return true;
      auto p = ap(op, v);
      if (!p)
        return false;
      inst.set(s, *p);
      return true;
    };
    using S = rt::Instruction;
    bool ok = true;
    auto iface = cast<InstructionOpInterface>(op);
    inst.op = rt::Opcode(uint8_t(iface.getOpcode()));
    inst.engine = rt::Engine(uint8_t(iface.getExecutionEngine()));
    if (auto o = dyn_cast<DmaCopyOp>(op)) {
      ok = set(S::Dst, o.getDst()) && set(S::Src0, o.getSrc());
    } else if (auto o = dyn_cast<MatmulOp>(op)) {
      ok = set(S::Dst, o.getDst()) && set(S::Src0, o.getStationary()) &&
           set(S::Src1, o.getMoving());
      inst.accumulate = o.getAccumulate();
      // start_level: iteration 0 of that enclosing loop overwrites.
      if (auto lvl = o->getAttrOfType<IntegerAttr>("start_level"))
        if (lvl.getInt() < int64_t(loopStack.size()) &&
            ivValue.lookup(loopStack[lvl.getInt()].getInductionVar()) == 0)
          inst.accumulate = false;
    } else if (auto o = dyn_cast<TransposeOp>(op)) {
      ok = set(S::Dst, o.getDst()) && set(S::Src0, o.getSrc());
    } else if (auto o = dyn_cast<ActivationOp>(op)) {
      ok = set(S::Dst, o.getDst()) && set(S::Src0, o.getSrc()) &&
           set(S::Src1, o.getBiasTile()) && set(S::Aux, o.getReduce());
      inst.act = rt::ActFunc(uint8_t(o.getFunc()));
      inst.scale = o.getScale().convertToFloat();
      inst.bias = o.getBias().convertToFloat();
    } else if (auto o = dyn_cast<TensorTensorOp>(op)) {
      ok = set(S::Dst, o.getDst()) && set(S::Src0, o.getLhs()) &&
           set(S::Src1, o.getRhs());
      inst.alu = rt::AluOp(uint8_t(o.getAlu()));
    } else if (auto o = dyn_cast<TensorScalarOp>(op)) {
      ok = set(S::Dst, o.getDst()) && set(S::Src0, o.getSrc()) &&
           set(S::Src1, o.getScalarTile());
      inst.alu = rt::AluOp(uint8_t(o.getAlu()));
      if (auto imm = o.getImm())
        inst.scalar = imm->convertToFloat();
      inst.reverse = o.getReverse();
    } else if (auto o = dyn_cast<TensorReduceOp>(op)) {
      ok = set(S::Dst, o.getDst()) && set(S::Src0, o.getSrc());
      inst.alu = rt::AluOp(uint8_t(o.getAlu()));
    } else if (auto o = dyn_cast<TensorCopyOp>(op)) {
      ok = set(S::Dst, o.getDst()) && set(S::Src0, o.getSrc());
    } else if (auto o = dyn_cast<ReciprocalOp>(op)) {
      ok = set(S::Dst, o.getDst()) && set(S::Src0, o.getSrc());
    } else if (auto o = dyn_cast<MemsetOp>(op)) {
      ok = set(S::Dst, o.getDst());
      inst.scalar = o.getValue().convertToFloat();
    } else if (auto o = dyn_cast<IotaOp>(op)) {
      ok = set(S::Dst, o.getDst());
      inst.affineConst = o.getBase().convertToFloat();
      inst.partitionCoef = o.getPartitionStep().convertToFloat();
      inst.freeCoef = o.getFreeStep().convertToFloat();
    } else {
      fail(op, "not supported by the test emitter");
      return;
    }
    if (!ok)
      return;
    if (count > 0)
      inst.waitFor(0, count);
    inst.signal(0, 1);
    ++count;
    pb.emit(inst);
  }
};

} // namespace

rt::Program emitSequential(ProgramOp prog, rt::Target target,
                           std::string &error) {
  return Emitter(prog, target).run(error);
}

bool useSequentialEmitter() {
#ifdef SEAM_HAVE_NCORE_CODEGEN
  const char *e = std::getenv("SEAM_KERNEL_TEST_EMITTER");
  return e && std::string(e) == "sequential";
#else
  return true;
#endif
}

RunResult runProgram(ProgramOp prog,
                     const std::map<unsigned, std::vector<float>> &inputs,
                     rt::ExecMode mode, rt::Target target) {
  RunResult r;
  if (failed(mlir::verify(prog))) {
    r.error = "program does not verify";
    return r;
  }
  rt::Program p;
  std::vector<std::string> names(prog.getNumArguments());
  if (useSequentialEmitter()) {
    p = emitSequential(prog, target, r.error);
    for (unsigned i = 0; i < names.size(); ++i)
      names[i] = "a" + std::to_string(i);
  } else {
#ifdef SEAM_HAVE_NCORE_CODEGEN
    std::string diags;
    ScopedDiagnosticHandler h(prog.getContext(), [&](Diagnostic &d) {
      diags += d.str() + "\n";
      return success();
    });
    EmitOptions opts;
    opts.constantValues = [](ProgramOp program, unsigned arg) {
      auto a = program.getArgAttrOfType<DictionaryAttr>(
          arg, ::mlir::seam::kConstantAttrName);
      return a ? ::mlir::seam::constantValues(a) : std::vector<float>();
    };
    auto compiled = compileNcoreProgram(prog, target, opts);
    if (failed(compiled))
      r.error = "compileNcoreProgram failed: " + diags;
    else
      p = std::move(*compiled);
    for (unsigned i = 0; i < names.size(); ++i)
      names[i] = bindingName(prog, i);
#endif
  }
  if (!r.error.empty())
    return r;
  r.instructions = p.instructionCount();
  rt::DeviceOptions opts;
  opts.mode = mode;
  opts.cores = 1;
  opts.collectEvents = false;
  rt::Device device(rt::Profile::builtin(p.target), opts);
  auto id = device.loadProgram(p);
  if (!id) {
    r.error = id.error();
    return r;
  }
  rt::TensorMap in;
  for (auto &[i, vals] : inputs) {
    auto t = cast<TileType>(prog.getArgumentTypes()[i]);
    in[names[i]] = rt::HostTensor{
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
  for (unsigned i = 0; i < prog.getNumArguments(); ++i)
    if (prog.getArgRole(i) == "output" && !res->outputs.empty())
      r.outputs[i] = res->outputs[0].at(names[i]).data;
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
