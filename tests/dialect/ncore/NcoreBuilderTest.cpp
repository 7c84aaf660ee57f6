//===- NcoreBuilderTest.cpp - the shared ncore builder --------------------===//
//
// What the builder the kernels and the conversion share promises: indices
// are AffineExprs over the loops it opened, views take only the induction
// variables they use and get their result type from the op's builder, loops
// stay loops (unrolled, alternating, pipelined), reductions over a loop set
// the start level, constants are shared, and the IR it builds verifies.
//
//===----------------------------------------------------------------------===//
#include "dialect/ncore/NcoreBuilder.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::ncore;

namespace {

class NcoreBuilderTest : public ::testing::Test {
protected:
  NcoreBuilderTest() : b(&ctx) {
    ctx.loadDialect<NcoreDialect>();
    module = ModuleOp::create(b.getUnknownLoc());
    b.setInsertionPointToEnd(module->getBody());
    auto in = TileType::get(MemSpace::Hbm, {1024, 512}, b.getBF16Type());
    prog = b.create<ProgramOp>(b.getUnknownLoc(), "p", ArrayRef<Type>{in});
    prog.setArgRole(0, "input");
    b.setInsertionPointToStart(&prog.getBody().front());
  }

  template <typename OpTy> SmallVector<OpTy> all() {
    SmallVector<OpTy> ops;
    prog.walk([&](OpTy op) { ops.push_back(op); });
    return ops;
  }

