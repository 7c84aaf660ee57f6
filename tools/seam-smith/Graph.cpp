//===- Graph.cpp - seam-smith's random graphs: shapes and MLIR text -------===//
#include "tools/seam-smith/Graph.h"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

using namespace smith;

uint64_t smith::graphSeed(uint64_t seed, uint64_t index) {
  Rng r(seed * 0x9e3779b97f4a7c15ull + index);
  r.next();
  return r.next();
}

const char *smith::opName(Op op) {
  switch (op) {
  case Op::Input:
    return "input";
  case Op::Linear:
    return "linear";
  case Op::LayerNorm:
    return "layer_norm";
  case Op::RmsNorm:
    return "rms_norm";
  case Op::Gelu:
    return "gelu";
  case Op::GeluTanh:
    return "gelu_tanh";
  case Op::Silu:
    return "silu";
  case Op::Add:
    return "add";
  case Op::Mul:
    return "mul";
  case Op::Reshape:
    return "reshape";
  case Op::Transpose:
    return "transpose";
  case Op::Concat:
    return "concat";
  case Op::Slice:
    return "slice";
  case Op::Rope:
    return "rope";
  case Op::Attention:
    return "attention";
  case Op::FourierMix:
    return "fourier_mix";
  case Op::Fft:
    return "fft";
  case Op::Ifft:
    return "ifft";
  case Op::FftConv:
    return "fftconv";
  case Op::AllReduce:
    return "all_reduce";
  case Op::AllGather:
    return "all_gather";
  }
  return "?";
}

int64_t smith::defaultFftSize(int64_t l) {
  int64_t n = 16;
  while (n < 2 * l)
    n *= 2;
  return n;
}

namespace {

int64_t count(const std::vector<int64_t> &s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

std::string dims(const std::vector<int64_t> &s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i)
    t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

std::string typeText(const std::vector<int64_t> &shape, DType t) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  switch (t) {
  case DType::F32:
    s += "f32";
    break;
  case DType::BF16:
    s += "bf16";
    break;
  case DType::C64:
    s += "complex<f32>";
    break;
  }
  return s + ">";
}

std::string real(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6e", v);
  return buf;
}

int64_t sliceSize(int64_t dim, int permille) {
  return std::max<int64_t>(
      1, std::min<int64_t>(dim, (dim * permille + 999) / 1000));
}

int64_t sliceOffset(int64_t dim, int64_t size, int permille) {
  return (dim - size) * permille / 1000;
}

/// Known runtime bug, not seam-smith's to fix (reported): the host FFT
/// (runtime/HostFallback.cpp, fftAlongAxis through Eigen's kissfft) crashes
/// on an axis of one point. FFT ops over such an axis are not generated.
bool fftSize(int64_t n) { return n > 1; }

int64_t filterLength(const Node &n, int64_t l) {
  return std::max<int64_t>(1, std::min<int64_t>(l, l * n.lkPermille / 1000));
}

} // namespace

