//===- HostCache.cpp - On-disk compile cache ------------------------------===//

#include "runtime/HostCache.h"
#include "runtime/Numerics.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace seam::rt {

namespace {
constexpr char kCacheMagic[8] = {'S', 'E', 'A', 'M', 'C', 'A', 'C', 'H'};
/// 2: the checksum is the CRC-32 of key and payload (was FNV-1a over a
/// copy of both), and entries are no longer fsync'ed (see write()).
/// 3: the checksum is hash64 of the payload seeded with hash64 of the key
/// (runtime/Numerics.h): the CRC-32 ran at ~1.7 GB/s over entries of
/// several MB.
constexpr uint32_t kCacheVersion = 3;
constexpr size_t kCacheHeader = 8 + 4 + 4 + 8 + 8 + 8;

template <typename T> void put(std::vector<uint8_t> &out, T v) {
  uint8_t buf[sizeof(T)];
  std::memcpy(buf, &v, sizeof(T));
  out.insert(out.end(), buf, buf + sizeof(T));
}
template <typename T> T get(const uint8_t *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
} // namespace

namespace {
/// Removes `<dir>/<prefix><pid>-<n>` temporaries of writers that died before
/// their rename (killed, crashed): their pid no longer exists. A live
/// writer's file is left alone.
void removeStaleTemps(const std::string &dir, const std::string &prefix) {
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0)
      continue;
    long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      ::unlink(it->path().c_str());
  }
}
} // namespace

std::string compileCacheKey(std::string_view irText, std::string_view flags,
                            std::string_view compilerVersion) {
  auto mix = [&](uint64_t seed) {
    uint64_t h = seed;
    for (std::string_view part : {irText, flags, compilerVersion}) {
      uint64_t len = part.size();
      h = fnv1a64(&len, sizeof(len), h);
      h = fnv1a64(part.data(), part.size(), h);
    }
    return h;
  };
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx",
                static_cast<unsigned long long>(mix(0xcbf29ce484222325ull)),
                static_cast<unsigned long long>(mix(0x84222325cbf29ce4ull)));
  return buf;
}

CompileCache::CompileCache(std::string d)
    : dir(d.empty() ? defaultDirectory() : std::move(d)) {}

std::string CompileCache::defaultDirectory() {
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/seam";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/seam";
  return "/tmp/seam-cache";
}

std::string CompileCache::entryPath(const std::string &key) const {
  return dir + "/" + key + ".seamcache";
}

CacheLookup CompileCache::lookup(const std::string &key) {
  CacheLookup res;
  std::ifstream in(entryPath(key), std::ios::binary | std::ios::ate);
  if (!in) {
    ++counters.misses;
    return res;
  }
  std::vector<uint8_t> file;
  if (std::streamoff size = in.tellg(); size > 0) {
    file.resize(static_cast<size_t>(size));
    in.seekg(0);
    in.read(reinterpret_cast<char *>(file.data()), size);
    file.resize(static_cast<size_t>(std::max<std::streamsize>(0, in.gcount())));
  }
  auto corrupt = [&](const std::string &why) {
    ++counters.corrupt;
    res.status = CacheStatus::Corrupt;
    res.message = "compile cache entry " + entryPath(key) + " is corrupt (" +
                  why + "); rebuilding";
    return res;
  };
  if (file.size() < kCacheHeader)
    return corrupt("truncated header");
  if (std::memcmp(file.data(), kCacheMagic, 8) != 0)
    return corrupt("bad magic");
  uint32_t version = get<uint32_t>(file.data() + 8);
  uint32_t kind = get<uint32_t>(file.data() + 12);
  uint64_t keyLen = get<uint64_t>(file.data() + 16);
  uint64_t payloadLen = get<uint64_t>(file.data() + 24);
  uint64_t checksum = get<uint64_t>(file.data() + 32);
  if (version != kCacheVersion)
    return corrupt("version " + std::to_string(version));
  if (kind > 1)
    return corrupt("unknown entry kind");
  uint64_t body = file.size() - kCacheHeader;
  if (keyLen > body || payloadLen != body - keyLen)
    return corrupt("sizes do not match the file (" +
                   std::to_string(file.size()) + " bytes)");
  const uint8_t *k = file.data() + kCacheHeader;
  if (hash64(k + keyLen, payloadLen, hash64(k, keyLen)) != checksum)
    return corrupt("checksum mismatch");
  if (std::string_view(reinterpret_cast<const char *>(k), keyLen) != key)
    return corrupt("entry belongs to another key");
  ++counters.hits;
  res.status = CacheStatus::Hit;
  res.failedCompile = kind == 1;
  res.bytes.assign(k + keyLen, k + body);
  return res;
}

