//===- HazardChecker.cpp - In-flight accesses and their conflicts ---------===//

#include "runtime/HazardChecker.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>
#include <sstream>

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
    if (k > 0 &&
        stride[k - 1] == static_cast<int64_t>(size[i]) * stride[i]) {
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

struct Access {
  Extent ext;
  bool write = false;
  bool ordered = false; ///< its stream orders it (compute, collective)
  double endNs = 0;
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
} // namespace

struct HazardChecker::Impl {
  struct Core {
    const Program *program = nullptr;
    std::array<std::vector<Access>, 3> inFlight; ///< SBUF, PSUM, HBM
    std::vector<PsumGroup> groups;
  };
  std::vector<Core> cores;
  std::vector<std::pair<int64_t, int64_t>> ra, rb; ///< scratch
  std::vector<Access> pending;                     ///< scratch
};

HazardChecker::HazardChecker(const std::vector<const Program *> &programs,
                             unsigned maxReports)
    : impl(std::make_unique<Impl>()) {
  impl->cores.resize(programs.size());
  for (size_t c = 0; c < programs.size(); ++c)
    impl->cores[c].program = programs[c];
  kept.reserve(std::min(maxReports, 64u));
  maxKept = maxReports;
}

HazardChecker::~HazardChecker() = default;

void HazardChecker::report(Hazard h) {
  ++total;
  if (kept.size() < maxKept)
    kept.push_back(std::move(h));
}

void HazardChecker::issue(unsigned core, Engine engine, uint32_t pc,
                          const Instruction &inst, const uint32_t *iters,
                          unsigned depth, double issueNs, double readEndNs,
                          double writeEndNs) {
  Impl::Core &cs = impl->cores[core];
  const Program &program = *cs.program;
  bool ordered = inst.op != Opcode::DmaCopy;
  auto &pending = impl->pending;
  pending.clear();
  for (unsigned s = 0; s < Instruction::NumSlots; ++s) {
    auto slot = static_cast<Instruction::Slot>(s);
    if (!inst.has(slot))
      continue;
    Access a;
    a.write = slot == Instruction::Dst ||
              (slot == Instruction::Aux && inst.op == Opcode::Activation);
    a.ordered = ordered;
    a.endNs = a.write ? writeEndNs : readEndNs;
    a.ext = extentOf(program, inst.ap(slot), iters, depth);
    a.site = siteOf(engine, pc, inst, iters, depth, issueNs, a.endNs);
    pending.push_back(a);
  }

  for (const Access &a : pending) {
    auto &list = cs.inFlight[spaceIndex(a.ext.space)];
    size_t keep = 0;
    for (size_t i = 0; i < list.size(); ++i) {
      const Access &b = list[i];
      if (b.endNs <= issueNs)
        continue; // completed: drop it
      list[keep++] = list[i];
      if (!a.write && !b.write)
        continue;
      if (a.ordered && b.ordered && a.site.engine == b.site.engine)
        continue;
      Overlap o = overlapOf(b.ext, a.ext, impl->ra, impl->rb);
      if (!o.any)
        continue;
      Hazard h;
      h.kind = !a.write ? HazardKind::Raw
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
      h.later = a.site;
      report(std::move(h));
    }
    list.resize(keep);
  }

  // PSUM accumulation groups (only the TE writes PSUM).
  bool teWrite = inst.op == Opcode::Matmul || inst.op == Opcode::Transpose;
  for (const Access &a : pending) {
    if (a.ext.space != MemSpace::Psum)
      continue;
    if (teWrite && a.write) {
      bool accumulate = inst.accumulate;
      if (accumulate && inst.startLevel >= 0 &&
          static_cast<unsigned>(inst.startLevel) < depth &&
          iters[inst.startLevel] == 0)
        accumulate = false;
      if (!accumulate) {
        // A new group starts: it replaces every group it overlaps.
        auto &groups = cs.groups;
        groups.erase(std::remove_if(groups.begin(), groups.end(),
                                    [&](const PsumGroup &g) {
                                      return overlapOf(g.ext, a.ext, impl->ra,
                                                       impl->rb)
                                          .any;
                                    }),
                     groups.end());
        groups.push_back({a.ext, false, {}});
        continue;
      }
      for (PsumGroup &g : cs.groups) {
        if (!g.touched)
          continue;
        Overlap o = overlapOf(g.ext, a.ext, impl->ra, impl->rb);
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
        h.later = a.site;
        report(std::move(h));
        g.touched = false; // once per interleaving
      }
      continue;
    }
    if (engine == Engine::Tensor)
      continue;
    for (PsumGroup &g : cs.groups)
      if (!g.touched && overlapOf(g.ext, a.ext, impl->ra, impl->rb).any) {
        g.touched = true;
        g.toucher = a.site;
      }
  }

  for (Access &a : pending)
    cs.inFlight[spaceIndex(a.ext.space)].push_back(std::move(a));
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
  switch (kind) {
  case HazardKind::Raw:
    os << " reads at " << us(later.issueNs) << " before ";
    printSite(os, earlier);
    os << " completes its write at " << us(earlier.endNs);
    break;
  case HazardKind::War:
    os << " writes at " << us(later.issueNs) << " before ";
    printSite(os, earlier);
    os << " completes its read at " << us(earlier.endNs);
    break;
  case HazardKind::Waw:
    os << " writes at " << us(later.issueNs) << " before ";
    printSite(os, earlier);
    os << " completes its write at " << us(earlier.endNs);
    break;
  case HazardKind::PsumInterleave:
    os << " accumulates at " << us(later.issueNs)
       << " onto a group that ";
    printSite(os, earlier);
    os << " accessed at " << us(earlier.issueNs) << " before the group ended";
    break;
  }
  return os.str();
}

} // namespace seam::rt
