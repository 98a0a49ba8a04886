// canny-lows-work: how much labelling the strip mode's per-low counting does for a candidate set, on the benchmark
// images (docs/benchmarks.md, issue 18, tenth session). The counting kernels label S(low) = {B >= low} of every
// strip once for every distinct low of the set, and their work goes with the pixels of S and the rows holding any
// (a warp's row loop skips a row without S for one vote). This prints, per image, the sum over the set's lows of
// |S(low)| and of the strip rows with S, over the pixel count, for C_0.03 and C_0.01 and their ratio: what C_0.01's
// counting costs against C_0.03's, whatever the kernel, as long as it labels each low. CPU only (the CPU twin's G
// and canny::threshold_codes); images from GPUEC_SHARED_DIR (images/standard) as canny-bench-gpu, and the same
// synthetic 1080p and 2160p frames.
// Also, for frame mode (one region: components span strips), the share of those pixels whose component in the whole
// frame (8-connected, S(low)) crosses a strip border: the pixels whose component maximum a strip alone cannot give
// (docs/benchmarks.md, issue 18, eleventh session).
// Then, for a labelling that takes G consecutive lows of the set in one block, from the highest down, adding each lower
// low's new pixels to the union-find of the one above (S(low) grows as low falls: the sets are nested), the pixels it
// adds: the sum over the groups of |S(the group's lowest low)|, over the sum over all lows of |S(low)| that the
// per-low labelling adds (item 2 of issue 18: how much of the labelling such a pass would save; the count over each
// low's pixels stays). Groups of 1 (today's kernels), 2, 3, 4, 8 and all the lows, for C_0.01 and C_0.03.
// Then, for frame mode's split passes on the synthetic frames (C_0.03), what the label kernel publishes for tiles of 32,
// 64 and 128 columns (the same pixels a tile): the share of S's pixels in components that touch a tile border (the
// entries), of those with a pixel of S across it, and of those whose frame maximum exceeds their tile's (split_shares).
// Then, strip mode's row loop a warp: how unevenly the 32 chunks of a (strip, low) block share it (chunk_balance).
// Then, the work of a labelling with a lane a low instead of a lane a column (lanes_work: a warp takes a strip's rows
// for every low at once, each lane following its own low's runs, so that a row costs the warp what its busiest low's
// runs cost), against today's row loops (a warp a (strip, low), a step a row with S): item 2 of issue 18.
// Then that labelling's walk itself (lane_walk, lane_steps: a union-find over runs), checked against a per-low
// labelling (the components and their maxima), with what its lanes would do a strip row: runs, nodes, unions, hops.
// Last, the kernel that walk would make, modelled on the CPU (kernel_model: a warp a chunk of rows, the chunks joined,
// a second walk writing SM and the planes of maxima), checked pixel by pixel against a per-low labelling's.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_images.h"
#include "canny/canny.h"
#include "pgm.h"

namespace {

struct Work {
  double pixels = 0, rows = 0;  // sums over the lows of |S(low)| and of the strip rows (32 columns) with S(low)
  double crossing = 0;          // the sum over the lows of the pixels of S(low) whose frame component crosses strips
};

// Union-find over pixel indices (path halving; the smaller root wins).
uint32_t find(std::vector<uint32_t>& parent, uint32_t a) {
  while (parent[a] != a) a = parent[a] = parent[parent[a]];
  return a;
}

// The 8-connected components of S(lo) = {B >= lo} (w x h) as a union-find over pixel indices, a pixel joined to a
// neighbour only where joins(x, y, xx, yy) holds (the whole frame: always).
template <class Joins>
std::vector<uint32_t> components(const std::vector<uint8_t>& b, int w, int h, int lo, Joins joins) {
  const size_t n = size_t(w) * h;
  std::vector<uint32_t> parent(n);
  for (size_t i = 0; i < n; ++i) parent[i] = uint32_t(i);
  auto in = [&](int x, int y) { return x >= 0 && x < w && y >= 0 && y < h && b[size_t(y) * w + x] >= lo; };
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      if (!in(x, y)) continue;
      const uint32_t i = uint32_t(size_t(y) * w + x);
      const int nb[4][2] = {{x - 1, y}, {x - 1, y - 1}, {x, y - 1}, {x + 1, y - 1}};  // the neighbours before it
      for (const auto& q : nb) {
        if (!in(q[0], q[1]) || !joins(x, y, q[0], q[1])) continue;
        const uint32_t a = find(parent, i), c = find(parent, uint32_t(size_t(q[1]) * w + q[0]));
        if (a != c) parent[std::max(a, c)] = std::min(a, c);
      }
    }
  return parent;
}
constexpr auto whole_frame = [](int, int, int, int) { return true; };

