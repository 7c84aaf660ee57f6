//===- Generate.cpp - seam-smith: random valid seam graphs ----------------===//
//
// A graph is a chain of actions over a pool of values (step inputs and op
// results): single ops, and the patterns models are made of (an attention
// block with its q/k/v projections, an FFT there and back). Shapes are small
// and often awkward (not multiples of 128, odd, 1); with a kernel selected,
// half the graphs take the shapes its published constraints accept, so the
// kernel is inserted rather than rejected.
//
//===----------------------------------------------------------------------===//
#include "tools/seam-smith/Generate.h"
#include <algorithm>
#include <numeric>

using namespace smith;

namespace {

const std::vector<std::string> kKernelNames = {
    "qkv", "rope", "flash-attn",  "flash-attn-stable",
    "fft", "ifft", "fourier-mix", "fftconv"};

class Generator {
public:
  explicit Generator(uint64_t seed) : rng(seed) {}

  Graph run() {
    chooseRun();
    base = rng.chance(0.6) ? DType::F32 : DType::BF16;
    friendly = !g.kernels.empty() && rng.chance(0.7);
    int inputs = int(rng.range(1, 2));
    for (int i = 0; i < inputs; ++i)
      pool.push_back(addInput(randomShape(), base));
    int steps = int(rng.range(1, 8));
    for (int s = 0; s < steps; ++s)
      for (int attempt = 0; attempt < 4; ++attempt)
        if (action())
          break;
    chooseOutputs();
    assignBlocks();
    g.removeDeadNodes();
    return g;
  }

private:
  Rng rng;
  Graph g;
  DType base = DType::F32;
  bool friendly = false;
  std::vector<int> pool; ///< values new ops may read

  bool has(const std::string &kernel) const {
    for (const std::string &k : g.kernels)
      if (k == kernel || k == "auto")
        return true;
    return false;
  }

  void chooseRun() {
    g.tp = rng.chance(0.5) ? 1 : (rng.chance(0.5) ? 2 : 4);
    g.mode = rng.chance(0.5) ? "compile" : "eager";
    g.target = rng.chance(0.5) ? "trn1" : "trn2";
    double k = double(rng.range(0, 99)) / 100.0;
    if (k < 0.35)
      return; // no kernel
    if (k < 0.40) {
      g.kernels = {"auto"};
    } else {
      std::vector<std::string> list;
      for (const std::string &name : kKernelNames)
        if (rng.chance(0.3))
          list.push_back(name);
      if (list.empty())
        list.push_back(rng.pick(kKernelNames));
      if (k < 0.45)
        list.front() = "auto:" + list.front();
      g.kernels = list;
    }
    if (g.mode == "compile" && rng.chance(0.25))
      g.boundary = "dependency";
  }

  // Sizes: small and awkward, or (friendly) what the kernels accept.
  int64_t rowSize() {
    if (friendly)
      return rng.pick(std::vector<int64_t>{128, 128, 256});
    return rng.pick(std::vector<int64_t>{1, 2, 3, 5, 7, 8, 16, 24, 31, 64, 100,
                                         128, 130, 192, 256});
  }
  int64_t featureSize() {
    if (friendly)
      return rng.pick(std::vector<int64_t>{128, 128, 256, 64});
    return rng.pick(std::vector<int64_t>{1, 2, 4, 6, 8, 16, 20, 32, 48, 64, 96,
                                         128, 160, 200, 256, 384, 520});
  }
  int64_t headDim() {
    if (friendly || has("rope"))
      return rng.pick(std::vector<int64_t>{64, 128, 64, 32});
    return rng.pick(std::vector<int64_t>{2, 4, 8, 16, 24, 32, 64, 96, 128});
  }
  uint64_t nextSeed() { return rng.next() % 1000000000ull + 1; }