namespace {

bool isReal(DType t) { return t != DType::C64; }

/// Add, Mul: the broadcast shape, where the lowering takes it.
std::string inferBroadcast(Node &n, const std::vector<Node> &nodes) {
  const Node &x = nodes[n.in[0]];
  const std::vector<int64_t> &s = x.shape;
  if (n.in.size() != 2)
    return "needs two operands";
  const Node &y = nodes[n.in[1]];
  if (!isReal(x.dtype) || y.dtype != x.dtype)
    return "operand types";
  std::vector<int64_t> a = s, b = y.shape;
  size_t r = std::max(a.size(), b.size());
  a.insert(a.begin(), r - a.size(), 1);
  b.insert(b.begin(), r - b.size(), 1);
  n.shape.assign(r, 1);
  for (size_t d = 0; d < r; ++d) {
    if (a[d] != b[d] && a[d] != 1 && b[d] != 1)
      return "shapes do not broadcast: " + dims(s) + " " + dims(y.shape);
    n.shape[d] = std::max(a[d], b[d]);
  }
  // Lowering (ConvertElementwise.cpp): as [rows, cols] matrices, an
  // operand is the result's, or one row broadcast over all rows.
  auto lowered = [&](const std::vector<int64_t> &o) {
    int64_t rows = count(o) / o.back(), rrows = count(n.shape) / n.shape.back();
    return o.back() == n.shape.back() && (rows == rrows || rows == 1);
  };
  if (!lowered(s) || !lowered(y.shape) ||
      (count(s) != count(n.shape) && count(y.shape) != count(n.shape)))
    return "broadcast not lowered: " + dims(s) + " " + dims(y.shape);
  return "";
}

/// Reshape: merge, split, unsqueeze or squeeze one axis.
std::string inferReshape(Node &n, const Node &x) {
  const std::vector<int64_t> &s = x.shape;
  int rank = int(s.size());
  // The device holds complex values only at boundaries
  // (ConvertSeamToNcore.cpp, checkDtype): no data movement on them.
  if (!isReal(x.dtype))
    return "complex data movement is not lowered";
  switch (n.reshape) {
  case ReshapeKind::Merge:
    if (n.axis < 0 || n.axis + 1 >= rank)
      return "merge axis";
    n.shape[n.axis] *= n.shape[n.axis + 1];
    n.shape.erase(n.shape.begin() + n.axis + 1);
    break;
  case ReshapeKind::Split:
    if (n.axis < 0 || n.axis >= rank || n.factor < 1 || s[n.axis] % n.factor)
      return "split " + std::to_string(n.factor) + " of " + dims(s);
    n.shape[n.axis] = n.factor;
    n.shape.insert(n.shape.begin() + n.axis + 1, s[n.axis] / n.factor);
    break;
  case ReshapeKind::Unsqueeze:
    if (n.axis < 0 || n.axis > rank || rank >= 5)
      return "unsqueeze axis";
    n.shape.insert(n.shape.begin() + n.axis, 1);
    break;
  case ReshapeKind::Squeeze:
    if (n.axis < 0 || n.axis >= rank || s[n.axis] != 1 || rank < 2)
      return "squeeze axis";
    n.shape.erase(n.shape.begin() + n.axis);
    break;
  }
  return "";
}

/// Transpose: a permutation the lowering takes.
std::string inferTranspose(Node &n, const Node &x) {
  const std::vector<int64_t> &s = x.shape;
  int rank = int(s.size());
  if (!isReal(x.dtype))
    return "complex data movement is not lowered";
  if (int(n.perm.size()) != rank)
    return "perm rank";
  std::vector<bool> seen(rank, false);
  for (int d = 0; d < rank; ++d) {
    int64_t p = n.perm[d];
    if (p < 0 || p >= rank || seen[p])
      return "not a permutation";
    seen[p] = true;
    n.shape[d] = s[p];
  }
  // Lowering (ConvertShape.cpp): the last dim stays last, or the last
  // two swap and nothing else moves.
  bool swapLast =
      rank >= 2 && n.perm[rank - 1] == rank - 2 && n.perm[rank - 2] == rank - 1;
  for (int d = 0; d + 2 < rank; ++d)
    swapLast = swapLast && n.perm[d] == d;
  if (n.perm.back() != rank - 1 && !swapLast)
    return "transpose perm " + dims(n.perm) + " is not lowered";
  return "";
}

/// Concat along n.axis.
std::string inferConcat(Node &n, const std::vector<Node> &nodes) {
  const Node &x = nodes[n.in[0]];
  const std::vector<int64_t> &s = x.shape;
  int rank = int(s.size());
  if (!isReal(x.dtype))
    return "complex data movement is not lowered";
  if (n.axis < 0 || n.axis >= rank)
    return "concat dim";
  n.shape[n.axis] = 0;
  for (int o : n.in) {
    const Node &y = nodes[o];
    if (y.dtype != x.dtype || int(y.shape.size()) != rank)
      return "concat operand types";
    for (int d = 0; d < rank; ++d)
      if (d != n.axis && y.shape[d] != s[d])
        return "concat shapes " + dims(s) + " " + dims(y.shape);
    n.shape[n.axis] += y.shape[n.axis];
  }
  if (count(n.shape) > kMaxElements)
    return "too large";
  return "";
}

/// Attention: q, k, v of rank 4 (GQA: k, v heads divide q's).
std::string inferAttention(Node &n, const std::vector<Node> &nodes) {
  const Node &x = nodes[n.in[0]];
  const std::vector<int64_t> &s = x.shape;
  int rank = int(s.size());
  if (n.in.size() != 3)
    return "needs q, k, v";
  const Node &k = nodes[n.in[1]], &v = nodes[n.in[2]];
  if (!isReal(x.dtype) || k.dtype != x.dtype || v.dtype != x.dtype)
    return "operand types";
  if (rank != 4 || k.shape.size() != 4 || v.shape.size() != 4)
    return "q, k, v must be rank 4";
  const auto &ks = k.shape, &vs = v.shape;
  if (s[0] != ks[0] || s[0] != vs[0] || ks[1] != vs[1] || s[1] % ks[1] ||
      s[3] != ks[3] || ks[2] != vs[2])
    return "q " + dims(s) + " k " + dims(ks) + " v " + dims(vs);
  if (s[3] > 128 || vs[3] > 128)
    return "head dim > 128";
  if ((n.causal || n.rope) && s[2] != ks[2])
    return "causal or rope with Sq != Sk";
  if (n.rope && s[3] % 2)
    return "rope with an odd head dim";
  n.shape[3] = vs[3];
  return "";
}

/// FftConv: u [B, H, L] and its gates v, q of u's shape.
std::string inferFftConv(const Node &n, const std::vector<Node> &nodes) {
  const Node &x = nodes[n.in[0]];
  const std::vector<int64_t> &s = x.shape;
  int rank = int(s.size());
  if (!isReal(x.dtype) || rank != 3)
    return "fftconv u " + dims(s);
  size_t want = 1 + n.hasV + n.hasQ;
  if (n.in.size() != want)
    return "fftconv operands";
  for (size_t o = 1; o < n.in.size(); ++o)
    if (nodes[n.in[o]].shape != s || nodes[n.in[o]].dtype != x.dtype)
      return "fftconv v/q shapes";
  int64_t size = defaultFftSize(s[2]) * n.fftMult;
  if (size > 16384)
    return "fft_size > 16384";
  return "";
}

/// The type of node `n` from its operands (already inferred), where seam
/// lowers it; "" when it is, else why not.
std::string inferResult(Node &n, const std::vector<Node> &nodes, int tp) {
  const Node &x = nodes[n.in[0]];
  const std::vector<int64_t> &s = x.shape;
  int rank = int(s.size());
  n.dtype = x.dtype;
  n.shape = s;
  switch (n.op) {
  case Op::Input:
    break;
  case Op::Linear:
    if (!isReal(x.dtype))
      return "complex input";
    if (n.size < 1)
      return "N < 1";
    if (s.back() * n.size > kMaxElements)
      return "weight too large";
    // Lowering (ConvertLinear.cpp): the transposed token tile of K
    // elements fits half the working SBUF.
    if (s.back() > 4096)
      return "K = " + std::to_string(s.back()) + " is not lowered";
    n.shape.back() = n.size;
    break;
  case Op::LayerNorm:
  case Op::RmsNorm:
    // Lowering (ConvertNorm.cpp): a row's working tiles fit in SBUF
    // (16 bytes per element of the row, ~76 KB per partition on trn1).
    if (s.back() > 2048)
      return "norm rows of " + std::to_string(s.back()) +
             " elements are not lowered";
    // A layer_norm of a few elements is +-1 around ties: in bf16 a tie
    // within rounding is likely and flips the sign, which no tolerance
    // absorbs (not a bug; not generated).
    if (n.op == Op::LayerNorm && x.dtype == DType::BF16 && s.back() < 8)
      return "bf16 layer_norm of fewer than 8 elements";
    [[fallthrough]];
  case Op::Gelu:
  case Op::GeluTanh:
  case Op::Silu:
  case Op::AllReduce:
    if (!isReal(x.dtype))
      return "complex input";
    break;
  case Op::Add:
  case Op::Mul:
    return inferBroadcast(n, nodes);
  case Op::Reshape:
    return inferReshape(n, x);
  case Op::Transpose:
    return inferTranspose(n, x);
  case Op::Concat:
    return inferConcat(n, nodes);
  case Op::Slice:
    if (!isReal(x.dtype))
      return "complex data movement is not lowered";
    if (int(n.frac.size()) != 2 * rank)
      return "slice rank";
    for (int d = 0; d < rank; ++d)
      n.shape[d] = sliceSize(s[d], n.frac[2 * d]);
    break;
  case Op::Rope:
    if (!isReal(x.dtype) || rank != 4 || s[3] % 2)
      return "rope input " + dims(s);
    break;
  case Op::Attention:
    return inferAttention(n, nodes);
  case Op::FourierMix: {
    if (!isReal(x.dtype) || n.perm.empty())
      return "fourier_mix input";
    std::set<int64_t> seen;
    for (int64_t d : n.perm)
      if (d < 0 || d >= rank || !seen.insert(d).second || !fftSize(s[d]))
        return "fourier_mix dims";
    break;
  }
  case Op::Fft:
    if (n.axis < 0 || n.axis >= rank || !fftSize(s[n.axis]))
      return "fft axis";
    n.dtype = n.complexOut ? DType::C64 : DType::F32;
    break;
  case Op::Ifft:
    if (x.dtype != DType::C64 || n.axis < 0 || n.axis >= rank ||
        !fftSize(s[n.axis]))
      return "ifft input";
    n.dtype = n.complexOut ? DType::C64 : DType::F32;
    break;
  case Op::FftConv:
    return inferFftConv(n, nodes);
  case Op::AllGather:
    if (!isReal(x.dtype) || n.axis < 0 || n.axis >= rank)
      return "all_gather";
    n.shape[n.axis] *= tp;
    break;
  }
  return "";
}

} // namespace

