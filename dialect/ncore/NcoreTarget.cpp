//===- NcoreTarget.cpp - The target profile carried on the IR -------------===//
#include "dialect/ncore/NcoreTarget.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace mlir::ncore;
namespace rt = ::seam::rt;

DictionaryAttr mlir::ncore::buildTargetAttr(MLIRContext *ctx,
                                            const rt::Profile &profile) {
  Builder b(ctx);
  SmallVector<NamedAttribute> overrides;
  for (const auto &[figure, value] : profile.overrides())
    overrides.push_back(b.getNamedAttr(figure, b.getF64FloatAttr(value)));
  SmallVector<NamedAttribute> fields;
  fields.push_back(
      b.getNamedAttr("name", b.getStringAttr(rt::name(profile.target))));
  if (!overrides.empty())
    fields.push_back(
        b.getNamedAttr("overrides", b.getDictionaryAttr(overrides)));
  return b.getDictionaryAttr(fields);
}

void mlir::ncore::setTargetProfile(ModuleOp module,
                                   const rt::Profile &profile) {
  module->setAttr(kTargetAttrName,
                  buildTargetAttr(module.getContext(), profile));
}

DictionaryAttr mlir::ncore::findTargetAttr(Operation *op) {
  for (; op; op = op->getParentOp())
    if (Attribute a = op->getAttr(kTargetAttrName))
      return dyn_cast<DictionaryAttr>(a);
  return {};
}

/// The op that carries the attribute (for diagnostics).
static Operation *targetAttrOwner(Operation *op) {
  for (; op; op = op->getParentOp())
    if (op->getAttr(kTargetAttrName))
      return op;
  return nullptr;
}

FailureOr<rt::Profile> mlir::ncore::getTargetProfile(Operation *op,
                                                     StringRef optionTarget,
                                                     bool optionSet,
                                                     StringRef pass) {
  Operation *owner = targetAttrOwner(op);
  if (!owner) {
    std::optional<rt::Target> target = rt::parseTarget(optionTarget);
    if (!target)
      return op->emitError() << pass << ": unknown target '" << optionTarget
                             << "' (expected trn1 or trn2)";
    return rt::Profile::builtin(*target);
  }
  auto fail = [&]() {
    return op->emitError() << pass << ": " << kTargetAttrName << ": ";
  };
  auto dict = dyn_cast<DictionaryAttr>(owner->getAttr(kTargetAttrName));
  if (!dict)
    return fail() << "expected a dictionary {name = \"trn1\"|\"trn2\", "
                     "overrides = {figure = value, ...}}";
  for (NamedAttribute field : dict)
    if (field.getName() != "name" && field.getName() != "overrides")
      return fail() << "unknown field '" << field.getName().getValue()
                    << "' (expected name, overrides)";
  auto name = dict.getAs<StringAttr>("name");
  if (!name)
    return fail() << "missing string field 'name'";
  std::optional<rt::Target> target = rt::parseTarget(name.getValue());
  if (!target)
    return fail() << "unknown target '" << name.getValue()
                  << "' (expected trn1 or trn2)";
  if (optionSet && optionTarget != name.getValue())
    return fail() << "the module is compiled for '" << name.getValue()
                  << "', but the pass's target option says '" << optionTarget
                  << "'";
  rt::Profile profile = rt::Profile::builtin(*target);
  Attribute overridesAttr = dict.get("overrides");
  if (!overridesAttr)
    return profile;
  auto overrides = dyn_cast<DictionaryAttr>(overridesAttr);
  if (!overrides)
    return fail() << "'overrides' is not a dictionary";
  for (NamedAttribute o : overrides) {
    double value;
    if (auto f = dyn_cast<FloatAttr>(o.getValue()))
      value = f.getValueAsDouble();
    else if (auto i = dyn_cast<IntegerAttr>(o.getValue()))
      value = static_cast<double>(i.getInt());
    else
      return fail() << "override '" << o.getName().getValue()
                    << "' is not a number";
    if (rt::Status s = profile.set(o.getName().str(), value); !s)
      return fail() << s.error();
  }
  return profile;
}