Status CompileCache::write(const std::string &key, uint32_t kind,
                           const std::vector<uint8_t> &payload) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return Status::failure("compile cache: cannot create " + dir + ": " +
                           ec.message());
  // Header, key and payload go to the file as they are (no copy of a
  // program of several MB); the checksum covers key and payload.
  std::vector<uint8_t> header;
  header.insert(header.end(), kCacheMagic, kCacheMagic + 8);
  put<uint32_t>(header, kCacheVersion);
  put<uint32_t>(header, kind);
  put<uint64_t>(header, key.size());
  put<uint64_t>(header, payload.size());
  put<uint64_t>(header, hash64(payload.data(), payload.size(),
                               hash64(key.data(), key.size())));

  // Temp file in the same directory, then rename: readers never see a
  // partial entry, and concurrent writers of one key both leave a whole one.
  // Not fsync'ed (it cost as much as the write): an entry torn by a crash
  // fails its checksum, and lookup() reports it corrupt and rebuilds.
  static std::atomic<uint64_t> counter{0};
  std::string prefix = ".tmp-" + key + "-";
  removeStaleTemps(dir, prefix);
  std::string tmp = dir + "/" + prefix + std::to_string(::getpid()) + "-" +
                    std::to_string(counter++);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0)
    return Status::failure("compile cache: cannot create " + tmp + ": " +
                           std::strerror(errno));
  for (auto [data, size] :
       {std::pair<const void *, size_t>{header.data(), header.size()},
        {key.data(), key.size()},
        {payload.data(), payload.size()}}) {
    size_t done = 0;
    while (done < size) {
      ssize_t n =
          ::write(fd, static_cast<const char *>(data) + done, size - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        std::string msg = "compile cache: cannot write ";
        msg.append(tmp).append(": ").append(std::strerror(errno));
        ::close(fd);
        ::unlink(tmp.c_str());
        return Status::failure(msg);
      }
      done += static_cast<size_t>(n);
    }
  }
  ::close(fd);
  if (::rename(tmp.c_str(), entryPath(key).c_str()) != 0) {
    std::string err = std::strerror(errno);
    ::unlink(tmp.c_str());
    return Status::failure("compile cache: cannot rename into " +
                           entryPath(key) + ": " + err);
  }
  ++counters.stores;
  return Status::ok();
}

Status CompileCache::store(const std::string &key,
                           const std::vector<uint8_t> &bytes) {
  return write(key, 0, bytes);
}

Status CompileCache::storeFailure(const std::string &key,
                                  const std::string &error) {
  return write(key, 1, std::vector<uint8_t>(error.begin(), error.end()));
}

Expected<CompileCache::Fetched> CompileCache::getOrBuild(
    const std::string &key,
    const std::function<Expected<std::vector<uint8_t>>()> &build) {
  CacheLookup found = lookup(key);
  Fetched res;
  res.status = found.status;
  res.message = found.message;
  if (found.status == CacheStatus::Hit) {
    if (found.failedCompile)
      return Expected<Fetched>::failure(
          std::string(found.bytes.begin(), found.bytes.end()) +
          " (cached compile failure)");
    res.bytes = std::move(found.bytes);
    return res;
  }
  Expected<std::vector<uint8_t>> built = build();
  if (!built) {
    storeFailure(key, built.error());
    return Expected<Fetched>::failure(built.error());
  }
  res.bytes = std::move(*built);
  Status st = store(key, res.bytes);
  if (!st)
    res.message += (res.message.empty() ? "" : "; ") + st.error();
  return res;
}

} // namespace seam::rt
