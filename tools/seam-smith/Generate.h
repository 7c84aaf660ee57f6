//===- Generate.h - seam-smith: random valid seam graphs --------*- C++ -*-===//
#ifndef SEAM_TOOLS_SEAM_SMITH_GENERATE_H
#define SEAM_TOOLS_SEAM_SMITH_GENERATE_H

#include "tools/seam-smith/Graph.h"

namespace smith {

/// The graph of `seed`: the same graph for the same seed, every time. Its
/// shapes are inferred (Graph::infer() holds).
Graph generate(uint64_t seed);

} // namespace smith

#endif
