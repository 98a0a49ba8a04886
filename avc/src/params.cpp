// SPS and PPS parsing (avc/params.h).
#include "avc/params.h"

#include <atomic>

#include "avc/bitreader.h"

namespace avc {

namespace {

bool truncated(const BitReader& br, const char* what, Error& err) {
  if (br.ok()) return true;
  return fail(err, Status::kMalformed, "%s: truncated (read past the end of the RBSP)", what);
}

// rbsp_trailing_bits() must follow: the stop bit here, nothing but zeros after it.
bool check_trailing(const BitReader& br, const char* what, Error& err) {
  if (!truncated(br, what, err)) return false;
  if (br.left() == 0) return fail(err, Status::kMalformed, "%s: no rbsp_stop_one_bit", what);
  if (br.more_rbsp_data())
    return fail(err, Status::kMalformed, "%s: data after the last syntax element (bit %llu of %llu)", what,
                static_cast<unsigned long long>(br.pos()), static_cast<unsigned long long>(br.end()));
  if (br.peek(1) != 1) return fail(err, Status::kMalformed, "%s: no rbsp_stop_one_bit", what);
  return true;
}

// Profiles whose SPS codes chroma_format_idc and the bit depths (7.3.2.1.1).
bool has_chroma_format(uint8_t profile_idc) {
  switch (profile_idc) {
    case 100: case 110: case 122: case 244: case 44: case 83: case 86: case 118: case 128: case 138: case 139:
    case 134: case 135:
      return true;
    default:
      return false;
  }
}

bool parse_hrd(BitReader& br, Error& err) {
  const uint32_t cpb_cnt_minus1 = br.ue();
  if (!truncated(br, "SPS VUI hrd_parameters", err)) return false;
  if (cpb_cnt_minus1 > 31) return fail(err, Status::kMalformed, "SPS VUI: cpb_cnt_minus1 %u (0..31)", cpb_cnt_minus1);
  br.u(4);  // bit_rate_scale
  br.u(4);  // cpb_size_scale
  for (uint32_t i = 0; i <= cpb_cnt_minus1; ++i) {
    br.ue();  // bit_rate_value_minus1
    br.ue();  // cpb_size_value_minus1
    br.u(1);  // cbr_flag
  }
  br.u(5);  // initial_cpb_removal_delay_length_minus1
  br.u(5);  // cpb_removal_delay_length_minus1
  br.u(5);  // dpb_output_delay_length_minus1
  br.u(5);  // time_offset_length
  return truncated(br, "SPS VUI hrd_parameters", err);
}

bool parse_vui(BitReader& br, Vui& v, Error& err) {
  v = Vui{};
  v.aspect_ratio_info_present_flag = br.flag();
  if (v.aspect_ratio_info_present_flag) {
    v.aspect_ratio_idc = uint8_t(br.u(8));
    if (v.aspect_ratio_idc == 255) {  // Extended_SAR
      v.sar_width = uint16_t(br.u(16));
      v.sar_height = uint16_t(br.u(16));
    }
  }
  if (br.flag()) br.u(1);  // overscan_info_present_flag, overscan_appropriate_flag
  v.video_signal_type_present_flag = br.flag();
  if (v.video_signal_type_present_flag) {
    br.u(3);                   // video_format
    br.u(1);                   // video_full_range_flag
    if (br.flag()) br.u(24);  // colour_description_present_flag: primaries, transfer, matrix
  }
  if (br.flag()) {  // chroma_loc_info_present_flag
    const uint32_t top = br.ue(), bottom = br.ue();
    if (br.ok() && (top > 5 || bottom > 5))
      return fail(err, Status::kMalformed, "SPS VUI: chroma_sample_loc_type %u/%u (0..5)", top, bottom);
  }
  v.timing_info_present_flag = br.flag();
  if (v.timing_info_present_flag) {
    v.num_units_in_tick = br.u(32);
    v.time_scale = br.u(32);
    v.fixed_frame_rate_flag = br.flag();
  }
  v.nal_hrd_parameters_present_flag = br.flag();
  if (v.nal_hrd_parameters_present_flag && !parse_hrd(br, err)) return false;
  v.vcl_hrd_parameters_present_flag = br.flag();
  if (v.vcl_hrd_parameters_present_flag && !parse_hrd(br, err)) return false;
  if (v.nal_hrd_parameters_present_flag || v.vcl_hrd_parameters_present_flag) br.u(1);  // low_delay_hrd_flag
  v.pic_struct_present_flag = br.flag();
  v.bitstream_restriction_flag = br.flag();
  if (v.bitstream_restriction_flag) {
    br.u(1);  // motion_vectors_over_pic_boundaries_flag
    br.ue();  // max_bytes_per_pic_denom
    br.ue();  // max_bits_per_mb_denom
    br.ue();  // log2_max_mv_length_horizontal
    br.ue();  // log2_max_mv_length_vertical
    v.max_num_reorder_frames = br.ue();
    v.max_dec_frame_buffering = br.ue();
  }
  return truncated(br, "SPS VUI", err);
}

std::atomic<uint64_t> g_generation{0};

// Ceil(Log2(n)) for n >= 1.
int ceil_log2(uint32_t n) {
  int b = 0;
  while ((uint64_t(1) << b) < n) ++b;
  return b;
}

}  // namespace

bool parse_sps(const uint8_t* rbsp, size_t size, Sps& s, Error& err) {
  BitReader br(rbsp, size);
  s = Sps{};
  s.profile_idc = uint8_t(br.u(8));
  s.constraint_flags = uint8_t(br.u(8));  // constraint_set0..5_flag, reserved_zero_2bits
  s.level_idc = uint8_t(br.u(8));
  const uint32_t id = br.ue();
  if (!truncated(br, "SPS", err)) return false;
  if (id >= uint32_t(kMaxSps)) return fail(err, Status::kMalformed, "SPS: seq_parameter_set_id %u (0..31)", id);
  s.seq_parameter_set_id = uint8_t(id);
  if (has_chroma_format(s.profile_idc)) {
    const uint32_t cf = br.ue();
    if (!truncated(br, "SPS", err)) return false;
    if (cf > 3) return fail(err, Status::kMalformed, "SPS: chroma_format_idc %u (0..3)", cf);
    if (cf != 1)
      return fail(err, Status::kUnsupported, "SPS: chroma_format_idc %u (%s); only 4:2:0 is supported", cf,
                  cf == 0 ? "monochrome" : cf == 2 ? "4:2:2" : "4:4:4");
    const uint32_t bdl = br.ue(), bdc = br.ue();
    if (!truncated(br, "SPS", err)) return false;
    if (bdl != 0 || bdc != 0)
      return fail(err, Status::kUnsupported, "SPS: bit depth %u (luma) / %u (chroma); only 8-bit video is supported",
                  bdl + 8, bdc + 8);
    if (br.flag())
      return fail(err, Status::kUnsupported, "SPS: qpprime_y_zero_transform_bypass_flag 1 (lossless coding)");
    if (br.flag()) return fail(err, Status::kUnsupported, "SPS: seq_scaling_matrix_present_flag 1 (scaling matrices)");
  }
  const uint32_t l2fn = br.ue();
  if (!truncated(br, "SPS", err)) return false;
  if (l2fn > 12) return fail(err, Status::kMalformed, "SPS: log2_max_frame_num_minus4 %u (0..12)", l2fn);
  s.log2_max_frame_num = uint8_t(l2fn + 4);
  const uint32_t poc_type = br.ue();
  if (!truncated(br, "SPS", err)) return false;
  if (poc_type > 2) return fail(err, Status::kMalformed, "SPS: pic_order_cnt_type %u (0..2)", poc_type);
  s.pic_order_cnt_type = uint8_t(poc_type);
  if (poc_type == 0) {
    const uint32_t l2poc = br.ue();
    if (!truncated(br, "SPS", err)) return false;
    if (l2poc > 12) return fail(err, Status::kMalformed, "SPS: log2_max_pic_order_cnt_lsb_minus4 %u (0..12)", l2poc);
    s.log2_max_pic_order_cnt_lsb = uint8_t(l2poc + 4);
  } else if (poc_type == 1) {
    s.delta_pic_order_always_zero_flag = br.flag();
    s.offset_for_non_ref_pic = br.se();
    s.offset_for_top_to_bottom_field = br.se();
    const uint32_t n = br.ue();
    if (!truncated(br, "SPS", err)) return false;
    if (n > 255) return fail(err, Status::kMalformed, "SPS: num_ref_frames_in_pic_order_cnt_cycle %u (0..255)", n);
    s.num_ref_frames_in_pic_order_cnt_cycle = uint8_t(n);
    for (uint32_t i = 0; i < n; ++i) s.offset_for_ref_frame[i] = br.se();
  }
  s.max_num_ref_frames = br.ue();
  s.gaps_in_frame_num_value_allowed_flag = br.flag();
  const uint32_t w = br.ue(), h = br.ue();
  if (!truncated(br, "SPS", err)) return false;
  if (s.max_num_ref_frames > 16) return fail(err, Status::kMalformed, "SPS: max_num_ref_frames %u (0..16)", s.max_num_ref_frames);
  if (w >= kMaxMbsPerDim || h >= kMaxMbsPerDim || uint64_t(w + 1) * (h + 1) > kMaxPicSizeInMbs)
    return fail(err, Status::kMalformed, "SPS: picture of %ux%u macroblocks (at most %u per side, %u in all)", w + 1,
                h + 1, kMaxMbsPerDim, kMaxPicSizeInMbs);
  s.pic_width_in_mbs = w + 1;
  s.pic_height_in_map_units = h + 1;
  s.frame_mbs_only_flag = br.flag();
  if (!truncated(br, "SPS", err)) return false;
  if (!s.frame_mbs_only_flag)
    return fail(err, Status::kUnsupported, "SPS: frame_mbs_only_flag 0 (interlaced coding: field or MBAFF)");
  s.direct_8x8_inference_flag = br.flag();
  s.frame_cropping_flag = br.flag();
  if (s.frame_cropping_flag) {
    s.frame_crop_left_offset = br.ue();
    s.frame_crop_right_offset = br.ue();
    s.frame_crop_top_offset = br.ue();
    s.frame_crop_bottom_offset = br.ue();
    if (!truncated(br, "SPS", err)) return false;
    // 7.4.2.1.1: the cropped window must be non-empty (CropUnitX = CropUnitY = 2).
    if (uint64_t(s.frame_crop_left_offset) + s.frame_crop_right_offset >= s.pic_width_in_mbs * 8 ||
        uint64_t(s.frame_crop_top_offset) + s.frame_crop_bottom_offset >= s.pic_height_in_map_units * 8)
      return fail(err, Status::kMalformed, "SPS: frame cropping %u/%u/%u/%u (left/right/top/bottom) empties the %ux%u picture",
                  s.frame_crop_left_offset, s.frame_crop_right_offset, s.frame_crop_top_offset,
                  s.frame_crop_bottom_offset, s.width(), s.height());
  }
  s.vui_parameters_present_flag = br.flag();
  if (s.vui_parameters_present_flag && !parse_vui(br, s.vui, err)) return false;
  return check_trailing(br, "SPS", err);
}

bool parse_pps(const uint8_t* rbsp, size_t size, Pps& p, Error& err) {
  BitReader br(rbsp, size);
  const uint32_t id = br.ue();
  const uint32_t sps_id = br.ue();
  if (!truncated(br, "PPS", err)) return false;
  if (id >= uint32_t(kMaxPps)) return fail(err, Status::kMalformed, "PPS: pic_parameter_set_id %u (0..255)", id);
  if (sps_id >= uint32_t(kMaxSps))
    return fail(err, Status::kMalformed, "PPS %u: seq_parameter_set_id %u (0..31)", id, sps_id);
  p.pic_parameter_set_id = uint8_t(id);
  p.seq_parameter_set_id = uint8_t(sps_id);
  p.entropy_coding_mode_flag = br.flag();
  if (!truncated(br, "PPS", err)) return false;
  if (p.entropy_coding_mode_flag)
    return fail(err, Status::kUnsupported, "PPS %u: entropy_coding_mode_flag 1 (CABAC); only CAVLC is supported", id);
  p.bottom_field_pic_order_in_frame_present_flag = br.flag();
  const uint32_t ngroups_minus1 = br.ue();
  if (!truncated(br, "PPS", err)) return false;
  if (ngroups_minus1 >= uint32_t(kMaxSliceGroups))
    return fail(err, Status::kMalformed, "PPS %u: num_slice_groups_minus1 %u (0..7)", id, ngroups_minus1);
  p.num_slice_groups = uint8_t(ngroups_minus1 + 1);
  p.slice_group_map_type = 0;
  p.slice_group_change_direction_flag = false;
  p.slice_group_change_rate = 1;
  p.pic_size_in_map_units = 0;
  p.slice_group_id.clear();
  for (int i = 0; i < kMaxSliceGroups; ++i) p.run_length[i] = p.top_left[i] = p.bottom_right[i] = 0;
  if (ngroups_minus1 > 0) {
    const uint32_t type = br.ue();
    if (!truncated(br, "PPS", err)) return false;
    if (type > 6) return fail(err, Status::kMalformed, "PPS %u: slice_group_map_type %u (0..6)", id, type);
    p.slice_group_map_type = uint8_t(type);
    if (type == 0) {
      for (uint32_t g = 0; g <= ngroups_minus1; ++g) {
        const uint32_t r = br.ue();
        if (!truncated(br, "PPS", err)) return false;
        if (r >= kMaxPicSizeInMbs)
          return fail(err, Status::kMalformed, "PPS %u: run_length_minus1[%u] %u (larger than any picture)", id, g, r);
        p.run_length[g] = r + 1;
      }
    } else if (type == 2) {
      for (uint32_t g = 0; g < ngroups_minus1; ++g) {
        p.top_left[g] = br.ue();
        p.bottom_right[g] = br.ue();
        if (!truncated(br, "PPS", err)) return false;
        if (p.top_left[g] > p.bottom_right[g] || p.bottom_right[g] >= kMaxPicSizeInMbs)
          return fail(err, Status::kMalformed, "PPS %u: slice group %u: top_left %u, bottom_right %u", id, g,
                      p.top_left[g], p.bottom_right[g]);
      }
    } else if (type >= 3 && type <= 5) {
      p.slice_group_change_direction_flag = br.flag();
      const uint32_t r = br.ue();
      if (!truncated(br, "PPS", err)) return false;
      if (r >= kMaxPicSizeInMbs)
        return fail(err, Status::kMalformed, "PPS %u: slice_group_change_rate_minus1 %u (larger than any picture)", id, r);
      p.slice_group_change_rate = r + 1;
    } else if (type == 6) {
      const uint32_t n = br.ue();
      if (!truncated(br, "PPS", err)) return false;
      if (n >= kMaxPicSizeInMbs)
        return fail(err, Status::kMalformed, "PPS %u: pic_size_in_map_units_minus1 %u (larger than any picture)", id, n);
      // Each id takes at least one bit: a count beyond the bits left is damage, refused before allocating.
      const int bits = ceil_log2(ngroups_minus1 + 1);
      if (uint64_t(n + 1) * uint64_t(bits) > br.left())
        return fail(err, Status::kMalformed, "PPS %u: truncated (slice_group_id of %u map units)", id, n + 1);
      p.pic_size_in_map_units = n + 1;
      p.slice_group_id.resize(n + 1);
      for (uint32_t i = 0; i <= n; ++i) {
        const uint32_t g = br.u(bits);
        if (g > ngroups_minus1)
          return fail(err, Status::kMalformed, "PPS %u: slice_group_id[%u] %u (0..%u)", id, i, g, ngroups_minus1);
        p.slice_group_id[i] = uint8_t(g);
      }
    }
  }
  const uint32_t l0 = br.ue(), l1 = br.ue();
  if (!truncated(br, "PPS", err)) return false;
  if (l0 > 31 || l1 > 31)
    return fail(err, Status::kMalformed, "PPS %u: num_ref_idx_l0/l1_default_active_minus1 %u/%u (0..31)", id, l0, l1);
  p.num_ref_idx_l0_default_active = uint8_t(l0 + 1);
  p.num_ref_idx_l1_default_active = uint8_t(l1 + 1);
  p.weighted_pred_flag = br.flag();
  p.weighted_bipred_idc = uint8_t(br.u(2));
  if (!truncated(br, "PPS", err)) return false;
  if (p.weighted_pred_flag) return fail(err, Status::kUnsupported, "PPS %u: weighted_pred_flag 1 (weighted prediction)", id);
  if (p.weighted_bipred_idc != 0)
    return fail(err, Status::kUnsupported, "PPS %u: weighted_bipred_idc %u (weighted bi-prediction)", id, p.weighted_bipred_idc);
  const int32_t qp = br.se(), qs = br.se(), cqp = br.se();
  if (!truncated(br, "PPS", err)) return false;
  if (qp < -26 || qp > 25) return fail(err, Status::kMalformed, "PPS %u: pic_init_qp_minus26 %d (-26..25)", id, qp);
  if (qs < -26 || qs > 25) return fail(err, Status::kMalformed, "PPS %u: pic_init_qs_minus26 %d (-26..25)", id, qs);
  if (cqp < -12 || cqp > 12) return fail(err, Status::kMalformed, "PPS %u: chroma_qp_index_offset %d (-12..12)", id, cqp);
  p.pic_init_qp_minus26 = int8_t(qp);
  p.pic_init_qs_minus26 = int8_t(qs);
  p.chroma_qp_index_offset = int8_t(cqp);
  p.second_chroma_qp_index_offset = int8_t(cqp);
  p.deblocking_filter_control_present_flag = br.flag();
  p.constrained_intra_pred_flag = br.flag();
  p.redundant_pic_cnt_present_flag = br.flag();
  p.transform_8x8_mode_flag = false;
  if (!truncated(br, "PPS", err)) return false;
  if (br.more_rbsp_data()) {
    p.transform_8x8_mode_flag = br.flag();
    if (!truncated(br, "PPS", err)) return false;
    if (p.transform_8x8_mode_flag) return fail(err, Status::kUnsupported, "PPS %u: transform_8x8_mode_flag 1 (8x8 transform)", id);
    if (br.flag()) return fail(err, Status::kUnsupported, "PPS %u: pic_scaling_matrix_present_flag 1 (scaling matrices)", id);
    const int32_t c2 = br.se();
    if (!truncated(br, "PPS", err)) return false;
    if (c2 < -12 || c2 > 12)
      return fail(err, Status::kMalformed, "PPS %u: second_chroma_qp_index_offset %d (-12..12)", id, c2);
    p.second_chroma_qp_index_offset = int8_t(c2);
  }
  return check_trailing(br, "PPS", err);
}

namespace {

// Parses into the scratch set (allocated once), then swaps it into its id's slot, records the id as the last
// one and starts a new generation: a set that fails to parse leaves everything as it was.
template <class Set, size_t N, class Parse, class Id>
bool store_set(std::unique_ptr<Set>& scratch, std::unique_ptr<Set> (&slots)[N], Parse parse, Id id_of, int* last,
               uint64_t* generation) {
  if (!scratch) scratch.reset(new Set);
  if (!parse(*scratch)) return false;
  *last = static_cast<int>(id_of(*scratch));
  slots[*last].swap(scratch);
  *generation = ++g_generation;
  return true;
}

}  // namespace

bool ParamSets::store_sps(const uint8_t* rbsp, size_t size, Error& err) {
  return store_set(sps_scratch_, sps_, [&](Sps& s) { return parse_sps(rbsp, size, s, err); },
                   [](const Sps& s) { return s.seq_parameter_set_id; }, &last_sps_, &generation_);
}

bool ParamSets::store_pps(const uint8_t* rbsp, size_t size, Error& err) {
  return store_set(pps_scratch_, pps_, [&](Pps& p) { return parse_pps(rbsp, size, p, err); },
                   [](const Pps& p) { return p.pic_parameter_set_id; }, &last_pps_, &generation_);
}

const char* profile_name(uint8_t profile_idc, uint8_t constraint_flags) {
  const bool cs1 = constraint_flags & 0x40, cs3 = constraint_flags & 0x10;
  switch (profile_idc) {
    case 66: return cs1 ? "Constrained Baseline" : "Baseline";
    case 77: return "Main";
    case 88: return "Extended";
    case 100: return "High";
    case 110: return cs3 ? "High 10 Intra" : "High 10";
    case 122: return cs3 ? "High 4:2:2 Intra" : "High 4:2:2";
    case 244: return cs3 ? "High 4:4:4 Intra" : "High 4:4:4 Predictive";
    case 44: return "CAVLC 4:4:4 Intra";
    case 83: return "Scalable Baseline";
    case 86: return "Scalable High";
    case 118: return "Multiview High";
    case 128: return "Stereo High";
    case 134: return "MFC High";
    case 135: return "MFC Depth High";
    case 138: return "Multiview Depth High";
    case 139: return "Enhanced Multiview Depth High";
    default: return "unknown profile";
  }
}

}  // namespace avc
