//===- Profile.cpp - Reading hardware profiles ----------------------------===//

#include "runtime/Profile.h"
#include "runtime/Json.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace seam::rt {

#include "ProfilesData.inc" // kTrn1ProfileJson, kTrn2ProfileJson, kFrameworkProfiles

double Profile::clockGhz(Engine engine) const {
  switch (engine) {
  case Engine::Tensor:
    return teClockGhz;
  case Engine::Vector:
    return veClockGhz;
  case Engine::Scalar:
    return seClockGhz;
  case Engine::GpSimd:
    return gpClockGhz;
  default:
    return 0.0;
  }
}

double Profile::teFlopsPerNs(bool fp32) const {
  double bf16 = 2.0 * teArrayRows * teArrayCols * teClockGhz;
  return fp32 ? bf16 / matmulFp32Factor : bf16;
}

double Profile::elementsPerNs(Engine engine, bool bf16) const {
  switch (engine) {
  case Engine::Vector:
    return (bf16 ? veLanesBf16 : veLanes) * veClockGhz;
  case Engine::Scalar:
    return seLanes * seClockGhz;
  case Engine::GpSimd:
    return gpsimdLanes * gpClockGhz;
  default:
    return 0.0;
  }
}

double Profile::dmaBytesPerNs(unsigned activeCoresPerChip) const {
  double engines = dmaEngines * dmaEngineBytesPerNs;
  double share = hbmBytesPerNs / std::max(1u, activeCoresPerChip);
  return std::min(engines, share);
}

MemoryLimits Profile::memoryLimits() const {
  MemoryLimits limits;
  limits.partitions = sbufPartitions;
  limits.sbufPartitionBytes = sbufPartitionBytes;
  limits.psumPartitionBytes = psumPartitionBytes;
  return limits;
}

