//===- ConvertSeamToNcore.h - seam -> ncore framework -----------*- C++ -*-===//
//
// `convert-seam-to-ncore` turns every `func.func` tagged `seam.program` into
// an `ncore.program` of the same name (inside a nested `module @ncore`). The
// op families live in one file each (ConvertLinear.cpp, ConvertNorm.cpp, ...)
// and register their lowerings into a `LoweringTable`; this header is the
// framework they share: where each seam tensor lives (`Placement`), loops
// that stay loops (`forEachRowTile`, `forEachChunk`) and tile helpers.
//
// Layout. A tensor of shape [d0, ..., dn-1] is a matrix of rows x cols with
// cols = dn-1. In SBUF, row r sits on partition r % 128 at free offset
// (r / 128) * pitch; in HBM it is the row-major tensor. Program inputs,
// params and outputs are HBM; intermediates are SBUF while the per-partition
// budget allows, else HBM scratch (`ncore.alloc {name = "spillN"}`).
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_LOWERING_CONVERTSEAMTONCORE_H
#define SEAM_LOWERING_CONVERTSEAMTONCORE_H

#include "dialect/ncore/NcoreBuilder.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include <functional>
#include <memory>

namespace seam::rt {
struct Profile;
} // namespace seam::rt

namespace mlir::seam {

#define GEN_PASS_DECL
#include "lowering/conversion/ConvertPasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "lowering/conversion/ConvertPasses.h.inc"

/// The lowering of a module's programs to ncore, as every driver runs it:
/// seam-plan-pairings decides which ops are lowered together, then
/// convert-seam-to-ncore (with `options`) carries the decisions out.
void buildLowerToNcorePipeline(OpPassManager &pm,
                               const ConvertSeamToNcoreOptions &options);

namespace conversion {

using ncore::MemSpace;
using ncore::TileType;

/// An index that may move with the enclosing ncore.loops: affine in the
/// induction variables of the loops the lowering opened.
using ncore::Index;
using ncore::kNumPartitions;

/// The transfer size a lowering aims for per DMA queue: 64 KiB moves in
/// ~2.8 us at 23 B/ns (trn2), so the ~0.6 us fixed cost is under a fifth of
/// it (hardware.md "DMA": >= 2 KiB per partition approaches peak). The
/// linear's slab width and stagedInSbuf's limit both use it.
constexpr int64_t kTargetPieceBytes = 64 * 1024;

/// Where one seam tensor lives, seen as a rows x cols matrix.
/// The shape and element type a tensor has on the device: its own, and a
/// complex<f32> tensor as f32 with a trailing dim of 2 (re, im interleaved:
/// the memory layout of complex<f32>, as kernels/ hbmTileFor).
std::pair<SmallVector<int64_t>, Type> deviceLayout(RankedTensorType t);

struct Placement {
  /// HBM: a 2-D contiguous [R, pitch] tile; SBUF: an [P, T * pitch] tile.
  Value root;
  MemSpace space = MemSpace::Sbuf;
  Type elementType;
  /// The seam tensor's shape.
  SmallVector<int64_t> shape;
  int64_t rows = 1, cols = 1;
  /// Elements between consecutive rows (HBM) or row tiles (SBUF).
  int64_t pitch = 1;
  /// First row (HBM: any; SBUF: a multiple of 128) and first column.
  int64_t rowOffset = 0, colOffset = 0;

  bool inSbuf() const { return space == MemSpace::Sbuf; }
  bool isContiguous() const { return pitch == cols && colOffset == 0; }
  int64_t partitions() const { return std::min(rows, kNumPartitions); }
  int64_t rowTiles() const {
    return (rows + kNumPartitions - 1) / kNumPartitions;
  }

  /// A [rows, cols] matrix of `elementType` over the SBUF tile `root`
  /// ([P, T * cols]: row tile t at t * cols), from its first element.
  static Placement sbufMatrix(Value root, int64_t rows, int64_t cols,
                              Type elementType) {
    Placement p;
    p.root = root;
    p.space = MemSpace::Sbuf;
    p.elementType = elementType;
    p.shape = {rows, cols};
    p.rows = rows;
    p.cols = p.pitch = cols;
    return p;
  }