  std::vector<int64_t> randomShape() {
    int64_t b = rng.chance(0.7) ? 1 : rng.range(2, 3);
    int64_t s = rowSize(), e = featureSize();
    std::vector<int64_t> shape;
    double r = double(rng.range(0, 99)) / 100.0;
    if (r < 0.2)
      shape = {s, e};
    else if (r < 0.85)
      shape = {b, s, e};
    else
      shape = {b, rng.range(1, 4), s, std::max<int64_t>(2, e / 2 * 2)};
    clamp(shape);
    return shape;
  }

  /// Halves the largest dims until the shape is within kMaxElements.
  static void clamp(std::vector<int64_t> &shape) {
    auto total = [&] {
      int64_t n = 1;
      for (int64_t d : shape)
        n *= d;
      return n;
    };
    while (total() > kMaxElements / 2) {
      auto it = std::max_element(shape.begin(), shape.end());
      *it = std::max<int64_t>(1, *it / 2);
    }
  }

  int addInput(std::vector<int64_t> shape, DType t) {
    Node n;
    n.op = Op::Input;
    n.shape = std::move(shape);
    n.dtype = t;
    g.nodes.push_back(n);
    return int(g.nodes.size()) - 1;
  }

  /// Adds `n` when the graph stays valid; its id, or -1.
  int add(Node n) {
    n.seed = nextSeed();
    g.nodes.push_back(n);
    if (!g.infer(/*outputs=*/false).empty()) {
      g.nodes.pop_back();
      return -1;
    }
    return int(g.nodes.size()) - 1;
  }

  int addPooled(Node n) {
    int id = add(std::move(n));
    if (id >= 0)
      pool.push_back(id);
    return id;
  }

  const Node &node(int id) const { return g.nodes[id]; }
  bool isReal(int id) const { return node(id).dtype != DType::C64; }

  /// A value of the pool that `pred` accepts (the newest one half the
  /// time), or -1.
  template <typename Pred> int pick(Pred pred) {
    std::vector<int> ok;
    for (int id : pool)
      if (pred(id))
        ok.push_back(id);
    if (ok.empty())
      return -1;
    if (rng.chance(0.5))
      return ok.back();
    return rng.pick(ok);
  }

  int pickReal() {
    return pick([&](int id) { return isReal(id); });
  }

  Node unaryNode(Op op, int x) {
    Node n;
    n.op = op;
    n.in = {x};
    return n;
  }

  bool action() {
    static const std::vector<std::pair<int, int>> weights = {
        {0, 12}, {1, 8}, {2, 6}, {3, 10}, {4, 5},  {5, 5},  {6, 4},
        {7, 4},  {8, 4}, {9, 9}, {10, 5}, {11, 4}, {12, 4}, {13, 5}};
    int total = 0;
    for (auto &w : weights)
      total += w.second;
    int r = int(rng.range(0, total - 1)), choice = 0;
    for (auto &w : weights) {
      if (r < w.second) {
        choice = w.first;
        break;
      }
      r -= w.second;
    }
    switch (choice) {
    case 0:
      return linear(pickReal()) >= 0;
    case 1:
      return norm();
    case 2:
      return activation();
    case 3:
      return binary();
    case 4:
      return reshape();
    case 5:
      return transpose();
    case 6:
      return concat();
    case 7:
      return slice();
    case 8:
      return rope();
    case 9:
      return attention();
    case 10:
      return fftChain();
    case 11:
      return fourierMix();
    case 12:
      return fftconv();
    case 13:
      return collective();
    default:
      return false;
    }
  }

  int linear(int x, int64_t n = 0, bool pooled = true) {
    if (x < 0)
      return -1;
    Node l;
    l.op = Op::Linear;
    l.in = {x};
    l.size = n ? n : featureSize();
    if (rng.chance(0.2))
      l.act = int(rng.range(1, 3));
    l.bias = rng.chance(0.4);
    l.scale = rng.chance(0.15);
    return pooled ? addPooled(l) : add(l);
  }