namespace {
/// Binds figure names to typed fields and to the range each figure must lie
/// in; one table for reading, overriding and checking. A figure held in an
/// integer field must be a whole number. `max` bounds the figures that size
/// what the emulator allocates or iterates over (cores, queues, on-chip
/// memories), so an override cannot make it allocate without bound.
struct FieldRef {
  const char *name;
  double *d = nullptr;
  unsigned *u = nullptr;
  uint64_t *u64 = nullptr;
  bool positive = true; ///< > 0; otherwise >= 0.
  double max = 0;       ///< Upper bound when non-zero.
  bool host = false;    ///< A framework (host) figure, not the chip's.
};

FieldRef hostField(const char *name, double *d, bool positive = false) {
  FieldRef f{name, d};
  f.positive = positive;
  f.host = true;
  return f;
}

constexpr double kMaxCount = 1024;             // cores, engines, queues, banks
constexpr double kMaxPartitionBytes = 1 << 24; // 16 MiB per partition

std::vector<FieldRef> fieldTable(Profile &p) {
  return {
      {"cores_per_chip", nullptr, &p.coresPerChip, nullptr, true, kMaxCount},
      {"te_clock_ghz", &p.teClockGhz},
      {"ve_clock_ghz", &p.veClockGhz},
      {"se_clock_ghz", &p.seClockGhz},
      {"gpsimd_clock_ghz", &p.gpClockGhz},
      {"sbuf_partitions", nullptr, &p.sbufPartitions, nullptr, true, 128},
      {"sbuf_partition_bytes", nullptr, nullptr, &p.sbufPartitionBytes, true,
       kMaxPartitionBytes},
      {"psum_partition_bytes", nullptr, nullptr, &p.psumPartitionBytes, true,
       kMaxPartitionBytes},
      {"psum_banks", nullptr, &p.psumBanks, nullptr, true, kMaxCount},
      {"hbm_bytes", nullptr, nullptr, &p.hbmBytes, true, 0x1p62},
      {"hbm_bytes_per_ns", &p.hbmBytesPerNs},
      {"dma_engines", nullptr, &p.dmaEngines, nullptr, true, kMaxCount},
      {"dma_queues_per_engine", nullptr, &p.dmaQueuesPerEngine, nullptr, true,
       kMaxCount},
      {"dma_engine_bytes_per_ns", &p.dmaEngineBytesPerNs},
      {"dma_fixed_cost_ns", &p.dmaFixedCostNs, nullptr, nullptr, false},
      {"min_ii_cycles", &p.minIiCycles},
      {"mm_init_latency_cycles", &p.mmInitLatencyCycles, nullptr, nullptr,
       false},
      {"matmul_fp32_factor", &p.matmulFp32Factor},
      {"matmul_stationary_issue_cap", &p.matmulStationaryIssueCap},
      {"tensor_tensor_cycles_per_element", &p.tensorTensorCyclesPerElement},
      {"act_reduce_extra_cycles", &p.actReduceExtraCycles, nullptr, nullptr,
       false},
      {"reciprocal_cycles_per_element", &p.reciprocalCyclesPerElement},
      {"gpsimd_fixed_cycles", &p.gpsimdFixedCycles, nullptr, nullptr, false},
      hostField("pcie_bytes_per_ns", &p.pcieBytesPerNs, true),
      hostField("transfer_latency_ns", &p.transferLatencyNs),
      hostField("launch_overhead_ns", &p.launchOverheadNs),
      hostField("first_run_overhead_ns", &p.firstRunOverheadNs),
      hostField("tracing_cost_per_op_ns", &p.tracingCostPerOpNs),
      hostField("graph_lookup_ns", &p.graphLookupNs),
      hostField("sync_ns", &p.syncNs),
      hostField("kernel_call_host_ns", &p.kernelCallHostNs),
      {"collective_hop_latency_ns", &p.collectiveHopLatencyNs, nullptr, nullptr,
       false},
      {"neuronlink_bytes_per_ns", &p.neuronLinkBytesPerNs},
      {"te_array_rows", nullptr, &p.teArrayRows},
      {"te_array_cols", nullptr, &p.teArrayCols},
      {"ve_lanes", nullptr, &p.veLanes},
      {"ve_lanes_bf16", nullptr, &p.veLanesBf16},
      {"se_lanes", nullptr, &p.seLanes},
      {"gpsimd_lanes", nullptr, &p.gpsimdLanes},
  };
}

std::string numberText(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

/// Whether `v` is a value `f` may take; the error says why not.
Status checkValue(const FieldRef &f, double v) {
  std::string name = std::string("figure '") + f.name + "'";
  if (!std::isfinite(v))
    return Status::failure(name + " must be a finite number, got " +
                           numberText(v));
  if (f.positive && !(v > 0))
    return Status::failure(name + " must be positive, got " + numberText(v));
  if (!f.positive && v < 0)
    return Status::failure(name + " must be non-negative, got " +
                           numberText(v));
  if ((f.u || f.u64) && std::trunc(v) != v)
    return Status::failure(name + " must be a whole number, got " +
                           numberText(v));
  if (f.max > 0 && v > f.max)
    return Status::failure(name + " must be at most " + numberText(f.max) +
                           ", got " + numberText(v));
  return Status::ok();
}

void assign(const FieldRef &f, double v) {
  if (f.d)
    *f.d = v;
  else if (f.u)
    *f.u = static_cast<unsigned>(v);
  else if (f.u64)
    *f.u64 = static_cast<uint64_t>(v);
}

/// Whether the rules between figures hold; the error names the one broken.
Status checkConsistency(const Profile &p) {
  if (p.psumPartitionBytes % p.psumBanks != 0)
    return Status::failure("psum_partition_bytes (" +
                           std::to_string(p.psumPartitionBytes) +
                           ") is not a multiple of psum_banks (" +
                           std::to_string(p.psumBanks) + ")");
  return Status::ok();
}

/// Reads a profile's "figures" object: each has a numeric value, a source
/// and whether it is estimated (and may be marked calibrated).
Status readFigures(const json::Value &figs,
                   std::map<std::string, Figure> &out) {
  using json::Value;
  for (const auto &[key, v] : figs.object) {
    if (!v.isObject())
      return Status::failure("figure '" + key + "' is not an object");
    const Value *value = v.get("value");
    const Value *source = v.get("source");
    const Value *estimated = v.get("estimated");
    const Value *calibrated = v.get("calibrated");
    if (!value || !value->isNumber())
      return Status::failure("figure '" + key + "' has no numeric 'value'");
    if (!source || !source->isString() || source->string.empty())
      return Status::failure("figure '" + key + "' has no 'source'");
    if (!estimated || !estimated->isBool())
      return Status::failure("figure '" + key + "' has no boolean 'estimated'");
    if (calibrated && !calibrated->isBool())
      return Status::failure("figure '" + key +
                             "': 'calibrated' is not a boolean");
    Figure fig;
    fig.value = value->number;
    fig.source = source->string;
    fig.estimated = estimated->boolean;
    fig.calibrated = calibrated && calibrated->boolean;
    if (const Value *unit = v.get("unit"); unit && unit->isString())
      fig.unit = unit->string;
    out[key] = fig;
  }
  return Status::ok();
}
} // namespace

std::string Profile::figureNames() {
  Profile scratch;
  std::string names;
  for (const FieldRef &f : fieldTable(scratch))
    names += (names.empty() ? "" : ", ") + std::string(f.name);
  return names;
}

std::map<std::string, double> Profile::overrides() const {
  const Profile &base = builtin(target);
  std::map<std::string, double> changed;
  for (const auto &[figure, f] : figures) {
    if (isHostFigure(figure))
      continue;
    auto it = base.figures.find(figure);
    if (it == base.figures.end() || it->second.value != f.value)
      changed[figure] = f.value;
  }
  return changed;
}

Status Profile::set(const std::string &figure, double value) {
  for (const FieldRef &f : fieldTable(*this)) {
    if (figure != f.name)
      continue;
    if (Status valid = checkValue(f, value); !valid)
      return valid;
    Profile before = *this;
    assign(f, value);
    if (Status consistent = checkConsistency(*this); !consistent) {
      *this = std::move(before);
      return consistent;
    }
    figures[figure].value = value;
    return Status::ok();
  }
  return Status::failure("the " + name + " profile has no figure '" + figure +
                         "'; figures: " + figureNames());
}

Status Profile::set(std::string_view assignment) {
  size_t eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0)
    return Status::failure("expected name=value, got '" +
                           std::string(assignment) + "'");
  std::string figure(assignment.substr(0, eq));
  std::string text(assignment.substr(eq + 1));
  char *end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || !end || *end != '\0')
    return Status::failure("figure '" + figure + "': '" + text +
                           "' is not a number");
  return set(figure, value);
}