std::string Graph::infer(bool checkOutputs) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    Node &n = nodes[i];
    if (n.dead)
      continue;
    std::string where = std::string(opName(n.op)) + " %v" + std::to_string(i);
    auto bad = [&](const std::string &why) { return where + ": " + why; };
    for (int o : n.in)
      if (o < 0 || size_t(o) >= nodes.size() || nodes[o].dead ||
          (nodes[o].op != Op::Input && size_t(o) >= i))
        return bad("operand out of order");
    if (n.op == Op::Input) {
      if (n.shape.empty())
        return bad("rank 0");
      for (int64_t d : n.shape)
        if (d < 1)
          return bad("empty dimension");
      if (count(n.shape) > kMaxElements)
        return bad("too large");
      continue;
    }
    if (n.in.empty())
      return bad("no operand");
    if (std::string why = inferResult(n, nodes, tp); !why.empty())
      return bad(why);
    if (count(n.shape) > kMaxElements)
      return bad("result " + dims(n.shape) + " too large");
    for (int64_t d : n.shape)
      if (d < 1)
        return bad("empty result");
  }
  if (!checkOutputs)
    return "";
  if (outputs.empty())
    return "no outputs";
  for (int o : outputs)
    if (o < 0 || size_t(o) >= nodes.size() || nodes[o].dead ||
        nodes[o].op == Op::Input)
      return "bad output";
  return "";
}

