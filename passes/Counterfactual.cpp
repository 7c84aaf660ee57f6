//===- Counterfactual.cpp - a kernel site compiled five ways --------------===//
#include "passes/Counterfactual.h"
#include "dialect/seam/SeamOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "passes/AutoKernels.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::seam;

llvm::StringRef mlir::seam::stringifySiteVariant(SiteVariant v) {
  switch (v) {
  case SiteVariant::Fused:
    return "fused";
  case SiteVariant::NoFusion:
    return "no-fusion";
  case SiteVariant::RoundTrip:
    return "round-trip";
  case SiteVariant::Boundary:
    return "boundary";
  case SiteVariant::Kernel:
    return "kernel";
  }
  return "";
}

func::FuncOp mlir::seam::outlineOp(Operation *op, StringRef name) {
  OpBuilder b(op->getContext());
  auto fn = func::FuncOp::create(
      op->getLoc(), name,
      b.getFunctionType(op->getOperandTypes(), op->getResultTypes()));
  Block *entry = fn.addEntryBlock();
  IRMapping map;
  map.map(op->getOperands(), entry->getArguments());
  b.setInsertionPointToEnd(entry);
  Operation *copy = b.clone(*op, map);
  copy->removeAttr(kNoFuseAttrName);
  copy->removeAttr(kMaterializeAttrName);
  b.create<func::ReturnOp>(op->getLoc(), copy->getResults());
  return fn;
}

/// The private func holding a copy of `site` alone (its operands as
/// arguments, its results returned), shared by identical sites.
static func::FuncOp boundaryBody(Operation *site, const KernelInfo &kernel,
                                 ModuleOp module,
                                 llvm::StringMap<func::FuncOp> &bodies) {
  // Identical sites: the same op, attributes and types.
  OpBuilder b(site->getContext());
  auto type =
      b.getFunctionType(site->getOperandTypes(), site->getResultTypes());
  std::string key;
  llvm::raw_string_ostream os(key);
  os << kernel.name << "|" << site->getName() << "|"
     << site->getAttrDictionary() << "|" << type;
  if (auto it = bodies.find(key); it != bodies.end())
    return it->second;
  std::string name = "boundary_";
  for (char c : kernel.name)
    name += llvm::isAlnum(c) ? c : '_';
  func::FuncOp fn = outlineOp(site, name);
  SymbolTable(module).insert(fn); // at the end, under a unique name
  fn.setPrivate();
  fn->setAttr(kProgramAttrName, b.getUnitAttr());
  fn->setAttr(kBoundaryBodyAttrName, b.getUnitAttr());
  bodies[key] = fn;
  return fn;
}

Operation *mlir::seam::applySiteVariant(Operation *site,
                                        const KernelInfo &kernel,
                                        SiteVariant variant, ModuleOp module,
                                        llvm::StringMap<func::FuncOp> &bodies) {
  UnitAttr unit = UnitAttr::get(site->getContext());
  // An op the compiler runs on the host (a graph break) has no device body
  // to keep from fusing, materialize or put behind the boundary: its three
  // middle variants are the fused one, and the whole delta is body and host.
  auto fc = dyn_cast<FusionClassInterface>(site);
  if (fc && fc.needsHostFallback() && variant != SiteVariant::Kernel)
    return site;
  switch (variant) {
  case SiteVariant::Fused:
    return site;
  case SiteVariant::RoundTrip:
    site->setAttr(kMaterializeAttrName, unit);
    [[fallthrough]];
  case SiteVariant::NoFusion:
    site->setAttr(kNoFuseAttrName, unit);
    return site;
  case SiteVariant::Boundary: {
    func::FuncOp body = boundaryBody(site, kernel, module, bodies);
    auto call = cast<KernelCallOp>(replaceWithKernelCall(site, kernel));
    call.setCalleeAttr(FlatSymbolRefAttr::get(body.getSymNameAttr()));
    return call;
  }
  case SiteVariant::Kernel:
    return replaceWithKernelCall(site, kernel);
  }
  return site;
}