Expected<Profile> Profile::fromJson(std::string_view text,
                                    const std::string &origin) {
  using json::Value;
  Expected<Value> parsed = json::parse(text);
  if (!parsed)
    return Expected<Profile>::failure("profile " + origin + ": " +
                                      parsed.error());
  const Value &root = *parsed;
  auto fail = [&](const std::string &m) {
    return Expected<Profile>::failure("profile " + origin + ": " + m);
  };
  if (!root.isObject())
    return fail("top level is not an object");
  Profile p;
  const Value *nameV = root.get("name");
  const Value *targetV = root.get("target");
  if (!nameV || !nameV->isString())
    return fail("missing string 'name'");
  if (!targetV || !targetV->isString())
    return fail("missing string 'target'");
  p.name = nameV->string;
  auto target = parseTarget(targetV->string);
  if (!target)
    return fail("unknown target '" + targetV->string + "'");
  p.target = *target;
  const Value *figs = root.get("figures");
  if (!figs || !figs->isObject())
    return fail("missing object 'figures'");
  if (Status read = readFigures(*figs, p.figures); !read)
    return fail(read.error());
  for (const auto &[key, fig] : p.figures)
    if (isHostFigure(key))
      return fail("figure '" + key +
                  "' is a host (framework) figure: it belongs in a "
                  "framework profile (runtime/profiles/frameworks), not "
                  "in a device profile");
  for (const FieldRef &f : fieldTable(p)) {
    if (f.host)
      continue;
    auto it = p.figures.find(f.name);
    if (it == p.figures.end())
      return fail(std::string("missing figure '") + f.name + "'");
    double v = it->second.value;
    if (Status valid = checkValue(f, v); !valid)
      return fail(valid.error());
    assign(f, v);
  }
  if (Status consistent = checkConsistency(p); !consistent)
    return fail(consistent.error());
  Expected<FrameworkProfile> framework =
      FrameworkProfile::builtin(FrameworkProfile::kDefault);
  if (!framework)
    return fail(framework.error());
  if (Status applied = p.applyFramework(*framework); !applied)
    return fail(applied.error());
  return p;
}

