//===- KernelBuilder.h - ncore kernels the way NKI reads --------*- C++ -*-===//
//
// A kernel is written against this builder the way an NKI kernel is written
// against nki.isa: allocate SBUF/PSUM tiles, open loops, take windows of
// tiles (views whose offsets are affine in the loop indices), move data with
// DMA and compute with matmul / activation / tensor ops. Each call emits one
// `ncore` op; nothing is scheduled or placed here (that is ncore-allocate and
// ncore-schedule's job).
//
//   KernelBuilder kb(builder, loc, program);
//   Value x = kb.sbuf({128, 512}, f32);
//   kb.loop(4, [&](Ix b) {
//     kb.dma(x, kb.view(in, {1, 128, 512}, {b, 0, 0}));
//     kb.matmul(acc, w, x);
//     kb.copy(y, acc);
//     kb.dma(kb.view(out, {1, 128, 512}, {b, 0, 0}), y);
//   });
//
// Constant matrices (DFT cos/sin, twiddles, identity) are HBM arguments with
// role "constant" described by a `seam.constant` attribute (see
// kernels/Constants.h); `constant(...)` appends (and dedups) them.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_KERNELS_KERNELBUILDER_H
#define SEAM_KERNELS_KERNELBUILDER_H

#include "dialect/ncore/NcoreOps.h"
#include "kernels/Constants.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include <initializer_list>

namespace mlir::seam {

/// SBUF bytes per partition a kernel plans its tiles in: half of the
/// smallest SBUF of the hardware profiles (trn1: 192 KiB per partition),
/// the other half left to the tiles a caller keeps live across the call
/// (ncore-allocate places a kernel call like a tile live at it). A planning
/// budget, not a hardware figure; tests/kernels check it against the
/// profiles.
constexpr int64_t kKernelSbufBudgetBytes = 96 * 1024;

/// Independent DMA streams a kernel keeps in flight when it moves many
/// separate windows (one per sequence) from inside a loop nest: enough to
/// occupy every DMA queue of the profiles (16 engines; tests/kernels check
/// it against them). A tuning figure, not read by the timing model.
constexpr int64_t kDmaStreams = 16;

/// An index: constant + sum of coefficient * loop induction variable (what a
/// view offset may be).
struct Ix {
  int64_t c = 0;
  SmallVector<std::pair<Value, int64_t>, 2> terms;

