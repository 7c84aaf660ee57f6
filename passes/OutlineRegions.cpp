//===- OutlineRegions.cpp - seam-outline-regions --------------------------===//
//
// Each seam.fusion becomes a private func.func tagged `seam.program`: the
// unit compiled, cached and launched. Values the region uses from outside
// become arguments (they arrive through HBM). Structurally identical regions
// (same ops, attributes and types) share one program.
//
//===----------------------------------------------------------------------===//
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "passes/Passes.h"
#include "passes/Statistics.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::seam {
#define GEN_PASS_DEF_SEAMOUTLINEREGIONS
#include "passes/Passes.h.inc"
} // namespace mlir::seam

using namespace mlir;
using namespace mlir::seam;

namespace {

/// The structural key of a program: its type and its body printed
/// generically with local numbering (names and locations left out).
std::string structuralKey(func::FuncOp f) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << f.getFunctionType();
  OpPrintingFlags flags;
  flags.printGenericOpForm().useLocalScope();
  AsmState state(f, flags);
  for (Operation &op : f.getBody().front())
    op.print(os, state), os << "\n";
  return s;
}

std::string symbolFor(llvm::StringRef regionName) {
  std::string s = "prog_";
  for (char c : regionName)
    s += (isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return s;
}

struct OutlineRegionsPass
    : public seam::impl::SeamOutlineRegionsBase<OutlineRegionsPass> {
  using SeamOutlineRegionsBase::SeamOutlineRegionsBase;
  PassCounter numOutlined{"seam-outline-regions", "regions-outlined",
                          "Regions outlined"};
  PassCounter numPrograms{"seam-outline-regions", "distinct-programs",
                          "Distinct programs after sharing"};
  PassCounter numShared{"seam-outline-regions", "shared-calls",
                        "Calls that reuse a program"};
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    llvm::StringMap<func::FuncOp> byKey;
    // Programs outlined by an earlier run are shareable too.
    for (auto f : module.getOps<func::FuncOp>())
      if (f->hasAttr(kProgramAttrName) && !f->hasAttr(kBoundaryBodyAttrName) &&
          !f.getBody().empty())
        byKey[structuralKey(f)] = f;

    SmallVector<FusionOp> regions;
    module.walk([&](FusionOp f) { regions.push_back(f); });
    for (FusionOp region : regions)
      outline(region, module, symbols, byKey);
  }

  void outline(FusionOp region, ModuleOp module, SymbolTable &symbols,
               llvm::StringMap<func::FuncOp> &byKey) {
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(region.getBody(), captured);
    SmallVector<Type> argTypes;
    for (Value v : captured)
      argTypes.push_back(v.getType());

    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToEnd(module.getBody());
    auto fnType = b.getFunctionType(argTypes, region.getResultTypes());
    auto fn = b.create<func::FuncOp>(region.getLoc(),
                                     symbolFor(region.getName()), fnType);
    fn.setPrivate();
    fn->setAttr(kProgramAttrName, b.getUnitAttr());
    Block *entry = fn.addEntryBlock();
    IRMapping map;
    for (auto [v, arg] : llvm::zip(captured, entry->getArguments()))
      map.map(v, arg);
    b.setInsertionPointToEnd(entry);
    for (Operation &op : region.getBody().front().without_terminator())
      b.clone(op, map);
    SmallVector<Value> results;
    for (Value v : region.getYield().getValues())
      results.push_back(map.lookupOrDefault(v));
    b.create<func::ReturnOp>(region.getLoc(), results);
    ++numOutlined;

    std::string key = structuralKey(fn);
    auto it = share ? byKey.find(key) : byKey.end();
    func::FuncOp target;
    if (it != byKey.end()) {
      target = it->second;
      fn.erase();
      ++numShared;
    } else {
      symbols.insert(fn); // uniques the name if needed
      fn->setAttr("seam.region", b.getStringAttr(region.getName()));
      byKey[key] = fn;
      target = fn;
      ++numPrograms;
    }
    OpBuilder cb(region);
    auto call = cb.create<func::CallOp>(region.getLoc(), target,
                                        captured.getArrayRef());
    call->setAttr("seam.region", region.getNameAttr());
    region.replaceAllUsesWith(call.getResults());
    region.erase();
  }
};

} // namespace