void Graph::removeDeadNodes() {
  std::vector<bool> live(nodes.size(), false);
  for (int o : outputs)
    live[o] = true;
  for (int i = int(nodes.size()) - 1; i >= 0; --i)
    if (live[i] && !nodes[i].dead)
      for (int o : nodes[i].in)
        live[o] = true;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (!live[i])
      nodes[i].dead = true;
}

int Graph::opCount() const {
  int n = 0;
  for (const Node &x : nodes)
    n += !x.dead && x.op != Op::Input;
  return n;
}

std::string Graph::flags() const {
  std::string f = "--functional --reference --steps 1 --runs 1 --mode " + mode +
                  " --target " + target;
  std::string k;
  for (const std::string &s : kernels)
    k += (k.empty() ? "" : ",") + s;
  if (!k.empty())
    f += " --kernels " + k;
  if (boundary != "barrier")
    f += " --kernel-boundary " + boundary;
  return f;
}

std::string Graph::summary() const {
  std::map<std::string, int> ops;
  for (const Node &n : nodes)
    if (!n.dead && n.op != Op::Input)
      ++ops[opName(n.op)];
  std::string s = std::to_string(opCount()) + " ops (";
  bool first = true;
  for (auto &[name, c] : ops) {
    s += (first ? "" : " ") + name + (c > 1 ? "x" + std::to_string(c) : "");
    first = false;
  }
  return s + "), tp " + std::to_string(tp) + ", " + flags();
}

namespace {

/// Emits the function body: runs of consecutive ops with one block index
/// become seam.block regions; values leaving a run are yielded.
class Printer {
public:
  explicit Printer(const Graph &g) : g(g) {}