  bool norm() {
    int x = pickReal();
    if (x < 0)
      return false;
    Node n = unaryNode(rng.chance(0.6) ? Op::LayerNorm : Op::RmsNorm, x);
    n.scale = rng.chance(0.6);
    n.bias = rng.chance(0.5);
    n.eps = rng.pick(std::vector<double>{1e-5, 1e-6, 1e-3});
    if (n.scale && rng.chance(0.3))
      n.scaleOffset = 1.0;
    return addPooled(n) >= 0;
  }

  bool activation() {
    int x = pickReal();
    if (x < 0)
      return false;
    Op op = rng.pick(std::vector<Op>{Op::Gelu, Op::GeluTanh, Op::Silu});
    return addPooled(unaryNode(op, x)) >= 0;
  }

  bool binary() {
    int x = pickReal();
    if (x < 0)
      return false;
    const Node nx = node(x); // a copy: addInput below grows the nodes
    int y = -1;
    double r = double(rng.range(0, 99)) / 100.0;
    if (r < 0.45)
      y = pick([&](int id) {
        return id != x && node(id).shape == nx.shape &&
               node(id).dtype == nx.dtype;
      });
    if (y < 0 && r < 0.55)
      y = x;
    if (y < 0) {
      // A row broadcast over all rows (what the lowering takes): [1, .., N],
      // maybe with fewer leading dims.
      std::vector<int64_t> s(nx.shape.size(), 1);
      s.back() = nx.shape.back();
      if (s.size() > 1 && rng.chance(0.3))
        s.erase(s.begin());
      y = addInput(s, nx.dtype);
    }
    Node n;
    n.op = rng.chance(0.5) ? Op::Add : Op::Mul;
    n.in = rng.chance(0.3) ? std::vector<int>{y, x} : std::vector<int>{x, y};
    return addPooled(n) >= 0;
  }

  /// The ops below read `x`, or (-1) a value of the pool.
  int anyValue(int x) { return x >= 0 ? x : pickReal(); }

  bool reshape(int x = -1) {
    x = anyValue(x);
    if (x < 0)
      return false;
    const std::vector<int64_t> &s = node(x).shape;
    int rank = int(s.size());
    Node n = unaryNode(Op::Reshape, x);
    int kind = int(rng.range(0, 3));
    if (kind == 0 && rank >= 2) {
      n.reshape = ReshapeKind::Merge;
      n.axis = int(rng.range(0, rank - 2));
    } else if (kind == 1) {
      n.reshape = ReshapeKind::Split;
      n.axis = int(rng.range(0, rank - 1));
      std::vector<int64_t> divisors;
      for (int64_t f = 2; f < s[n.axis]; ++f)
        if (s[n.axis] % f == 0)
          divisors.push_back(f);
      if (divisors.empty())
        return false;
      n.factor = rng.pick(divisors);
    } else if (kind == 2) {
      n.reshape = ReshapeKind::Unsqueeze;
      n.axis = int(rng.range(0, rank));
    } else {
      n.reshape = ReshapeKind::Squeeze;
      std::vector<int64_t> ones;
      for (int d = 0; d < rank; ++d)
        if (s[d] == 1)
          ones.push_back(d);
      if (ones.empty())
        return false;
      n.axis = int(rng.pick(ones));
    }
    return addPooled(n) >= 0;
  }

  bool transpose(int x = -1) {
    if (x < 0)
      x = pick(
          [&](int id) { return isReal(id) && node(id).shape.size() >= 2; });
    if (x < 0 || node(x).shape.size() < 2)
      return false;
    int rank = int(node(x).shape.size());
    Node n = unaryNode(Op::Transpose, x);
    n.perm.resize(rank);
    std::iota(n.perm.begin(), n.perm.end(), 0);
    // What the lowering takes: the last dim stays (any order of the
    // others), or the last two swap.
    if (rank == 2 || rng.chance(0.4)) {
      std::swap(n.perm[rank - 1], n.perm[rank - 2]);
    } else {
      for (int i = rank - 2; i > 0; --i)
        std::swap(n.perm[i], n.perm[rng.range(0, i)]);
    }
    return addPooled(n) >= 0;
  }