  /// A tensor of `shape` and `elementType` as the matrix matrixOf(shape)
  /// over the HBM tile `root`, which has that matrix's shape.
  static Placement hbmMatrix(Value root, ArrayRef<int64_t> shape,
                             Type elementType);
};

/// The shape of a ranked tensor value (rank 0 is [1]).
SmallVector<int64_t> shapeOf(Value v);

/// rows x cols of a shape (rank 0 is 1 x 1).
std::pair<int64_t, int64_t> matrixOf(ArrayRef<int64_t> shape);

/// Target figures the conversion needs (from runtime/profiles).
struct TargetInfo {
  std::string name;
  int64_t sbufPartitionBytes = 0;
  /// Bytes per partition kept free for the working tiles of one op.
  int64_t workingBytes = 0;
  /// The hardware profile, for the cost models that choose loop orders and
  /// tile sizes (engine clocks, DMA queues, bandwidth and fixed cost).
  const ::seam::rt::Profile *profile = nullptr;
  /// Explain decisions with remarks (the pass's `remarks` option).
  bool remarks = true;
  /// The kernel calls' boundary semantics (ncore::kBoundaryAttrName).
  std::string kernelBoundary = "barrier";
};

/// The counters of a conversion, declared once: X(field, counter name,
/// description). Each is a ConversionStats field and a PassCounter of
/// convert-seam-to-ncore (printed with -mlir-pass-statistics). "Streamed"
/// linears read each weight slab once per row group ("weight-passes" counts
/// their passes over HBM in all); "blocked" ones had no streaming plan fit.
#define SEAM_CONVERSION_STATS(X)                                               \
  X(programs, "programs", "Programs lowered")                                  \
  X(spills, "spills", "Intermediates spilled to HBM")                          \
  X(spillBytes, "spill-bytes", "Bytes of spilled intermediates")               \
  X(relayouts, "relayouts", "Copies to HBM for a layout change")               \
  X(kernelCalls, "kernel-calls", "Kernel calls inside programs")               \
  X(narrowInHbm, "narrow-in-hbm", "Tensors of few long rows placed in HBM")    \
  X(sbufResident, "sbuf-resident", "Intermediates kept in SBUF")               \
  X(inputsStaged, "inputs-staged",                                             \
    "Program inputs a norm reads, loaded whole before the first op")           \
  X(writtenToHbm, "written-to-hbm",                                            \
    "Results written to HBM tile by tile for readers that take HBM")           \
  X(concatInPlace, "concat-in-place",                                          \
    "Concatenation operands written in place by their producer")               \
  X(linearsStreamed, "linears-streamed", "Linears lowered weight-streaming")   \
  X(transposesReused, "xt-reused",                                             \
    "Linears that reused an earlier linear's X^T of the same input")           \
  X(weightPasses, "weight-passes",                                             \
    "Passes of streamed linears over their weight in HBM")                     \
  X(linearsBlocked, "linears-blocked", "Linears left to the blocked order")    \
  X(handoffs, "yt-handoffs",                                                   \
    "Linears that handed Y^T to the next linear as its X^T")                   \
  X(normTransposes, "norm-xt",                                                 \
    "Norms that built the X^T of the linears reading them")                    \
  X(normAffineInXt, "norm-affine-in-xt",                                       \
    "layer_norms that applied gamma and beta in their X^T evacuations")        \
  X(attentionPipelines, "attention-pipelines",                                 \
    "Attentions run as the stable pipeline (lowering/recipes)")                \
  X(interleaved, "interleaved",                                                \
    "Ops lowered inside another op's pipeline (InterleavedWork)")              \
  X(rowProduced, "row-produced",                                               \
    "Ops emitted row tile by row tile in their reader's row loop")             \
  X(columnConsumed, "column-consumed",                                         \
    "Collectives emitted by the linear that produces their operand")

/// Counts of one conversion, added to the pass counters when it succeeds.
struct ConversionStats {
#define SEAM_STAT_FIELD(field, name, description) int64_t field = 0;
  SEAM_CONVERSION_STATS(SEAM_STAT_FIELD)
#undef SEAM_STAT_FIELD
  /// Adds these counts to convert-seam-to-ncore's PassCounters.
  void publish() const;
};

class ProgramLowering;
/// Lowers one seam op inside a program; emits a diagnostic on failure.
using LowerFn = std::function<LogicalResult(ProgramLowering &, Operation *)>;
/// Op name -> lowering (populated by the op family files).
using LoweringTable = llvm::StringMap<LowerFn>;

void populateLinearLowerings(LoweringTable &table);
void populateElementwiseLowerings(LoweringTable &table);
void populateNormLowerings(LoweringTable &table);
void populateShapeLowerings(LoweringTable &table);
void populateRopeLowerings(LoweringTable &table);
void populateAttentionLowerings(LoweringTable &table);
void populateCollectiveLowerings(LoweringTable &table);
void populateKernelCallLowerings(LoweringTable &table);

/// Interleaving. A lowering whose own pipeline leaves the Tensor engine
/// waiting for the vector engines (attention: scores -> softmax -> P V, one
/// query tile after another) can take an independent, Tensor-engine-bound
/// op of the same program as its guest (the single-stream block's MLP
/// projection, which reads the norm, not the attention) and emit the
/// guest's work unit by unit between its own steps. The engine queues are
/// in order: only then does the Tensor engine run the guest's matmuls while
/// the Vector and Scalar engines run the host's softmax. A one-row linear
/// (adaLN's modulation: a 28 MB weight, 64-cycle matmuls) is a guest too,
/// of an attention (whose DMA queues are idle) or of a streamed linear of
/// many rows that the Tensor engine bounds (one unit per weight slab: the
/// guest's slab is loaded with the host's, in the queues' slack). The
/// guest's work, split for a host of `groups` x `steps` units:
struct InterleavedWork {
  /// Group g's inputs (a weight slab) into buffer set `set` = g % 2. The
  /// host issues it after the last unit of group g - 2 (which used that
  /// set) and before the first unit of group g.
  std::function<void(Index g, unsigned set)> load;
  /// Unit (g, s), reading set `set`; the host emits every unit once.
  std::function<void(Index g, Index s, unsigned set)> step;
  /// Work after the last unit (may be empty): the host calls it once, after
  /// its own loops.
  std::function<void()> finish;
};
/// An op kind that can be a guest: whether one op qualifies before the
/// shapes of a host are known (`eligible`), and its work split for a host
/// (`interleave`; nullopt when it does not fit that split, the SBUF left
/// beside the host's `hostBytes` per partition, or its own best lowering).
struct GuestLowering {
  std::function<bool(Operation *)> eligible;
  std::function<std::optional<InterleavedWork>(ProgramLowering &, Operation *,
                                               int64_t groups, int64_t steps,
                                               int64_t hostBytes)>
      interleave;
};
using GuestTable = llvm::StringMap<GuestLowering>;
void populateLinearGuests(GuestTable &table);
/// Op names whose lowering takes a guest (ProgramLowering::takeGuest).
void populateAttentionHosts(llvm::StringSet<> &hosts);

/// Column consumption. A collective whose operand is a linear's result and
/// nothing else's (the row-parallel projection's all_reduce at the end of a
/// tensor-parallel block) is not lowered whole after the linear: the linear
/// calls it on each column range it has stored to HBM (a weight slab's
/// columns, ProgramLowering::consumeColumns), so the collective engine
/// reduces slab s while the Tensor engine computes slab s + 1, and only the
/// last slab's reduction is left after the linear. The driver pairs them;
/// a lowering that calls no consumer leaves the collective to its own turn.
/// A producer passes each slab's columns only when the collective of one
/// slab takes less than the slab's Tensor-engine time (`estimateNs`): a
/// collective pays its hop latency per call, and slabs that outpace it
/// would wait for the collective engine; else it passes all columns once.
struct ColumnConsumer {
  /// Per window [row0, row0 + rows) x [col0, col0 + cols) of the
  /// producer's HBM result `y`: emits the consumer's work for it.
  std::function<void(const Placement &y, Index row0, int64_t rows, Index col0,
                     int64_t cols)>
      consume;
  /// The consumer's estimated time for a window of `bytes`.
  std::function<double(int64_t bytes)> estimateNs;
};

/// Row production. A row-wise op (an elementwise binary of equal shapes:
/// a block's residual add) whose first reader is a row-tiled consumer (a
/// norm) is not lowered whole before it: the consumer emits it row tile by
/// row tile at the top of its own row loop (ProgramLowering::produceRows),
/// so that the consumer's first tile waits for one tile of it, not all, and
/// the in-order engine queues interleave the two. The driver pairs them
/// (the producer's other readers come after the consumer) and keeps the
/// producer's operands live until the consumer is lowered.
/// Per row tile [r0, r0 + p): emits the producer's work for those rows.
using RowProducer = std::function<void(Index r0, int64_t p)>;
/// An op kind that can be a row producer.
struct RowProducerLowering {
  /// Sets the producer up (places its result, stages its operands) and
  /// returns its per-row-tile work, or null when it cannot be split that way
  /// (it is then lowered whole, before its consumer).
  std::function<RowProducer(ProgramLowering &, Operation *)> setup;
  /// Per partition, at most: the tiles its rows allocate per row tile.
  std::function<int64_t(Operation *)> workingBytes;
};
using RowProducerTable = llvm::StringMap<RowProducerLowering>;
void populateElementwiseRowProducers(RowProducerTable &table);
/// Op kinds whose lowering calls produceRows for its input (and then
/// rowsProduced), each with the working bytes per partition its row loop
/// keeps live at most beside the producer's operands and result.
using RowConsumerTable = llvm::StringMap<std::function<int64_t(Operation *)>>;
void populateNormRowConsumers(RowConsumerTable &consumers);

/// The separately compiled kernel programs, one per distinct (kernel,
/// signature, config): built by the kernels library (`getOrBuildKernelProgram`,
/// `kernel_<name>_<hash>`) when the kernel has a builder, else a private
/// declaration `kernel_<name>_<n>` tagged `seam.kernel` / `seam.config`.
/// Arguments: the call's operands, its results, then (built kernels) the
/// constants the kernel needs (role "constant").
class KernelDeclarations {
public:
  explicit KernelDeclarations(ModuleOp programs) : programs(programs) {}
  /// The program for a seam.kernel_call (built or declared on first use).
  FailureOr<ncore::ProgramOp> getOrCreate(Operation *kernelCall);

private:
  ModuleOp programs;
  llvm::StringMap<ncore::ProgramOp> byKey;
  llvm::StringMap<int64_t> countByName;
};

/// The state of lowering one program: the ncore builder (loops, tiles,
/// instructions; dialect/ncore/NcoreBuilder.h, shared with the kernels),
/// where each seam tensor lives and the SBUF budget.
class ProgramLowering : public ncore::NcoreBuilder {
public:
  ProgramLowering(ncore::ProgramOp program, const TargetInfo &target,
                  ConversionStats &stats, KernelDeclarations &kernels);