// The pixels of S(lo) = {B >= lo} whose 8-connected component in the frame holds pixels of two strips or more.
double crossing_pixels(const std::vector<uint8_t>& b, int w, int h, int lo) {
  const size_t n = size_t(w) * h;
  std::vector<uint32_t> parent = components(b, w, h, lo, whole_frame);
  auto in = [&](int x, int y) { return b[size_t(y) * w + x] >= lo; };
  std::vector<int> lo_strip(n, -1), hi_strip(n, -1);  // per root: its components' first and last strip
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      if (!in(x, y)) continue;
      const uint32_t r = find(parent, uint32_t(size_t(y) * w + x));
      const int s = x / 32;
      if (lo_strip[r] < 0 || s < lo_strip[r]) lo_strip[r] = s;
      if (s > hi_strip[r]) hi_strip[r] = s;
    }
  double out = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      if (!in(x, y)) continue;
      const uint32_t r = find(parent, uint32_t(size_t(y) * w + x));
      out += lo_strip[r] != hi_strip[r];
    }
  return out;
}

// Frame mode's split passes (docs/benchmarks.md, issue 18, twenty-second session): tiles of tw x th pixels, each
// labelled alone (8-connected, S(lo)), for one low. Sums over the pixels of S(lo):
//   border: the pixels whose tile component touches the tile's border inside the frame (today's entries, the
//           pixels frame_split_label_kernel publishes for the finish);
//   live:   the pixels whose tile component has a border pixel with a pixel of S across that border (in another
//           tile): the entries were the label kernel to skip the components that join nothing;
//   raised: the pixels whose frame component's maximum of B exceeds their tile component's (the pixels the finish
//           changes: no filter can publish fewer);
// and over the border pixels of S (the published nodes): nodes, and live_nodes (those with S across).
struct SplitShares {
  double pixels = 0, border = 0, live = 0, raised = 0, nodes = 0, live_nodes = 0;
};
void split_shares(const std::vector<uint8_t>& b, int w, int h, int lo, int tw, int th, SplitShares* out) {
  const size_t n = size_t(w) * h;
  auto in = [&](int x, int y) { return x >= 0 && x < w && y >= 0 && y < h && b[size_t(y) * w + x] >= lo; };
  auto tile_of = [&](int x, int y) { return (y / th) * ((w + tw - 1) / tw) + x / tw; };
  std::vector<uint32_t> frame = components(b, w, h, lo, whole_frame);
  std::vector<uint32_t> tile =
      components(b, w, h, lo, [&](int x, int y, int xx, int yy) { return tile_of(x, y) == tile_of(xx, yy); });
  std::vector<uint8_t> fmax(n, 0), tmax(n, 0), touches(n, 0), live(n, 0);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      if (!in(x, y)) continue;
      const size_t i = size_t(y) * w + x;
      const uint32_t fr = find(frame, uint32_t(i)), tr = find(tile, uint32_t(i));
      fmax[fr] = std::max(fmax[fr], b[i]);
      tmax[tr] = std::max(tmax[tr], b[i]);
      const int t = tile_of(x, y);
      bool on_border = false, across = false;  // a neighbour position in another tile inside the frame; one in S
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const int xx = x + dx, yy = y + dy;
          if (xx < 0 || xx >= w || yy < 0 || yy >= h || tile_of(xx, yy) == t) continue;
          on_border = true;
          across = across || in(xx, yy);
        }
      if (on_border) {
        touches[tr] = 1;
        out->nodes += 1;
        if (across) {
          live[tr] = 1;
          out->live_nodes += 1;
        }
      }
    }
  for (size_t i = 0; i < n; ++i) {
    if (b[i] < lo) continue;
    const uint32_t fr = find(frame, uint32_t(i)), tr = find(tile, uint32_t(i));
    out->pixels += 1;
    out->border += touches[tr];
    out->live += live[tr];
    out->raised += fmax[fr] > tmax[tr];
  }
}

// The distinct lows of `candidates`, highest first.
std::vector<int> lows_of(const std::vector<canny::CandidatePair>& candidates) {
  bool has[canny::kMaxThreshold + 1] = {};
  for (const canny::CandidatePair& c : candidates) has[c.low] = true;
  std::vector<int> out;
  for (int lo = canny::kMaxThreshold; lo >= 1; --lo)
    if (has[lo]) out.push_back(lo);
  return out;
}

// |S(lo)| for every lo: at_least[lo] = the pixels with B >= lo (one pass, then suffix sums).
std::vector<double> set_sizes(const std::vector<uint8_t>& b) {
  std::vector<double> at_least(256 + 1, 0.0);
  for (uint8_t v : b) at_least[v] += 1.0;
  for (int v = 255; v >= 0; --v) at_least[size_t(v)] += at_least[size_t(v) + 1];
  return at_least;
}

// The pixels a nested labelling in groups of g consecutive lows (highest first) adds, over those the per-low one adds
// (sizes: set_sizes).
double grouped_share(const std::vector<double>& sizes, const std::vector<int>& lows, size_t g) {
  double all = 0, grouped = 0;
  for (size_t i = 0; i < lows.size(); ++i) {
    all += sizes[size_t(lows[i])];
    if ((i + 1) % g == 0 || i + 1 == lows.size()) grouped += sizes[size_t(lows[i])];  // the group's lowest low
  }
  return all > 0 ? grouped / all : 0.0;
}

// The pixels of S(lo) in row y of the strip from column x0 (32 columns, fewer at the frame's right edge).
int strip_row_pixels(const std::vector<uint8_t>& b, int w, int x0, int y, int lo) {
  int n = 0;
  for (int x = x0; x < w && x < x0 + 32; ++x) n += b[size_t(y) * w + x] >= lo;
  return n;
}