bool FrameworkProfile::supports(Target target) const {
  return std::find(targets.begin(), targets.end(), target) != targets.end();
}

Expected<FrameworkProfile>
FrameworkProfile::fromJson(std::string_view text, const std::string &origin) {
  using json::Value;
  auto fail = [&](const std::string &m) {
    return Expected<FrameworkProfile>::failure("framework profile " + origin +
                                               ": " + m);
  };
  Expected<Value> parsed = json::parse(text);
  if (!parsed)
    return fail(parsed.error());
  const Value &root = *parsed;
  if (!root.isObject())
    return fail("top level is not an object");
  FrameworkProfile fw;
  const Value *nameV = root.get("name");
  if (!nameV || !nameV->isString() || nameV->string.empty())
    return fail("missing string 'name'");
  fw.name = nameV->string;
  if (const Value *d = root.get("description"); d && d->isString())
    fw.description = d->string;
  const Value *targetsV = root.get("targets");
  if (!targetsV || !targetsV->isArray() || targetsV->array.empty())
    return fail("missing non-empty array 'targets'");
  for (const Value &t : targetsV->array) {
    std::optional<Target> target =
        t.isString() ? parseTarget(t.string) : std::nullopt;
    if (!target)
      return fail("'targets' holds " +
                  (t.isString() ? "unknown target '" + t.string + "'"
                                : std::string("a non-string")) +
                  " (expected trn1 or trn2)");
    fw.targets.push_back(*target);
  }
  const Value *figs = root.get("figures");
  if (!figs || !figs->isObject())
    return fail("missing object 'figures'");
  if (Status read = readFigures(*figs, fw.figures); !read)
    return fail(read.error());
  Profile scratch;
  std::string hostNames;
  for (const FieldRef &f : fieldTable(scratch))
    if (f.host)
      hostNames += (hostNames.empty() ? "" : ", ") + std::string(f.name);
  std::string calibrated;
  for (const auto &[key, fig] : fw.figures) {
    if (!Profile::isHostFigure(key))
      return fail(std::string("figure '")
                      .append(key)
                      .append("' is not a host figure (host figures: ")
                      .append(hostNames)
                      .append(")"));
    if (!fig.calibrated)
      continue;
    if (!calibrated.empty())
      return fail(std::string("figures '")
                      .append(calibrated)
                      .append("' and '")
                      .append(key)
                      .append("' are both calibrated: a profile calibrates "
                              "at most one"));
    calibrated = key;
  }
  for (const FieldRef &f : fieldTable(scratch)) {
    if (!f.host)
      continue;
    auto it = fw.figures.find(f.name);
    if (it == fw.figures.end())
      return fail(std::string("missing figure '") + f.name + "'");
    if (Status valid = checkValue(f, it->second.value); !valid)
      return fail(valid.error());
  }
  if (const Value *c = root.get("calibration")) {
    if (!c->isObject())
      return fail("'calibration' is not an object");
    Calibration cal;
    auto str = [&](const char *key, std::string &out) {
      const Value *v = c->get(key);
      if (!v || !v->isString() || v->string.empty())
        return false;
      out = v->string;
      return true;
    };
    if (!str("figure", cal.figure))
      return fail("calibration has no string 'figure'");
    if (!str("row", cal.row))
      return fail("calibration has no string 'row' (the published row it "
                  "is computed on)");
    if (!str("count", cal.count) ||
        (cal.count != "traced_ops" && cal.count != "kernel_calls"))
      return fail("calibration's 'count' must be traced_ops or kernel_calls");
    str("what", cal.what);
    if (const Value *h = c->get("held_out")) {
      if (!h->isArray())
        return fail("calibration's 'held_out' is not an array");
      for (const Value &row : h->array) {
        if (!row.isString() || row.string.empty())
          return fail("calibration's 'held_out' holds a non-string");
        if (row.string == cal.row)
          return fail("calibration row '" + cal.row +
                      "' is also listed as held out");
        cal.heldOut.push_back(row.string);
      }
    }
    if (cal.figure != calibrated)
      return fail("calibration figure '" + cal.figure +
                  "' is not the figure marked \"calibrated\": true" +
                  (calibrated.empty() ? std::string(" (none is)")
                                      : " ('" + calibrated + "' is)"));
    fw.calibration = std::move(cal);
  } else if (!calibrated.empty()) {
    return fail("figure '" + calibrated +
                "' is calibrated but the profile names no 'calibration' row");
  }
  return fw;
}