  bool concat() {
    int x = pickReal();
    if (x < 0)
      return false;
    const Node nx = node(x); // a copy: addInput below grows the nodes
    Node n;
    n.op = Op::Concat;
    n.axis = int(rng.range(0, int(nx.shape.size()) - 1));
    n.in = {x};
    int others = int(rng.range(1, 2));
    for (int o = 0; o < others; ++o) {
      int y = -1;
      if (rng.chance(0.4))
        y = pick([&](int id) {
          const Node &c = node(id);
          if (c.dtype != nx.dtype || c.shape.size() != nx.shape.size())
            return false;
          for (size_t d = 0; d < c.shape.size(); ++d)
            if (int(d) != n.axis && c.shape[d] != nx.shape[d])
              return false;
          return true;
        });
      if (y < 0 && rng.chance(0.5)) {
        std::vector<int64_t> s = nx.shape;
        s[n.axis] = rng.range(1, std::max<int64_t>(1, s[n.axis]));
        y = addInput(s, nx.dtype);
      }
      if (y < 0)
        y = x;
      n.in.push_back(y);
    }
    return addPooled(n) >= 0;
  }

  bool slice(int x = -1) {
    x = anyValue(x);
    if (x < 0)
      return false;
    Node n = unaryNode(Op::Slice, x);
    for (size_t d = 0; d < node(x).shape.size(); ++d) {
      bool whole = rng.chance(0.5);
      n.frac.push_back(whole ? 1000 : int(rng.range(200, 1000)));
      n.frac.push_back(whole ? 0 : int(rng.range(0, 1000)));
    }
    return addPooled(n) >= 0;
  }

  /// A [B, H, S, D] value (D even): from the pool, or a new step input.
  int fourD(DType t) {
    int x = pick([&](int id) {
      const Node &c = node(id);
      return c.dtype == t && c.shape.size() == 4 && c.shape[3] % 2 == 0 &&
             c.shape[3] <= 128;
    });
    if (x >= 0 && rng.chance(0.6))
      return x;
    std::vector<int64_t> s = {rng.chance(0.8) ? 1 : 2, rng.range(1, 4),
                              rowSize(), headDim()};
    clamp(s);
    return addInput(s, t);
  }

  bool rope() {
    Node n = unaryNode(Op::Rope, fourD(base));
    return addPooled(n) >= 0;
  }

  /// [B, S, E] -> linear -> [B, S, H, D] -> [B, H, S, D]; `bias` the
  /// same for q, k and v (so that seam-fuse-qkv may fuse them).
  int heads(int x, int64_t h, int64_t d, bool bias) {
    int l = linear(x, h * d, false);
    if (l < 0)
      return -1;
    g.nodes[l].act = 0;
    g.nodes[l].scale = false;
    g.nodes[l].bias = bias;
    Node split = unaryNode(Op::Reshape, l);
    split.reshape = ReshapeKind::Split;
    split.axis = 2;
    split.factor = h;
    int s = add(split);
    if (s < 0)
      return -1;
    Node t = unaryNode(Op::Transpose, s);
    t.perm = {0, 2, 1, 3};
    return add(t);
  }

