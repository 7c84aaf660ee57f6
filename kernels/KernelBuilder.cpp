//===- KernelBuilder.cpp - ncore op helpers for kernels -------------------===//
#include "kernels/KernelBuilder.h"
#include "kernels/Registry.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::seam;
using namespace mlir::ncore;

Value KernelBuilder::constant(const ConstantSpec &spec, Type dtype) {
  NamedAttribute desc(StringAttr::get(context(), kConstantAttrName),
                      spec.toAttr(context()));
  return constantArg(
      TileType::get(MemSpace::Hbm, {spec.rows, spec.cols}, dtype),
      DictionaryAttr::get(context(), {desc}));
}

Value KernelBuilder::broadcastToPartitions(Value src, int64_t partitions) {
  TileType st = tileOf(src);
  int64_t n = st.getNumElements();
  Value row = sbuf({1, n}, st.getElementType());
  dma(row, src);
  Value out = sbuf({partitions, n}, st.getElementType());
  broadcastPartitions(out, row);
  return out;
}

void KernelBuilder::dmaLoop(int64_t count,
                            llvm::function_ref<void(Index)> body) {
  if (count <= 0)
    return;
  if (loopDepth() == 0) {
    forRange(count, body);
    return;
  }
  int64_t streams = std::min(count, kDmaStreams), range = count / streams;
  forRange(range, [&](Index i) {
    for (int64_t u = 0; u < streams; ++u)
      body(i + u * range);
  });
  for (int64_t c = streams * range; c < count; ++c)
    body(Index(c));
}

ProgramOp seam::createKernelProgram(OpBuilder &b, ModuleOp module,
                                    StringRef name, ArrayRef<TileType> inputs,
                                    ArrayRef<TileType> outputs) {
  SmallVector<Type> types(inputs.begin(), inputs.end());
  types.append(outputs.begin(), outputs.end());
  b.setInsertionPointToEnd(module.getBody());
  auto prog = b.create<ProgramOp>(module.getLoc(), name, types);
  for (unsigned i = 0; i < types.size(); ++i)
    prog.setArgRole(i, i < inputs.size() ? "input" : "output");
  b.setInsertionPointToStart(&prog.getBody().front());
  return prog;
}

ProgramOp seam::createKernelProgram(OpBuilder &b, ModuleOp module,
                                    StringRef name,
                                    const KernelSignature &sig) {
  SmallVector<TileType> ins;
  for (RankedTensorType t : sig.args)
    ins.push_back(*hbmTileFor(t));
  return createKernelProgram(b, module, name, ins,
                             {*hbmTileFor(sig.results[0])});
}

FailureOr<TileType> seam::hbmTileFor(RankedTensorType t) {
  SmallVector<int64_t> shape(t.getShape());
  Type elt = t.getElementType();
  if (auto c = dyn_cast<ComplexType>(elt)) {
    elt = c.getElementType();
    shape.push_back(2);
  }
  if (!dtypeCode(elt) || !t.hasStaticShape())
    return failure();
  return TileType::get(t.getContext(), MemSpace::Hbm, shape, elt, 0);
}
