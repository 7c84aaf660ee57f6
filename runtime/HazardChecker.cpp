//===- HazardChecker.cpp - In-flight accesses and their conflicts ---------===//

#include "runtime/HazardChecker.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>
#include <sstream>
#include <unordered_map>

namespace seam::rt {

std::string_view name(HazardKind kind) {
  switch (kind) {
  case HazardKind::Raw:
    return "RAW";
  case HazardKind::War:
    return "WAR";
  case HazardKind::Waw:
    return "WAW";
  case HazardKind::PsumInterleave:
    return "PSUM group interleaved";
  }
  return "?";
}

bool writesSlot(const Instruction &inst, Instruction::Slot slot) {
  return slot == Instruction::Dst ||
         (slot == Instruction::Aux && inst.op == Opcode::Activation);
}

namespace {

/// Runs an access enumerates before it counts as too irregular to compare
/// exactly (it then conflicts wherever its hull does: conservative).
constexpr uint64_t kMaxRuns = 1u << 18;

/// The bytes one operand touches at one set of loop iterations: partitions
/// [p0, p1) and, in each, the runs base + sum_i idx_i * stride_i of
/// `runBytes` bytes (HBM: one "partition", rows are a dim).
struct Extent {
  MemSpace space = MemSpace::Sbuf;
  uint32_t p0 = 0, p1 = 1;
  int64_t base = 0;
  unsigned nd = 0; ///< dims walked to enumerate runs (outermost first)
  std::array<uint64_t, kMaxFreeDims + 1> size{};
  std::array<int64_t, kMaxFreeDims + 1> stride{}; ///< bytes
  int64_t runBytes = 0;
  int64_t lo = 0, hi = 0; ///< hull
  uint64_t runs() const {
    uint64_t n = 1;
    for (unsigned i = 0; i < nd; ++i)
      n *= size[i];
    return n;
  }
};

Extent extentOf(const Program &program, const AccessPattern &ap,
                const uint32_t *iters, unsigned depth) {
  Extent x;
  x.space = ap.space;
  int64_t elem = static_cast<int64_t>(byteSize(ap.dtype));
  int64_t base = ap.offset;
  for (unsigned d = 0; d < depth && d < kMaxLoopDepth; ++d)
    base += ap.loopStep[d] * static_cast<int64_t>(iters[d]);
  std::array<uint64_t, kMaxFreeDims + 1> size{};
  std::array<int64_t, kMaxFreeDims + 1> stride{};
  unsigned n = 0;
  if (ap.space == MemSpace::Hbm) {
    if (ap.binding < program.bindings.size())
      base += static_cast<int64_t>(program.bindings[ap.binding].hbmOffset);
    size[n] = ap.partitions;
    stride[n++] = ap.partitionStride * elem;
  } else {
    x.p0 = ap.partitionStart;
    x.p1 = ap.partitionStart + ap.partitions;
  }
  for (unsigned d = 0; d < ap.numDims && d < kMaxFreeDims; ++d) {
    size[n] = ap.dims[d].size;
    stride[n++] = ap.dims[d].stride * elem;
  }
  // Drop unit dims, then merge a dim into the one inside it where they walk
  // one arithmetic sequence.
  unsigned m = 0;
  for (unsigned i = 0; i < n; ++i)
    if (size[i] > 1) {
      size[m] = size[i];
      stride[m++] = stride[i];
    }
  unsigned k = 0;
  for (unsigned i = 0; i < m; ++i) {
    if (k > 0 && stride[k - 1] == static_cast<int64_t>(size[i]) * stride[i]) {
      size[k - 1] *= size[i];
      stride[k - 1] = stride[i];
      continue;
    }
    size[k] = size[i];
    stride[k++] = stride[i];
  }
  x.runBytes = elem;
  if (k > 0 && stride[k - 1] == elem) {
    x.runBytes = static_cast<int64_t>(size[k - 1]) * elem;
    --k;
  }
  x.nd = k;
  x.base = base;
  x.lo = x.hi = base;
  for (unsigned i = 0; i < k; ++i) {
    x.size[i] = size[i];
    x.stride[i] = stride[i];
    int64_t span = static_cast<int64_t>(size[i] - 1) * stride[i];
    (span < 0 ? x.lo : x.hi) += span;
  }
  x.hi += x.runBytes;
  return x;
}

/// The runs of `x` that meet [lo, hi), sorted; false when there are too many
/// to list.
bool runsWithin(const Extent &x, int64_t lo, int64_t hi,
                std::vector<std::pair<int64_t, int64_t>> &out) {
  out.clear();
  if (x.runs() > kMaxRuns)
    return false;
  std::array<uint64_t, kMaxFreeDims + 1> idx{};
  while (true) {
    int64_t start = x.base;
    for (unsigned i = 0; i < x.nd; ++i)
      start += static_cast<int64_t>(idx[i]) * x.stride[i];
    int64_t end = start + x.runBytes;
    if (start < hi && end > lo)
      out.emplace_back(std::max(start, lo), std::min(end, hi));
    unsigned i = x.nd;
    while (i > 0 && ++idx[i - 1] == x.size[i - 1])
      idx[--i] = 0;
    if (i == 0)
      break;
  }
  std::sort(out.begin(), out.end());
  return true;
}

/// Where `a` and `b` touch the same bytes: the first overlapping byte range
/// (and its partitions), or nothing.
struct Overlap {
  bool any = false;
  uint32_t p0 = 0, p1 = 0;
  int64_t lo = 0, hi = 0;
};

Overlap overlapOf(const Extent &a, const Extent &b,
                  std::vector<std::pair<int64_t, int64_t>> &ra,
                  std::vector<std::pair<int64_t, int64_t>> &rb) {
  Overlap o;
  o.p0 = std::max(a.p0, b.p0);
  o.p1 = std::min(a.p1, b.p1);
  o.lo = std::max(a.lo, b.lo);
  o.hi = std::min(a.hi, b.hi);
  if (o.p0 >= o.p1 || o.lo >= o.hi)
    return o;
  if (a.nd == 0 && b.nd == 0) {
    o.any = true;
    return o;
  }
  if (!runsWithin(a, o.lo, o.hi, ra) || !runsWithin(b, o.lo, o.hi, rb)) {
    o.any = true; // too irregular to list: the hulls decide
    return o;
  }
  size_t i = 0, j = 0;
  // Runs of one pattern may overlap each other (broadcast strides); the
  // sweep keeps, for each side, the furthest end seen so far.
  while (i < ra.size() && j < rb.size()) {
    int64_t lo = std::max(ra[i].first, rb[j].first);
    int64_t hi = std::min(ra[i].second, rb[j].second);
    if (lo < hi) {
      o.any = true;
      o.lo = lo;
      o.hi = hi;
      return o;
    }
    if (ra[i].second <= rb[j].second)
      ++i;
    else
      ++j;
  }
  return o;
}

using Clock = std::array<uint32_t, kNumEngines>;

void join(Clock &into, const Clock &c) {
  for (unsigned i = 0; i < kNumEngines; ++i)
    into[i] = std::max(into[i], c[i]);
}

/// An access kept until nothing can race with it any more.
struct Record {
  Extent ext;
  bool write = false;
  bool dma = false;   ///< a transfer: its stream does not order it
  uint8_t stream = 0; ///< the engine stream that issued it
  uint32_t seq = 0;   ///< its instance number in that stream
  bool dead = false;
  uint32_t stamp = 0; ///< last lookup that met it (one check per access)
  HazardSite site;
};

struct PsumGroup {
  Extent ext;
  bool touched = false;
  HazardSite toucher;
};

HazardSite siteOf(Engine engine, uint32_t pc, const Instruction &inst,
                  const uint32_t *iters, unsigned depth, double issueNs,
                  double endNs) {
  HazardSite s;
  s.engine = engine;
  s.pc = pc;
  s.op = inst.op;
  s.depth = static_cast<uint8_t>(std::min<unsigned>(depth, kMaxLoopDepth));
  for (unsigned d = 0; d < s.depth; ++d)
    s.iters[d] = iters[d];
  s.issueNs = issueNs;
  s.endNs = endNs;
  return s;
}

/// Bucket keys of an access: 4 KiB windows of a partition's bytes (SBUF,
/// PSUM), or its binding (HBM: a strided slab's hull spans the binding).
constexpr int64_t kBucketBytes = 4096;
/// Live records a bucket keeps (per kind) before it forgets its oldest (each
/// one forgotten is counted: a race with it would go unseen).
constexpr size_t kBucketCap = 2048;
/// Semaphore increments kept per semaphore (older ones are merged).
constexpr size_t kSemWindow = 8192;

using SmallKeys = std::vector<int64_t>;

/// The same bytes in each partition (same pattern, same base).
bool sameBytes(const Extent &a, const Extent &b) {
  if (a.base != b.base || a.nd != b.nd || a.runBytes != b.runBytes)
    return false;
  for (unsigned i = 0; i < a.nd; ++i)
    if (a.size[i] != b.size[i] || a.stride[i] != b.stride[i])
      return false;
  return true;
}

unsigned spaceIndex(MemSpace space) {
  switch (space) {
  case MemSpace::Sbuf:
    return 0;
  case MemSpace::Psum:
    return 1;
  default:
    return 2;
  }
}

/// One operand access of the instruction being issued.
struct Pending {
  Extent ext;
  uint32_t binding;
  bool write;
  double endNs;
};

struct SemHistory {
  std::vector<uint64_t> cumulative; ///< count after each increment
  std::vector<Clock> prefix;        ///< join of the clocks up to it
  uint64_t count = 0;
  Clock merged{}; ///< join of the increments dropped from the window
};
} // namespace

struct HazardChecker::Impl {
  struct Core {
    const Program *program = nullptr;
    std::array<Clock, kNumEngines> clock{};
    std::array<uint32_t, kNumEngines> seq{};
    std::array<bool, kNumEngines> used{};
    std::vector<Record> records;
    std::vector<uint32_t> freeRecords;
    /// Per space (SBUF, PSUM, HBM): bucket key -> record ids.
    std::array<std::unordered_map<int64_t, std::vector<uint32_t>>, 3> buckets;
    std::vector<SemHistory> sems;
    std::vector<PsumGroup> groups;
    uint64_t sinceCollect = 0;
    /// Per stream, the instances every stream in use is ordered after
    /// (refreshed every 256 issues; what is at or below it cannot race).
    Clock known{};
  };

