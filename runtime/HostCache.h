//===- HostCache.h - On-disk compile cache ---------------------*- C++ -*-===//
//
// Key = hash(program IR text + compiler flags + compiler version), value =
// program file bytes (or a cached compile error: failed compiles are cached
// too, as neuron-caching.rst describes). Entries carry a checksum; writes go
// to a temporary file in the same directory and are renamed into place, so a
// reader sees a whole entry or none. A corrupt entry is reported and treated
// as a miss.
//
//===----------------------------------------------------------------------===//

#ifndef SEAM_RUNTIME_HOSTCACHE_H
#define SEAM_RUNTIME_HOSTCACHE_H

#include "runtime/Expected.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace seam::rt {

/// 128-bit hex key of the three inputs of a compile.
std::string compileCacheKey(std::string_view irText, std::string_view flags,
                            std::string_view compilerVersion);

enum class CacheStatus { Hit, Miss, Corrupt };

struct CacheLookup {
  CacheStatus status = CacheStatus::Miss;
  bool failedCompile = false; ///< Hit on a cached compile error.
  std::vector<uint8_t> bytes; ///< Program bytes (or the error text).
  std::string message;        ///< Why an entry is corrupt.
};

struct CacheStats {
  uint64_t hits = 0, misses = 0, corrupt = 0, stores = 0;
};

class CompileCache {
public:
  /// `dir` empty: defaultDirectory().
  explicit CompileCache(std::string dir = "");
  /// $XDG_CACHE_HOME/seam, else $HOME/.cache/seam, else /tmp/seam-cache.
  static std::string defaultDirectory();
  const std::string &directory() const { return dir; }
  std::string entryPath(const std::string &key) const;

  CacheLookup lookup(const std::string &key);
  Status store(const std::string &key, const std::vector<uint8_t> &bytes);
  Status storeFailure(const std::string &key, const std::string &error);

  struct Fetched {
    std::vector<uint8_t> bytes;
    CacheStatus status = CacheStatus::Miss; ///< What the lookup found.
    std::string message;                    ///< Corruption report, if any.
  };
  /// Returns the cached program or runs `build`, stores and returns it. A
  /// corrupt entry is reported in `message` and rebuilt.
  Expected<Fetched>
  getOrBuild(const std::string &key,
             const std::function<Expected<std::vector<uint8_t>>()> &build);

  const CacheStats &stats() const { return counters; }

private:
  std::string dir;
  CacheStats counters;
  Status write(const std::string &key, uint32_t kind,
               const std::vector<uint8_t> &payload);
};

} // namespace seam::rt

#endif // SEAM_RUNTIME_HOSTCACHE_H
