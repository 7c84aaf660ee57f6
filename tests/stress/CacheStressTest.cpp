//===- CacheStressTest.cpp - The compile cache under concurrency and crashes
//===//
//
// Uses runtime's CompileCache directly (no MLIR): eight processes compiling
// the same "model" into one directory, writers SIGKILLed at random points,
// and every byte of an entry flipped. Runs in a few seconds.
//
//===----------------------------------------------------------------------===//
#include "runtime/HostCache.h"
#include "runtime/ProgramFile.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace seam::rt;
namespace fs = std::filesystem;

namespace {

/// A fresh directory under the build's temp area, removed at the end.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "seam-stress-XXXXXX");
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

/// What "compiling" program `i` of the model produces: a real program file
/// (so a later run can also decode it), padded to `size` bytes of constants.
std::vector<uint8_t> compiled(int i, size_t size) {
  ProgramBuilder b("region" + std::to_string(i), Target::Trn1);
  int64_t n = static_cast<int64_t>(size / 4);
  uint32_t c = b.addBinding("c", {n}, DType::F32, BindingRole::Constant);
  std::vector<float> values(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k)
    values[k] = static_cast<float>((k * 31 + i) % 1000);
  b.setConstantValues(c, values);
  return writeProgram(b.take());
}

std::string keyOf(int i) {
  return compileCacheKey("module { region " + std::to_string(i) + " }",
                         "mode=compile", "seam-stress");
}

/// Every `*.seamcache` file in `dir` must be a valid entry of its key
/// holding a program that decodes; returns the number checked.
int checkAllEntries(const fs::path &dir) {
  int n = 0;
  CompileCache cache(dir.string());
  for (const auto &e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (e.path().extension() != ".seamcache")
      continue;
    std::string key = e.path().stem().string();
    CacheLookup l = cache.lookup(key);
    EXPECT_EQ(l.status, CacheStatus::Hit) << name << ": " << l.message;
    if (l.status == CacheStatus::Hit) {
      auto p = readProgram(l.bytes);
      EXPECT_TRUE(bool(p)) << name << ": " << (p ? "" : p.error());
    }
    ++n;
  }
  return n;
}

} // namespace

TEST(CacheStress, EightProcessesCompileTheSameModelIntoOneDirectory) {
  TempDir dir;
  const int kProcs = 8, kPrograms = 24;
  const size_t kSize = 128 * 1024;
  int gate[2];
  ASSERT_EQ(::pipe(gate), 0);
  std::vector<pid_t> children;
  for (int p = 0; p < kProcs; ++p) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(gate[1]);
      char go;
      if (::read(gate[0], &go, 1) != 1)
        ::_exit(10);
      // Each process walks the model from a different program, so that
      // stores and lookups of one key really overlap.
      CompileCache cache(dir.path.string());
      int bad = 0;
      for (int round = 0; round < 2; ++round)
        for (int j = 0; j < kPrograms; ++j) {
          int i = (j + p * 3) % kPrograms;
          auto got = cache.getOrBuild(keyOf(i), [&] {
            return Expected<std::vector<uint8_t>>(compiled(i, kSize));
          });
          if (!got || got->status == CacheStatus::Corrupt ||
              got->bytes != compiled(i, kSize) || !readProgram(got->bytes))
            ++bad;
        }
      ::_exit(bad == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  ::close(gate[0]);
  char go[kProcs] = {};
  ASSERT_EQ(::write(gate[1], go, kProcs), kProcs);
  ::close(gate[1]);
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "process " << pid << " status " << status;
  }
  // A later run: every program is a hit with the right bytes, every file
  // is a whole entry, and no temporary file is left behind.
  CompileCache later(dir.path.string());
  for (int i = 0; i < kPrograms; ++i) {
    CacheLookup l = later.lookup(keyOf(i));
    ASSERT_EQ(l.status, CacheStatus::Hit) << i << ": " << l.message;
    EXPECT_EQ(l.bytes, compiled(i, kSize)) << i;
  }
  EXPECT_EQ(checkAllEntries(dir.path), kPrograms);
  for (const auto &e : fs::directory_iterator(dir.path))
    EXPECT_EQ(e.path().extension(), ".seamcache")
        << "left behind: " << e.path();
}

