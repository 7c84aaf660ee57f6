//===- NestingGuard.h - refuse MLIR nested too deep -*- C++ -*-===//
//
// MLIR's parser recurses once per nested bracket (e.g. a function type of
// function types), so a few tens of KB of `((((...` overflow the stack:
// found by fuzz-mlir-pipeline (tests/fuzz/regressions/mlir-pipeline). Every
// tool that hands text to the parser checks it here first and reports a
// diagnostic instead of crashing.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_TOOLS_COMMON_NESTINGGUARD_H
#define SEAM_TOOLS_COMMON_NESTINGGUARD_H

#include "runtime/Expected.h"
#include "llvm/ADT/StringRef.h"
#include <string>

namespace mlir::seam {

/// Deepest bracket nesting real IR comes near is a few dozen levels.
constexpr int kMaxNesting = 1000;

/// Whether `text` nests ( [ { at most kMaxNesting deep (outside string
/// literals and // comments); the error is "LINE:COL: brackets nested deeper
/// than ...".
inline ::seam::rt::Status checkNesting(llvm::StringRef text) {
  int depth = 0, line = 1, col = 0;
  bool inString = false, inComment = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    ++col;
    if (c == '\n') {
      ++line;
      col = 0;
      inComment = false;
      continue;
    }
    if (inComment)
      continue;
    if (inString) {
      if (c == '\\')
        ++i, ++col;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      inComment = true;
    } else if (c == '(' || c == '[' || c == '{') {
      if (++depth > kMaxNesting)
        return ::seam::rt::Status::failure(
            std::to_string(line) + ":" + std::to_string(col) +
            ": brackets nested deeper than " + std::to_string(kMaxNesting) +
            " levels: the MLIR parser recurses once per level and would "
            "overflow the stack");
    } else if (c == ')' || c == ']' || c == '}') {
      if (depth > 0)
        --depth;
    }
  }
  return ::seam::rt::Status::ok();
}

} // namespace mlir::seam

#endif // SEAM_TOOLS_COMMON_NESTINGGUARD_H