  KernelDeclarations &kernelDecls() { return kernels; }
  ConversionStats &statistics() { return stats; }

  // Values.
  void bind(Value v, const Placement &p) { placements[v] = p; }
  /// The placement of an operand (error at `user` when it has none).
  FailureOr<Placement> get(Value v, Operation *user);
  /// Marks `v` as a program output written into `outputArg` (an HBM tile).
  void setOutput(Value v, Value outputArg) { outputs[v].push_back(outputArg); }
  /// Places the result `v` of the op being lowered: the output binding if
  /// `v` is returned, its columns of a concatenation (see concatInPlace),
  /// else SBUF when it fits the budget, else an HBM spill.
  Placement placeResult(Value v);
  /// Loads the program argument `arg` (bound to its HBM tensor) whole into
  /// SBUF, when it fits beside what is placed, and rebinds it there.
  void stageArgument(Value arg);
  /// `v` is operand columns [col, col + n) of the column concatenation
  /// `concat`: placeResult(v) then places `concat` in SBUF (when it fits)
  /// and gives `v` its columns, so the producer writes there and the
  /// concatenation copies nothing.
  void concatInPlace(Value v, Value concat, int64_t col) {
    concatSlots[v] = {concat, col};
  }
  /// True when placeResult(v) would put `v` in SBUF (not an output, and
  /// within the budget).
  bool fitsSbuf(Value v) const;
  /// An HBM placement for `v` (output binding or a named scratch).
  Placement placeResultInHbm(Value v, StringRef scratchPrefix);
  /// A placement over a fresh HBM scratch [rows, cols].
  Placement hbmScratch(ArrayRef<int64_t> shape, Type elementType,
                       StringRef prefix);
  /// Liveness bookkeeping (SBUF budget): the SBUF bytes placed for `owner`
  /// return to the budget (after the last use of `owner` and its views).
  void release(Value owner);