namespace {
std::set<std::string> tempFiles(const fs::path &dir) {
  std::set<std::string> names;
  for (const auto &e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind(".tmp-", 0) == 0)
      names.insert(e.path().filename().string());
  return names;
}
} // namespace

TEST(CacheStress, WriterKilledInTheMiddleOfWritingLeavesNoValidEntry) {
  // Deterministic: the child may write at most half of the entry
  // (RLIMIT_FSIZE); the kernel kills it with SIGXFSZ inside write(2), with a
  // partial temporary file on disk, as a crash or SIGKILL there would.
  TempDir dir;
  const size_t kSize = 1u << 20;
  const std::vector<uint8_t> old = compiled(1, kSize),
                             fresh = compiled(2, kSize);
  for (bool hadEntry : {false, true}) {
    const std::string key = keyOf(hadEntry ? 11 : 10);
    if (hadEntry) {
      ASSERT_TRUE(bool(CompileCache(dir.path.string()).store(key, old)));
    }
    std::set<std::string> before = tempFiles(dir.path);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      struct rlimit lim = {kSize / 2, kSize / 2};
      ::setrlimit(RLIMIT_FSIZE, &lim);
      (void)CompileCache(dir.path.string()).store(key, fresh);
      ::_exit(0); // not reached: the write is cut short by SIGXFSZ
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ)
        << "status " << status;
    std::set<std::string> after = tempFiles(dir.path);
    ASSERT_EQ(after.size(), before.size() + 1) << "no partial temp file left";
    for (const std::string &t : after) {
      if (!before.count(t)) {
        EXPECT_EQ(fs::file_size(dir.path / t), kSize / 2) << t;
      }
    }

    CacheLookup l = CompileCache(dir.path.string()).lookup(key);
    if (hadEntry) {
      ASSERT_EQ(l.status, CacheStatus::Hit) << l.message;
      EXPECT_EQ(l.bytes, old) << "the older whole entry must survive";
    } else {
      EXPECT_EQ(l.status, CacheStatus::Miss) << l.message;
    }
  }
  EXPECT_EQ(checkAllEntries(dir.path), 1);
  // The next store of a key sweeps the dead writer's temporary away.
  ASSERT_TRUE(bool(CompileCache(dir.path.string()).store(keyOf(10), fresh)));
  ASSERT_TRUE(bool(CompileCache(dir.path.string()).store(keyOf(11), fresh)));
  EXPECT_TRUE(tempFiles(dir.path).empty());
  EXPECT_EQ(checkAllEntries(dir.path), 2);
}

