//===- Program.cpp - Program representation, builder and verifier ---------===//

#include "runtime/Program.h"
#include "runtime/Numerics.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <sstream>

namespace seam::rt {

std::string_view name(Target target) {
  switch (target) {
  case Target::Trn1:
    return "trn1";
  case Target::Trn2:
    return "trn2";
  }
  return "?";
}

std::optional<Target> parseTarget(std::string_view text) {
  if (text == "trn1")
    return Target::Trn1;
  if (text == "trn2")
    return Target::Trn2;
  return std::nullopt;
}

std::optional<Target> decodeTarget(uint64_t code) {
  if (code == 1)
    return Target::Trn1;
  if (code == 2)
    return Target::Trn2;
  return std::nullopt;
}

std::string_view name(BindingRole role) {
  switch (role) {
  case BindingRole::Input:
    return "input";
  case BindingRole::Output:
    return "output";
  case BindingRole::Param:
    return "param";
  case BindingRole::Constant:
    return "constant";
  case BindingRole::Scratch:
    return "scratch";
  }
  return "?";
}

std::string_view name(ConstantKind kind) {
  switch (kind) {
  case ConstantKind::Raw:
    return "raw";
  case ConstantKind::SeededUniform:
    return "seeded_uniform";
  case ConstantKind::SeededNormal:
    return "seeded_normal";
  }
  return "?";
}

uint64_t Binding::numElements() const {
  uint64_t n = 1;
  for (int64_t d : shape)
    n *= static_cast<uint64_t>(d < 0 ? 0 : d);
  return n;
}

uint64_t AccessPattern::freeElements() const {
  uint64_t n = 1;
  for (unsigned d = 0; d < numDims && d < kMaxFreeDims; ++d)
    n *= dims[d].size;
  return n;
}

AccessPattern &AccessPattern::step(unsigned level, int64_t elems) {
  if (level < kMaxLoopDepth)
    loopStep[level] = elems * static_cast<int64_t>(byteSize(dtype));
  return *this;
}

Instruction &Instruction::onEngine(Engine e) {
  engine = e;
  return *this;
}
Instruction &Instruction::waitFor(uint16_t sem, uint32_t value,
                                  std::array<int32_t, kMaxLoopDepth> step) {
  waits.push_back({sem, value, step});
  return *this;
}
Instruction &Instruction::signal(uint16_t sem, uint32_t count) {
  signalSem = sem;
  signalCount = count;
  return *this;
}
Instruction &Instruction::withBias(const AccessPattern &b) {
  return set(Src1, b);
}
Instruction &Instruction::withReduce(const AccessPattern &out) {
  return set(Aux, out);
}
Instruction &Instruction::withScalarAp(const AccessPattern &s) {
  return set(Src1, s);
}

Instruction &Instruction::then(AluOp op, float s) {
  secondOp = true;
  alu1 = op;
  scalar1 = s;
  return *this;
}

Instruction &Instruction::then(AluOp op, const AccessPattern &ap) {
  secondOp = true;
  alu1 = op;
  return set(Aux, ap);
}

uint64_t Program::hbmBytes() const {
  uint64_t end = 0;
  for (const Binding &b : bindings)
    end = std::max(end, b.hbmOffset + b.hbmSize);
  return end;
}

size_t Program::instructionCount() const {
  size_t n = 0;
  for (const auto &s : streams)
    n += s.size();
  return n;
}

std::optional<uint32_t> Program::findBinding(std::string_view n) const {
  for (uint32_t i = 0; i < bindings.size(); ++i)
    if (bindings[i].name == n)
      return i;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Instruction and access-pattern factories
//===----------------------------------------------------------------------===//

namespace isa {
Instruction make(Opcode op, std::initializer_list<AccessPattern> operands) {
  Instruction inst;
  inst.op = op;
  inst.engine = defaultEngine(op);
  unsigned slot = 0;
  for (const AccessPattern &ap : operands)
    inst.set(Instruction::Slot(slot++), ap);
  return inst;
}
using S = Instruction::Slot;

Instruction dmaCopy(const AccessPattern &dst, const AccessPattern &src) {
  return make(Opcode::DmaCopy, {dst, src});
}
Instruction matmul(const AccessPattern &dst, const AccessPattern &stationary,
                   const AccessPattern &moving, bool accumulate) {
  Instruction inst = make(Opcode::Matmul);
  inst.set(S::Dst, dst).set(S::Src0, stationary).set(S::Src1, moving);
  inst.accumulate = accumulate;
  return inst;
}
Instruction transpose(const AccessPattern &dst, const AccessPattern &src) {
  return make(Opcode::Transpose, {dst, src});
}
Instruction activation(const AccessPattern &dst, const AccessPattern &src,
                       ActFunc func, float scale, float bias) {
  Instruction inst = make(Opcode::Activation);
  inst.set(S::Dst, dst).set(S::Src0, src);
  inst.act = func;
  inst.scale = scale;
  inst.bias = bias;
  return inst;
}
Instruction tensorTensor(const AccessPattern &dst, const AccessPattern &a,
                         const AccessPattern &b, AluOp op) {
  Instruction inst = make(Opcode::TensorTensor);
  inst.set(S::Dst, dst).set(S::Src0, a).set(S::Src1, b);
  inst.alu = op;
  return inst;
}
Instruction tensorScalar(const AccessPattern &dst, const AccessPattern &src,
                         AluOp op, float scalar, bool reverse) {
  Instruction inst = make(Opcode::TensorScalar);
  inst.set(S::Dst, dst).set(S::Src0, src);
  inst.alu = op;
  inst.scalar = scalar;
  inst.reverse = reverse;
  return inst;
}
Instruction tensorReduce(const AccessPattern &dst, const AccessPattern &src,
                         AluOp op) {
  Instruction inst = make(Opcode::TensorReduce);
  inst.set(S::Dst, dst).set(S::Src0, src);
  inst.alu = op;
  return inst;
}
Instruction tensorCopy(const AccessPattern &dst, const AccessPattern &src) {
  return make(Opcode::TensorCopy, {dst, src});
}
Instruction reciprocal(const AccessPattern &dst, const AccessPattern &src) {
  return make(Opcode::Reciprocal, {dst, src});
}
Instruction iota(const AccessPattern &dst, float constant, float partitionCoef,
                 float freeCoef) {
  Instruction inst = make(Opcode::Iota);
  inst.set(S::Dst, dst);
  inst.affineConst = constant;
  inst.partitionCoef = partitionCoef;
  inst.freeCoef = freeCoef;
  return inst;
}
Instruction affineSelect(const AccessPattern &dst, const AccessPattern &src,
                         AluOp cmp, float constant, float partitionCoef,
                         float freeCoef, float onFalse) {
  Instruction inst = make(Opcode::AffineSelect);
  inst.set(S::Dst, dst).set(S::Src0, src);
  inst.alu = cmp;
  inst.affineConst = constant;
  inst.partitionCoef = partitionCoef;
  inst.freeCoef = freeCoef;
  inst.scalar = onFalse;
  return inst;
}
Instruction memset(const AccessPattern &dst, float value) {
  Instruction inst = make(Opcode::Memset);
  inst.set(S::Dst, dst);
  inst.scalar = value;
  return inst;
}
Instruction semSignal(uint16_t sem, uint32_t count) {
  return make(Opcode::SemSignal).signal(sem, count);
}
Instruction semWait(uint16_t sem, uint32_t value) {
  return make(Opcode::SemWait).waitFor(sem, value);
}
Instruction loopBegin(uint32_t tripCount) {
  Instruction inst = make(Opcode::LoopBegin);
  inst.tripCount = tripCount;
  return inst;
}
Instruction loopEnd() { return make(Opcode::LoopEnd); }
Instruction allReduce(const AccessPattern &dst, const AccessPattern &src,
                      AluOp op) {
  Instruction inst = make(Opcode::AllReduce);
  inst.set(S::Dst, dst).set(S::Src0, src);
  inst.alu = op;
  return inst;
}
Instruction allGather(const AccessPattern &dst, const AccessPattern &src) {
  return make(Opcode::AllGather, {dst, src});
}
} // namespace isa

static AccessPattern makeAp(MemSpace space, DType type, uint32_t pStart,
                            uint32_t parts, int64_t byteOffset,
                            const std::vector<FreeDim> &dims) {
  AccessPattern ap;
  ap.space = space;
  ap.dtype = type;
  ap.partitionStart = pStart;
  ap.partitions = parts;
  ap.offset = byteOffset;
  ap.numDims = static_cast<uint8_t>(std::min<size_t>(dims.size(), 4));
  for (unsigned d = 0; d < ap.numDims; ++d)
    ap.dims[d] = dims[d];
  if (dims.empty()) {
    ap.numDims = 1;
    ap.dims[0] = {1, 1};
  }
  return ap;
}

AccessPattern sbuf(DType type, uint32_t pStart, uint32_t parts,
                   int64_t byteOffset, const std::vector<FreeDim> &dims) {
  return makeAp(MemSpace::Sbuf, type, pStart, parts, byteOffset, dims);
}
AccessPattern sbufTile(DType type, uint32_t pStart, uint32_t parts,
                       int64_t byteOffset, uint32_t n) {
  return makeAp(MemSpace::Sbuf, type, pStart, parts, byteOffset, {{n, 1}});
}
AccessPattern psumTile(uint32_t pStart, uint32_t parts, int64_t byteOffset,
                       uint32_t n) {
  return makeAp(MemSpace::Psum, DType::F32, pStart, parts, byteOffset,
                {{n, 1}});
}
AccessPattern hbm(const Program &program, uint32_t binding, int64_t elemOffset,
                  uint32_t rows, int64_t rowStride,
                  const std::vector<FreeDim> &dims) {
  DType type = binding < program.bindings.size()
                   ? program.bindings[binding].dtype
                   : DType::F32;
  AccessPattern ap =
      makeAp(MemSpace::Hbm, type, 0, rows, elemOffset * byteSize(type), dims);
  ap.binding = binding;
  ap.partitionStride = rowStride;
  return ap;
}

//===----------------------------------------------------------------------===//
// ProgramBuilder
//===----------------------------------------------------------------------===//

ProgramBuilder::ProgramBuilder(std::string n, Target target) {
  prog.name = std::move(n);
  prog.target = target;
}

uint32_t ProgramBuilder::addBinding(std::string n, std::vector<int64_t> shape,
                                    DType dtype, BindingRole role) {
  Binding b;
  b.name = std::move(n);
  b.shape = std::move(shape);
  b.dtype = dtype;
  b.role = role;
  b.hbmOffset = (prog.hbmBytes() + 63) / 64 * 64;
  b.hbmSize = b.numElements() * byteSize(dtype);
  prog.bindings.push_back(std::move(b));
  return static_cast<uint32_t>(prog.bindings.size() - 1);
}

void ProgramBuilder::setConstantBytes(uint32_t binding,
                                      std::vector<uint8_t> bytes) {
  Constant c;
  c.binding = binding;
  c.kind = ConstantKind::Raw;
  c.bytes = std::move(bytes);
  prog.constants.push_back(std::move(c));
}

void ProgramBuilder::setConstantValues(uint32_t binding,
                                       const std::vector<float> &values) {
  DType type = prog.bindings.at(binding).dtype;
  std::vector<uint8_t> bytes(values.size() * byteSize(type));
  for (size_t i = 0; i < values.size(); ++i)
    storeElement(bytes.data() + i * byteSize(type), type, values[i]);
  setConstantBytes(binding, std::move(bytes));
}

void ProgramBuilder::setSeededInit(uint32_t binding, ConstantKind kind,
                                   uint64_t seed, float scale) {
  Constant c;
  c.binding = binding;
  c.kind = kind;
  c.seed = seed;
  c.scale = scale;
  prog.constants.push_back(std::move(c));
}

uint32_t ProgramBuilder::emit(const Instruction &inst) {
  auto &stream = prog.streams[static_cast<unsigned>(inst.engine)];
  stream.push_back(inst);
  return static_cast<uint32_t>(stream.size() - 1);
}

void ProgramBuilder::loopBegin(Engine engine, uint32_t tripCount) {
  emit(isa::loopBegin(tripCount).onEngine(engine));
}
void ProgramBuilder::loopEnd(Engine engine) {
  emit(isa::loopEnd().onEngine(engine));
}

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

ByteRange byteRange(const AccessPattern &ap, const uint32_t *trips,
                    unsigned depth) {
  __int128 elem = byteSize(ap.dtype);
  __int128 lo = ap.offset, hi = ap.offset;
  auto widen = [&](__int128 delta) {
    if (delta < 0)
      lo += delta;
    else
      hi += delta;
  };
  for (unsigned d = 0; d < ap.numDims && d < kMaxFreeDims; ++d)
    widen(
        static_cast<__int128>(ap.dims[d].size == 0 ? 0 : ap.dims[d].size - 1) *
        ap.dims[d].stride * elem);
  if (ap.space == MemSpace::Hbm && ap.partitions > 0)
    widen(static_cast<__int128>(ap.partitions - 1) * ap.partitionStride * elem);
  if (trips)
    for (unsigned d = 0; d < depth && d < kMaxLoopDepth; ++d)
      widen(static_cast<__int128>(trips[d] == 0 ? 0 : trips[d] - 1) *
            ap.loopStep[d]);
  return {lo, hi + elem};
}

Status checkAccess(const Program &program, const AccessPattern &ap,
                   const MemoryLimits &limits, const uint32_t *trips,
                   unsigned depth) {
  // (Each failure builds its own message: a stream constructed up front cost
  // more than the checks, once per operand of every instruction loaded.)
  if (ap.numDims < 1 || ap.numDims > kMaxFreeDims) {
    std::ostringstream os;
    os << "has " << unsigned(ap.numDims) << " free dims (1.." << kMaxFreeDims
       << " allowed)";
    return Status::failure(os.str());
  }
  for (unsigned d = 0; d < ap.numDims; ++d)
    if (ap.dims[d].size == 0)
      return Status::failure("has a free dim of size 0");
  if (ap.partitions == 0)
    return Status::failure("has 0 partitions");
  ByteRange r = byteRange(ap, trips, depth);
  __int128 capacity = 0;
  if (ap.space == MemSpace::Hbm) {
    if (ap.binding >= program.bindings.size()) {
      std::ostringstream os;
      os << "refers to binding " << ap.binding << " but the program has "
         << program.bindings.size();
      return Status::failure(os.str());
    }
    capacity = program.bindings[ap.binding].hbmSize;
  } else {
    if (static_cast<uint64_t>(ap.partitionStart) + ap.partitions >
        limits.partitions) {
      std::ostringstream os;
      os << "spans partitions [" << ap.partitionStart << ", "
         << uint64_t(ap.partitionStart) + ap.partitions << ") beyond "
         << limits.partitions;
      return Status::failure(os.str());
    }
    capacity = ap.space == MemSpace::Sbuf ? limits.sbufPartitionBytes
                                          : limits.psumPartitionBytes;
  }
  // Elements are bounded too, not only the byte span: a stride-0 (broadcast)
  // dim can name 2^40 elements within a few bytes, and the functional model
  // sizes its per-row tables from this count. A row (partition) holds at most
  // one element per byte of its memory, or 65536 for a broadcast of a small
  // tensor (a bias read into every partition).
  const __int128 bound = std::max<__int128>(capacity, 65536);
  __int128 perRow = 1; // saturated: four uint32 sizes overflow 64 bits
  for (unsigned d = 0; d < ap.numDims; ++d)
    perRow = std::min<__int128>(perRow * ap.dims[d].size, __int128(1) << 64);
  auto memory = [&] {
    return ap.space == MemSpace::Hbm
               ? "binding '" + program.bindings[ap.binding].name + "'"
               : std::string(name(ap.space)) + " per partition";
  };
  if (perRow > bound) {
    std::ostringstream os;
    os << "has "
       << static_cast<unsigned long long>(
              std::min<__int128>(perRow, UINT64_MAX))
       << " elements per partition, more than the "
       << static_cast<long long>(capacity) << " bytes of " << memory();
    return Status::failure(os.str());
  }
  if (ap.space == MemSpace::Hbm && ap.partitions > bound) {
    std::ostringstream os;
    os << "has " << ap.partitions << " rows, more than the "
       << static_cast<long long>(capacity) << " bytes of " << memory();
    return Status::failure(os.str());
  }
  if (r.lo < 0 || r.hi > capacity) {
    std::ostringstream os;
    os << name(ap.space) << " access out of bounds: bytes ["
       << static_cast<long long>(r.lo) << ", " << static_cast<long long>(r.hi)
       << ") of " << static_cast<long long>(capacity)
       << (ap.space == MemSpace::Hbm
               ? " (binding '" + program.bindings[ap.binding].name + "')"
               : std::string(" per partition"));
    return Status::failure(os.str());
  }
  return Status::ok();
}

Status verifyProgram(const Program &program, const MemoryLimits *limits) {
  std::ostringstream os;
  for (uint32_t i = 0; i < program.bindings.size(); ++i) {
    const Binding &b = program.bindings[i];
    if (!decodeDType(static_cast<uint64_t>(b.dtype)))
      return Status::failure("binding '" + b.name + "' has an unknown dtype");
    for (int64_t d : b.shape)
      if (d < 0)
        return Status::failure("binding '" + b.name +
                               "' has a negative dimension");
    if (b.hbmSize < b.numElements() * byteSize(b.dtype))
      return Status::failure("binding '" + b.name +
                             "' reserves fewer HBM bytes than its shape");
  }
  for (const Constant &c : program.constants) {
    if (c.binding >= program.bindings.size())
      return Status::failure(
          "constant refers to binding " + std::to_string(c.binding) +
          " but the program has " + std::to_string(program.bindings.size()));
    const Binding &b = program.bindings[c.binding];
    if (c.kind == ConstantKind::Raw &&
        c.bytes.size() != b.numElements() * byteSize(b.dtype))
      return Status::failure(
          "constant for binding '" + b.name + "' has " +
          std::to_string(c.bytes.size()) + " bytes, expected " +
          std::to_string(b.numElements() * byteSize(b.dtype)));
  }
  for (unsigned e = 0; e < kNumEngines; ++e) {
    const auto &stream = program.streams[e];
    uint32_t trips[kMaxLoopDepth] = {};
    unsigned depth = 0;
    for (size_t i = 0; i < stream.size(); ++i) {
      const Instruction &inst = stream[i];
      auto where = [&]() {
        std::ostringstream w;
        w << "instruction " << i << " ("
          << (decodeOpcode(static_cast<uint64_t>(inst.op)) ? mnemonic(inst.op)
                                                           : "?")
          << ") on " << name(static_cast<Engine>(e)) << ": ";
        return w.str();
      };
      if (!decodeOpcode(static_cast<uint64_t>(inst.op)))
        return Status::failure(where() + "unknown opcode " +
                               std::to_string(unsigned(inst.op)));
      if (static_cast<unsigned>(inst.engine) != e)
        return Status::failure(
            where() + "is in the " + std::string(name(Engine(e))) +
            " stream but names engine " + std::string(name(inst.engine)));
      if (!isLegalEngine(inst.op, inst.engine))
        return Status::failure(where() + "cannot run on engine " +
                               std::string(name(inst.engine)));
      if (!decodeActFunc(static_cast<uint64_t>(inst.act)))
        return Status::failure(where() + "unknown activation function");
      if (!decodeAluOp(static_cast<uint64_t>(inst.alu)))
        return Status::failure(where() + "unknown ALU op");
      if (inst.op == Opcode::AffineSelect && inst.alu != AluOp::IsGe &&
          inst.alu != AluOp::IsEqual)
        return Status::failure(
            where() + "affine_select predicate must be is_ge or is_equal");
      if (inst.secondOp && inst.op != Opcode::TensorScalar &&
          inst.op != Opcode::TensorTensorScan)
        return Status::failure(where() + "has a second operation "
                                         "(tensor_scalar and "
                                         "tensor_tensor_scan only)");
      if (inst.op == Opcode::TensorTensorScan && !inst.secondOp)
        return Status::failure(where() + "tensor_tensor_scan needs its second "
                                         "operation (op1)");
      if (inst.secondOp && !decodeAluOp(static_cast<uint64_t>(inst.alu1)))
        return Status::failure(where() + "unknown second ALU op");
      if (inst.op == Opcode::TensorScalar && inst.has(Instruction::Aux) &&
          !inst.secondOp)
        return Status::failure(where() +
                               "has a second scalar operand but no second "
                               "operation");
      unsigned required = requiredSlots(inst.op),
               allowed = allowedSlots(inst.op);
      if ((inst.apMask & required) != required ||
          (inst.apMask & ~allowed) != 0) {
        std::ostringstream m;
        m << "operand mask 0x" << std::hex << unsigned(inst.apMask)
          << " invalid (required 0x" << required << ", allowed 0x" << allowed
          << ")";
        return Status::failure(where() + m.str());
      }
      if (inst.waits.size() > kMaxWaits)
        return Status::failure(
            where() + "waits on " + std::to_string(inst.waits.size()) +
            " semaphores (at most " + std::to_string(kMaxWaits) + ")");
      for (const SemWaitSpec &w : inst.waits) {
        if (w.sem >= kNumSemaphores)
          return Status::failure(where() + "waits on semaphore " +
                                 std::to_string(w.sem) + " (only " +
                                 std::to_string(kNumSemaphores) + ")");
        if (w.carried > depth)
          return Status::failure(where() + "carried wait over " +
                                 std::to_string(w.carried) + " loops inside " +
                                 std::to_string(depth));
      }
      if (inst.signalSem < -1 || inst.signalSem >= int(kNumSemaphores))
        return Status::failure(where() + "signals semaphore " +
                               std::to_string(inst.signalSem) + " (only " +
                               std::to_string(kNumSemaphores) + ")");
      if (inst.startLevel >= 0 && unsigned(inst.startLevel) >= depth)
        return Status::failure(where() + "start level " +
                               std::to_string(inst.startLevel) + " but only " +
                               std::to_string(depth) + " enclosing loops");
      if (inst.op == Opcode::LoopBegin) {
        if (depth == kMaxLoopDepth)
          return Status::failure(where() + "loops nested deeper than " +
                                 std::to_string(kMaxLoopDepth));
        if (inst.tripCount == 0)
          return Status::failure(where() + "loop with trip count 0");
        trips[depth++] = inst.tripCount;
      } else if (inst.op == Opcode::LoopEnd) {
        if (depth == 0)
          return Status::failure(where() + "loop_end without loop_begin");
        --depth;
      }
      for (unsigned s = 0; s < Instruction::NumSlots; ++s) {
        if (!inst.has(Instruction::Slot(s)))
          continue;
        const AccessPattern &ap = inst.aps[s];
        static const char *slotNames[] = {"dst", "src0", "src1", "aux"};
        if (!decodeMemSpace(static_cast<uint64_t>(ap.space)) ||
            !decodeDType(static_cast<uint64_t>(ap.dtype)))
          return Status::failure(where() + "operand " + slotNames[s] +
                                 " has an unknown memory space or dtype");
        if (ap.space == MemSpace::Hbm && ap.binding >= program.bindings.size())
          return Status::failure(
              where() + "operand " + slotNames[s] + " refers to binding " +
              std::to_string(ap.binding) + " but the program has " +
              std::to_string(program.bindings.size()));
        if (limits) {
          Status access = checkAccess(program, ap, *limits, trips, depth);
          if (!access)
            return Status::failure(where() + "operand " + slotNames[s] + " " +
                                   access.error());
        }
      }
    }
    if (depth != 0)
      return Status::failure(std::string(name(Engine(e))) +
                             " stream ends inside a loop");
  }
  return Status::ok();
}

} // namespace seam::rt
