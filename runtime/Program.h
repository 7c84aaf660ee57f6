//===- Program.h - In-memory program of the emulated NeuronCore -*- C++ -*-===//
//
// A program is the unit the compiler emits and the runtime loads: tensor
// bindings in HBM, a constants section, and one instruction stream per
// engine. Instructions address memory through access patterns; engines
// synchronise through semaphores; loops stay loops (LoopBegin/LoopEnd in a
// stream, with per-iteration offset and semaphore-value increments).
//
//===----------------------------------------------------------------------===//

#ifndef SEAM_RUNTIME_PROGRAM_H
#define SEAM_RUNTIME_PROGRAM_H

#include "runtime/Expected.h"
#include "runtime/Isa.h"

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace seam::rt {

/// ISA format limits (part of the file format, not hardware figures).
constexpr unsigned kMaxFreeDims = 4;
constexpr unsigned kMaxLoopDepth = 4;
constexpr unsigned kMaxWaits = 4;
constexpr unsigned kNumSemaphores = 256;

enum class Target : uint8_t { Trn1 = 1, Trn2 = 2 };
std::string_view name(Target target);
std::optional<Target> parseTarget(std::string_view text);
std::optional<Target> decodeTarget(uint64_t code);

enum class BindingRole : uint8_t {
  Input = 0,
  Output = 1,
  Param = 2,
  Constant = 3,
  Scratch = 4,
};
std::string_view name(BindingRole role);

/// A named tensor living in HBM for the duration of a launch.
struct Binding {
  std::string name;
  std::vector<int64_t> shape;
  DType dtype = DType::F32;
  BindingRole role = BindingRole::Scratch;
  uint64_t hbmOffset = 0; ///< Byte offset in the program's HBM region.
  uint64_t hbmSize = 0;   ///< Bytes reserved (>= elements * dtype size).

  uint64_t numElements() const;
};

/// How a param/constant binding gets its contents at load time.
enum class ConstantKind : uint8_t {
  Raw = 0,           ///< `bytes` hold the tensor in the binding's dtype.
  SeededUniform = 1, ///< U(-scale, scale) from splitmix64(seed).
  SeededNormal = 2,  ///< N(0, scale^2) from splitmix64(seed) (Box-Muller).
};
std::string_view name(ConstantKind kind);

struct Constant {
  uint32_t binding = 0;
  ConstantKind kind = ConstantKind::Raw;
  uint64_t seed = 0;
  float scale = 0.0f;
  std::vector<uint8_t> bytes;
};

struct FreeDim {
  uint32_t size = 1;
  int64_t stride = 1; ///< In elements.
};

/// Where an operand lives and how its elements are laid out. An operand is
/// [partitions] x [free dims]; the free dims are walked row-major (last dim
/// fastest) to give each element its flat free index.
struct AccessPattern {
  MemSpace space = MemSpace::Sbuf;
  DType dtype = DType::F32;
  uint32_t binding = 0; ///< HBM only: index into Program::bindings.
  /// Bytes: within a partition (SBUF/PSUM) or within the binding (HBM).
  int64_t offset = 0;
  uint32_t partitionStart = 0; ///< SBUF/PSUM only.
  uint32_t partitions = 1;
  int64_t partitionStride = 0; ///< HBM only: elements between rows.
  uint8_t numDims = 1;
  std::array<FreeDim, kMaxFreeDims> dims{};
  /// Bytes added to `offset` per iteration of enclosing loop level d
  /// (0 = outermost loop around the instruction in its stream).
  std::array<int64_t, kMaxLoopDepth> loopStep{};

  uint64_t freeElements() const;
  uint64_t elements() const { return freeElements() * partitions; }
  uint64_t bytes() const { return elements() * byteSize(dtype); }
  /// Builder-style helper: set the loop step of level `level` in elements.
  AccessPattern &step(unsigned level, int64_t elementsPerIteration);
};

/// A wait until semaphore `sem` >= value + sum_d step[d] * iteration[d].
/// With `carried` = n > 0 it waits for an instruction of an earlier
/// iteration of the n outermost loops, and holds in their first iteration
/// (every iteration[d] = 0 for d < n), which has no earlier one: the affine
/// value there would name the producer engine's work before the loops.
struct SemWaitSpec {
  uint16_t sem = 0;
  uint32_t value = 0;
  std::array<int32_t, kMaxLoopDepth> step{};
  uint8_t carried = 0;
};

/// One instruction. Operand slots per opcode (which are required and which
/// optional: Isa.def):
///   dma_copy, tensor_copy, reciprocal, transpose: Dst <- Src0
///   matmul: Dst(psum) <- Src0(stationary [K,M])^T x Src1(moving [K,N])
///   activation: Dst <- f(Src0 * scale + (Src1 ? Src1[p] : bias)); Aux = the
///     optional [P,1] add-reduce output
///   tensor_tensor: Dst <- Src0 op Src1
///   tensor_scalar: Dst <- Src0 op (Src1 ? Src1[p] : scalar) (reverse swaps
///     the first operation's operands), then, with a second operation,
///     op1 (Aux ? Aux[p] : scalar1) on that result, in the same pass
///   tensor_reduce: Dst <- reduce(op) of Src0 over its last free dim
///   iota: Dst <- affineConst + partitionCoef*p + freeCoef*i
///   affine_select: Dst <- pred ? Src0 : scalar, pred = (affine expr op 0),
///     op in {is_ge, is_equal}
///   memset: Dst <- scalar
///   all_reduce: Dst <- reduce(op) over ranks of Src0; all_gather: Dst <-
///     concat over ranks of Src0 (rank-major)
struct Instruction {
  /// Operand slots; which ones an opcode must and may have is its Isa.def
  /// row (masks isadef::Dst, ...: bit = slot).
  enum Slot : unsigned { Dst = 0, Src0 = 1, Src1 = 2, Aux = 3, NumSlots = 4 };

  Opcode op = Opcode::SemSignal;
  Engine engine = Engine::Sync;
  std::array<AccessPattern, NumSlots> aps{};
  uint8_t apMask = 0;
  ActFunc act = ActFunc::Identity;
  AluOp alu = AluOp::Add;
  float scale = 1.0f;
  float bias = 0.0f;
  float scalar = 0.0f;
  bool accumulate = false; ///< matmul: add onto PSUM instead of overwriting.
  /// matmul with accumulate: when >= 0, iteration 0 of that enclosing loop
  /// level overwrites PSUM instead (NKI's start flag), so a K loop stays a
  /// loop.
  int8_t startLevel = -1;
  bool reverse = false; ///< tensor_scalar: scalar op in.
  /// tensor_scalar: a second operation applied to the first one's result
  /// (NKI's op1 / operand1), its scalar the Aux [P,1] operand or scalar1.
  bool secondOp = false;
  AluOp alu1 = AluOp::Add;
  float scalar1 = 0.0f;
  float affineConst = 0.0f;
  float partitionCoef = 0.0f;
  float freeCoef = 0.0f;
  uint32_t tripCount = 0; ///< loop_begin.
  std::vector<SemWaitSpec> waits;
  int32_t signalSem = -1; ///< Semaphore incremented on completion, or -1.
  uint32_t signalCount = 1;

  bool has(Slot slot) const { return apMask & (1u << slot); }
  const AccessPattern &ap(Slot slot) const { return aps[slot]; }
  Instruction &set(Slot slot, const AccessPattern &pattern) {
    aps[slot] = pattern;
    apMask |= 1u << slot;
    return *this;
  }
  Instruction &onEngine(Engine e);
  Instruction &waitFor(uint16_t sem, uint32_t value,
                       std::array<int32_t, kMaxLoopDepth> step = {});
  Instruction &signal(uint16_t sem, uint32_t count = 1);
  /// Activation: per-partition [P,1] bias operand.
  Instruction &withBias(const AccessPattern &bias);
  /// Activation: add-reduce of the output along the free dim into [P,1].
  Instruction &withReduce(const AccessPattern &out);
  /// tensor_scalar: per-partition [P,1] scalar operand.
  Instruction &withScalarAp(const AccessPattern &scalar);
  /// tensor_scalar: then `op` with `scalar` (or the [P,1] operand `ap`).
  Instruction &then(AluOp op, float scalar);
  Instruction &then(AluOp op, const AccessPattern &ap);
};

static_assert(isadef::Dst == 1u << Instruction::Dst &&
                  isadef::Src0 == 1u << Instruction::Src0 &&
                  isadef::Src1 == 1u << Instruction::Src1 &&
                  isadef::Aux == 1u << Instruction::Aux,
              "Isa.def slot masks differ from Instruction::Slot");

struct Program {
  std::string name;
  Target target = Target::Trn1;
  std::vector<Binding> bindings;
  std::vector<Constant> constants;
  std::array<std::vector<Instruction>, kNumEngines> streams;

  /// Bytes of HBM the program's bindings span.
  uint64_t hbmBytes() const;
  size_t instructionCount() const;
  std::optional<uint32_t> findBinding(std::string_view name) const;
};

/// Factories for instructions; set engine, waits and signal by chaining.
namespace isa {
/// Any opcode on its default engine, `operands` filling the slots Dst, Src0,
/// Src1, Aux in order (the order of an ncore op's tile operands); fields
/// beyond the operands are set on the result. The named factories below are
/// shorthands.
Instruction make(Opcode op, std::initializer_list<AccessPattern> operands = {});
Instruction dmaCopy(const AccessPattern &dst, const AccessPattern &src);
Instruction matmul(const AccessPattern &dst, const AccessPattern &stationary,
                   const AccessPattern &moving, bool accumulate);
Instruction transpose(const AccessPattern &dst, const AccessPattern &src);
Instruction activation(const AccessPattern &dst, const AccessPattern &src,
                       ActFunc func, float scale = 1.0f, float bias = 0.0f);
Instruction tensorTensor(const AccessPattern &dst, const AccessPattern &a,
                         const AccessPattern &b, AluOp op);
Instruction tensorScalar(const AccessPattern &dst, const AccessPattern &src,
                         AluOp op, float scalar, bool reverse = false);
Instruction tensorReduce(const AccessPattern &dst, const AccessPattern &src,
                         AluOp op);
Instruction tensorCopy(const AccessPattern &dst, const AccessPattern &src);
Instruction reciprocal(const AccessPattern &dst, const AccessPattern &src);
Instruction iota(const AccessPattern &dst, float constant, float partitionCoef,
                 float freeCoef);
Instruction affineSelect(const AccessPattern &dst, const AccessPattern &src,
                         AluOp cmp, float constant, float partitionCoef,
                         float freeCoef, float onFalse);
Instruction memset(const AccessPattern &dst, float value);
Instruction semSignal(uint16_t sem, uint32_t count = 1);
Instruction semWait(uint16_t sem, uint32_t value);
Instruction loopBegin(uint32_t tripCount);
Instruction loopEnd();
Instruction allReduce(const AccessPattern &dst, const AccessPattern &src,
                      AluOp op = AluOp::Add);
Instruction allGather(const AccessPattern &dst, const AccessPattern &src);
} // namespace isa

/// Access-pattern factories. Offsets/strides in elements unless named Bytes.
AccessPattern sbuf(DType type, uint32_t partitionStart, uint32_t partitions,
                   int64_t byteOffset, const std::vector<FreeDim> &dims);
/// Contiguous [partitions, n] tile in SBUF.
AccessPattern sbufTile(DType type, uint32_t partitionStart, uint32_t partitions,
                       int64_t byteOffset, uint32_t n);
AccessPattern psumTile(uint32_t partitionStart, uint32_t partitions,
                       int64_t byteOffset, uint32_t n);
/// HBM rows x dims of binding `binding`, starting `elemOffset` elements in.
AccessPattern hbm(const Program &program, uint32_t binding, int64_t elemOffset,
                  uint32_t rows, int64_t rowStride,
                  const std::vector<FreeDim> &dims);

/// Collects bindings, constants and instructions into a Program.
class ProgramBuilder {
public:
  ProgramBuilder(std::string name, Target target);

  /// Adds a binding; its HBM offset is assigned (64-byte aligned).
  uint32_t addBinding(std::string name, std::vector<int64_t> shape, DType dtype,
                      BindingRole role);
  void setConstantBytes(uint32_t binding, std::vector<uint8_t> bytes);
  /// Stores `values` converted to the binding's dtype.
  void setConstantValues(uint32_t binding, const std::vector<float> &values);
  void setSeededInit(uint32_t binding, ConstantKind kind, uint64_t seed,
                     float scale);

  /// Appends `inst` to the stream of its engine; returns its index there.
  uint32_t emit(const Instruction &inst);
  void loopBegin(Engine engine, uint32_t tripCount);
  void loopEnd(Engine engine);

  const Program &program() const { return prog; }
  AccessPattern hbm(uint32_t binding, int64_t elemOffset, uint32_t rows,
                    int64_t rowStride, const std::vector<FreeDim> &dims) const {
    return rt::hbm(prog, binding, elemOffset, rows, rowStride, dims);
  }
  Program take() { return std::move(prog); }

private:
  Program prog;
};

/// Static checks of a program: enum values, loop nesting, binding indices,
/// semaphore ids, operand slots per opcode and, when `limits` are given,
/// every access pattern against the memory capacities over all loop
/// iterations. The error says what is wrong, and where.
struct MemoryLimits {
  uint32_t partitions = 128;
  uint64_t sbufPartitionBytes = 0;
  uint64_t psumPartitionBytes = 0;
};
Status verifyProgram(const Program &program,
                     const MemoryLimits *limits = nullptr);

/// Byte range [lo, hi) touched by `ap` (relative to its base), given the loop
/// iteration counts of enclosing loops (outermost first) or, when `trips` is
/// null, for iteration zero only.
struct ByteRange {
  __int128 lo = 0, hi = 0;
};
ByteRange byteRange(const AccessPattern &ap, const uint32_t *trips,
                    unsigned depth);
/// Checks one access pattern (bounds at the given loop trips); the error
/// says what is wrong with it ("has 0 partitions").
Status checkAccess(const Program &program, const AccessPattern &ap,
                   const MemoryLimits &limits, const uint32_t *trips,
                   unsigned depth);

} // namespace seam::rt

#endif // SEAM_RUNTIME_PROGRAM_H