  static void refreshKnown(Core &cs) {
    Clock known;
    known.fill(std::numeric_limits<uint32_t>::max());
    for (unsigned t = 0; t < kNumEngines; ++t)
      if (cs.used[t])
        for (unsigned u = 0; u < kNumEngines; ++u)
          known[u] = std::min(known[u], cs.clock[t][u]);
    cs.known = known;
  }
  std::vector<Core> cores;
  std::vector<Clock> published; ///< by token
  std::vector<uint32_t> freeTokens;
  uint32_t stamp = 0;
  uint64_t forgotten = 0;
  // Scratch, kept across issue() calls (it runs once per instruction).
  std::vector<std::pair<int64_t, int64_t>> ra, rb;
  std::vector<Pending> pending;
  SmallKeys keys, lookup;

  uint32_t publish(const Clock &c) {
    if (!freeTokens.empty()) {
      uint32_t t = freeTokens.back();
      freeTokens.pop_back();
      published[t] = c;
      return t;
    }
    published.push_back(c);
    return static_cast<uint32_t>(published.size() - 1);
  }

  static void keysOf(const Extent &x, uint32_t binding, SmallKeys &keys) {
    keys.clear();
    if (x.space == MemSpace::Hbm) {
      keys.push_back(binding);
      return;
    }
    for (int64_t k = x.lo / kBucketBytes; k <= (x.hi - 1) / kBucketBytes; ++k)
      keys.push_back(k);
  }

