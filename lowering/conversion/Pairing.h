//===- Pairing.h - fusion pairings decided before the conversion -*- C++
//-*-===//
//
// `seam-plan-pairings` decides, per program, which seam ops the conversion
// lowers together (ConvertSeamToNcore.h explains each kind) and records each
// decision on the IR; `convert-seam-to-ncore` only carries them out:
//  - interleaving: a host op emits a guest op's work between its own steps
//    (InterleavedWork);
//  - row production: a row consumer (a norm) emits its input's producer (an
//    elementwise binary) row tile by row tile in its own row loop
//    (RowProducer);
//  - column consumption: a linear calls the all_reduce of its result on
//    each column range it stores (ColumnConsumer).
// A pair is two integer attributes with the same value (the pair's id,
// unique within its program), one on each op:
//
//   %g = seam.linear ... {seam.interleave_guest = 0 : i64}
//   %o = seam.attention ... {seam.interleave_host = 0 : i64}
//
// Whether a recorded pair is carried out still depends on what the
// conversion finds when it gets there (the SBUF left for the fused working
// tiles, the host's plan): a pair is a permission, and the op is lowered
// alone when it does not fit.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_LOWERING_CONVERSION_PAIRING_H
#define SEAM_LOWERING_CONVERSION_PAIRING_H

#include "dialect/seam/SeamOps.h"
#include "lowering/conversion/ConvertSeamToNcore.h"

namespace mlir::seam::conversion {

/// The host (its lowering takes a guest) and the guest of an interleaving.
constexpr llvm::StringLiteral kInterleaveHostAttrName = "seam.interleave_host";
constexpr llvm::StringLiteral kInterleaveGuestAttrName =
    "seam.interleave_guest";
/// The consumer (reads the producer's result as its operand 0, first) and
/// the producer of a row production.
constexpr llvm::StringLiteral kRowConsumerAttrName = "seam.row_consumer";
constexpr llvm::StringLiteral kRowProducerAttrName = "seam.row_producer";
/// The producer (a linear) and the consumer (the all_reduce of its result)
/// of a column consumption.
constexpr llvm::StringLiteral kColumnProducerAttrName = "seam.column_producer";
constexpr llvm::StringLiteral kColumnConsumerAttrName = "seam.column_consumer";

/// What each op kind can be in a pairing: the tables the op family files
/// populate (ConvertLinear, ConvertAttention, ConvertElementwise,
/// ConvertNorm).
struct PairingRules {
  GuestTable guests;
  llvm::StringSet<> hosts;
  RowProducerTable producers;
  RowConsumerTable consumers;
  /// The rules of every op family.
  static PairingRules all();
};

/// The pairings of one program's body.
struct ProgramPairings {
  /// Host -> guest.
  DenseMap<Operation *, Operation *> guestOf;
  /// Row consumer -> its producer.
  DenseMap<Operation *, Operation *> producerOf;
  /// Linear -> the all_reduce that consumes its columns.
  DenseMap<Operation *, AllReduceOp> collectiveOf;
};

/// Decides the pairings of a program's body (the analysis behind
/// seam-plan-pairings).
ProgramPairings decidePairings(Block &body, const PairingRules &rules);

/// Records `pairings` on the ops of `body` (removing any recorded before),
/// numbering the pairs in program order of their second op.
void recordPairings(Block &body, const ProgramPairings &pairings);

/// The pairings recorded on `body`, checked against `rules` and the IR (both
/// ops present, of kinds that can pair that way, in an order the conversion
/// can carry out); a diagnostic naming the attribute otherwise.
FailureOr<ProgramPairings> readPairings(Block &body, const PairingRules &rules);

} // namespace mlir::seam::conversion

#endif // SEAM_LOWERING_CONVERSION_PAIRING_H
