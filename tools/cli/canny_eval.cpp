// canny-eval: precision, recall, F-measure and MSE of a binary edge map against human boundary maps, with
// the BSDS500 boundary benchmark's matching (Martin, Fowlkes, Malik 2004; BSDS `correspondPixels`).
// Options, conventions and exit codes: the usage text below and docs/benchmarks.md ("GUD-Canny quality").
//
// Matching: an edge pixel and a boundary pixel may be paired when their Euclidean distance is at most the
// tolerance radius; each pixel is paired at most once (a bipartite matching), and the matching has maximum
// cardinality (Hopcroft-Karp). BSDS computes a minimum-cost assignment (cost = distance, 100 x radius for an
// unpaired pixel) with Goldberg's CSA; because an unpaired pixel costs far more than any pair, that
// assignment is (up to augmenting paths longer than ~200 pixels) also of maximum cardinality, so the counts
// are the same. Maximum matchings are not unique, and with several annotations the union of matched
// detections depends on which one is taken: to stay close to BSDS's minimum-cost choice the matching is
// seeded greedily with the closest pairs first (augmenting paths never unmatch a matched pixel).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli.h"
#include "files.h"
#include "images.h"
#include "json_string.h"

namespace {

constexpr int kExitOk = 0, kExitUsage = 1, kExitData = 2;
constexpr double kBsdsTolerance = 0.0075;  // BSDS500 bench: maxDist = 0.0075 x image diagonal
constexpr double kMaxTolerancePx = 100.0;

const char kUsage[] =
    "usage: canny-eval [options] EDGES GT [GT...]\n"
    "\n"
    "Compares a binary edge map with one or more human boundary maps (one per annotator) of the same size,\n"
    "as the BSDS500 boundary benchmark does, and prints precision, recall, F-measure and MSE. One of the maps\n"
    "may be '-' (stdin).\n"
    "\n"
    "  EDGES, GT  PBM (P1 or P4; 1 = edge/boundary) or PGM (P2 or P5, maxval 1..65535; nonzero = edge).\n"
    "\n"
    "  Matching: an edge pixel and a boundary pixel can be paired when their Euclidean distance is at most\n"
    "  the tolerance; each pixel is paired at most once (maximum bipartite matching, Hopcroft-Karp), done\n"
    "  separately for each GT. An edge pixel is a hit when it is paired in ANY GT (BSDS convention).\n"
    "    precision P = hits / edge pixels\n"
    "    recall    R = sum over GTs of paired boundary pixels / sum over GTs of boundary pixels\n"
    "    F = 2 P R / (P + R)        (P, R or F is 0 when its denominator is 0, as in BSDS)\n"
    "    MSE = mean over GTs of (pixels where edge != boundary) / (width x height), with the maps as 0/1\n"
    "          (the thesis's MSE between binary maps, no tolerance)\n"
    "  The edge map is not thinned first (BSDS thins with bwmorph 'thin'; Canny output is thin already).\n"
    "\n"
    "options:\n"
    "  --tolerance T   matching radius: a fraction of the image diagonal (a plain number in [0, 1), default\n"
    "                  0.0075 as BSDS: 4.34 px for 481x321), or pixels with the suffix px (e.g. 2px, 1.5px;\n"
    "                  0 to 100). 0 means exact position only.\n"
    "  --json FILE     also write a JSON report to FILE ('-': stdout, then no text line): sizes, tolerance,\n"
    "                  counts, P, R, F, MSE and per-GT counts.\n"
    "  -q, --quiet     no text line on stdout.\n"
    "  -h, --help      this text.\n"
    "\n"
    "output: one line on stdout:\n"
    "  P=... R=... F=... MSE=... edges=N hits=N boundary=N boundary_hits=N gts=N tolerance_px=...\n"
    "exit codes: 0 ok; 1 usage error (unknown option, bad value, missing file name); 2 data error\n"
    "(unreadable, truncated or corrupt file, unsupported format, maps of different sizes, unwritable JSON).\n";

using cli::fail;
using images::Map;

Map read_map(const std::string& path) {
  return images::read_map(cli::open_for_reading(path, kExitData).get(), path);
}

// ---------------------------------------------------------------- matching

struct Offset {
  int dx, dy, d2;
};

// All offsets with dx^2 + dy^2 <= radius^2, closest first (ties: row-major, so the result is deterministic).
std::vector<Offset> disc(double radius) {
  const int r = int(std::floor(radius + 1e-9));
  const double r2 = radius * radius + 1e-9;
  std::vector<Offset> out;
  for (int dy = -r; dy <= r; ++dy)
    for (int dx = -r; dx <= r; ++dx)
      if (dx * dx + dy * dy <= r2) out.push_back({dx, dy, dx * dx + dy * dy});
  std::stable_sort(out.begin(), out.end(), [](const Offset& a, const Offset& b) { return a.d2 < b.d2; });
  return out;
}

// Maximum bipartite matching of edge pixels (left) to boundary pixels (right) within the disc. Marks the
// matched edge pixels in *hit (by pixel index). Returns the matching's size.
long long match(const Map& edges, const Map& gt, const std::vector<Offset>& offs, std::vector<uint8_t>* hit) {
  const int w = edges.width, h = edges.height;
  const size_t n = size_t(w) * size_t(h);
  std::vector<int32_t> right_id(n, -1);
  int32_t nr = 0;
  for (size_t i = 0; i < n; ++i)
    if (gt.on[i]) right_id[i] = nr++;
  std::vector<int32_t> left_pixel;
  for (size_t i = 0; i < n; ++i)
    if (edges.on[i]) left_pixel.push_back(int32_t(i));
  const int32_t nl = int32_t(left_pixel.size());
  if (nl == 0 || nr == 0) return 0;

  // CSR adjacency, each list closest first; edge_d2 kept for the greedy seeding.
  std::vector<int64_t> start(size_t(nl) + 1, 0);
  std::vector<int32_t> adj;
  std::vector<int32_t> adj_d2;
  for (int32_t u = 0; u < nl; ++u) {
    const int x = left_pixel[u] % w, y = left_pixel[u] / w;
    for (const Offset& o : offs) {
      const int xx = x + o.dx, yy = y + o.dy;
      if (xx < 0 || yy < 0 || xx >= w || yy >= h) continue;
      const int32_t v = right_id[size_t(yy) * size_t(w) + size_t(xx)];
      if (v >= 0) {
        adj.push_back(v);
        adj_d2.push_back(o.d2);
      }
    }
    start[size_t(u) + 1] = int64_t(adj.size());
  }

  std::vector<int32_t> match_l(size_t(nl), -1), match_r(size_t(nr), -1);
  long long size = 0;
  // Greedy seed: pairs in increasing distance, both ends free.
  std::vector<int> d2s;
  for (const Offset& o : offs)
    if (d2s.empty() || d2s.back() != o.d2) d2s.push_back(o.d2);
  for (int d2 : d2s)
    for (int32_t u = 0; u < nl; ++u) {
      if (match_l[u] >= 0) continue;
      for (int64_t k = start[u]; k < start[u + 1]; ++k) {
        if (adj_d2[k] > d2) break;
        if (adj_d2[k] == d2 && match_r[adj[k]] < 0) {
          match_l[u] = adj[k];
          match_r[adj[k]] = u;
          ++size;
          break;
        }
      }
    }

  // Hopcroft-Karp: BFS layers from the free left vertices, then vertex-disjoint shortest augmenting paths
  // by an iterative DFS (paths along a contour can be thousands of pixels long).
  constexpr int32_t kInf = INT32_MAX;
  std::vector<int32_t> dist(static_cast<size_t>(nl)), queue(static_cast<size_t>(nl)), stack;
  std::vector<int64_t> it(static_cast<size_t>(nl));
  for (;;) {
    size_t qh = 0, qt = 0;
    for (int32_t u = 0; u < nl; ++u) {
      if (match_l[u] < 0) {
        dist[u] = 0;
        queue[qt++] = u;
      } else {
        dist[u] = kInf;
      }
    }
    bool found = false;
    while (qh < qt) {
      const int32_t u = queue[qh++];
      for (int64_t k = start[u]; k < start[u + 1]; ++k) {
        const int32_t m = match_r[adj[k]];
        if (m < 0) {
          found = true;
        } else if (dist[m] == kInf) {
          dist[m] = dist[u] + 1;
          queue[qt++] = m;
        }
      }
    }
    if (!found) break;
    for (int32_t u = 0; u < nl; ++u) it[u] = start[u];
    for (int32_t root = 0; root < nl; ++root) {
      if (match_l[root] >= 0) continue;
      stack.assign(1, root);
      while (!stack.empty()) {
        const int32_t u = stack.back();
        if (it[u] == start[u + 1]) {  // dead end: never visit u again in this phase
          dist[u] = kInf;
          stack.pop_back();
          if (!stack.empty()) ++it[stack.back()];
          continue;
        }
        const int32_t v = adj[it[u]];
        const int32_t m = match_r[v];
        if (m < 0) {  // free boundary pixel: flip the path
          for (size_t s = stack.size(); s-- > 0;) {
            const int32_t us = stack[s], vs = adj[it[us]];
            match_l[us] = vs;
            match_r[vs] = us;
          }
          ++size;
          break;
        }
        if (dist[m] != kInf && dist[m] == dist[u] + 1) {
          stack.push_back(m);
        } else {
          ++it[u];
        }
      }
    }
  }
  for (int32_t u = 0; u < nl; ++u)
    if (match_l[u] >= 0) (*hit)[size_t(left_pixel[u])] = 1;
  return size;
}

// ---------------------------------------------------------------- output

double parse_number(const std::string& s, const char* what) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || errno != 0 || !std::isfinite(v))
    fail(kExitUsage, std::string(what) + ": not a number: '" + s + "'");
  return v;
}