  std::string print() {
    const auto &nodes = g.nodes;
    std::vector<int> ops;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (nodes[i].dead)
        continue;
      if (nodes[i].op == Op::Input)
        argOf[int(i)] = int(argOf.size());
      else
        ops.push_back(int(i));
    }
    // Runs of ops with one block index (>= 0).
    runOf.assign(nodes.size(), -1);
    std::vector<std::vector<int>> runs;
    int lastBlock = -2;
    for (int i : ops) {
      int b = nodes[i].block;
      if (b < 0) {
        lastBlock = -2;
        continue;
      }
      if (b != lastBlock)
        runs.emplace_back();
      runs.back().push_back(i);
      runOf[i] = int(runs.size()) - 1;
      lastBlock = b;
    }
    // Yields: values of a run used outside it.
    std::vector<std::vector<int>> yields(runs.size());
    posInRun.assign(nodes.size(), -1);
    auto usedOutside = [&](int v) {
      for (int o : g.outputs)
        if (o == v)
          return true;
      for (int u : ops)
        for (int o : nodes[u].in)
          if (o == v && runOf[u] != runOf[v])
            return true;
      return false;
    };
    for (size_t r = 0; r < runs.size(); ++r)
      for (int v : runs[r])
        if (usedOutside(v)) {
          posInRun[v] = int(yields[r].size());
          yields[r].push_back(v);
        }
    runSize.clear();
    for (auto &y : yields)
      runSize.push_back(int(y.size()));

    std::string out = "module attributes {seam.tp = " + std::to_string(g.tp) +
                      " : i64} {\n  func.func @forward(";
    for (size_t i = 0, k = 0; i < nodes.size(); ++i) {
      if (nodes[i].dead || nodes[i].op != Op::Input)
        continue;
      out += (k ? ", " : "") + ("%a" + std::to_string(k)) + ": " +
             type(int(i)) + " {seam.input = \"x" + std::to_string(k) + "\"}";
      ++k;
    }
    out += ") -> ";
    std::string results;
    for (size_t i = 0; i < g.outputs.size(); ++i)
      results += (i ? ", " : "") + type(g.outputs[i]);
    out += g.outputs.size() == 1 ? results : "(" + results + ")";
    out += " {\n";
    size_t at = 0;
    while (at < ops.size()) {
      int first = ops[at];
      if (runOf[first] < 0) {
        out += emit(first, "    ", -1);
        ++at;
        continue;
      }
      int r = runOf[first];
      std::string body;
      while (at < ops.size() && runOf[ops[at]] == r)
        body += emit(ops[at++], "      ", r);
      std::string types;
      std::string names;
      for (size_t y = 0; y < yields[r].size(); ++y) {
        types += (y ? ", " : "") + type(yields[r][y]);
        names += (y ? ", " : "") + ("%v" + std::to_string(yields[r][y]));
      }
      out += "    ";
      if (!yields[r].empty())
        out += "%b" + std::to_string(r) +
               (yields[r].size() > 1 ? ":" + std::to_string(yields[r].size())
                                     : "") +
               " = ";
      out += "seam.block \"smith\" " + std::to_string(r);
      if (!yields[r].empty())
        out += " -> " + types;
      out += " {\n" + body + "      seam.yield";
      if (!yields[r].empty())
        out += " " + names + " : " + types;
      out += "\n    }\n";
    }
    std::string values;
    for (size_t i = 0; i < g.outputs.size(); ++i)
      values += (i ? ", " : "") + ref(g.outputs[i], -1);
    out += "    return " + values + " : " + results + "\n  }\n}\n";
    return out;
  }

private:
  const Graph &g;
  std::map<int, int> argOf;
  std::vector<int> runOf, posInRun, runSize;
  int params = 0;

  std::string type(int v) const {
    return typeText(g.nodes[v].shape, g.nodes[v].dtype);
  }

  /// The name of node v where run `r` (-1: the function body) uses it.
  std::string ref(int v, int r) const {
    auto arg = argOf.find(v);
    if (arg != argOf.end())
      return "%a" + std::to_string(arg->second);
    if (runOf[v] < 0 || runOf[v] == r)
      return "%v" + std::to_string(v);
    int run = runOf[v];
    return "%b" + std::to_string(run) +
           (runSize[run] > 1 ? "#" + std::to_string(posInRun[v]) : "");
  }

  /// A seam.param line; returns its name through `name`.
  std::string param(std::string &name, const std::string &init, double scale,
                    uint64_t seed, const std::vector<int64_t> &shape, DType t,
                    const std::string &indent) {
    name = "%p" + std::to_string(params++);
    return indent + name + " = seam.param \"" + name.substr(1) + "\" init " +
           init + "(" + real(scale) + ") seed " +
           std::to_string(seed % 1000000007ull) + " : " + typeText(shape, t) +
           "\n";
  }

