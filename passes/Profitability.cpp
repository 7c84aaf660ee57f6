//===- Profitability.cpp - the default profitability hook -----------------===//
#include "passes/Profitability.h"

using namespace mlir;

seam::ProfitabilityHook &seam::profitabilityHook() {
  static ProfitabilityHook hook;
  return hook;
}

bool seam::isProfitable(Operation *site, llvm::StringRef transform,
                        std::string &why) {
  auto &hook = profitabilityHook();
  return !hook || hook(site, transform, why);
}