struct GtResult {
  std::string path;
  long long boundary = 0, matched = 0, mismatched = 0;
};

int run(int argc, char** argv) {
  std::string json_path;
  bool quiet = false;
  bool tol_px = false;
  double tol = kBsdsTolerance;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* name) -> std::string {
      if (i + 1 >= argc) fail(kExitUsage, std::string(name) + " needs a value");
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return kExitOk;
    } else if (a == "-q" || a == "--quiet") {
      quiet = true;
    } else if (a == "--json") {
      json_path = value("--json");
    } else if (a == "--tolerance") {
      std::string t = value("--tolerance");
      if (t.size() > 2 && t.compare(t.size() - 2, 2, "px") == 0) {
        tol_px = true;
        tol = parse_number(t.substr(0, t.size() - 2), "--tolerance");
        if (tol < 0 || tol > kMaxTolerancePx) fail(kExitUsage, "--tolerance: pixels must be in [0, 100]: " + t);
      } else {
        tol_px = false;
        tol = parse_number(t, "--tolerance");
        if (tol < 0 || tol >= 1) fail(kExitUsage, "--tolerance: a fraction must be in [0, 1) (pixels: add px): " + t);
      }
    } else if (a.size() > 1 && a[0] == '-') {
      fail(kExitUsage, "unknown option " + a);
    } else {
      paths.push_back(a);
    }
  }
  if (paths.size() < 2) fail(kExitUsage, "need an edge map and at least one ground-truth map");
  if (std::count(paths.begin(), paths.end(), std::string("-")) > 1) fail(kExitUsage, "'-' (stdin) names one map at most");

  const Map edges = read_map(paths[0]);
  const double diag = std::sqrt(double(edges.width) * edges.width + double(edges.height) * edges.height);
  const double radius = tol_px ? tol : tol * diag;
  if (radius > kMaxTolerancePx)
    fail(kExitUsage, "--tolerance: radius " + std::to_string(radius) + " px is above 100 px");
  const std::vector<Offset> offs = disc(radius);
  const size_t n = edges.on.size();
  long long detections = 0;
  for (uint8_t v : edges.on) detections += v;

  std::vector<uint8_t> hit(n, 0);
  std::vector<GtResult> gts;
  for (size_t k = 1; k < paths.size(); ++k) {
    const Map gt = read_map(paths[k]);
    if (gt.width != edges.width || gt.height != edges.height)
      fail(kExitData, paths[k] + ": size " + std::to_string(gt.width) + "x" + std::to_string(gt.height) +
                          " differs from the edge map's " + std::to_string(edges.width) + "x" +
                          std::to_string(edges.height) + " (" + paths[0] + ")");
    GtResult g;
    g.path = paths[k];
    for (size_t i = 0; i < n; ++i) {
      g.boundary += gt.on[i];
      g.mismatched += gt.on[i] != edges.on[i];
    }
    g.matched = match(edges, gt, offs, &hit);
    gts.push_back(g);
  }

  long long hits = 0, boundary = 0, boundary_hits = 0;
  double mse = 0;
  for (uint8_t v : hit) hits += v;
  for (const GtResult& g : gts) {
    boundary += g.boundary;
    boundary_hits += g.matched;
    mse += double(g.mismatched) / double(n);
  }
  mse /= double(gts.size());
  const double p = detections ? double(hits) / double(detections) : 0.0;
  const double r = boundary ? double(boundary_hits) / double(boundary) : 0.0;
  const double f = (p + r) > 0 ? 2 * p * r / (p + r) : 0.0;

  char line[512];
  std::snprintf(line, sizeof line,
                "P=%.6f R=%.6f F=%.6f MSE=%.6f edges=%lld hits=%lld boundary=%lld boundary_hits=%lld gts=%zu "
                "tolerance_px=%.4f\n",
                p, r, f, mse, detections, hits, boundary, boundary_hits, gts.size(), radius);
  if (!quiet && json_path != "-") std::fputs(line, stdout);

  if (!json_path.empty()) {
    std::string j = "{\n";
    char buf[1024];
    std::snprintf(buf, sizeof buf,
                  "  \"edges_file\": %s,\n  \"width\": %d,\n  \"height\": %d,\n  \"tolerance_px\": %.6f,\n"
                  "  \"tolerance_fraction\": %.6f,\n  \"edges\": %lld,\n  \"hits\": %lld,\n  \"boundary\": %lld,\n"
                  "  \"boundary_hits\": %lld,\n  \"precision\": %.6f,\n  \"recall\": %.6f,\n  \"f\": %.6f,\n"
                  "  \"mse\": %.6f,\n  \"gts\": [\n",
                  json_string(paths[0]).c_str(), edges.width, edges.height, radius, radius / diag, detections, hits,
                  boundary, boundary_hits, p, r, f, mse);
    j += buf;
    for (size_t k = 0; k < gts.size(); ++k) {
      const GtResult& g = gts[k];
      std::snprintf(buf, sizeof buf,
                    "    {\"file\": %s, \"boundary\": %lld, \"matched\": %lld, \"mse\": %.6f}%s\n",
                    json_string(g.path).c_str(), g.boundary, g.matched, double(g.mismatched) / double(n),
                    k + 1 < gts.size() ? "," : "");
      j += buf;
    }
    j += "  ]\n}\n";
    files::Output out;  // tools/cli/files.h: through a temporary file; never one of the inputs
    std::string why;
    if (!out.open(json_path, files::Output::Options{true, paths}, &why) || !out.write(j.data(), j.size(), &why) ||
        !out.commit(&why))
      fail(kExitData, why);
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  files::remove_temporaries_on_signal();
  return cli::main_of("canny-eval", run, argc, argv, kExitUsage, "(canny-eval --help for usage)", kExitData);
}
