//===- Statistics.cpp - seam pass counters --------------------------------===//
#include "passes/Statistics.h"
#include "llvm/Support/FormatVariadic.h"
#include <map>
#include <memory>
#include <mutex>
#include <string>

using namespace mlir::seam;

namespace {
struct Entry {
  std::string description;
  std::unique_ptr<std::atomic<int64_t>> value;
};
struct Registry {
  std::mutex mutex;
  // pass -> counter name -> entry; std::map keeps the output sorted.
  std::map<std::string, std::map<std::string, Entry>> entries;
};
Registry &registry() {
  static Registry r;
  return r;
}
} // namespace

PassCounter::PassCounter(llvm::StringRef pass, llvm::StringRef name,
                         llvm::StringRef description) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  Entry &e = r.entries[pass.str()][name.str()];
  if (!e.value) {
    e.value = std::make_unique<std::atomic<int64_t>>(0);
    e.description = description.str();
  }
  value = e.value.get();
}

void mlir::seam::printPassCounters(llvm::raw_ostream &os) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  os << "===" << std::string(73, '-') << "===\n"
     << "                         ... seam pass statistics ...\n"
     << "===" << std::string(73, '-') << "===\n";
  for (auto &[pass, counters] : r.entries) {
    // Passes are instantiated at registration: show only those that counted.
    bool any = false;
    for (auto &[name, e] : counters)
      any |= e.value->load() != 0;
    if (!any)
      continue;
    os << pass << "\n";
    for (auto &[name, e] : counters)
      os << llvm::formatv("  (S) {0,8} {1} - {2}\n", e.value->load(), name,
                          e.description);
  }
}

int64_t mlir::seam::getPassCounter(llvm::StringRef pass, llvm::StringRef name) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto p = r.entries.find(pass.str());
  if (p == r.entries.end())
    return 0;
  auto c = p->second.find(name.str());
  return c == p->second.end() ? 0 : c->second.value->load();
}
