//===- ParallelChunks.h - per-index work on a context's threads -*- C++ -*-===//
//
// The codegen passes' analyses and the emitter's translation run per
// instruction with no shared writes (ncore-schedule also creates its
// semaphore ops this way, detached); parallelChunks runs such work on the
// MLIRContext's thread pool in chunks of consecutive indices (one task per
// index would cost more than the work).
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_LOWERING_TRANSFORMS_PARALLELCHUNKS_H
#define SEAM_LOWERING_TRANSFORMS_PARALLELCHUNKS_H

#include "mlir/IR/Threading.h"

#include <algorithm>

namespace mlir::ncore {

/// body(i) for every i in [0, n), on the context's threads when it has
/// them, in chunks of consecutive indices; diagnostics come out in chunk
/// order, as a sequential loop would emit them. For work that only reads
/// the IR (or creates detached ops: the context uniques their attributes
/// under its locks) and writes its own index's results.
template <typename Fn>
void parallelChunks(MLIRContext *ctx, size_t n, Fn &&body) {
  constexpr size_t kChunk = 256;
  mlir::parallelFor(ctx, 0, (n + kChunk - 1) / kChunk, [&](size_t chunk) {
    for (size_t i = chunk * kChunk, e = std::min(n, i + kChunk); i < e; ++i)
      body(i);
  });
}

} // namespace mlir::ncore

#endif // SEAM_LOWERING_TRANSFORMS_PARALLELCHUNKS_H