// Work of the lows of `candidates` on the codes B (w x h), strips of 32 columns.
Work lows_work(const std::vector<uint8_t>& b, int w, int h, const std::vector<canny::CandidatePair>& candidates) {
  Work out;
  for (const int lo : lows_of(candidates)) {
    for (int x0 = 0; x0 < w; x0 += 32)
      for (int y = 0; y < h; ++y) {
        const int n = strip_row_pixels(b, w, x0, y, lo);
        out.pixels += n;
        out.rows += n > 0;
      }
    out.crossing += crossing_pixels(b, w, h, lo);
  }
  return out;
}

// Strip mode's row loop a warp (strip_label's chunks: 32 a block of h rows, ceil(h / 32) rows each, the last ones
// possibly empty), in warp instructions: kRowS a row with a pixel of S(lo), kRowEmpty a row without (the SASS of
// strip_count_kernel with its execution counts, docs/benchmarks.md, issue 18, GPU kernels, twenty-second session).
// For each (strip, low) block of the set: the most a chunk does over the mean of the 32 (what a warp waits at the
// barrier after the loop, in the mean), and for the block with the most work (the densest low's: the launch's slowest
// at 512x512, one block a multiprocessor): its busiest chunk's instructions, its mean a chunk (all chunks as busy as
// the mean: a balanced split's bound) and its total over its 4 schedulers (the loop's issue bound). A strip is one
// block here; the kernels split 2160p's strips over clusters of two blocks (chunks of 34 rows, not 68).
constexpr double kRowS = 71, kRowEmpty = 11;
struct ChunkBalance {
  double blocks = 0, ratio_sum = 0;       // (strip, low) blocks; the sum of their max / mean
  double worst_max = 0, worst_total = 0;  // the block with the most work: its busiest chunk, its total
  int worst_lo = 0, worst_strip = 0;
};
ChunkBalance chunk_balance(const std::vector<uint8_t>& b, int w, int h, const std::vector<int>& lows) {
  ChunkBalance out;
  const int per = (h + 31) / 32;
  for (const int lo : lows)
    for (int x0 = 0; x0 < w; x0 += 32) {
      double most = 0, total = 0;
      for (int c = 0; c < 32; ++c) {
        double chunk = 0;
        for (int y = c * per; y < h && y < (c + 1) * per; ++y)
          chunk += strip_row_pixels(b, w, x0, y, lo) > 0 ? kRowS : kRowEmpty;
        most = std::max(most, chunk);
        total += chunk;
      }
      out.blocks += 1;
      out.ratio_sum += total > 0 ? most / (total / 32) : 1.0;
      if (total > out.worst_total) {
        out.worst_max = most;
        out.worst_total = total;
        out.worst_lo = lo;
        out.worst_strip = x0 / 32;
      }
    }
  return out;
}

// A run of a strip row's pixels of S(lo): columns first .. last.
struct Run {
  int first, last;
};
// Row y's runs of S(lo) = {B >= lo} in the strip from column x0 (32 columns, fewer at the frame's right edge), left to
// right.
std::vector<Run> strip_runs(const std::vector<uint8_t>& b, int w, int x0, int y, int lo) {
  std::vector<Run> out;
  const int x1 = std::min(w, x0 + 32);
  for (int x = x0; x < x1;) {
    if (b[size_t(y) * w + x] < lo) {
      ++x;
      continue;
    }
    int e = x;
    while (e < x1 && b[size_t(y) * w + e] >= lo) ++e;
    out.push_back({x, e - 1});
    x = e;
  }
  return out;
}
// Runs of consecutive rows that touch (8-connected).
bool touch(const Run& p, const Run& q) { return p.last >= q.first - 1 && p.first <= q.last + 1; }

// The union-find over runs of a lane (a low): a node a run with no run above it, each with the maximum of A of its
// component (kept at the roots; path halving, the smaller root wins a union).
struct RunForest {
  std::vector<uint32_t> parent;
  std::vector<uint8_t> mx;
  uint32_t add() {
    parent.push_back(uint32_t(parent.size()));
    mx.push_back(0);
    return parent.back();
  }
  uint32_t root(uint32_t v, int* hops = nullptr) {
    while (parent[v] != v) {
      v = parent[v] = parent[parent[v]];
      if (hops) ++*hops;
    }
    return v;
  }
  uint32_t unite(uint32_t p, uint32_t q) {  // roots; returns the root kept
    if (p == q) return p;
    const uint32_t k = std::min(p, q), d = std::max(p, q);
    parent[d] = k;
    mx[k] = std::max(mx[k], mx[d]);
    return k;
  }
};