  bool attention() {
    bool flash = friendly && (has("flash-attn") || has("flash-attn-stable"));
    int x = pick([&](int id) {
      return node(id).dtype == base && node(id).shape.size() == 3 &&
             (!flash || node(id).shape[1] % 128 == 0);
    });
    if (x < 0 || rng.chance(0.2)) {
      std::vector<int64_t> s = {1, rowSize(), featureSize()};
      clamp(s);
      x = addInput(s, base);
    }
    int y = x;
    if (rng.chance(0.2)) { // cross attention: k, v from another sequence
      std::vector<int64_t> s = {node(x).shape[0], rowSize(), featureSize()};
      clamp(s);
      y = addInput(s, base);
    }
    int64_t h = rng.range(1, 4), d = headDim();
    int64_t hkv = h;
    if (!flash && h % 2 == 0 && rng.chance(0.3))
      hkv = h / 2;
    int64_t dv = (!flash && rng.chance(0.2)) ? headDim() : d;
    bool bias = rng.chance(0.3);
    int q = heads(x, h, d, bias), k = heads(y, hkv, d, bias),
        v = heads(y, hkv, dv, bias);
    if (q < 0 || k < 0 || v < 0)
      return false;
    // The source's flash attention (exp only, no row max) overflows once a
    // score passes ~88, by design (docs/architecture.md: seed kernels keep
    // their algorithm): where it may be inserted, q and k are normalised, which
    // bounds the scores by scale * D.
    if (has("flash-attn") || rng.chance(0.3)) {
      Node nq = unaryNode(Op::RmsNorm, q), nk = unaryNode(Op::RmsNorm, k);
      nq.scale = nk.scale = rng.chance(0.5);
      nq.eps = nk.eps = 1e-6;
      q = add(nq);
      k = add(nk);
      if (q < 0 || k < 0)
        return false;
    }
    bool same = node(q).shape[2] == node(k).shape[2];
    Node a;
    a.op = Op::Attention;
    double r = double(rng.range(0, 99)) / 100.0;
    if (r < 0.25 && d % 2 == 0) {
      q = add(unaryNode(Op::Rope, q));
      k = add(unaryNode(Op::Rope, k));
      if (q < 0 || k < 0)
        return false;
    } else if (r < 0.45 && same && d % 2 == 0 && !flash) {
      a.rope = true;
    }
    a.causal = same && !flash && rng.chance(0.25);
    a.scaleFactor = rng.pick(std::vector<double>{1.0, 1.0, 0.5, 2.0});
    a.in = {q, k, v};
    int o = add(a);
    if (o < 0)
      return false;
    Node back = unaryNode(Op::Transpose, o);
    back.perm = {0, 2, 1, 3};
    int t = add(back);
    if (t < 0)
      return false;
    Node merge = unaryNode(Op::Reshape, t);
    merge.reshape = ReshapeKind::Merge;
    merge.axis = 2;
    int m = addPooled(merge);
    if (m < 0)
      return false;
    if (rng.chance(0.6)) {
      int out = linear(m, node(x).shape[2]);
      if (out >= 0 && g.tp > 1 && rng.chance(0.6))
        addPooled(unaryNode(Op::AllReduce, out));
    }
    return true;
  }

  bool fftChain() {
    int x = pick([&](int id) { return node(id).shape.size() >= 1; });
    if (x < 0)
      return false;
    Node f = unaryNode(Op::Fft, x);
    f.axis = int(rng.range(0, int(node(x).shape.size()) - 1));
    f.complexOut = rng.chance(0.8);
    f.pad = rng.chance(0.1);
    int y = addPooled(f);
    if (y < 0)
      return false;
    // Complex values live on the device only at boundaries: no data
    // movement between the fft and the ifft.
    if (!f.complexOut || rng.chance(0.3))
      return true;
    Node i = unaryNode(Op::Ifft, y);
    i.axis = int(rng.range(0, int(node(y).shape.size()) - 1));
    i.complexOut = rng.chance(0.3);
    return addPooled(i) >= 0;
  }

