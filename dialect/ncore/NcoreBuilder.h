//===- NcoreBuilder.h - building ncore programs ----------------*- C++ -*-===//
//
// The one builder of ncore IR, shared by the kernels (kernels/KernelBuilder)
// and the seam -> ncore conversion (lowering/conversion/ProgramLowering).
// It builds inside one `ncore.program`: tiles, views whose offsets are affine
// in the induction variables of the loops it opened, loops that stay loops
// (chunked, unrolled, alternating between buffer sets, software pipelined)
// and a method per common instruction, destination first as in nki.isa
// (any other instruction op through create<OpTy>):
//
//   NcoreBuilder nb(b, program, loc);
//   Value x = nb.sbuf({128, 512}, f32);
//   nb.forRange(4, [&](Index i) {
//     nb.dma(x, nb.view(in, {128, 512}, {i * 128, 0}));
//     nb.matmul(acc, w, x);
//   });
//
// Nothing is scheduled or placed here: that is ncore-allocate's and
// ncore-schedule's job.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_DIALECT_NCORE_NCOREBUILDER_H
#define SEAM_DIALECT_NCORE_NCOREBUILDER_H

#include "dialect/ncore/NcoreOps.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include <optional>

namespace mlir::ncore {

/// An index into a tile (a view offset): an AffineExpr over the induction
/// variables of the loops an NcoreBuilder opened (dim i = the i-th open
/// loop, outermost first). Integers convert implicitly (a constant needs no
/// context until it meets an expression); the arithmetic is AffineExpr's.
class Index {
public:
  Index(int64_t c = 0) : cst(c) {}
  Index(AffineExpr e);

  /// The value when it does not depend on a loop.
  std::optional<int64_t> getConstant() const;
  AffineExpr getExpr(MLIRContext *ctx) const;

  Index operator+(const Index &o) const;
  Index operator-(const Index &o) const { return *this + o * -1; }
  Index operator*(int64_t k) const;
  Index floorDiv(int64_t k) const;
  friend Index operator+(int64_t k, const Index &i) { return i + Index(k); }

private:
  AffineExpr expr; ///< null: the constant `cst`
  int64_t cst = 0;
};

class NcoreBuilder {
public:
  /// Builds at `b`'s insertion point, inside `program`.
  NcoreBuilder(OpBuilder b, ProgramOp program, Location loc);

  OpBuilder &builder() { return b; }
  MLIRContext *context() const { return b.getContext(); }
  ProgramOp program() const { return prog; }
  Location loc() const { return currentLoc; }
  void setLoc(Location l) { currentLoc = l; }
  template <typename OpTy, typename... Args> OpTy create(Args &&...args) {
    return b.create<OpTy>(currentLoc, std::forward<Args>(args)...);
  }

  //===--- program arguments ---------------------------------------------===//
  /// A program argument of role "constant" with the attributes `argAttrs`
  /// (the `seam.constant` description of its contents): appended on first
  /// use, shared by equal (type, attributes).
  Value constantArg(TileType type, DictionaryAttr argAttrs);

  //===--- tiles ---------------------------------------------------------===//
  /// A tile, allocated before the outermost loop this builder opened (it
  /// lives across the iterations); `name` names an HBM scratch.
  Value alloc(MemSpace space, ArrayRef<int64_t> shape, Type elementType,
              StringRef name = {});
  Value sbuf(ArrayRef<int64_t> shape, Type elementType) {
    return alloc(MemSpace::Sbuf, shape, elementType);
  }
  /// A PSUM accumulator (always f32).
  Value psum(ArrayRef<int64_t> shape) {
    return alloc(MemSpace::Psum, shape, b.getF32Type());
  }
  /// The window `shape` of `source` at `offsets` (one per dim; on chip the
  /// partition offset is a constant), `strides` defaulting to 1. The window
  /// of the whole tile is `source` itself.
  Value view(Value source, ArrayRef<int64_t> shape, ArrayRef<Index> offsets,
             ArrayRef<int64_t> strides = {});
  /// Regroups the free dims (or HBM dims) of a contiguous tile.
  Value reshape(Value source, ArrayRef<int64_t> shape);
  static TileType tileOf(Value v) { return cast<TileType>(v.getType()); }