  // Loops: NcoreBuilder's, and row tiles.
  /// Row tiles of 128 rows: body(row0, p).
  void forEachRowTile(int64_t rows,
                      function_ref<void(Index row0, int64_t p)> body) {
    forEachChunk(rows, kNumPartitions,
                 [&](Index r, int64_t p, bool) { body(r, p); });
  }

  // Tiles.
  /// The [p, n] window of rows [row0, row0 + p) and cols [col, col + n).
  /// In SBUF row0 must be a multiple of 128 (see rowAligned).
  Value window(const Placement &t, Index row0, int64_t p, Index col, int64_t n);
  /// True when SBUF windows at rows `k * stride` are expressible.
  static bool rowAligned(const Placement &t, int64_t stride) {
    return !t.inSbuf() || stride % kNumPartitions == 0 || t.rows <= stride;
  }
  /// `t` itself when rowAligned(t, stride), else a copy in an HBM scratch
  /// (a relayout, counted in the statistics) where any row is expressible.
  Placement rowAlignedOrRelayout(const Placement &t, int64_t stride);
  /// The window in SBUF: the placement itself, or a DMA into a working tile.
  Value load(const Placement &t, Index row0, int64_t p, Index col, int64_t n);
  /// Where to compute the window of a result: the SBUF placement itself or a
  /// working tile that storeOut then writes to HBM.
  Value outTile(const Placement &t, Index row0, int64_t p, Index col,
                int64_t n);
  void storeOut(const Placement &t, Index row0, int64_t p, Index col, int64_t n,
                Value tile);
  /// A [p, n] SBUF tile holding row 0 of `vec` (cols [col, col + n)) on
  /// every partition: the row (DMA'd in when in HBM) times a ones column on
  /// the Tensor engine, in 512-column blocks. Written into `into` (a
  /// [>= p, >= n] SBUF tile) when given, else into a fresh tile.
  Value broadcastRow(const Placement &vec, Index col, int64_t n, int64_t p,
                     Value into = {});
  /// Copies the whole of `src` into `dst` (same rows x cols).
  void copyInto(const Placement &dst, const Placement &src);
  /// A fresh SBUF placement ([P, T * cols], row tile t at t * cols) holding
  /// a copy of `x` (no budget accounting: the callers' own).
  Placement copiedToSbuf(const Placement &x);
  /// `x` itself, or, when `x` is in HBM, small (at most one 64 KiB piece per
  /// DMA queue in all) and a copy in SBUF fits `budget` bytes per partition
  /// (taken from it), that copy: every row tile DMA'd in one loop issued
  /// before the caller's row loop. The loads then wait for no compute and
  /// the queues carry them together, where row tile by row tile each waited
  /// for a transfer's fixed cost and a free buffer. A larger operand streams
  /// row tile by row tile: all at once, the first tile would arrive only
  /// with the last, and the stores could not overlap the loads.
  Placement stagedInSbuf(const Placement &x, int64_t &budget);
  /// `t` as a contiguous HBM tile of its seam shape (copies when it is not).
  Value contiguousHbm(const Placement &t, Operation *user);
  /// The same data as a placement with another shape (same rows x cols
  /// when `t` is in SBUF or not contiguous).
  static Placement withShape(Placement t, ArrayRef<int64_t> shape);