  std::string emit(int i, const std::string &ind, int r) {
    const Node &n = g.nodes[i];
    const Node &x = g.nodes[n.in[0]];
    std::string res = "%v" + std::to_string(i), out;
    std::string a0 = ref(n.in[0], r), t0 = type(n.in[0]), ty = type(i);
    uint64_t seed = n.seed * 16;
    switch (n.op) {
    case Op::Input:
      return "";
    case Op::Linear: {
      int64_t k = x.shape.back();
      std::string w, b, s, operands = a0, types = t0;
      out += param(w, "normal", 1.0 / std::sqrt(double(k)), seed + 1,
                   {k, n.size}, n.dtype, ind);
      operands += ", " + w;
      types += ", " + typeText({k, n.size}, n.dtype);
      if (n.bias) {
        out += param(b, "uniform", 0.5, seed + 2, {n.size}, n.dtype, ind);
        operands += ", " + b;
        types += ", " + typeText({n.size}, n.dtype);
      }
      if (n.scale) {
        std::vector<int64_t> row(n.shape.size(), 1);
        if (n.seed % 2 == 0)
          row.assign(1, 1);
        row.back() = n.size;
        out += param(s, "normal", 1.0, seed + 3, row, n.dtype, ind);
        operands += " scale " + s;
        types += ", " + typeText(row, n.dtype);
      }
      static const char *acts[] = {"", "gelu", "gelu_tanh", "silu"};
      std::string attr =
          n.act ? std::string(" {activation = \"") + acts[n.act] + "\"}" : "";
      out += ind + res + " = seam.linear " + operands + attr + " : (" + types +
             ") -> " + ty + "\n";
      return out;
    }
    case Op::LayerNorm:
    case Op::RmsNorm: {
      bool ln = n.op == Op::LayerNorm;
      int64_t d = x.shape.back();
      std::string s, b, operands = a0, types = t0;
      if (n.scale) {
        out += param(s, "uniform", 1.0, seed + 1, {d}, n.dtype, ind);
        operands += " scale " + s;
        types += ", " + typeText({d}, n.dtype);
      }
      if (ln && n.bias) {
        out += param(b, "uniform", 0.5, seed + 2, {d}, n.dtype, ind);
        operands += " bias " + b;
        types += ", " + typeText({d}, n.dtype);
      }
      std::string attrs = "epsilon = " + real(n.eps) + " : f64";
      if (ln && n.scale && n.scaleOffset != 0)
        attrs += ", scale_offset = " + real(n.scaleOffset) + " : f64";
      out += ind + res + " = seam." + (ln ? "layer_norm " : "rms_norm ") +
             operands + " {" + attrs + "} : (" + types + ") -> " + ty + "\n";
      return out;
    }
    case Op::Gelu:
    case Op::GeluTanh:
    case Op::Silu:
      return ind + res + " = seam." + opName(n.op) + " " + a0 + " : " + ty +
             "\n";
    case Op::Add:
    case Op::Mul:
      return ind + res + " = seam." + opName(n.op) + " " + a0 + ", " +
             ref(n.in[1], r) + " : (" + t0 + ", " + type(n.in[1]) + ") -> " +
             ty + "\n";
    case Op::Reshape:
      return ind + res + " = seam.reshape " + a0 + " : " + t0 + " -> " + ty +
             "\n";
    case Op::Transpose:
      return ind + res + " = seam.transpose " + a0 + " perm " + dims(n.perm) +
             " : " + t0 + " -> " + ty + "\n";
    case Op::Concat: {
      std::string operands, types;
      for (size_t o = 0; o < n.in.size(); ++o) {
        operands += (o ? ", " : "") + ref(n.in[o], r);
        types += (o ? ", " : "") + type(n.in[o]);
      }
      return ind + res + " = seam.concat " + operands + " dim " +
             std::to_string(n.axis) + " : (" + types + ") -> " + ty + "\n";
    }
    case Op::Slice: {
      std::vector<int64_t> offs;
      offs.reserve(x.shape.size());
      for (size_t d = 0; d < x.shape.size(); ++d)
        offs.push_back(sliceOffset(x.shape[d], n.shape[d], n.frac[2 * d + 1]));
      return ind + res + " = seam.slice " + a0 + " offsets " + dims(offs) +
             " : " + t0 + " -> " + ty + "\n";
    }
    case Op::Rope: {
      std::vector<int64_t> table = {x.shape[2], x.shape[3]};
      std::string c, s;
      out += param(c, "rope_cos", 10000.0, seed + 1, table, n.dtype, ind);
      out += param(s, "rope_sin", 10000.0, seed + 2, table, n.dtype, ind);
      std::string tt = typeText(table, n.dtype);
      out += ind + res + " = seam.rope " + a0 + ", " + c + ", " + s + " : (" +
             t0 + ", " + tt + ", " + tt + ") -> " + ty + "\n";
      return out;
    }
    case Op::Attention: {
      std::string operands =
          a0 + ", " + ref(n.in[1], r) + ", " + ref(n.in[2], r);
      std::string types = t0 + ", " + type(n.in[1]) + ", " + type(n.in[2]);
      if (n.rope) {
        std::vector<int64_t> table = {x.shape[2], x.shape[3]};
        std::string c, s;
        out += param(c, "rope_cos", 10000.0, seed + 1, table, n.dtype, ind);
        out += param(s, "rope_sin", 10000.0, seed + 2, table, n.dtype, ind);
        std::string tt = typeText(table, n.dtype);
        operands += " rope(" + c + ", " + s + ")";
        types += ", " + tt + ", " + tt;
      }
      double scale = n.scaleFactor / std::sqrt(double(x.shape[3]));
      out += ind + res + " = seam.attention " + operands +
             " {scale = " + real(scale) + " : f64" +
             (n.causal ? ", causal" : "") + "} : (" + types + ") -> " + ty +
             "\n";
      return out;
    }
    case Op::FourierMix:
      return ind + res + " = seam.fourier_mix " + a0 + " dims " + dims(n.perm) +
             " : " + ty + "\n";
    case Op::Fft: {
      std::string attr;
      if (n.pad) {
        int64_t p = 1;
        while (p <= x.shape[n.axis])
          p *= 2;
        attr = " {pad_to = " + std::to_string(p) + " : i64}";
      }
      return ind + res + " = seam.fft " + a0 + " axis " +
             std::to_string(n.axis) + attr + " : " + t0 + " -> " + ty + "\n";
    }
    case Op::Ifft:
      return ind + res + " = seam.ifft " + a0 + " axis " +
             std::to_string(n.axis) + " : " + t0 + " -> " + ty + "\n";
    case Op::FftConv: {
      int64_t b = x.shape[0], h = x.shape[1], l = x.shape[2];
      int64_t lk = filterLength(n, l);
      std::string k, d, m;
      out += param(k, "normal", 1.0 / std::sqrt(double(lk)), seed + 1, {h, lk},
                   n.dtype, ind);
      out += param(d, "normal", 1.0, seed + 2, {h}, n.dtype, ind);
      std::string operands = a0 + ", " + k + ", " + d;
      std::string types = t0 + ", " + typeText({h, lk}, n.dtype) + ", " +
                          typeText({h}, n.dtype);
      size_t next = 1;
      if (n.hasV) {
        operands += " v " + ref(n.in[next], r);
        types += ", " + type(n.in[next++]);
      }
      if (n.hasQ) {
        operands += " q " + ref(n.in[next], r);
        types += ", " + type(n.in[next++]);
      }
      if (n.mask) {
        out += param(m, "uniform", 1.0, seed + 3, {b, h}, n.dtype, ind);
        operands += " dropout " + m;
        types += ", " + typeText({b, h}, n.dtype);
      }
      std::string attrs =
          "fft_size = " + std::to_string(defaultFftSize(l) * n.fftMult) +
          " : i64";
      if (n.gelu)
        attrs += ", gelu";
      if (n.geluInp)
        attrs += ", gelu_inp";
      if (n.geluQ)
        attrs += ", gelu_q";
      out += ind + res + " = seam.fftconv " + operands + " {" + attrs +
             "} : (" + types + ") -> " + ty + "\n";
      return out;
    }
    case Op::AllReduce:
      return ind + res + " = seam.all_reduce " + a0 + " ranks " +
             std::to_string(g.tp) + " : " + ty + "\n";
    case Op::AllGather:
      return ind + res + " = seam.all_gather " + a0 + " dim " +
             std::to_string(n.axis) + " ranks " + std::to_string(g.tp) + " : " +
             t0 + " -> " + ty + "\n";
    }
    return "";
  }
};

} // namespace

std::string Graph::print() const { return Printer(*this).print(); }