  //===--- loops ---------------------------------------------------------===//
  /// Loops this builder opened around the insertion point.
  unsigned loopDepth() const { return loops.size(); }
  /// An ncore.loop of `trips` iterations (even of one); `body` gets its
  /// index.
  void loop(int64_t trips, function_ref<void(Index)> body);
  /// body(i) for i in [0, trips): an ncore.loop unless trips == 1.
  void forRange(int64_t trips, function_ref<void(Index)> body);
  /// `trips` iterations of `body`, `unroll` bodies per ncore.loop iteration
  /// and the remainder after the loop (no loop for a single iteration);
  /// `copy` = i mod unroll names the copy, so a ring of `unroll` buffers
  /// lets one be filled while another is read. ncore-schedule orders an
  /// instruction of a loop after its own previous iteration when they touch
  /// the same tile; copies touching different tiles proceed together.
  void forRangeUnrolled(int64_t trips, int64_t unroll,
                        function_ref<void(Index, unsigned copy)> body);
  /// forRangeUnrolled by 2: iterations alternate between two buffer sets
  /// (the body picks its set by `parity`), so the refill of one set
  /// overlaps the work on the other.
  void forRangeAlternating(int64_t trips,
                           function_ref<void(Index, unsigned parity)> body) {
    forRangeUnrolled(trips, 2, body);
  }
  /// Chunks of `chunk` over [0, n): body(start, size); full chunks in one
  /// loop, the remainder peeled. With `peelFirst`, chunk 0 is emitted on its
  /// own first (`first` = true), e.g. the non-accumulating matmul of a K loop.
  void
  forEachChunk(int64_t n, int64_t chunk,
               function_ref<void(Index start, int64_t size, bool first)> body,
               bool peelFirst = false);
  /// forEachChunk with alternating buffers: full chunks alternate parity,
  /// the remainder gets the parity that follows the last full chunk.
  void forEachChunkAlternating(
      int64_t n, int64_t chunk,
      function_ref<void(Index start, int64_t size, unsigned parity)> body);
  /// Streams chunks of `chunk` over [0, n) through two buffer sets, software
  /// pipelined: load(chunk c + 1) is emitted before compute(chunk c), so
  /// that in program order (and so in the in-order DMA stream) the refill of
  /// the other set comes before anything chunk c issues after its compute
  /// (stores of results), and overlaps that compute. `parity` names the set
  /// of the chunk (its load and compute get the same one). A loop over
  /// pairs of chunks plus at most two after it: loops stay loops.
  void forEachChunkPipelined(
      int64_t n, int64_t chunk,
      function_ref<void(Index start, int64_t size, unsigned parity)> load,
      function_ref<void(Index start, int64_t size, unsigned parity)> compute);
  /// forEachChunkPipelined over single iterations: load(i, set) brings
  /// iteration i's inputs into buffer set `set`, compute(i, set) consumes
  /// them (and stores its results).
  void forRangePipelined(int64_t trips,
                         function_ref<void(Index, unsigned set)> load,
                         function_ref<void(Index, unsigned set)> compute) {
    forEachChunkPipelined(
        trips, 1, [&](Index i, int64_t, unsigned set) { load(i, set); },
        [&](Index i, int64_t, unsigned set) { compute(i, set); });
  }

  //===--- engines
  //---------------------------------------------------------===//
  /// The engine the vector-class instructions built from here on run on
  /// (activation, tensor_tensor, tensor_scalar, reduce, copy, reciprocal,
  /// memset, iota, affine_select), as an NKI kernel names an instruction's
  /// engine; none (the default) leaves the choice to ncore-assign-engines,
  /// which keeps a pinned engine. The engine must be legal for each
  /// instruction built (the op verifier checks).
  void pinEngine(std::optional<Engine> e) {
    pinned = e ? EngineAttr::get(context(), *e) : EngineAttr();
  }

