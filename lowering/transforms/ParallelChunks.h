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

/// The same for work that can fail (body(i) returns a LogicalResult): no
/// chunk starts after one has failed, and a chunk stops at its first
/// failure. `chunk` indices per task (heavier work wants fewer).
template <typename Fn>
LogicalResult failableParallelChunks(MLIRContext *ctx, size_t n, size_t chunk,
                                     Fn &&body) {
  return mlir::failableParallelForEachN(
      ctx, 0, (n + chunk - 1) / chunk, [&](size_t c) -> LogicalResult {
        for (size_t i = c * chunk, e = std::min(n, i + chunk); i < e; ++i)
          if (failed(body(i)))
            return failure();
        return success();
      });
}

} // namespace mlir::ncore

#endif // SEAM_LOWERING_TRANSFORMS_PARALLELCHUNKS_H
