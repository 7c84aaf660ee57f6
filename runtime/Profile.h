//===- Profile.h - Hardware profiles (trn1, trn2) as data ------*- C++ -*-===//
//
// Every hardware figure the runtime uses comes from a profile file
// (runtime/profiles/<target>.json, embedded at build time and loadable from
// a path). Each figure carries its source and whether it is estimated.
//
// The host and framework figures (PCIe, launch, tracing, graph lookup, sync,
// kernel-call host time) belong to the software stack the model runs on, not
// to the chip: they come from a framework profile
// (runtime/profiles/frameworks/<name>.json), applied over the device
// profile. A framework profile may mark one figure calibrated, on one named
// published row (`calibration`); bench/reproduce.py computes it.
//
//===----------------------------------------------------------------------===//

#ifndef SEAM_RUNTIME_PROFILE_H
#define SEAM_RUNTIME_PROFILE_H

#include "runtime/Expected.h"
#include "runtime/Isa.h"
#include "runtime/Program.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace seam::rt {

struct Figure {
  double value = 0.0;
  std::string unit;
  std::string source;
  bool estimated = false;
  /// Computed from one published row (FrameworkProfile::calibration); the
  /// file's value is the prior used until something calibrates it.
  bool calibrated = false;
};

/// The published row a framework profile calibrates its one calibrated
/// figure on, and the rows that are then held-out predictions. Rows are
/// paths into the published figures (seed-results.json), e.g.
/// "flux2_klein.eager.rows[0].warm_s_per_step".
struct Calibration {
  std::string figure;
  std::string row;
  std::string what;  ///< the row in words
  std::string count; ///< what the figure is paid per: traced_ops, kernel_calls
  std::vector<std::string> heldOut;
};

/// Host and framework costs of one software stack (torch-xla lazy tensors,
/// PyTorch native eager, ...), for the targets it names.
struct FrameworkProfile {
  std::string name;
  std::string description;
  std::vector<Target> targets;
  std::map<std::string, Figure> figures;
  std::optional<Calibration> calibration;

  bool supports(Target target) const;
  static Expected<FrameworkProfile> fromJson(std::string_view text,
                                             const std::string &origin);
  static Expected<FrameworkProfile> load(const std::string &path);
  /// A framework embedded in the binary, by name; an unknown name's error
  /// lists the known ones.
  static Expected<FrameworkProfile> builtin(std::string_view name);
  /// The embedded frameworks' names, comma separated.
  static std::string builtinNames();
  /// The framework a device profile gets unless told otherwise.
  static constexpr const char *kDefault = "torch-xla-lazy";
};

struct Profile {
  std::string name;
  Target target = Target::Trn1;
  /// Device figures and, after applyFramework, the framework's host figures.
  std::map<std::string, Figure> figures;
  /// The framework whose host figures are applied.
  std::string framework;
  std::optional<Calibration> calibration;

  // Typed views of the figures (filled from `figures`).
  unsigned coresPerChip = 0;
  double teClockGhz = 0, veClockGhz = 0, seClockGhz = 0, gpClockGhz = 0;
  unsigned sbufPartitions = 0;
  uint64_t sbufPartitionBytes = 0, psumPartitionBytes = 0;
  unsigned psumBanks = 0;
  uint64_t hbmBytes = 0;
  double hbmBytesPerNs = 0;
  unsigned dmaEngines = 0, dmaQueuesPerEngine = 0;
  double dmaEngineBytesPerNs = 0, dmaFixedCostNs = 0;
  double minIiCycles = 0, mmInitLatencyCycles = 0, matmulFp32Factor = 0;
  double matmulStationaryIssueCap = 0;
  double tensorTensorCyclesPerElement = 0, actReduceExtraCycles = 0;
  double reciprocalCyclesPerElement = 0, gpsimdFixedCycles = 0;
  double pcieBytesPerNs = 0, launchOverheadNs = 0, firstRunOverheadNs = 0;
  double tracingCostPerOpNs = 0;
  /// Host time of one custom-kernel call in the framework (see the framework
  /// profile's source).
  double kernelCallHostNs = 0;
  /// Fixed latency of one host <-> device copy, on top of its bytes.
  double transferLatencyNs = 0;
  /// Per lazy graph executed: hash and compile-cache lookup.
  double graphLookupNs = 0;
  /// Fixed host cost of one sync, beyond the wait for the device.
  double syncNs = 0;
  double collectiveHopLatencyNs = 0, neuronLinkBytesPerNs = 0;
  unsigned teArrayRows = 0, teArrayCols = 0;
  unsigned veLanes = 0, veLanesBf16 = 0, seLanes = 0, gpsimdLanes = 0;

  /// Clock of an engine in GHz (cycles per ns). DMA/Sync/CC have none: 0.
  double clockGhz(Engine engine) const;
  MemoryLimits memoryLimits() const;
  uint64_t psumBankBytes() const { return psumPartitionBytes / psumBanks; }

  // Peaks, the denominators of the roofline floor (hardware.md "Engines and
  // clocks", "Memories", "DMA").
  /// Tensor Engine FLOP/ns: rows x columns x 2 (multiply-add) x clock, divided
  /// by `matmul_fp32_factor` for fp32 operands.
  double teFlopsPerNs(bool fp32) const;
  /// Elements per ns of a VE / SE / GpSimd instruction: lanes x clock (the
  /// Vector engine has a wider mode for bf16 on trn2). 0 for other engines.
  double elementsPerNs(Engine engine, bool bf16) const;
  /// HBM bytes per ns one core can move: its DMA engines at their sustained
  /// rate, capped by its share of the chip's HBM bandwidth when
  /// `activeCoresPerChip` cores of the chip stream at the same time.
  double dmaBytesPerNs(unsigned activeCoresPerChip) const;
  /// Overrides one figure (ablations, seam-run --set) after checking it
  /// against the figure's rules (finite; positive or non-negative; a whole
  /// number for counts and sizes; bounded where the emulator allocates by
  /// it; consistent with the other figures). On failure the profile is
  /// unchanged and the message names the figure (an unknown name lists the
  /// known ones).
  Status set(const std::string &figure, double value);
  /// The same from "name=value" text.
  Status set(std::string_view assignment);
  /// The device figures whose value differs from the built-in profile of
  /// `target` (what seam-run --set or a loaded file changed), by name: what
  /// the compiler plans with. Host (framework) figures are left out: they
  /// change no program.
  std::map<std::string, double> overrides() const;
  /// Every figure name a profile has, comma separated.
  static std::string figureNames();
  /// Whether `figure` is a host (framework) figure.
  static bool isHostFigure(std::string_view figure);
  /// Replaces the host figures with `framework`'s; fails (profile unchanged)
  /// when the framework has no figures for this target.
  Status applyFramework(const FrameworkProfile &framework);

  /// A device profile (host figures are not allowed in it) with the default
  /// framework's host figures applied.
  static Expected<Profile> fromJson(std::string_view text,
                                    const std::string &origin);
  static Expected<Profile> load(const std::string &path);
  /// The profile embedded in the binary for `target`, with the default
  /// framework.
  static const Profile &builtin(Target target);
  static Expected<Profile> builtin(std::string_view targetName);
};

} // namespace seam::rt

#endif // SEAM_RUNTIME_PROFILE_H