  Ix(int64_t c = 0) : c(c) {}
  static Ix of(Value iv) {
    Ix i;
    i.terms.push_back({iv, 1});
    return i;
  }
  Ix operator+(const Ix &o) const;
  Ix operator*(int64_t k) const;
  Ix operator+(int64_t k) const { return *this + Ix(k); }
};

class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc, ncore::ProgramOp program);

  OpBuilder &builder() { return b; }
  MLIRContext *ctx() { return b.getContext(); }
  ncore::ProgramOp program() { return prog; }
  Value arg(unsigned i) { return prog.getBody().getArgument(i); }
  Type f32() { return b.getF32Type(); }
  Type bf16() { return b.getBF16Type(); }

  /// An HBM constant argument generated from `spec` (appended once).
  Value constant(const ConstantSpec &spec, Type dtype);

  // Memory.
  Value sbuf(ArrayRef<int64_t> shape, Type dtype);
  /// An HBM scratch tensor of the kernel (an `ncore.alloc` in HBM).
  Value hbmScratch(ArrayRef<int64_t> shape, Type dtype, StringRef name);
  /// A PSUM accumulator (always f32).
  Value psum(ArrayRef<int64_t> shape);
  /// The window `shape` of `src` at `offsets` (one per dim), `strides`
  /// defaulting to 1.
  Value view(Value src, ArrayRef<int64_t> shape, ArrayRef<Ix> offsets,
             ArrayRef<int64_t> strides = {});
  /// Regroups the free dims (or HBM dims) of a contiguous tile.
  Value reshape(Value src, ArrayRef<int64_t> shape);
  /// The tile type of a value.
  static ncore::TileType tile(Value v) {
    return cast<ncore::TileType>(v.getType());
  }

  /// The `n` elements of `src` (HBM, any shape) on every one of
  /// `partitions` partitions: SBUF [partitions, n] in the dtype of `src`.
  /// DMA reads each element once; the Tensor engine broadcasts across
  /// partitions with a rank-1 matmul ones^T x row (exact: one product per
  /// output).
  Value broadcastToPartitions(Value src, int64_t partitions);

  // Control.
  /// An ncore.loop of `trips` iterations; `body` gets the index.
  void loop(int64_t trips, llvm::function_ref<void(Ix)> body);
  /// `trips` iterations of `body`, `unroll` bodies per ncore.loop iteration
  /// (the remainder after the loop); a single iteration is emitted without
  /// a loop. ncore-schedule orders an instruction of a nested loop after its
  /// own previous iteration when they touch the same tile, so a loop of
  /// independent DMAs (one per sequence) inside another loop keeps `unroll`
  /// of them in flight.
  void loopUnrolled(int64_t trips, int64_t unroll,
                    llvm::function_ref<void(Ix)> body);
  /// loopUnrolled that also tells the body which of the `unroll` copies it
  /// is (iteration mod unroll): a ring of `unroll` buffers (PSUM banks) lets
  /// the Tensor engine fill one while another is read.
  void loopRing(int64_t trips, int64_t unroll,
                llvm::function_ref<void(Ix, unsigned)> body);
  /// `body(c)` for c < count, where each body moves its own window by DMA
  /// (windows of different c disjoint). At the top level one ncore.loop;
  /// inside a loop nest kDmaStreams loops' worth of bodies in one loop, body
  /// copy u walking the contiguous range [u R, (u + 1) R): ncore-schedule
  /// orders a nested loop's DMA after its own previous iteration, so a
  /// plain loop would serialize the transfers, while the copies' footprints
  /// are disjoint and proceed together.
  void dmaLoop(int64_t count, llvm::function_ref<void(Ix)> body);
  /// Loop depth at the insertion point (ncore.loops this builder opened).
  unsigned loopDepth() const { return depth; }
  /// `trips` iterations software-pipelined over two buffer sets: `load(i,
  /// set)` brings iteration i's inputs into buffer set `set` (DMA) and
  /// `compute(i, set)` consumes them (and stores its results). Iteration
  /// i + 1's loads come before iteration i's compute in program order, so
  /// the in-order DMA stream issues them before the stores of iteration i
  /// and they overlap its compute. A loop of trips / 2 iterations (two
  /// bodies) plus at most two bodies after it: loops stay loops.
  void pipelinedLoop(int64_t trips, llvm::function_ref<void(Ix, unsigned)> load,
                     llvm::function_ref<void(Ix, unsigned)> compute);

  // Instructions (destination first, as in nki.isa).
  void dma(Value dst, Value src);
  void matmul(Value psumDst, Value stationary, Value moving,
              bool accumulate = false);
  /// matmul accumulating over the iterations of the ncore.loop of `loopIndex`
  /// (NKI's start flag: its iteration 0 overwrites PSUM, the others add; the
  /// emitter's `start_level`), so a reduction loop stays a loop.
  void matmulAccumulateOver(Value psumDst, Value stationary, Value moving,
                            const Ix &loopIndex);
  void transpose(Value psumDst, Value src);
  void activation(ncore::ActFunc func, Value dst, Value src, float scale = 1.0f,
                  float bias = 0.0f, Value biasTile = nullptr,
                  Value reduce = nullptr);
  void tensorTensor(ncore::AluOp op, Value dst, Value lhs, Value rhs);
  void tensorScalar(ncore::AluOp op, Value dst, Value src, float imm,
                    bool reverse = false);
  void tensorScalar(ncore::AluOp op, Value dst, Value src, Value scalarTile,
                    bool reverse = false);
  void reduce(ncore::AluOp op, Value dst, Value src);
  void copy(Value dst, Value src);
  void reciprocal(Value dst, Value src);
  void memset(Value dst, float value);
  void iota(Value dst, float base, float partitionStep, float freeStep);

private:
  OpBuilder &b;
  Location loc;
  ncore::ProgramOp prog;
  llvm::SmallVector<std::pair<DictionaryAttr, Value>> constants;
  unsigned depth = 0;
};

/// Creates `ncore.program @name` at the end of `module` with HBM arguments
/// of `inputs` (role input) then `outputs` (role output); the builder's
/// insertion point is set into its body.
ncore::ProgramOp createKernelProgram(OpBuilder &b, ModuleOp module,
                                     StringRef name,
                                     ArrayRef<ncore::TileType> inputs,
                                     ArrayRef<ncore::TileType> outputs);

struct KernelSignature;
/// createKernelProgram with the HBM tiles of `sig`'s arguments as inputs and
/// of its one result as output (hbmTileFor: the caller has checked that
/// they have one).
ncore::ProgramOp createKernelProgram(OpBuilder &b, ModuleOp module,
                                     StringRef name,
                                     const KernelSignature &sig);

/// The HBM tile a tensor of type `t` travels as: same shape and dtype, and a
/// complex<f32> tensor as f32 with a trailing dim of 2 (re, im interleaved:
/// the memory layout of complex<f32>).
FailureOr<ncore::TileType> hbmTileFor(RankedTensorType t);

} // namespace mlir::seam

#endif // SEAM_KERNELS_KERNELBUILDER_H
