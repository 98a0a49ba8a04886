// avc-info: what an H.264 Annex B stream holds above the macroblock layer (NAL units, parameter sets,
// slice headers, slice groups), as the gpuec_avc parser sees it. Options and exit codes: the usage text.
#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cli.h"
#include "files.h"
#include "avc/annexb.h"
#include "avc/headers.h"
#include "avc/slice_group.h"

namespace {

constexpr int kExitOk = 0, kExitUsage = 1, kExitData = 2;

const char kUsage[] =
    "usage: avc-info [options] FILE\n"
    "\n"
    "Lists the NAL units of an H.264 Annex B byte stream (FILE, '-' for stdin) with their parameter sets\n"
    "and slice headers, as parsed for baseline CAVLC re-entropy coding, then a summary of the stream.\n"
    "\n"
    "options:\n"
    "  -s, --summary     only the summary, not one line per NAL unit\n"
    "  -k, --keep-going  report a NAL unit that fails to parse and go on with the next (exit 2 at the end)\n"
    "  -h, --help        this text\n"
    "\n"
    "per NAL unit: index, byte offset of its range (leading zeros and start code), NAL unit size\n"
    "(header byte to last byte), type, nal_ref_idc, then\n"
    "  SPS:    id, profile, level, size in macroblocks and pixels (cropped), frame_num / POC coding\n"
    "  PPS:    id, its SPS, slice groups (map type and parameters), QP, flags\n"
    "  slices: first_mb, slice type, PPS, frame_num, idr_pic_id, POC lsb, redundant_pic_cnt, QP,\n"
    "          ref count, deblocking, slice group of first_mb / groups (map type, change cycle),\n"
    "          header bits (where slice_data() starts)\n"
    "  'esc!' marks a NAL whose emulation prevention differs from the standard escaping of its RBSP.\n"
    "summary: NAL counts by type, pictures, picture size(s), slices, FMO map types, arbitrary slice order,\n"
    "redundant slices, parameter set ids, start code forms, trailing zero bytes, escaping.\n"
    "\n"
    "exit codes: 0 ok; 1 usage error; 2 unreadable input, a stream that is damaged or not baseline CAVLC\n"
    "(the message names the NAL index, byte offset and the syntax element).\n";

struct Summary {
  std::map<int, uint64_t> nal_types;
  uint64_t slices = 0, idr_slices = 0, redundant_slices = 0, pictures = 0;
  uint64_t aso_slices = 0;  // first_mb below an earlier slice's first_mb of the same picture and slice group
  uint64_t slice_types[5] = {};
  std::set<std::string> sizes;
  std::set<int> fmo_types;
  std::set<int> sps_ids, pps_ids;
  uint64_t sps_count = 0, pps_count = 0;
  uint64_t start3 = 0, start4 = 0, leading_more = 0;
  uint64_t trailing_nals = 0, trailing_bytes = 0;
  uint64_t nonstandard_escaping = 0, epb = 0;
  uint64_t errors = 0;
};

void print_sps(const avc::Sps& s) {
  char cs[7];
  for (int b = 0; b < 6; ++b) cs[b] = (s.constraint_flags >> (7 - b)) & 1 ? '1' : '0';
  cs[6] = '\0';
  std::printf(" sps %u: %s (profile_idc %u, constraint_set0..5 %s) level_idc %u, %ux%u MBs, %ux%u",
              s.seq_parameter_set_id, avc::profile_name(s.profile_idc, s.constraint_flags), s.profile_idc, cs,
              s.level_idc, s.pic_width_in_mbs, s.pic_height_in_map_units, s.width(), s.height());
  if (s.frame_cropping_flag) std::printf(" (cropped %ux%u)", s.crop_width(), s.crop_height());
  std::printf(", frame_num %u bits, poc type %u", s.log2_max_frame_num, s.pic_order_cnt_type);
  if (s.pic_order_cnt_type == 0) std::printf(" (%u bits)", s.log2_max_pic_order_cnt_lsb);
  std::printf(", refs %u%s%s", s.max_num_ref_frames, s.gaps_in_frame_num_value_allowed_flag ? ", gaps" : "",
              s.vui_parameters_present_flag ? ", vui" : "");
}

void print_pps(const avc::Pps& p) {
  std::printf(" pps %u -> sps %u: ", p.pic_parameter_set_id, p.seq_parameter_set_id);
  if (p.num_slice_groups > 1) {
    std::printf("%u slice groups, map type %u", p.num_slice_groups, p.slice_group_map_type);
    switch (p.slice_group_map_type) {
      case 0:
        std::printf(" runs");
        for (int g = 0; g < p.num_slice_groups; ++g) std::printf(" %u", p.run_length[g]);
        break;
      case 2:
        std::printf(" boxes");
        for (int g = 0; g + 1 < p.num_slice_groups; ++g) std::printf(" %u-%u", p.top_left[g], p.bottom_right[g]);
        break;
      case 3: case 4: case 5:
        std::printf(" direction %d rate %u", p.slice_group_change_direction_flag ? 1 : 0, p.slice_group_change_rate);
        break;
      case 6:
        std::printf(" %u explicit ids", p.pic_size_in_map_units);
        break;
      default:
        break;
    }
  } else {
    std::printf("1 slice group");
  }
  std::printf(", qp %d, refs %u, cqp %d%s%s%s", 26 + p.pic_init_qp_minus26, p.num_ref_idx_l0_default_active,
              p.chroma_qp_index_offset, p.deblocking_filter_control_present_flag ? ", deblock ctl" : "",
              p.constrained_intra_pred_flag ? ", constrained intra" : "",
              p.redundant_pic_cnt_present_flag ? ", redundant_pic_cnt" : "");
}

}  // namespace