// The reference for the lane walks: the components of S(lo) inside each strip (a union-find over pixel indices) and
// the maximum of A of each (at its root's index).
struct StripComponents {
  std::vector<uint32_t> parent;
  std::vector<uint8_t> root_max;
};
StripComponents strip_components(const std::vector<uint8_t>& b, const std::vector<uint8_t>& a, int w, int h, int lo) {
  StripComponents c{components(b, w, h, lo, [](int x, int, int xx, int) { return x / 32 == xx / 32; }),
                    std::vector<uint8_t>(size_t(w) * h, 0)};
  for (size_t i = 0; i < c.parent.size(); ++i)
    if (b[i] >= lo) {
      const uint32_t r = find(c.parent, uint32_t(i));
      c.root_max[r] = std::max(c.root_max[r], a[i]);
    }
  return c;
}

// A warp a strip with a lane a low (every low of the set at once): each lane walks its own low's runs of a row, so a
// row costs the warp the steps of the low with the most runs there (the lanes diverge, the warp waits for the
// slowest), and writing each low's pixels (the maxima planes, SM) costs it the most pixels of any low there. Sums over
// the strips' rows of: rows with S(lowest low); the most runs of any low; the most pixels of any low. Against
// today's per-low steps: the sum over the lows of the strip rows with S(low) (a warp's row loop step each), and of
// |S(low)| / 32 (the fold's and the count's pixels, 32 a warp step).
struct LanesWork {
  double rows = 0, runs = 0, pixels = 0;       // lanes a low
  double low_rows = 0, low_pixel_steps = 0;    // today: a (strip, low) a warp
};
LanesWork lanes_work(const std::vector<uint8_t>& b, int w, int h, const std::vector<int>& lows) {
  LanesWork out;
  for (int x0 = 0; x0 < w; x0 += 32)
    for (int y = 0; y < h; ++y) {
      int most_runs = 0, most_px = 0;
      bool any = false;
      for (const int lo : lows) {
        const std::vector<Run> runs = strip_runs(b, w, x0, y, lo);
        int px = 0;
        for (const Run& r : runs) px += r.last - r.first + 1;
        most_runs = std::max(most_runs, int(runs.size()));
        most_px = std::max(most_px, px);
        any = any || px > 0;
        out.low_rows += px > 0;
        out.low_pixel_steps += double(px) / 32.0;
      }
      out.rows += any;
      out.runs += most_runs;
      out.pixels += most_px;
    }
  return out;
}

// lane_steps' results: sums over the strip rows of the most of any lane in the row; all_nodes: the nodes of every
// lane (the memory a block a strip would need), summed over the strips, and the most of one strip; exact: the walk
// found the components of every S(low) (the same partition of its pixels) and each one's maximum.
struct LaneSteps {
  double runs = 0, unions = 0, hops = 0, nodes = 0, all_nodes = 0, strip_nodes_most = 0;
  bool exact = true;
};

// The most of any lane so far, for each row of one strip: runs, new nodes, unions and find hops.
struct RowMost {
  std::vector<int> runs, nodes, unions, hops;
  explicit RowMost(int h) : runs(size_t(h), 0), nodes(size_t(h), 0), unions(size_t(h), 0), hops(size_t(h), 0) {}
};

