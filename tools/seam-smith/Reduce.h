//===- Reduce.h - seam-smith: shrink a failing graph ------------*- C++ -*-===//
#ifndef SEAM_TOOLS_SEAM_SMITH_REDUCE_H
#define SEAM_TOOLS_SEAM_SMITH_REDUCE_H

#include "tools/seam-smith/Graph.h"
#include <functional>

namespace smith {

/// Smaller variants of `g`, the biggest steps first: an output dropped, an
/// op deleted (its readers read an operand of its type, or a new step input
/// of its type), an attribute or flag turned off, the run's options made
/// plainer (fewer kernels, compile mode, trn1, one rank, one block), a step
/// input's dim or a linear's N shrunk, one size shrunk everywhere. Each is
/// valid (Graph::infer() holds) and has its dead ops removed.
std::vector<Graph> reductions(const Graph &g);

/// Greedy reduction: takes the first variant that `stillFails`, then starts
/// over from it, until no variant fails or `budget` tries are spent.
/// Returns the smallest failing graph found (`g` itself when none is
/// smaller).
Graph reduce(const Graph &g,
             const std::function<bool(const Graph &)> &stillFails, int budget,
             int *tries = nullptr);

} // namespace smith

#endif