  MLIRContext ctx;
  OpBuilder b;
  OwningOpRef<ModuleOp> module;
  ProgramOp prog;
};

TEST_F(NcoreBuilderTest, IndexArithmeticIsAffineExprs) {
  Index c = Index(3) * 4 + 2;
  ASSERT_TRUE(c.getConstant());
  EXPECT_EQ(*c.getConstant(), 14);
  EXPECT_EQ(*Index(-5).floorDiv(2).getConstant(), -3);
  Index d = Index(getAffineDimExpr(0, &ctx));
  Index e = (d * 128 + 64 - 64).floorDiv(128);
  EXPECT_FALSE(e.getConstant());
  EXPECT_EQ(e.getExpr(&ctx), getAffineDimExpr(0, &ctx));
  // A constant expression is a constant.
  EXPECT_EQ(*Index(getAffineConstantExpr(7, &ctx)).getConstant(), 7);
}

TEST_F(NcoreBuilderTest, ViewsTakeTheInductionVariablesTheyUse) {
  NcoreBuilder nb(b, prog, b.getUnknownLoc());
  Value in = prog.getArgument(0);
  Value t = nb.sbuf({128, 512}, b.getBF16Type());
  Value whole, inner, offChip;
  nb.loop(2, [&](Index i) {
    nb.loop(4, [&](Index j) {
      inner = nb.view(in, {128, 512}, {j * 128, 0});
      nb.dma(t, inner);
      offChip = nb.view(t, {32, 256}, {64, i * 256});
      whole = nb.view(t, {128, 512}, {0, 0});
    });
  });
  EXPECT_EQ(whole, t) << "the window of the whole tile is the tile";
  auto v = inner.getDefiningOp<ViewOp>();
  ASSERT_TRUE(v);
  ASSERT_EQ(v.getIvs().size(), 1u);
  auto j = cast<BlockArgument>(v.getIvs()[0]);
  EXPECT_EQ(cast<LoopOp>(j.getOwner()->getParentOp()).getTrips(), 4u);
  EXPECT_EQ(v.getOffsets().getResult(0), getAffineDimExpr(0, &ctx) * 128);
  // On chip the result type carries the start partition.
  auto ov = offChip.getDefiningOp<ViewOp>();
  EXPECT_EQ(ov.getType().getStartPartition(), 64);
  EXPECT_EQ(ov.getIvs().size(), 1u);
  // Tiles are allocated before the outermost loop.
  EXPECT_TRUE(isa<ProgramOp>(t.getDefiningOp()->getParentOp()));
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(NcoreBuilderTest, AWindowIsViewedOncePerBlock) {
  NcoreBuilder nb(b, prog, b.getUnknownLoc());
  Value t = nb.sbuf({128, 512}, b.getBF16Type());
  Value top = nb.view(t, {128, 256}, {0, 256});
  EXPECT_EQ(nb.view(t, {128, 256}, {0, 256}), top) << "same block: reused";
  EXPECT_NE(nb.view(t, {128, 256}, {0, 0}), top) << "another window";
  EXPECT_NE(nb.view(t, {128, 128}, {0, 256}), top) << "another shape";
  EXPECT_NE(nb.view(t, {128, 128}, {0, 256}, {1, 2}), top) << "another stride";
  Value first, again, fromOtherLoop;
  nb.loop(2, [&](Index i) {
    first = nb.view(t, {128, 256}, {0, i * 256});
    again = nb.view(t, {128, 256}, {0, i * 256});
    // Views are shared within the block they were built in only (the
    // top-level one would dominate here, but a loop body gets its own).
    EXPECT_NE(nb.view(t, {128, 256}, {0, 256}), top);
  });
  nb.loop(2, [&](Index i) {
    fromOtherLoop = nb.view(t, {128, 256}, {0, i * 256});
  });
  EXPECT_EQ(first, again);
  EXPECT_NE(first, fromOtherLoop) << "another loop's body";
  // Not appending (building before an earlier op): a new view, which is
  // not shared afterwards either.
  {
    OpBuilder::InsertionGuard g(nb.builder());
    nb.builder().setInsertionPoint(top.getDefiningOp());
    Value early = nb.view(t, {128, 64}, {0, 0});
    EXPECT_TRUE(early.getDefiningOp()->isBeforeInBlock(top.getDefiningOp()));
  }
  Value late = nb.view(t, {128, 64}, {0, 0});
  EXPECT_FALSE(late.getDefiningOp()->isBeforeInBlock(top.getDefiningOp()));
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(NcoreBuilderTest, UnrolledLoopsKeepALoopAndPeelTheRest) {
  NcoreBuilder nb(b, prog, b.getUnknownLoc());
  SmallVector<std::pair<std::optional<int64_t>, unsigned>> seen;
  nb.forRangeUnrolled(7, 2, [&](Index i, unsigned copy) {
    seen.push_back({i.getConstant(), copy});
  });
  auto loops = all<LoopOp>();
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0].getTrips(), 3u);
  // Two bodies in the loop (copies 0 and 1), the seventh after it.
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_FALSE(seen[0].first);
  EXPECT_EQ(seen[1].second, 1u);
  EXPECT_EQ(seen[2], std::make_pair(std::optional<int64_t>(6), 0u));
  // A single iteration is no loop.
  int bodies = 0;
  nb.forRange(1, [&](Index i) {
    EXPECT_EQ(*i.getConstant(), 0);
    ++bodies;
  });
  EXPECT_EQ(bodies, 1);
  EXPECT_EQ(all<LoopOp>().size(), 1u);
}

TEST_F(NcoreBuilderTest, PipelinedLoadsComeBeforeTheComputeTheyOverlap) {
  NcoreBuilder nb(b, prog, b.getUnknownLoc());
  std::string order;
  nb.forRangePipelined(
      5,
      [&](Index i, unsigned set) {
        order += "L" + std::to_string(set) +
                 (i.getConstant() ? std::to_string(*i.getConstant()) : "i");
      },
      [&](Index i, unsigned set) {
        order += "C" + std::to_string(set) +
                 (i.getConstant() ? std::to_string(*i.getConstant()) : "i");
      });
  // Load 0; a loop of 2 iterations over pairs; the last compute.
  EXPECT_EQ(order, "L00L1iC0iL0iC1iC04");
  ASSERT_EQ(all<LoopOp>().size(), 1u);
  EXPECT_EQ(all<LoopOp>()[0].getTrips(), 2u);
}

TEST_F(NcoreBuilderTest, AccumulationOverALoopSetsItsStartLevel) {
  NcoreBuilder nb(b, prog, b.getUnknownLoc());
  Value acc = nb.psum({128, 512});
  Value w = nb.sbuf({128, 128}, b.getBF16Type());
  Value x = nb.sbuf({128, 512}, b.getBF16Type());
  nb.loop(3, [&](Index) {
    nb.loop(4, [&](Index k) { nb.matmulAccumulateOver(acc, w, x, k); });
  });
  nb.matmulAccumulateOver(acc, w, x, Index(0));
  auto mms = all<MatmulOp>();
  ASSERT_EQ(mms.size(), 2u);
  auto level = mms[0]->getAttrOfType<IntegerAttr>(kStartLevelAttrName);
  ASSERT_TRUE(level);
  EXPECT_EQ(level.getInt(), 1);
  EXPECT_TRUE(mms[0].getAccumulate());
  EXPECT_FALSE(mms[1].getAccumulate());
  EXPECT_FALSE(mms[1]->hasAttr(kStartLevelAttrName));
}

TEST_F(NcoreBuilderTest, ConstantsAreSharedAndBroadcastsVerify) {
  NcoreBuilder nb(b, prog, b.getUnknownLoc());
  auto type = TileType::get(MemSpace::Hbm, {1, 1200}, b.getF32Type());
  auto attrs = b.getDictionaryAttr(
      {b.getNamedAttr("seam.constant", b.getStringAttr("ones"))});
  Value c1 = nb.constantArg(type, attrs), c2 = nb.constantArg(type, attrs);
  EXPECT_EQ(c1, c2);
  EXPECT_EQ(prog.getNumArguments(), 2u);
  Value row = nb.sbuf({1, 1200}, b.getF32Type());
  nb.dma(row, c1);
  Value out = nb.sbuf({128, 1200}, b.getF32Type());
  nb.broadcastPartitions(out, row);
  // 1200 columns: two full blocks of 512 in a loop, the rest after it.
  EXPECT_EQ(all<MatmulOp>().size(), 2u);
  EXPECT_EQ(all<LoopOp>().size(), 1u);
  // A second broadcast inside a loop shares the ones row, which is set once
  // at the program's start (outside every loop).
  nb.forRange(3, [&](Index) { nb.broadcastPartitions(out, row); });
  auto memsets = all<MemsetOp>();
  ASSERT_EQ(memsets.size(), 1u);
  EXPECT_EQ(memsets[0]->getBlock(), &prog.getBody().front());
  EXPECT_EQ(&prog.getBody().front().front(),
            memsets[0].getDst().getDefiningOp());
  EXPECT_TRUE(succeeded(verify(*module)));
}

} // namespace