// A lane's walk for one low of one strip (lanes_work's design), run by run over all of the strip's rows: a node for a
// run with no run above it; a run joins the first run above's root, then each further run above's root that differs
// (a union). Raises each row's counts in *most (the lanes go in lock step: a warp waits for the busiest).
// node_of_pixel gets each pixel's run's node (whose root holds the component's maximum once the strip is walked).
void lane_walk(const std::vector<uint8_t>& b, const std::vector<uint8_t>& a, int w, int h, int x0, int lo,
               RowMost* most, std::vector<uint32_t>* node_of_pixel, RunForest* forest) {
  *forest = RunForest{};
  std::vector<Run> prev;
  std::vector<uint32_t> prev_nodes;
  for (int y = 0; y < h; ++y) {
    const std::vector<Run> row = strip_runs(b, w, x0, y, lo);
    std::vector<uint32_t> nodes;
    int unions = 0, hops = 0, new_nodes = 0;
    for (const Run& r : row) {
      uint32_t root = UINT32_MAX;
      for (size_t k = 0; k < prev.size(); ++k) {
        if (!touch(prev[k], r)) continue;
        const uint32_t q = forest->root(prev_nodes[k], &hops);
        if (root == UINT32_MAX) {
          root = q;
        } else if (q != root) {
          ++unions;
          root = forest->unite(q, root);
        }
      }
      if (root == UINT32_MAX) {
        root = forest->add();
        ++new_nodes;
      }
      for (int x = r.first; x <= r.last; ++x) {
        forest->mx[root] = std::max(forest->mx[root], a[size_t(y) * w + x]);
        (*node_of_pixel)[size_t(y) * w + x] = root;
      }
      nodes.push_back(root);
    }
    prev = row;
    prev_nodes = std::move(nodes);
    const size_t k = size_t(y);
    most->runs[k] = std::max(most->runs[k], int(row.size()));
    most->unions[k] = std::max(most->unions[k], unions);
    most->hops[k] = std::max(most->hops[k], hops);
    most->nodes[k] = std::max(most->nodes[k], new_nodes);
  }
}
// Every strip's lanes (the lows), walked, and checked against the components of S(low) inside each strip.
LaneSteps lane_steps(const std::vector<uint8_t>& b, const std::vector<uint8_t>& a, int w, int h,
                     const std::vector<int>& lows) {
  LaneSteps out;
  const int ns = (w + 31) / 32;
  std::vector<uint32_t> node_of(size_t(w) * h);
  RunForest forest;
  std::vector<RowMost> most(static_cast<size_t>(ns), RowMost{h});  // per strip
  std::vector<double> strip_nodes(size_t(ns), 0.0);
  for (const int lo : lows) {
    StripComponents ref = strip_components(b, a, w, h, lo);
    for (int s = 0; s < ns; ++s) {
      lane_walk(b, a, w, h, s * 32, lo, &most[size_t(s)], &node_of, &forest);
      strip_nodes[size_t(s)] += double(forest.parent.size());
      // The same partition (each walk root matches one reference root, and the other way round) and the same maxima.
      std::vector<uint32_t> ref_of(forest.parent.size(), UINT32_MAX);
      std::vector<std::pair<uint32_t, uint32_t>> walk_of;  // (reference root, walk root), checked after sorting
      for (int y = 0; y < h; ++y)
        for (int x = s * 32; x < w && x < s * 32 + 32; ++x) {
          const size_t i = size_t(y) * w + x;
          if (b[i] < lo) continue;
          const uint32_t v = forest.root(node_of[i]), rr = find(ref.parent, uint32_t(i));
          if (forest.mx[v] != ref.root_max[rr]) out.exact = false;
          if (ref_of[v] == UINT32_MAX) {
            ref_of[v] = rr;
            walk_of.emplace_back(rr, v);
          } else if (ref_of[v] != rr) {
            out.exact = false;  // one walk component over two reference components
          }
        }
      std::sort(walk_of.begin(), walk_of.end());
      for (size_t k = 1; k < walk_of.size(); ++k)
        if (walk_of[k].first == walk_of[k - 1].first) out.exact = false;  // one reference component split
    }
  }
  for (const RowMost& m : most)
    for (int y = 0; y < h; ++y) {
      out.runs += m.runs[size_t(y)];
      out.unions += m.unions[size_t(y)];
      out.hops += m.hops[size_t(y)];
      out.nodes += m.nodes[size_t(y)];
    }
  for (const double n : strip_nodes) {
    out.all_nodes += n;
    out.strip_nodes_most = std::max(out.strip_nodes_most, n);
  }
  return out;
}