  bool fourierMix() {
    int x = pickReal();
    if (x < 0)
      return false;
    int rank = int(node(x).shape.size());
    Node n = unaryNode(Op::FourierMix, x);
    // FNet's mixing of [B, S, D] over dims [1, 2]: what the fourier-mix
    // kernel serves.
    if (rank == 3 && (friendly || rng.chance(0.3))) {
      n.perm = {1, 2};
      return addPooled(n) >= 0;
    }
    for (int d = 0; d < rank; ++d)
      if (rng.chance(0.5))
        n.perm.push_back(d);
    if (n.perm.empty())
      n.perm.push_back(rng.range(0, rank - 1));
    if (rng.chance(0.3))
      std::reverse(n.perm.begin(), n.perm.end());
    return addPooled(n) >= 0;
  }

  bool fftconv() {
    DType t = has("fftconv") && friendly ? DType::F32 : base;
    int u = pick([&](int id) {
      return node(id).dtype == t && node(id).shape.size() == 3;
    });
    if (u < 0 || rng.chance(0.3)) {
      std::vector<int64_t> s = {rng.chance(0.7) ? 1 : 2, rng.range(1, 16),
                                rowSize()};
      clamp(s);
      u = addInput(s, t);
    }
    Node n = unaryNode(Op::FftConv, u);
    auto same = [&]() {
      int o = pick([&](int id) {
        return id != u && node(id).shape == node(u).shape &&
               node(id).dtype == t;
      });
      return o >= 0 ? o : addInput(node(u).shape, t);
    };
    n.hasV = rng.chance(0.3);
    if (n.hasV)
      n.in.push_back(same());
    n.hasQ = rng.chance(0.3);
    if (n.hasQ)
      n.in.push_back(same());
    n.mask = rng.chance(0.3);
    n.gelu = rng.chance(0.3);
    n.geluInp = rng.chance(0.3);
    n.geluQ = n.hasQ && rng.chance(0.5);
    n.lkPermille = rng.chance(0.5) ? 1000 : int(rng.range(1, 1000));
    n.fftMult = rng.chance(0.8) ? 1 : 2;
    return addPooled(n) >= 0;
  }

  bool collective() {
    if (g.tp == 1)
      return false;
    int x = pickReal();
    if (x < 0)
      return false;
    if (rng.chance(0.6))
      return addPooled(unaryNode(Op::AllReduce, x)) >= 0;
    Node n = unaryNode(Op::AllGather, x);
    n.axis = int(rng.range(0, int(node(x).shape.size()) - 1));
    return addPooled(n) >= 0;
  }

  /// Every value nobody reads, and now and then one that is read.
  void chooseOutputs() {
    std::vector<bool> used(g.nodes.size(), false);
    for (const Node &n : g.nodes)
      for (int o : n.in)
        used[o] = true;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (g.nodes[i].op == Op::Input)
        continue;
      if (!used[i] || (g.outputs.size() < 4 && rng.chance(0.1)))
        g.outputs.push_back(int(i));
    }
    if (g.outputs.empty()) { // nothing but inputs: one op on the first
      Node n = unaryNode(Op::Reshape, 0);
      n.reshape = ReshapeKind::Unsqueeze;
      g.outputs.push_back(add(n));
    }
  }

  /// Consecutive runs of ops into 1..3 seam.blocks (or none).
  void assignBlocks() {
    std::vector<int> ops;
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (g.nodes[i].op != Op::Input)
        ops.push_back(int(i));
    if (rng.chance(0.1)) {
      for (int i : ops)
        g.nodes[i].block = -1;
      return;
    }
    int blocks = int(rng.range(1, 3));
    std::vector<size_t> cuts;
    for (int b = 1; b < blocks; ++b)
      cuts.push_back(size_t(rng.range(0, int64_t(ops.size()))));
    std::sort(cuts.begin(), cuts.end());
    for (size_t k = 0; k < ops.size(); ++k) {
      int b = 0;
      for (size_t c : cuts)
        b += k >= c;
      g.nodes[ops[k]].block = b;
    }
  }
};

} // namespace

Graph smith::generate(uint64_t seed) {
  Generator gen(seed);
  Graph g = gen.run();
  return g;
}
