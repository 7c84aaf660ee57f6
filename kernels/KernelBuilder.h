//===- KernelBuilder.h - ncore kernels the way NKI reads --------*- C++ -*-===//
//
// A kernel is written against this builder the way an NKI kernel is written
// against nki.isa: allocate SBUF/PSUM tiles, open loops, take windows of
// tiles (views whose offsets are affine in the loop indices), move data with
// DMA and compute with matmul / activation / tensor ops. Each call emits one
// `ncore` op; nothing is scheduled or placed here (that is ncore-allocate and
// ncore-schedule's job). It is the builder the conversion uses too
// (ncore::NcoreBuilder) plus the kernel's own arguments and constants.
//
//   KernelBuilder kb(builder, loc, program);
//   Value x = kb.sbuf({128, 512}, f32);
//   kb.loop(4, [&](Index b) {
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

#include "dialect/ncore/NcoreBuilder.h"
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

using ncore::Index;

/// The ncore builder (dialect/ncore/NcoreBuilder.h: tiles, views, loops,
/// instructions) with what only kernels need: their own program's
/// arguments, generated constants, and windows moved from inside a loop
/// nest by many DMA streams.
class KernelBuilder : public ncore::NcoreBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc, ncore::ProgramOp program)
      : NcoreBuilder(b, program, loc) {}

  Value arg(unsigned i) { return program().getBody().getArgument(i); }
  Type f32() { return builder().getF32Type(); }
  Type bf16() { return builder().getBF16Type(); }

  /// An HBM constant argument generated from `spec` (appended once).
  Value constant(const ConstantSpec &spec, Type dtype);
  /// An HBM scratch tensor of the kernel (an `ncore.alloc` in HBM).
  Value hbmScratch(ArrayRef<int64_t> shape, Type dtype, StringRef name) {
    return alloc(ncore::MemSpace::Hbm, shape, dtype, name);
  }

  /// The `n` elements of `src` (HBM, any shape) on every one of
  /// `partitions` partitions: SBUF [partitions, n] in the dtype of `src`.
  /// DMA reads each element once; broadcastPartitions does the rest.
  Value broadcastToPartitions(Value src, int64_t partitions);

  /// `body(c)` for c < count, where each body moves its own window by DMA
  /// (windows of different c disjoint). At the top level one ncore.loop;
  /// inside a loop nest kDmaStreams loops' worth of bodies in one loop, body
  /// copy u walking the contiguous range [u R, (u + 1) R): ncore-schedule
  /// orders a nested loop's DMA after its own previous iteration, so a
  /// plain loop would serialize the transfers, while the copies' footprints
  /// are disjoint and proceed together.
  void dmaLoop(int64_t count, llvm::function_ref<void(Index)> body);
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