  /// Checks that an element type is f32 or bf16 (diagnostic at `op`).
  /// f32 and bf16 anywhere; complex<f32> only in HBM at a boundary: a
  /// program's arguments and results (`op` the func) and a kernel call's.
  static LogicalResult checkDtype(Operation *op, Type t);

  const TargetInfo &target() const { return tgt; }
  int64_t sbufUsed() const { return used; }
  int64_t sbufPeak() const { return peak; }
  /// SBUF bytes per partition free for the working tiles of the op being
  /// lowered (after its result is placed), less a margin for the small
  /// tiles its helpers allocate.
  int64_t workingBudget() const;
  /// A tile computed from the seam value `v` that later ops reading `v`
  /// reuse instead of computing it again (a streamed linear's X^T, keyed by
  /// its K split: the QKV and MLP projections of one input), or null.
  Value derivedTile(Value v, int64_t key) const {
    return derived.lookup({v, key});
  }
  /// Keeps `tile` (bytes per partition) as derived from `v` until v's last
  /// use. With `replacesV` (every later reader of v reuses the tile, so v's
  /// own bytes are dead once it is built) the tile takes over v's bytes in
  /// the SBUF budget; else it is kept only when the budget has room for it
  /// beside v. False when nothing is kept.
  bool keepDerivedTile(Value v, int64_t key, Value tile, int64_t bytes,
                       bool replacesV);
  /// The guest the driver paired with the op being lowered (see
  /// InterleavedWork): `lowerAlone` is its table lowering.
  void setGuest(Operation *host, Operation *guest, const LowerFn *lowerAlone,
                const GuestLowering *asGuest) {
    guestHost = host;
    pendingGuest = guest;
    guestAlone = lowerAlone;
    guestLowering = asGuest;
  }
  bool hasPendingGuest() const { return pendingGuest; }
  Operation *pendingGuestOp() const { return pendingGuest; }
  /// Called by a host before it emits its own work: the guest's work split
  /// into `groups` x `steps` units (groups = 0: the host's loops take
  /// none), or nullopt when there is no guest or it does not fit, in which
  /// case the guest has just been lowered alone, ahead of the host.
  FailureOr<std::optional<InterleavedWork>>
  takeGuest(int64_t groups, int64_t steps, int64_t hostBytes);
  /// Lowers the pending guest alone, now (the driver's fallback for a host
  /// that took none).
  LogicalResult lowerGuestAlone();
  /// `f()` with `l` as the location of what it builds (then the current
  /// one again).
  template <typename F> auto atLoc(Location l, F &&f) {
    Location saved = loc();
    setLoc(l);
    struct Restore {
      ProgramLowering &pl;
      Location saved;
      ~Restore() { pl.setLoc(saved); }
    } restore{*this, saved};
    return f();
  }
  /// Row production (see RowProducer): `v`'s rows are emitted by its
  /// consumer through produceRows, which then declares all of them
  /// produced (a consumer emits every row).
  void setRowProducer(Value v, RowProducer f) {
    rowProducers[v] = std::move(f);
  }
  void produceRows(Value v, Index r0, int64_t p) {
    if (auto it = rowProducers.find(v); it != rowProducers.end())
      it->second(r0, p);
  }
  void rowsProduced(Value v) { rowProducers.erase(v); }
  bool hasRowProducer(Value v) const { return rowProducers.count(v); }
  /// Column consumption (see ColumnConsumer): the producer of `v` calls
  /// consumeColumns for every window of `v` it has stored, then
  /// columnsConsumed(v) once all of `v` was passed; the driver then skips
  /// the consumer's own lowering.
  void setColumnConsumer(Value v, ColumnConsumer f) {
    columnConsumers[v] = std::move(f);
  }
  const ColumnConsumer *columnConsumer(Value v) const {
    auto it = columnConsumers.find(v);
    return it == columnConsumers.end() ? nullptr : &it->second;
  }
  void consumeColumns(Value v, const Placement &y, Index row0, int64_t rows,
                      Index col0, int64_t cols) {
    if (auto it = columnConsumers.find(v); it != columnConsumers.end())
      it->second.consume(y, row0, rows, col0, cols);
  }
  /// Declares `v` wholly consumed (true when it had a consumer).
  bool columnsConsumed(Value v) {
    if (!columnConsumers.erase(v))
      return false;
    consumedColumns.insert(v);
    return true;
  }
  /// Whether the producer of `v` passed all of it to its consumer; forgets
  /// a consumer it did not call.
  bool takeColumnsConsumed(Value v) {
    columnConsumers.erase(v);
    return consumedColumns.erase(v);
  }
  /// Declares that the op being lowered keeps `bytes` per partition of
  /// working tiles live at once: the program's recorded SBUF peak
  /// (`seam.sbuf_peak_bytes`, the budget of ncore-double-buffer) includes it.
  void noteWorkingBytes(int64_t bytes) { peak = std::max(peak, used + bytes); }

private:
  const TargetInfo &tgt;
  ConversionStats &stats;
  KernelDeclarations &kernels;
  DenseMap<Value, Placement> placements;
  DenseMap<Value, std::pair<Value, int64_t>> concatSlots;
  DenseMap<Value, SmallVector<Value, 1>> outputs;
  DenseMap<Value, int64_t> ownedBytes;
  DenseMap<std::pair<Value, int64_t>, Value> derived;
  int64_t used = 0, peak = 0, scratchCount = 0;
  Operation *pendingGuest = nullptr, *guestHost = nullptr;
  const LowerFn *guestAlone = nullptr;
  const GuestLowering *guestLowering = nullptr;
  DenseMap<Value, RowProducer> rowProducers;
  DenseMap<Value, ColumnConsumer> columnConsumers;
  DenseSet<Value> consumedColumns;
};

/// The K split of a streamed linear (ConvertLinear.cpp): the smallest
/// number of blocks kb >= ceil(K / 128) that divides K, K = pk x kb with row
/// k = p * kb + j on partition p of block j, or 0 when pk would leave most of
/// the Tensor engine's rows idle. Producers that build a linear's X^T for it
/// (ConvertNorm) use the same split.
int64_t kBlocksOf(int64_t k);

/// X^T of one row tile for a streamed linear: `rows` ([p, K] in SBUF, K =
/// pk x kb as kBlocksOf splits it) transposed block by block on the Tensor
/// engine (through the PSUM tiles tp[0], tp[1] alternately) into `xt`
/// ([pk, kb * stride]): block j, X[rows, j::kb]^T, at free offset
/// j * stride + r0. The layout lowerStreamed reads (ConvertLinear.cpp).
/// With `gamma` (and `beta`), [pk, kb] tiles of one value per feature in the
/// same split (feature p * kb + j at partition p, column j), each block is
/// evacuated as block * gamma (+ beta): the features are on partitions
/// there, so a per-feature affine is a per-partition tensor_scalar, in the
/// pass the evacuation takes anyway.
void transposeTileForLinear(ProgramLowering &pl, Value rows, int64_t p,
                            int64_t pk, int64_t kb, Value xt, int64_t stride,
                            Index r0, Value tp[2], Value gamma = {},
                            Value beta = {});

/// Lowers rope on one tile: out = x * cos + rotate_half(x) * sin with x, cos,
/// sin, out all [p, d] SBUF tiles (shared by ConvertRope and ConvertAttention).
void emitRopeTile(ProgramLowering &pl, Value out, Value x, Value cos, Value sin,
                  int64_t p, int64_t d);

/// Marks, before a program's ops are lowered, the operands of its column
/// concatenations that their producers can write in place (see
/// ProgramLowering::concatInPlace): computed in `body` by an elementwise op
/// or a linear (both write their result through outTile / window) and used
/// only by the concatenation. ConvertShape.cpp, next to the concat lowering.
void placeConcatOperandsInPlace(ProgramLowering &pl, Block &body);

} // namespace conversion
} // namespace mlir::seam

#endif // SEAM_LOWERING_CONVERTSEAMTONCORE_H
