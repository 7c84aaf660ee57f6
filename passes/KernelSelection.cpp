//===- KernelSelection.cpp - Reading a `kernels=` list --------------------===//
#include "passes/KernelSelection.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

using namespace mlir;
using namespace mlir::seam;

std::optional<llvm::SmallVector<const KernelInfo *>>
seam::selectKernels(llvm::ArrayRef<std::string> items, std::string &error) {
  llvm::SmallVector<const KernelInfo *> selected;
  bool none = false;
  for (const std::string &item : items) {
    llvm::SmallVector<llvm::StringRef> names;
    llvm::StringRef(item).split(names, ',');
    for (llvm::StringRef name : names) {
      name = name.trim();
      if (name.empty())
        continue;
      if (name == "none") {
        none = true;
        continue;
      }
      const KernelInfo *k = lookupKernel(name);
      if (!k) {
        error = "unknown kernel '" + name.str() +
                "'; registered kernels: " + knownKernelNames();
        return std::nullopt;
      }
      if (!llvm::is_contained(selected, k))
        selected.push_back(k);
    }
  }
  if (none && !selected.empty()) {
    error = "'none' cannot be combined with kernel names";
    return std::nullopt;
  }
  return selected;
}