  /// Forgets the records every stream in use is ordered after.
  void collect(Core &cs) {
    refreshKnown(cs);
    const Clock &known = cs.known;
    for (uint32_t id = 0; id < cs.records.size(); ++id) {
      Record &r = cs.records[id];
      if (!r.dead && r.seq <= known[r.stream])
        r.dead = true;
    }
    for (auto &space : cs.buckets)
      for (auto it = space.begin(); it != space.end();) {
        auto &list = it->second;
        list.erase(
            std::remove_if(list.begin(), list.end(),
                           [&](uint32_t id) { return cs.records[id].dead; }),
            list.end());
        if (list.empty())
          it = space.erase(it);
        else
          ++it;
      }
    // Ids of dead records no bucket names any more are free again.
    std::vector<char> named(cs.records.size(), 0);
    for (auto &space : cs.buckets)
      for (auto &kv : space)
        for (uint32_t id : kv.second)
          named[id] = 1;
    cs.freeRecords.clear();
    for (uint32_t id = 0; id < cs.records.size(); ++id)
      if (!named[id]) {
        cs.records[id].dead = true;
        cs.freeRecords.push_back(id);
      }
  }
};

HazardChecker::HazardChecker(const std::vector<const Program *> &programs,
                             unsigned maxReports)
    : impl(std::make_unique<Impl>()) {
  impl->cores.resize(programs.size());
  for (size_t c = 0; c < programs.size(); ++c) {
    Impl::Core &cs = impl->cores[c];
    cs.program = programs[c];
    cs.sems.resize(kNumSemaphores);
    for (unsigned e = 0; e < kNumEngines; ++e)
      cs.used[e] = !programs[c]->streams[e].empty();
  }
  kept.reserve(std::min(maxReports, 64u));
  maxKept = maxReports;
}

HazardChecker::~HazardChecker() = default;

uint64_t HazardChecker::forgotten() const { return impl->forgotten; }

void HazardChecker::report(Hazard h) {
  ++total;
  if (kept.size() < maxKept)
    kept.push_back(std::move(h));
}

void HazardChecker::acquire(unsigned core, Engine engine, uint16_t sem,
                            int64_t need) {
  if (need <= 0 || sem >= kNumSemaphores)
    return;
  Impl::Core &cs = impl->cores[core];
  SemHistory &h = cs.sems[sem];
  Clock &mine = cs.clock[static_cast<unsigned>(engine)];
  auto it = std::lower_bound(h.cumulative.begin(), h.cumulative.end(),
                             static_cast<uint64_t>(need));
  if (it == h.cumulative.end()) {
    // More than the walk applied: cannot happen for a wait that holds.
    join(mine, h.merged);
    if (!h.prefix.empty())
      join(mine, h.prefix.back());
    return;
  }
  if (it == h.cumulative.begin())
    join(mine, h.merged);
  join(mine, h.prefix[it - h.cumulative.begin()]);
}

uint32_t HazardChecker::clockOf(unsigned core, Engine engine) {
  return impl->publish(impl->cores[core].clock[static_cast<unsigned>(engine)]);
}

void HazardChecker::signal(unsigned core, uint16_t sem, uint32_t count,
                           uint32_t token) {
  Impl::Core &cs = impl->cores[core];
  const Clock c = impl->published[token];
  impl->freeTokens.push_back(token);
  if (sem >= kNumSemaphores)
    return;
  SemHistory &h = cs.sems[sem];
  h.count += count;
  Clock p = h.prefix.empty() ? h.merged : h.prefix.back();
  join(p, c);
  h.cumulative.push_back(h.count);
  h.prefix.push_back(p);
  if (h.cumulative.size() > kSemWindow) {
    size_t drop = kSemWindow / 2;
    join(h.merged, h.prefix[drop - 1]);
    h.cumulative.erase(h.cumulative.begin(), h.cumulative.begin() + drop);
    h.prefix.erase(h.prefix.begin(), h.prefix.begin() + drop);
  }
}

uint32_t HazardChecker::issue(unsigned core, Engine engine, uint32_t pc,
                              const Instruction &inst, const uint32_t *iters,
                              unsigned depth, double issueNs, double readEndNs,
                              double writeEndNs) {
  Impl &im = *impl;
  Impl::Core &cs = im.cores[core];
  const Program &program = *cs.program;
  unsigned s = static_cast<unsigned>(engine);
  bool dma = inst.op == Opcode::DmaCopy;
  uint32_t mySeq = ++cs.seq[s];
  if (!dma)
    cs.clock[s][s] = mySeq; // an in-order engine knows its own past
  const Clock clock = cs.clock[s];

  std::vector<Pending> &pending = im.pending;
  pending.clear();
  for (unsigned k = 0; k < Instruction::NumSlots; ++k) {
    auto slot = static_cast<Instruction::Slot>(k);
    if (!inst.has(slot))
      continue;
    bool write = writesSlot(inst, slot);
    pending.push_back({extentOf(program, inst.ap(slot), iters, depth),
                       inst.ap(slot).binding, write,
                       write ? writeEndNs : readEndNs});
  }

  SmallKeys &keys = im.keys;
  for (const Pending &a : pending) {
    unsigned sp = spaceIndex(a.ext.space);
    auto &space = cs.buckets[sp];
    Impl::keysOf(a.ext, a.binding, keys);
    uint32_t stamp = ++im.stamp;
    bool covers = a.write && a.ext.nd == 0;
    // Reads and writes keep separate lists (key * 2 + write): a read only
    // looks at the writes (a weight read by a thousand slab loads).
    SmallKeys &lookup = im.lookup;
    lookup.clear();
    for (int64_t key : keys) {
      lookup.push_back(key * 2 + 1);
      if (a.write)
        lookup.push_back(key * 2);
    }
    for (int64_t key : lookup) {
      auto found = space.find(key);
      if (found == space.end())
        continue;
      auto &list = found->second;
      size_t keep = 0;
      for (size_t i = 0; i < list.size(); ++i) {
        uint32_t id = list[i];
        Record &b = cs.records[id];
        if (!b.dead && b.seq <= cs.known[b.stream])
          b.dead = true; // every stream is ordered after it
        if (b.dead)
          continue;
        list[keep++] = id;
        if (b.stamp == stamp)
          continue;
        b.stamp = stamp;
        if (!a.write && !b.write)
          continue;
        bool ordered = clock[b.stream] >= b.seq;
        if (ordered) {
          // A dense write that covers an ordered access replaces it.
          if (covers && a.ext.p0 <= b.ext.p0 && a.ext.p1 >= b.ext.p1 &&
              a.ext.lo <= b.ext.lo && a.ext.hi >= b.ext.hi)
            b.dead = true;
          continue;
        }
        Overlap o = overlapOf(b.ext, a.ext, im.ra, im.rb);
        if (!o.any)
          continue;
        Hazard h;
        h.kind = !a.write  ? HazardKind::Raw
                 : b.write ? HazardKind::Waw
                           : HazardKind::War;
        h.program = program.name;
        h.core = core;
        h.space = a.ext.space;
        h.p0 = o.p0;
        h.p1 = o.p1;
        h.lo = o.lo;
        h.hi = o.hi;
        h.earlier = b.site;
        h.later = siteOf(engine, pc, inst, iters, depth, issueNs, a.endNs);
        h.inFlight = b.site.endNs > issueNs;
        report(std::move(h));
      }
      list.resize(keep);
    }
  }

  // PSUM accumulation groups (only the TE writes PSUM).
  bool teWrite = inst.op == Opcode::Matmul || inst.op == Opcode::Transpose;
  for (const Pending &a : pending) {
    if (a.ext.space != MemSpace::Psum)
      continue;
    HazardSite site = siteOf(engine, pc, inst, iters, depth, issueNs, a.endNs);
    if (teWrite && a.write) {
      bool accumulate = inst.accumulate;
      if (accumulate && inst.startLevel >= 0 &&
          static_cast<unsigned>(inst.startLevel) < depth &&
          iters[inst.startLevel] == 0)
        accumulate = false;
      if (!accumulate) {
        // A new group starts: it replaces every group it overlaps.
        auto &groups = cs.groups;
        groups.erase(
            std::remove_if(groups.begin(), groups.end(),
                           [&](const PsumGroup &g) {
                             return overlapOf(g.ext, a.ext, im.ra, im.rb).any;
                           }),
            groups.end());
        groups.push_back({a.ext, false, {}});
        continue;
      }
      for (PsumGroup &g : cs.groups) {
        if (!g.touched)
          continue;
        Overlap o = overlapOf(g.ext, a.ext, im.ra, im.rb);
        if (!o.any)
          continue;
        Hazard h;
        h.kind = HazardKind::PsumInterleave;
        h.program = program.name;
        h.core = core;
        h.space = MemSpace::Psum;
        h.p0 = o.p0;
        h.p1 = o.p1;
        h.lo = o.lo;
        h.hi = o.hi;
        h.earlier = g.toucher;
        h.later = site;
        report(std::move(h));
        g.touched = false; // once per interleaving
      }
      continue;
    }
    if (engine == Engine::Tensor)
      continue;
    for (PsumGroup &g : cs.groups)
      if (!g.touched && overlapOf(g.ext, a.ext, im.ra, im.rb).any) {
        g.touched = true;
        g.toucher = site;
      }
  }

  // Keep this instruction's accesses.
  for (const Pending &a : pending) {
    uint32_t id;
    if (!cs.freeRecords.empty()) {
      id = cs.freeRecords.back();
      cs.freeRecords.pop_back();
    } else {
      id = static_cast<uint32_t>(cs.records.size());
      cs.records.emplace_back();
    }
    Record &r = cs.records[id];
    r.ext = a.ext;
    r.write = a.write;
    r.dma = dma;
    r.stream = static_cast<uint8_t>(s);
    r.seq = mySeq;
    r.dead = false;
    r.stamp = 0;
    r.site = siteOf(engine, pc, inst, iters, depth, issueNs, a.endNs);
    auto &space = cs.buckets[spaceIndex(a.ext.space)];
    Impl::keysOf(a.ext, a.binding, keys);
    for (int64_t key : keys) {
      auto &list = space[key * 2 + (a.write ? 1 : 0)];
      // One compute stream's access that covers an earlier one of the same
      // kind stands for it: whatever is ordered after the new one is after
      // the old one, and whatever is not ordered after the old one is not
      // after the new one either. (The latest few entries: a loop's
      // repeated access.)
      if (!dma)
        for (size_t i = list.size(), n = 0; i > 0 && n < 16; --i, ++n) {
          Record &o = cs.records[list[i - 1]];
          if (!o.dead && !o.dma && o.stream == s && o.write == a.write &&
              a.ext.p0 <= o.ext.p0 && a.ext.p1 >= o.ext.p1 &&
              sameBytes(a.ext, o.ext))
            o.dead = true;
        }
      list.push_back(id);
      if (list.size() > kBucketCap) {
        // Forget the oldest live record of the bucket.
        cs.records[list.front()].dead = true;
        list.erase(list.begin());
        ++im.forgotten;
      }
    }
  }
  if (++cs.sinceCollect % 256 == 0)
    Impl::refreshKnown(cs);
  if (cs.sinceCollect >= 16384) {
    cs.sinceCollect = 0;
    im.collect(cs);
  }

  // The clock this instruction publishes when it signals: a transfer's
  // signal retires in its stream's order, so it vouches for every earlier
  // transfer of the stream too.
  Clock out = clock;
  if (dma)
    out[s] = std::max(out[s], mySeq);
  return im.publish(out);
}

namespace {
void printSite(std::ostream &os, const HazardSite &s) {
  os << name(s.engine) << " pc " << s.pc << " (" << mnemonic(s.op) << ")";
  if (s.depth) {
    os << " iter [";
    for (unsigned d = 0; d < s.depth; ++d)
      os << (d ? "," : "") << s.iters[d];
    os << "]";
  }
}

std::string us(double ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f us", ns / 1000.0);
  return buf;
}
} // namespace

std::string Hazard::str() const {
  std::ostringstream os;
  std::string mem(name(space));
  for (char &ch : mem)
    ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  os << name(kind) << " in program '" << program << "' core " << core << " "
     << mem;
  if (space != MemSpace::Hbm)
    os << " partitions [" << p0 << "," << p1 << ")";
  os << " bytes [" << lo << "," << hi << "): ";
  printSite(os, later);
  if (kind == HazardKind::PsumInterleave) {
    os << " accumulates at " << us(later.issueNs) << " onto a group that ";
    printSite(os, earlier);
    os << " accessed at " << us(earlier.issueNs) << " before the group ended";
    return os.str();
  }
  bool laterWrites = kind != HazardKind::Raw;
  bool earlierWrites = kind != HazardKind::War;
  os << (laterWrites ? " writes at " : " reads at ") << us(later.issueNs)
     << ", not ordered after ";
  printSite(os, earlier);
  os << (earlierWrites ? "'s write" : "'s read");
  if (inFlight)
    os << " (in flight until " << us(earlier.endNs) << ")";
  else
    os << " (complete at " << us(earlier.endNs)
       << ": ordered by this run's timing alone)";
  return os.str();
}

//===----------------------------------------------------------------------===//
// The longest dependent chain
//===----------------------------------------------------------------------===//

std::optional<double>
dependentChainNs(const std::vector<const Program *> &programs,
                 const std::vector<AccessRecord> &log, size_t maxLive) {
  /// A write still visible: its hull, and the chain that ends with it.
  struct Live {
    uint16_t core;
    MemSpace space;
    uint32_t p0, p1;
    int64_t lo, hi;
    double chain;
  };
  std::vector<Live> live;
  auto sameInstance = [](const AccessRecord &a, const AccessRecord &b) {
    return a.core == b.core && a.engine == b.engine && a.pc == b.pc &&
           a.depth == b.depth && a.iters == b.iters;
  };
  auto overlaps = [](const Live &w, uint16_t core, const Extent &x) {
    return w.core == core && w.space == x.space && w.p0 < x.p1 && x.p0 < w.p1 &&
           w.lo < x.hi && x.lo < w.hi;
  };
  double longest = 0;
  for (size_t i = 0; i < log.size();) {
    size_t end = i + 1;
    while (end < log.size() && sameInstance(log[i], log[end]))
      ++end;
    const AccessRecord &first = log[i];
    if (first.core >= programs.size() || !programs[first.core])
      return std::nullopt;
    const Program &program = *programs[first.core];
    const auto &stream = program.streams[static_cast<unsigned>(first.engine)];
    if (first.pc >= stream.size())
      return std::nullopt;
    const Instruction &inst = stream[first.pc];
    bool compute =
        inst.op != Opcode::DmaCopy &&
        (first.engine == Engine::Tensor || first.engine == Engine::Vector ||
         first.engine == Engine::Scalar || first.engine == Engine::GpSimd);
    // The chain into this instruction: the latest writes its reads meet.
    double before = 0, weight = 0;
    for (size_t k = i; k < end; ++k) {
      const AccessRecord &r = log[k];
      bool accumulates = r.write && r.slot == Instruction::Dst &&
                         inst.op == Opcode::Matmul && inst.accumulate &&
                         !(inst.startLevel >= 0 && inst.startLevel < r.depth &&
                           r.iters[inst.startLevel] == 0);
      if (r.write && compute)
        weight = std::max(weight, r.endNs - r.issueNs);
      if (r.write && !accumulates)
        continue;
      Extent x = extentOf(program, r.ap, r.iters.data(), r.depth);
      for (const Live &w : live)
        if (overlaps(w, r.core, x))
          before = std::max(before, w.chain);
    }
    double chain = before + (compute ? weight : 0.0);
    longest = std::max(longest, chain);
    // Its writes hide the earlier ones they cover.
    for (size_t k = i; k < end; ++k) {
      const AccessRecord &r = log[k];
      if (!r.write)
        continue;
      Extent x = extentOf(program, r.ap, r.iters.data(), r.depth);
      live.erase(std::remove_if(live.begin(), live.end(),
                                [&](const Live &w) {
                                  return w.core == r.core &&
                                         w.space == x.space && w.p0 >= x.p0 &&
                                         w.p1 <= x.p1 && w.lo >= x.lo &&
                                         w.hi <= x.hi;
                                }),
                 live.end());
      live.push_back({r.core, x.space, x.p0, x.p1, x.lo, x.hi, chain});
      if (live.size() > maxLive)
        return std::nullopt;
    }
    i = end;
  }
  return longest;
}

} // namespace seam::rt
