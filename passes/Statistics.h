//===- Statistics.h - pass counters that work on release MLIR ---*- C++ -*-===//
//
// MLIR's `Pass::Statistic` derives from `llvm::Statistic`, which is a no-op
// when LLVM is built with NDEBUG and without LLVM_FORCE_ENABLE_STATS, as
// Debian's libMLIR is: `-mlir-pass-statistics` then prints nothing. seam's
// passes count with these instead; seam-opt prints them (in MLIR's format)
// when given `-mlir-pass-statistics` or `-seam-pass-statistics`.
//
// Counters are keyed by (pass argument, counter name), so the clones a pass
// manager makes for each function add into one total.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_PASSES_STATISTICS_H
#define SEAM_PASSES_STATISTICS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"
#include <atomic>
#include <cstdint>

namespace mlir::seam {

class PassCounter {
public:
  PassCounter(llvm::StringRef pass, llvm::StringRef name,
              llvm::StringRef description);
  PassCounter &operator++() { return *this += 1; }
  PassCounter &operator+=(int64_t n) {
    value->fetch_add(n, std::memory_order_relaxed);
    return *this;
  }
  int64_t get() const { return value->load(); }

private:
  std::atomic<int64_t> *value;
};

/// Prints every counter registered so far, grouped by pass.
void printPassCounters(llvm::raw_ostream &os);
/// Value of one counter (0 if it does not exist): for tests and tools.
int64_t getPassCounter(llvm::StringRef pass, llvm::StringRef name);

} // namespace mlir::seam

#endif