Expected<FrameworkProfile> FrameworkProfile::load(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Expected<FrameworkProfile>::failure("framework profile " + path +
                                               ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  return fromJson(ss.str(), path);
}

std::string FrameworkProfile::builtinNames() {
  std::string names;
  for (const EmbeddedFramework &f : kFrameworkProfiles)
    names += (names.empty() ? "" : ", ") + std::string(f.name);
  return names;
}

Expected<FrameworkProfile> FrameworkProfile::builtin(std::string_view name) {
  for (const EmbeddedFramework &f : kFrameworkProfiles) {
    if (name != f.name)
      continue;
    Expected<FrameworkProfile> fw =
        fromJson(f.json, std::string("<builtin ") + f.name + ">");
    if (fw && fw->name != f.name)
      return Expected<FrameworkProfile>::failure(
          "framework profile <builtin " + std::string(f.name) +
          ">: its name is '" + fw->name + "'");
    return fw;
  }
  return Expected<FrameworkProfile>::failure(
      "unknown framework '" + std::string(name) +
      "' (known: " + builtinNames() + ")");
}

bool Profile::isHostFigure(std::string_view figure) {
  Profile scratch;
  for (const FieldRef &f : fieldTable(scratch))
    if (f.host && figure == f.name)
      return true;
  return false;
}

Status Profile::applyFramework(const FrameworkProfile &fw) {
  if (!fw.supports(target)) {
    std::string names;
    for (Target t : fw.targets)
      names += (names.empty() ? "" : ", ") + std::string(seam::rt::name(t));
    return Status::failure("framework '" + fw.name + "' has no figures for " +
                           std::string(seam::rt::name(target)) +
                           " (its targets: " + names + ")");
  }
  Profile next = *this;
  for (const FieldRef &f : fieldTable(next)) {
    if (!f.host)
      continue;
    auto it = fw.figures.find(f.name);
    if (it == fw.figures.end())
      return Status::failure("framework '" + fw.name + "' has no figure '" +
                             f.name + "'");
    if (Status valid = checkValue(f, it->second.value); !valid)
      return Status::failure("framework '" + fw.name + "': " + valid.error());
    assign(f, it->second.value);
    next.figures[f.name] = it->second;
  }
  next.framework = fw.name;
  next.calibration = fw.calibration;
  *this = std::move(next);
  return Status::ok();
}

Expected<Profile> Profile::load(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Expected<Profile>::failure("profile " + path + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  return fromJson(ss.str(), path);
}

static Profile parseBuiltin(const char *text, const char *origin) {
  Expected<Profile> p = Profile::fromJson(text, origin);
  if (!p) {
    // The embedded files are tested; reaching this is a build defect.
    std::fprintf(stderr, "seam runtime: %s\n", p.error().c_str());
    std::abort();
  }
  return *p;
}

const Profile &Profile::builtin(Target target) {
  static const Profile trn1 = parseBuiltin(kTrn1ProfileJson, "<builtin trn1>");
  static const Profile trn2 = parseBuiltin(kTrn2ProfileJson, "<builtin trn2>");
  return target == Target::Trn2 ? trn2 : trn1;
}

Expected<Profile> Profile::builtin(std::string_view targetName) {
  auto target = parseTarget(targetName);
  if (!target)
    return Expected<Profile>::failure("unknown target '" +
                                      std::string(targetName) +
                                      "' (expected trn1 or trn2)");
  return builtin(*target);
}

} // namespace seam::rt