int run(int argc, char** argv) {
  bool summary_only = false, keep_going = false;
  const char* path = nullptr;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (!std::strcmp(a, "-h") || !std::strcmp(a, "--help")) {
      std::fputs(kUsage, stdout);
      return kExitOk;
    } else if (!std::strcmp(a, "-s") || !std::strcmp(a, "--summary")) {
      summary_only = true;
    } else if (!std::strcmp(a, "-k") || !std::strcmp(a, "--keep-going")) {
      keep_going = true;
    } else if (a[0] == '-' && a[1] != '\0') {
      std::fprintf(stderr, "avc-info: unknown option %s (avc-info --help for the options)\n", a);
      return kExitUsage;
    } else if (path) {
      std::fprintf(stderr, "avc-info: more than one input file (avc-info --help for the options)\n");
      return kExitUsage;
    } else {
      path = a;
    }
  }
  if (!path) {
    std::fprintf(stderr, "avc-info: no input file (avc-info --help for the options)\n");
    return kExitUsage;
  }
  std::vector<uint8_t> data;
  std::string why;
  if (!files::read_all(path, &data, &why)) {  // tools/cli/files.h: the system's reason ("is a directory"...)
    std::fprintf(stderr, "avc-info: %s\n", why.c_str());
    return kExitData;
  }

  std::vector<avc::NalUnit> nals;
  avc::Error err;
  const bool split_ok = avc::split_annexb(data.data(), data.size(), nals, err);
  if (!split_ok) {
    std::fprintf(stderr, "avc-info: %s: %s\n", path, err.describe().c_str());
    if (!keep_going || nals.empty()) return kExitData;
  }

  avc::HeaderParser hp;
  avc::SliceGroupMap sgm;
  Summary sum;
  if (!split_ok) ++sum.errors;
  bool have_prev = false;
  avc::SliceHeader prev;
  // first_mb of the slices of the current picture, per slice group (for arbitrary slice order).
  int64_t last_first_mb[avc::kMaxSliceGroups];
  if (!summary_only) std::printf("%-6s %-9s %-7s %-9s %s\n", "nal", "offset", "size", "type", "ref  info");
  for (size_t i = 0; i < nals.size(); ++i) {
    const avc::NalUnit& nal = nals[i];
    ++sum.nal_types[nal.nal_unit_type];
    const uint64_t lz = nal.leading_zeros();
    if (lz == 0) ++sum.start3;
    else if (lz == 1) ++sum.start4;
    else ++sum.leading_more;
    if (nal.trailing_zeros()) {
      ++sum.trailing_nals;
      sum.trailing_bytes += nal.trailing_zeros();
    }
    if (!summary_only)
      std::printf("%-6zu %-9" PRIu64 " %-7" PRIu64 " %-9s %u   ", i, nal.begin, nal.size(),
                  avc::nal_type_name(nal.nal_unit_type), nal.nal_ref_idc);
    if (!hp.parse(data.data(), nal, int64_t(i), err)) {
      if (!summary_only) std::printf("ERROR\n");
      std::fflush(stdout);
      std::fprintf(stderr, "avc-info: %s: %s\n", path, err.describe().c_str());
      ++sum.errors;
      if (!keep_going) return kExitData;
      continue;
    }
    const avc::Rbsp& r = hp.rbsp();
    sum.epb += r.epb.size();
    const bool std_esc = avc::is_standard_escaping(data.data() + nal.header + r.header_bytes,
                                                   nal.size() - uint64_t(r.header_bytes), r.bytes.data(), r.bytes.size());
    if (!std_esc) ++sum.nonstandard_escaping;
    if (nal.nal_unit_type == avc::kNalSps) {
      const avc::Sps& s = *hp.params().sps(uint32_t(hp.params().last_sps_id()));
      ++sum.sps_count;
      sum.sps_ids.insert(s.seq_parameter_set_id);
      if (!summary_only) print_sps(s);
    } else if (nal.nal_unit_type == avc::kNalPps) {
      const avc::Pps& p = *hp.params().pps(uint32_t(hp.params().last_pps_id()));
      ++sum.pps_count;
      sum.pps_ids.insert(p.pic_parameter_set_id);
      if (!summary_only) print_pps(p);
    } else if (nal.is_slice()) {
      const avc::SliceHeader& sh = hp.slice();
      ++sum.slices;
      if (sh.idr) ++sum.idr_slices;
      ++sum.slice_types[sh.slice_type];
      char size[64];
      std::snprintf(size, sizeof size, "%ux%u", sh.sps->crop_width(), sh.sps->crop_height());
      sum.sizes.insert(size);
      sgm.update(*sh.sps, *sh.pps, sh.slice_group_change_cycle, hp.params().generation());
      const int group = sgm.group(sh.first_mb_in_slice);
      if (sh.num_slice_groups > 1) sum.fmo_types.insert(sh.pps->slice_group_map_type);
      if (sh.redundant()) {
        ++sum.redundant_slices;
      } else {
        if (!have_prev || avc::first_slice_of_new_picture(prev, sh)) {
          ++sum.pictures;
          for (int64_t& m : last_first_mb) m = -1;
        }
        if (int64_t(sh.first_mb_in_slice) < last_first_mb[group]) ++sum.aso_slices;
        last_first_mb[group] = std::max<int64_t>(last_first_mb[group], sh.first_mb_in_slice);
        prev = sh;
        have_prev = true;
      }
      if (!summary_only) {
        std::printf(" first_mb %u %s pps %u frame_num %u", sh.first_mb_in_slice, avc::slice_type_name(sh.slice_type),
                    sh.pic_parameter_set_id, sh.frame_num);
        if (sh.idr) std::printf(" idr_pic_id %u", sh.idr_pic_id);
        if (sh.sps->pic_order_cnt_type == 0) std::printf(" poc_lsb %u", sh.pic_order_cnt_lsb);
        if (sh.redundant()) std::printf(" redundant_pic_cnt %u", sh.redundant_pic_cnt);
        std::printf(" qp %u", sh.slice_qp);
        if (sh.is_p()) std::printf(" refs %u", sh.num_ref_idx_l0_active);
        if (sh.disable_deblocking_filter_idc) std::printf(" deblock_idc %u", sh.disable_deblocking_filter_idc);
        if (sh.num_slice_groups > 1) {
          std::printf(" group %d/%u (type %u", group, sh.num_slice_groups, sh.pps->slice_group_map_type);
          if (sh.slice_group_change_cycle_bits) std::printf(", cycle %u", sh.slice_group_change_cycle);
          std::printf(", %u MBs)", sgm.group_size(group));
        }
        std::printf(" header %" PRIu64 " bits", sh.data_bit);
      }
    }
    if (!summary_only) std::printf("%s\n", std_esc ? "" : " esc!");
  }

  std::printf("summary: %s: %zu bytes, %zu NAL units (", path, data.size(), nals.size());
  bool first = true;
  for (const auto& t : sum.nal_types) {
    std::printf("%s%s %" PRIu64, first ? "" : ", ", avc::nal_type_name(uint8_t(t.first)), t.second);
    first = false;
  }
  std::printf(")\n");
  std::printf("  pictures %" PRIu64 ", slices %" PRIu64 " (I %" PRIu64 ", P %" PRIu64 ", IDR %" PRIu64
              ", redundant %" PRIu64 ")\n",
              sum.pictures, sum.slices, sum.slice_types[avc::kSliceI], sum.slice_types[avc::kSliceP], sum.idr_slices,
              sum.redundant_slices);
  std::printf("  picture size:");
  for (const std::string& s : sum.sizes) std::printf(" %s", s.c_str());
  std::printf("%s\n", sum.sizes.empty() ? " none (no slice)" : "");
  std::printf("  FMO:");
  if (sum.fmo_types.empty()) std::printf(" no");
  for (int t : sum.fmo_types) std::printf(" type %d", t);
  std::printf("; arbitrary slice order: %" PRIu64 " slices\n", sum.aso_slices);
  std::printf("  SPS %" PRIu64 " (ids", sum.sps_count);
  for (int id : sum.sps_ids) std::printf(" %d", id);
  std::printf("), PPS %" PRIu64 " (ids", sum.pps_count);
  for (int id : sum.pps_ids) std::printf(" %d", id);
  std::printf(")\n");
  std::printf("  start codes: %" PRIu64 " 3-byte, %" PRIu64 " 4-byte, %" PRIu64 " with more leading zeros; trailing zero bytes: %" PRIu64
              " after %" PRIu64 " NAL units\n",
              sum.start3, sum.start4, sum.leading_more, sum.trailing_bytes, sum.trailing_nals);
  std::printf("  emulation prevention bytes %" PRIu64 ", NAL units escaped differently from the standard: %" PRIu64 "\n",
              sum.epb, sum.nonstandard_escaping);
  if (sum.errors) {
    std::printf("  errors: %" PRIu64 "\n", sum.errors);
    return kExitData;
  }
  return kExitOk;
}

// No exception leaves the program: one message and the documented exit code (tools/cli/cli.h).
int main(int argc, char** argv) { return cli::main_of("avc-info", run, argc, argv, kExitUsage, "(avc-info --help for usage)", kExitData); }