// The lane-a-low kernel as docs/benchmarks.md sketches it (issue 18, GPU kernels, 26th session), modelled on the CPU
// for one block a strip: 32 warps, each a chunk of chunk rows (ceil(h / 32)), a lane a low. Pass 1: each (warp, lane)
// walks its chunk's rows as lane_walk does (the row above's runs' nodes by their ordinals), its new nodes drawn from a
// pool of the lane (a block's), in order (the sequence kept for pass 2); then each chunk's first row joins the last row
// of the chunk above, a union a pair of touching runs. Pass 2: each (warp, lane) walks its chunk again, a run's node
// being the root of the first run above it or the next of its sequence, and writes the root's maximum (the lane's plane
// of maxima) and F_low(maximum) - F_low(A) to SM, summed over the lanes. Checked, pixel by pixel, against SM and the
// maxima from a per-low labelling (every low's components inside each strip); counts the pools' sizes.
struct KernelModel {
  bool exact = true;
  double most_lane_nodes = 0, most_block_nodes = 0;  // the largest pool of one lane, of all lanes, over the blocks
  double join_unions = 0;                            // unions of the chunks' joins, all blocks
};
KernelModel kernel_model(const std::vector<uint8_t>& b, const std::vector<uint8_t>& a, int w, int h,
                         const std::vector<canny::CandidatePair>& candidates) {
  const std::vector<int> lows = lows_of(candidates);
  const int nl = int(lows.size()), kV = canny::kMaxThreshold + 1;
  std::vector<std::vector<uint16_t>> f(size_t(nl), std::vector<uint16_t>(size_t(kV), 0));  // F_low(v)
  for (int l = 0; l < nl; ++l)
    for (const canny::CandidatePair& c : candidates)
      if (c.low == lows[size_t(l)])
        for (int v = c.high; v < kV; ++v) ++f[size_t(l)][size_t(v)];
  // The reference: each low's component maxima (components inside each strip) and SM.
  const size_t n = size_t(w) * h;
  std::vector<std::vector<uint8_t>> ref_max(static_cast<size_t>(nl));
  std::vector<uint32_t> sm_ref(n, 0);
  for (int l = 0; l < nl; ++l) {
    const int lo = lows[size_t(l)];
    StripComponents ref = strip_components(b, a, w, h, lo);
    ref_max[size_t(l)].assign(n, 0);
    for (size_t i = 0; i < n; ++i)
      if (b[i] >= lo) {
        const uint8_t m = ref.root_max[find(ref.parent, uint32_t(i))];
        ref_max[size_t(l)][i] = m;
        sm_ref[i] += uint32_t(f[size_t(l)][m]) - f[size_t(l)][a[i]];
      }
  }
  KernelModel out;
  constexpr int kWarps = 32;
  const int per = (h + kWarps - 1) / kWarps;
  std::vector<uint32_t> sm(n);
  std::vector<uint8_t> plane(n);
  for (int x0 = 0; x0 < w; x0 += 32) {
    double block_nodes = 0;
    for (int l = 0; l < nl; ++l) {
      const int lo = lows[size_t(l)];
      RunForest pool;  // the lane's
      std::vector<std::vector<uint32_t>> seq(kWarps), first_nodes(kWarps), last_nodes(kWarps);
      // Warp wp's chunk, row by row: node_of(y, run, runs above, their nodes) gives each run's node. Returns the nodes
      // of the chunk's first and last rows.
      auto walk_chunk = [&](int wp, auto node_of) {
        const int y0 = wp * per, y1 = std::min(h, y0 + per);
        std::vector<Run> above;
        std::vector<uint32_t> above_nodes, first;
        for (int y = y0; y < y1; ++y) {
          const std::vector<Run> row = strip_runs(b, w, x0, y, lo);
          std::vector<uint32_t> nodes;
          for (const Run& r : row) nodes.push_back(node_of(y, r, above, above_nodes));
          if (y == y0) first = nodes;
          above = row;
          above_nodes = std::move(nodes);
        }
        return std::make_pair(first, above_nodes);
      };
      // Pass 1.
      for (int wp = 0; wp < kWarps; ++wp) {
        auto [first, last] = walk_chunk(wp, [&](int y, const Run& r, const std::vector<Run>& above,
                                                const std::vector<uint32_t>& above_nodes) {
          uint32_t node = UINT32_MAX;
          for (size_t k = 0; k < above.size(); ++k) {
            if (!touch(above[k], r)) continue;
            const uint32_t q = pool.root(above_nodes[k]);
            node = node == UINT32_MAX ? q : pool.unite(pool.root(node), q);
          }
          if (node == UINT32_MAX) {
            node = pool.add();
            seq[size_t(wp)].push_back(node);
          }
          node = pool.root(node);
          for (int x = r.first; x <= r.last; ++x) pool.mx[node] = std::max(pool.mx[node], a[size_t(y) * w + x]);
          return node;
        });
        first_nodes[size_t(wp)] = std::move(first);
        last_nodes[size_t(wp)] = std::move(last);
      }
      // The chunks' joins.
      for (int wp = 1; wp < kWarps; ++wp) {
        const int y0 = wp * per;
        if (y0 >= h) break;
        const std::vector<Run> top = strip_runs(b, w, x0, y0, lo), up = strip_runs(b, w, x0, y0 - 1, lo);
        for (size_t i = 0; i < top.size(); ++i)
          for (size_t k = 0; k < up.size(); ++k) {
            if (!touch(up[k], top[i])) continue;
            const uint32_t p = pool.root(first_nodes[size_t(wp)][i]), q = pool.root(last_nodes[size_t(wp - 1)][k]);
            out.join_unions += p != q;
            pool.unite(p, q);
          }
      }
      out.most_lane_nodes = std::max(out.most_lane_nodes, double(pool.parent.size()));
      block_nodes += double(pool.parent.size());
      // Pass 2.
      for (int wp = 0; wp < kWarps; ++wp) {
        size_t next = 0;
        walk_chunk(wp, [&](int y, const Run& r, const std::vector<Run>& above,
                           const std::vector<uint32_t>& above_nodes) {
          uint32_t node = UINT32_MAX;
          for (size_t k = 0; k < above.size() && node == UINT32_MAX; ++k)
            if (touch(above[k], r)) node = above_nodes[k];
          if (node == UINT32_MAX) node = seq[size_t(wp)][next++];
          const uint8_t m = pool.mx[pool.root(node)];
          for (int x = r.first; x <= r.last; ++x) {
            const size_t i = size_t(y) * w + x;
            plane[i] = m;
            sm[i] += uint32_t(f[size_t(l)][m]) - f[size_t(l)][a[i]];
          }
          return node;
        });
        if (next != seq[size_t(wp)].size()) out.exact = false;
      }
      for (int y = 0; y < h; ++y)
        for (int x = x0; x < w && x < x0 + 32; ++x) {
          const size_t i = size_t(y) * w + x;
          if (b[i] >= lo && plane[i] != ref_max[size_t(l)][i]) out.exact = false;
        }
    }
    out.most_block_nodes = std::max(out.most_block_nodes, block_nodes);
  }
  for (size_t i = 0; i < n; ++i)
    if (sm[i] != sm_ref[i]) out.exact = false;
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 1) {
    std::fprintf(stderr, "usage: %s (images from GPUEC_SHARED_DIR/images/standard, if set)\n", argv[0]);
    return 1;
  }
  const std::vector<canny_bench::Image> images =
      canny_bench::benchmark_images({"cameraman_256.pgm", "barbara_512.pgm", "boat_512.pgm", "goldhill_512.pgm"});
  std::vector<canny::CandidatePair> c03(canny::kMaxCandidates), c01(canny::kMaxCandidates);
  c03.resize(size_t(canny::make_candidate_set(3, c03.data(), int(c03.size()))));
  c01.resize(size_t(canny::make_candidate_set(1, c01.data(), int(c01.size()))));
  std::printf(
      "# sigma 1.0; px: the sum over the set's lows of |S(low)| over the pixels; rows: the sum over the lows of\n"
      "# the strip rows (32 columns) holding a pixel of S(low), over the strip rows; crossing: the share of those\n"
      "# pixels whose 8-connected component of S(low) in the whole frame holds pixels of two strips or more\n");
  std::printf("%-22s %6s %9s %9s %6s %11s %11s %6s %9s %9s\n", "image", "S(1)", "px C_0.03", "px C_0.01", "ratio",
              "rows C_0.03", "rows C_0.01", "ratio", "cross .03", "cross .01");
  std::vector<std::vector<uint8_t>> codes, codes_of_a;  // B and A of each image, for the tables after the first
  for (const canny_bench::Image& im : images) {
    std::vector<float> g(size_t(im.w) * im.h);
    std::vector<uint8_t> work(canny::workspace_bytes_ref(im.w, im.h));
    if (canny::gradient_map_ref(im.px.data(), im.w, im.h, im.w, 1.0f, g.data(), im.w, work.data(), work.size()) !=
        canny::kOk) {
      std::fprintf(stderr, "canny-lows-work: %s: gradient_map_ref failed\n", im.name.c_str());
      return 2;
    }
    float t[canny::kMaxThreshold + 1];
    for (int k = 0; k <= canny::kMaxThreshold; ++k) t[k] = float(k) / 100.0f;
    std::vector<uint8_t> codes_b(g.size()), codes_a(g.size());
    size_t s1 = 0;  // |S(1)|
    for (size_t i = 0; i < g.size(); ++i) {
      const uint32_t code = g[i] > 0.0f ? canny::threshold_codes(g[i], t) : 0u;
      codes_b[i] = uint8_t(code >> 8);
      codes_a[i] = uint8_t(code & 0xffu);
      s1 += codes_b[i] >= 1;
    }
    const double n = double(im.w) * im.h, strip_rows = double((im.w + 31) / 32) * im.h;
    const Work a = lows_work(codes_b, im.w, im.h, c03), b = lows_work(codes_b, im.w, im.h, c01);
    std::printf("%-22s %5.1f%% %9.3f %9.3f %6.2f %11.3f %11.3f %6.2f %8.1f%% %8.1f%%\n", im.name.c_str(),
                100.0 * double(s1) / n, a.pixels / n, b.pixels / n, b.pixels / a.pixels, a.rows / strip_rows,
                b.rows / strip_rows, b.rows / a.rows, 100.0 * a.crossing / a.pixels, 100.0 * b.crossing / b.pixels);
    codes.push_back(std::move(codes_b));
    codes_of_a.push_back(std::move(codes_a));
  }
  std::printf("\n# nested labelling in groups of G lows: the pixels it adds over those the per-low labelling adds\n");
  std::printf("%-22s %-7s %6s %6s %6s %6s %6s %6s\n", "image", "set", "G=1", "G=2", "G=3", "G=4", "G=8", "G=all");
  for (size_t i = 0; i < images.size(); ++i) {
    const std::vector<double> sizes = set_sizes(codes[i]);
    for (const auto* set : {&c03, &c01}) {
      const std::vector<int> lows = lows_of(*set);
      std::printf("%-22s %-7s", images[i].name.c_str(), set == &c03 ? "C_0.03" : "C_0.01");
      for (size_t g : {size_t(1), size_t(2), size_t(3), size_t(4), size_t(8), lows.size()})
        std::printf(" %6.3f", grouped_share(sizes, lows, g));
      std::printf("\n");
    }
  }
  std::printf("\n# frame mode's split passes, C_0.03, tiles of TW x TH labelled alone: over the sum over the lows of\n"
              "# |S(low)|, the pixels whose tile component touches the tile border (border: today's entries), has a\n"
              "# pixel of S across it (live), or takes a larger frame maximum (raised); over the border pixels of S\n"
              "# (nodes, a share of |S|): those with S across (live nodes)\n");
  std::printf("%-22s %-9s %8s %8s %8s %8s %10s\n", "image", "tile", "border", "live", "raised", "nodes", "live nodes");
  for (size_t i = 0; i < images.size(); ++i) {
    const canny_bench::Image& im = images[i];
    if (im.h < 1000) continue;  // the split passes run from 1080p (frame_count_joined_kernel below)
    const int rows = (im.h + (im.h + 1087) / 1088 - 1) / ((im.h + 1087) / 1088);  // detect_edges_cuda's R on an H200
    for (const int tw : {32, 64, 128}) {
      const int th = rows * 32 / tw;
      SplitShares sh;
      for (const int lo : lows_of(c03)) split_shares(codes[i], im.w, im.h, lo, tw, th, &sh);
      std::printf("%-22s %4dx%-4d %7.1f%% %7.1f%% %7.1f%% %7.1f%% %9.1f%%\n", im.name.c_str(), tw, th,
                  100.0 * sh.border / sh.pixels, 100.0 * sh.live / sh.pixels, 100.0 * sh.raised / sh.pixels,
                  100.0 * sh.nodes / sh.pixels, 100.0 * sh.live_nodes / sh.nodes);
    }
  }
  std::printf("\n# strip mode's row loop, C_0.03 and C_0.01: %g warp instructions a row with S, %g a row without, a warp a\n"
              "# chunk of ceil(H / 32) rows; over the (strip, low) blocks, the busiest chunk over the mean (mean: the\n"
              "# mean over the blocks); the block with the most work: its low and strip, its busiest chunk, its mean\n"
              "# chunk (a balanced split) and its total over 4 schedulers (the issue bound), warp instructions\n",
              kRowS, kRowEmpty);
  std::printf("%-22s %-7s %6s %9s %5s %6s %8s %8s %8s\n", "image", "set", "blocks", "max/mean", "low", "strip",
              "busiest", "mean", "total/4");
  for (size_t i = 0; i < images.size(); ++i) {
    for (const auto* set : {&c03, &c01}) {
      const ChunkBalance cb = chunk_balance(codes[i], images[i].w, images[i].h, lows_of(*set));
      std::printf("%-22s %-7s %6.0f %9.2f %5d %6d %8.0f %8.0f %8.0f\n", images[i].name.c_str(),
                  set == &c03 ? "C_0.03" : "C_0.01", cb.blocks, cb.ratio_sum / cb.blocks, cb.worst_lo, cb.worst_strip,
                  cb.worst_max, cb.worst_total / 32, cb.worst_total / 4);
    }
  }
  std::printf("\n# a lane a low (lanes_work), over the strip rows: rows with S, the most runs of any low a row, the\n"
              "# most pixels of any low a row (a lane a low); the strip rows with S summed over the lows, and the\n"
              "# pixels of S summed over the lows / 32 (a warp a (strip, low): today's row loops, fold and count)\n");
  std::printf("%-22s %-7s %7s %7s %7s %10s %10s\n", "image", "set", "rows", "runs", "pixels", "low rows",
              "low px/32");
  for (size_t i = 0; i < images.size(); ++i) {
    const double strip_rows = double((images[i].w + 31) / 32) * images[i].h;
    for (const auto* set : {&c03, &c01}) {
      const LanesWork lw = lanes_work(codes[i], images[i].w, images[i].h, lows_of(*set));
      std::printf("%-22s %-7s %7.3f %7.3f %7.3f %10.3f %10.3f\n", images[i].name.c_str(),
                  set == &c03 ? "C_0.03" : "C_0.01", lw.rows / strip_rows, lw.runs / strip_rows,
                  lw.pixels / strip_rows, lw.low_rows / strip_rows, lw.low_pixel_steps / strip_rows);
    }
  }
  std::printf("\n# a lane a low walking its runs (lane_walk: a union-find over runs, path halving), over the strip\n"
              "# rows: the most of any lane a row of runs, new nodes, unions and find hops; exact: the components and\n"
              "# their maxima of A equal a per-low labelling's; all nodes: every lane's nodes, a strip row, and\n"
              "# the most of one strip (the memory of a block a strip)\n");
  std::printf("%-22s %-7s %7s %7s %7s %7s %9s %10s %6s\n", "image", "set", "runs", "nodes", "unions", "hops",
              "all nodes", "strip most", "exact");
  for (size_t i = 0; i < images.size(); ++i) {
    const double strip_rows = double((images[i].w + 31) / 32) * images[i].h;
    for (const auto* set : {&c03, &c01}) {
      const LaneSteps ls = lane_steps(codes[i], codes_of_a[i], images[i].w, images[i].h, lows_of(*set));
      std::printf("%-22s %-7s %7.3f %7.3f %7.3f %7.3f %9.2f %10.0f %6s\n", images[i].name.c_str(),
                  set == &c03 ? "C_0.03" : "C_0.01", ls.runs / strip_rows, ls.nodes / strip_rows,
                  ls.unions / strip_rows, ls.hops / strip_rows, ls.all_nodes / strip_rows, ls.strip_nodes_most,
                  ls.exact ? "yes" : "NO");
      if (!ls.exact) return 3;
    }
  }
  std::printf("\n# the lane-a-low kernel modelled on the CPU (kernel_model: a block a strip, 32 warps' chunks, two\n"
              "# passes):\n"
              "# exact: SM and every low's plane of maxima equal a per-low labelling's; the largest node pool of one\n"
              "# lane and of a block (all lanes), and the unions of the chunks' joins a block (all lanes)\n");
  std::printf("%-22s %-7s %6s %10s %11s %12s\n", "image", "set", "exact", "lane pool", "block pool", "joins/block");
  for (size_t i = 0; i < images.size(); ++i) {
    const double strips = double((images[i].w + 31) / 32);
    for (const auto* set : {&c03, &c01}) {
      const KernelModel km = kernel_model(codes[i], codes_of_a[i], images[i].w, images[i].h, *set);
      std::printf("%-22s %-7s %6s %10.0f %11.0f %12.4f\n", images[i].name.c_str(), set == &c03 ? "C_0.03" : "C_0.01",
                  km.exact ? "yes" : "NO", km.most_lane_nodes, km.most_block_nodes, km.join_unions / strips);
      if (!km.exact) return 3;
    }
  }
  return 0;
}
