//===- KernelSelection.cpp - Reading a `kernels=` list --------------------===//
#include "passes/KernelSelection.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

using namespace mlir;
using namespace mlir::seam;

std::vector<std::string> KernelSelection::canonical() const {
  std::vector<std::string> out;
  for (const KernelInfo *k : kernels)
    out.push_back(k->name.str());
  if (!automatic)
    return out;
  // `auto` alone means every registered kernel.
  if (kernels.size() == allKernels().size())
    return {"auto"};
  out.front() = "auto:" + out.front();
  return out;
}

std::optional<KernelSelection>
seam::selectKernels(llvm::ArrayRef<std::string> items, std::string &error) {
  KernelSelection selected;
  bool none = false, first = true, autoAll = false;
  for (const std::string &item : items) {
    llvm::SmallVector<llvm::StringRef> names;
    llvm::StringRef(item).split(names, ',');
    for (llvm::StringRef name : names) {
      name = name.trim();
      if (name.empty())
        continue;
      bool wasFirst = first;
      first = false;
      if (name == "auto" || name.starts_with("auto:")) {
        if (!wasFirst) {
          error = "'auto' must come first in a kernel list ('auto' or "
                  "'auto:qkv,flash-attn')";
          return std::nullopt;
        }
        selected.automatic = true;
        name = name.drop_front(4);
        if (name.empty()) {
          autoAll = true;
          continue;
        }
        name = name.drop_front(1).trim(); // the ':'
        if (name.empty()) {
          error = "'auto:' names no candidate kernel";
          return std::nullopt;
        }
      }
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
      if (!llvm::is_contained(selected.kernels, k))
        selected.kernels.push_back(k);
    }
  }
  if (none && (selected.automatic || !selected.kernels.empty())) {
    error = "'none' cannot be combined with kernel names or 'auto'";
    return std::nullopt;
  }
  if (autoAll) {
    if (!selected.kernels.empty()) {
      error = "'auto' takes its candidates after a colon ('auto:qkv,rope'), "
              "not as further items";
      return std::nullopt;
    }
    for (const KernelInfo &k : allKernels())
      selected.kernels.push_back(&k);
    selected.allCandidates = true;
  }
  return selected;
}
