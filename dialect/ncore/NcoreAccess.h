//===- NcoreAccess.h - views and reshapes as access patterns ----*- C++ -*-===//
//
// What the emitter and the allocator ask of an instruction operand: which
// buffer it lives in (an ncore.alloc or a program argument) and how it walks
// that buffer, as the runtime's AccessPattern does: a partition range (on
// chip) or a row stride (HBM), up to four free dims (size, stride), an element
// offset, and an offset step per enclosing ncore.loop iteration.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_DIALECT_NCORE_NCOREACCESS_H
#define SEAM_DIALECT_NCORE_NCOREACCESS_H

#include "dialect/ncore/NcoreOps.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::ncore {

struct FreeDimAccess {
  int64_t size = 1;
  int64_t stride = 1; ///< In elements.
};

struct TileAccess {
  /// The buffer: the result of an ncore.alloc, an ncore.program argument or
  /// an argument of an ncore.inlined_call body.
  Value root;
  MemSpace space = MemSpace::Sbuf;
  Type elementType;
  /// On chip: first partition and partition count. In HBM: the number of rows
  /// and the elements between rows (`rowStride`); `startPartition` is 0.
  int64_t startPartition = 0;
  int64_t partitions = 1;
  int64_t rowStride = 0;
  /// Elements from the buffer's start: within each partition on chip, within
  /// the tensor in HBM.
  int64_t offset = 0;
  /// Free dims, outermost first, after merging contiguous dims.
  llvm::SmallVector<FreeDimAccess, 4> dims;
  /// Elements added to `offset` per iteration of each enclosing loop that the
  /// views use (loops not listed step 0).
  llvm::SmallVector<std::pair<LoopOp, int64_t>, 2> loopSteps;

  /// Step per iteration of `loop` (0 when the access does not move with it).
  int64_t stepFor(LoopOp loop) const;
};

/// Folds the chain of ncore.view / ncore.reshape that defines `tile`.
/// Fails (with a diagnostic at `tile`'s definition) on a reshape of a
/// non-contiguous window, which no single access pattern can express.
FailureOr<TileAccess> resolveAccess(Value tile);

} // namespace mlir::ncore

#endif // SEAM_DIALECT_NCORE_NCOREACCESS_H