TEST(CacheStress, WriterSigkilledAtRandomPointsLeavesNoValidLookingEntry) {
  TempDir dir;
  // Two different whole entries the writer alternates between; anything
  // else found later would be a torn write read as valid.
  const size_t kSize = 8u << 20;
  const std::vector<uint8_t> a = compiled(1, kSize), b = compiled(2, kSize);
  std::mt19937 rng(1234);
  int hits = 0, misses = 0;
  for (int trial = 0; trial < 12; ++trial) {
    // Odd trials: a fresh key, killed during its very first write; even
    // trials: once one entry is whole, at a random point of later writes.
    const std::string key = keyOf(trial % 2 ? 100 + trial : 7);
    int stored[2];
    ASSERT_EQ(::pipe(stored), 0);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(stored[0]);
      CompileCache cache(dir.path.string());
      for (int n = 0;; ++n) {
        (void)cache.store(key, n % 2 ? b : a);
        if (n == 0 && ::write(stored[1], "x", 1) != 1)
          ::_exit(3);
      }
    }
    ::close(stored[1]);
    if (trial % 2 == 0) {
      char c;
      ASSERT_EQ(::read(stored[0], &c, 1), 1);
    }
    ::close(stored[0]);
    std::this_thread::sleep_for(std::chrono::microseconds(
        std::uniform_int_distribution<int>(0, 30000)(rng)));
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status));

    CacheLookup l = CompileCache(dir.path.string()).lookup(key);
    ASSERT_NE(l.status, CacheStatus::Corrupt) << l.message;
    if (l.status == CacheStatus::Hit) {
      ++hits;
      EXPECT_TRUE(l.bytes == a || l.bytes == b)
          << "trial " << trial << ": a hit on bytes nobody stored";
    } else {
      ++misses;
    }
    if (trial % 2 == 0) {
      EXPECT_EQ(l.status, CacheStatus::Hit) << "the whole entry was lost";
    }
  }
  // Leftover temporaries are never read as entries; a later store of a key
  // still succeeds and every entry on disk is whole.
  CompileCache later(dir.path.string());
  std::vector<uint8_t> c = compiled(3, 4096);
  ASSERT_TRUE(bool(later.store(keyOf(7), c)));
  CacheLookup l = later.lookup(keyOf(7));
  ASSERT_EQ(l.status, CacheStatus::Hit);
  EXPECT_EQ(l.bytes, c);
  EXPECT_EQ(checkAllEntries(dir.path), 1 + hits - 6);
  std::printf("sigkilled writer: 12 kills, %d left a whole entry, %d no "
              "entry, %zu partial temporary files left (never read)\n",
              hits, misses, tempFiles(dir.path).size());
}

TEST(CacheStress, EntryTruncatedByACrashIsCorruptNotValid) {
  // A writer that bypassed the temp+rename protocol (or a disk that lost the
  // tail): every prefix of an entry is reported corrupt, never a hit.
  TempDir dir;
  CompileCache cache(dir.path.string());
  const std::string key = keyOf(3);
  std::vector<uint8_t> prog = compiled(3, 2048);
  ASSERT_TRUE(bool(cache.store(key, prog)));
  std::ifstream in(cache.entryPath(key), std::ios::binary);
  std::vector<uint8_t> whole((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  for (size_t len = 0; len < whole.size(); len += (len < 64 ? 1 : 37)) {
    std::ofstream(cache.entryPath(key), std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char *>(whole.data()), len);
    CacheLookup l = cache.lookup(key);
    ASSERT_EQ(l.status, CacheStatus::Corrupt) << "prefix of " << len;
  }
}

TEST(CacheStress, EveryFlippedByteIsDetectedReportedAndRebuilt) {
  TempDir dir;
  CompileCache cache(dir.path.string());
  const std::string key = keyOf(5);
  std::vector<uint8_t> prog = compiled(5, 512);
  ASSERT_TRUE(bool(cache.store(key, prog)));
  std::ifstream in(cache.entryPath(key), std::ios::binary);
  std::vector<uint8_t> whole((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  int builds = 0;
  for (size_t pos = 0; pos < whole.size(); ++pos) {
    std::vector<uint8_t> bad = whole;
    bad[pos] ^= static_cast<uint8_t>(1u << (pos % 8));
    std::ofstream(cache.entryPath(key), std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char *>(bad.data()), bad.size());
    auto got = cache.getOrBuild(key, [&] {
      ++builds;
      return Expected<std::vector<uint8_t>>(prog);
    });
    ASSERT_TRUE(bool(got)) << "byte " << pos << ": " << got.error();
    ASSERT_EQ(got->status, CacheStatus::Corrupt) << "byte " << pos;
    EXPECT_NE(got->message.find("is corrupt"), std::string::npos)
        << got->message;
    EXPECT_EQ(got->bytes, prog);
    // Rebuilt: the next run hits the fresh entry.
    CacheLookup l = cache.lookup(key);
    ASSERT_EQ(l.status, CacheStatus::Hit) << "byte " << pos;
    ASSERT_EQ(l.bytes, prog);
  }
  EXPECT_EQ(builds, static_cast<int>(whole.size()));
}