  //===--- instructions (destination first) ------------------------------===//
  void dma(Value dst, Value src);
  /// A transfer moved as written: ncore-split-dma leaves it whole
  /// (kFixedPiecesAttrName), for a caller that plans its own pieces.
  void dmaFixed(Value dst, Value src);
  /// `dst` = `src` in `parts` transfers, each of an equal share of their
  /// first dim (partitions on chip, rows in HBM): a program's tail moves
  /// sooner over more queues (a transfer's time is its fixed cost plus its
  /// bytes over one queue).
  void dmaInParts(Value dst, Value src, int64_t parts);
  void matmul(Value psumDst, Value stationary, Value moving,
              bool accumulate = false);
  /// A matmul accumulating over the iterations of the loop whose index is
  /// `loopIndex` (NKI's start flag: iteration 0 overwrites PSUM, the others
  /// add; `start_level`), so a reduction loop stays a loop. A constant 0
  /// (the loop of one iteration, not emitted) is a plain matmul.
  void matmulAccumulateOver(Value psumDst, Value stationary, Value moving,
                            const Index &loopIndex);
  void transpose(Value psumDst, Value src);
  /// dst = func(src * scale + bias) (bias: the immediate, or a [P, 1] tile),
  /// with the row sums of dst into `reduce` when given.
  void activation(ActFunc func, Value dst, Value src, double scale = 1.0,
                  double bias = 0.0, Value biasTile = {}, Value reduce = {});
  void tensorTensor(AluOp op, Value dst, Value lhs, Value rhs);
  /// dst = src <op> imm (`reverse`: imm <op> src).
  void tensorScalar(AluOp op, Value dst, Value src, double imm,
                    bool reverse = false);
  /// dst = src <op> scalar, the scalar a [P, 1] tile.
  void tensorScalar(AluOp op, Value dst, Value src, Value scalarTile,
                    bool reverse = false);
  /// A scalar operand of tensor_scalar: a [P, 1] tile or an immediate.
  struct ScalarOperand {
    Value tile;
    double imm = 0.0;
    ScalarOperand(Value tile) : tile(tile) {}
    ScalarOperand(double imm) : imm(imm) {}
  };
  /// dst = (src <op0> s0) <op1> s1, one pass (the cost of one operation).
  void tensorScalar(AluOp op0, ScalarOperand s0, AluOp op1, ScalarOperand s1,
                    Value dst, Value src);
  void reduce(AluOp op, Value dst, Value src);
  void copy(Value dst, Value src);
  void reciprocal(Value dst, Value src);
  /// Fills `dst` with `value`; returns `dst`.
  Value memset(Value dst, double value);
  void iota(Value dst, double base, double partitionStep, double freeStep);
  /// dst = src where `base + partitionStep * p + freeStep * j <cmp> 0`
  /// holds at element (p, j), else `onFalse` (masks).
  void affineSelect(AluOp cmp, Value dst, Value src, double base,
                    double partitionStep, double freeStep, double onFalse);
  /// dst = <op> of `src` over the `ranks` ranks (HBM tiles).
  void allReduce(AluOp op, Value dst, Value src, int64_t ranks);
  /// dst = the `ranks` ranks' `src` one after another (HBM tiles).
  void allGather(Value dst, Value src, int64_t ranks);
  /// Calls the program `callee` on `operands` (HBM tiles bound to its
  /// arguments in order).
  CallKernelOp callKernel(StringRef callee, ValueRange operands);
  /// dst[p, n] = row[1, n] on every partition (both SBUF): ones[1, p]^T x
  /// row on the Tensor engine (exact: one product per output) in blocks of
  /// kMatmulMaxN columns through one PSUM tile. (A stride-0 DMA from HBM
  /// would also do, but the runtime's access patterns have no row
  /// stride 0.) The ones row is set once at the program's start and shared
  /// (onesRow), so the matmul waits for nothing but the row: in the Tensor
  /// engine's in-order queue a broadcast that waited for a memset queued
  /// behind other vector work would hold up every matmul after it.
  void broadcastPartitions(Value dst, Value row);
  /// A [1, p] SBUF tile of ones of `elementType`, set at the program's start
  /// (one per shape and type, shared by every use in the program).
  Value onesRow(int64_t p, Type elementType);

private:
  /// Whether ops go at the end of their block (or just before its
  /// terminator): then every op built earlier in the block precedes them.
  bool appending() const;

  OpBuilder b;
  ProgramOp prog;
  Location currentLoc;
  EngineAttr pinned;
  SmallVector<LoopOp> loops;
  DenseMap<Attribute, Value> constants;
  DenseMap<std::pair<int64_t, Type>, Value> ones;
  /// Views built while appending, by block, source, shape, offsets and
  /// strides: a block's instructions read the same window of a tile many
  /// times, and one view op serves them all (in flux2-klein 55% of the
  /// views were repeats of one in the same block). Offsets are an
  /// expression's storage, or a constant. Valid because nothing built here
  /// is erased while it has uses (a cached view is a use of its source).
  ///
  /// A key is its block, its source and the words of shape, strides and
  /// offsets, kept in one pool: the entries stay flat, so the cache adds no
  /// small allocations between the ops it helps build (with one heap
  /// allocation per key, every later phase ran 5-10% slower on the scattered
  /// IR).
  struct ViewEntry {
    Block *block;
    Value source;
    uint32_t wordsAt, numWords;
    Value view;
  };
  std::vector<int64_t> viewKeyWords;
  std::vector<ViewEntry> viewEntries;
  /// Key hash -> entry. A hash two keys share keeps the first key's entry:
  /// the second window is built anew, never confused with the first.
  DenseMap<size_t, unsigned> viewIndex;
};

} // namespace mlir::ncore

#endif // SEAM_DIALECT_NCORE_NCOREBUILDER_H
