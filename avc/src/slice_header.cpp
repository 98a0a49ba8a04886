// Slice header parsing (avc/slice_header.h).
#include "avc/slice_header.h"

#include "avc/bitreader.h"
#include "avc/slice_group.h"

namespace avc {

const char* slice_type_name(uint8_t t) {
  switch (t % 5) {
    case 0: return "P";
    case 1: return "B";
    case 2: return "I";
    case 3: return "SP";
    default: return "SI";
  }
}

namespace {

bool truncated(const BitReader& br, Error& err) {
  if (br.ok()) return true;
  return fail(err, Status::kMalformed, "slice header: truncated (runs past the rbsp_stop_one_bit)");
}

bool parse_ref_pic_list_modification(BitReader& br, SliceHeader& sh, Error& err) {
  sh.ref_pic_list_modification_flag_l0 = br.flag();
  sh.num_ref_pic_list_ops = 0;
  if (!sh.ref_pic_list_modification_flag_l0) return truncated(br, err);
  for (;;) {
    const uint32_t idc = br.ue();
    if (!truncated(br, err)) return false;
    if (idc == 3) return true;
    if (idc > 2)
      return fail(err, Status::kMalformed, "slice header: modification_of_pic_nums_idc %u (0..3)", idc);
    const uint32_t v = br.ue();
    if (!truncated(br, err)) return false;
    if (sh.num_ref_pic_list_ops >= sh.num_ref_idx_l0_active)
      return fail(err, Status::kMalformed,
                  "slice header: more ref_pic_list_modification operations than num_ref_idx_l0_active (%u)",
                  sh.num_ref_idx_l0_active);
    sh.ref_pic_list_ops[sh.num_ref_pic_list_ops++] = RefPicListOp{uint8_t(idc), v};
  }
}

bool parse_dec_ref_pic_marking(BitReader& br, SliceHeader& sh, Error& err) {
  sh.num_mmco = 0;
  if (sh.idr) {
    sh.no_output_of_prior_pics_flag = br.flag();
    sh.long_term_reference_flag = br.flag();
    return truncated(br, err);
  }
  sh.adaptive_ref_pic_marking_mode_flag = br.flag();
  if (!sh.adaptive_ref_pic_marking_mode_flag) return truncated(br, err);
  for (;;) {
    const uint32_t op = br.ue();
    if (!truncated(br, err)) return false;
    if (op == 0) return true;
    if (op > 6) return fail(err, Status::kMalformed, "slice header: memory_management_control_operation %u (0..6)", op);
    MmcoOp m{uint8_t(op), 0, 0, 0, 0};
    if (op == 1 || op == 3) m.difference_of_pic_nums_minus1 = br.ue();
    if (op == 2) m.long_term_pic_num = br.ue();
    if (op == 3 || op == 6) m.long_term_frame_idx = br.ue();
    if (op == 4) m.max_long_term_frame_idx_plus1 = br.ue();
    if (!truncated(br, err)) return false;
    if (sh.num_mmco < kMaxListedOps) sh.mmco[sh.num_mmco] = m;
    if (sh.num_mmco == UINT16_MAX)
      return fail(err, Status::kMalformed, "slice header: more than 65535 memory_management_control_operations");
    ++sh.num_mmco;
  }
}

}  // namespace

bool rbsp_stop_bit(const uint8_t* rbsp, size_t size, uint64_t* bit) {
  size_t i = size;
  while (i > 0 && rbsp[i - 1] == 0) --i;
  if (i == 0) return false;
  const uint8_t b = rbsp[i - 1];
  int low = 0;
  while (!((b >> low) & 1)) ++low;
  *bit = uint64_t(i - 1) * 8 + uint64_t(7 - low);
  return true;
}

bool parse_slice_header(uint8_t nal_header, const uint8_t* rbsp, size_t size, const ParamSets& ps, SliceHeader& sh,
                        Error& err) {
  sh.nal_unit_type = uint8_t(nal_header & 31);
  sh.nal_ref_idc = uint8_t((nal_header >> 5) & 3);
  if (sh.nal_unit_type >= kNalSliceDpA && sh.nal_unit_type <= kNalSliceDpC)
    return fail(err, Status::kUnsupported, "NAL unit type %u: data partitioning (Extended profile)", sh.nal_unit_type);
  if (sh.nal_unit_type != kNalSlice && sh.nal_unit_type != kNalIdrSlice)
    return fail(err, Status::kUnsupported, "NAL unit type %u is not a baseline slice", sh.nal_unit_type);
  sh.idr = sh.nal_unit_type == kNalIdrSlice;
  if (sh.idr && sh.nal_ref_idc == 0) return fail(err, Status::kMalformed, "IDR slice with nal_ref_idc 0");

  uint64_t stop = 0;
  if (!rbsp_stop_bit(rbsp, size, &stop)) return fail(err, Status::kMalformed, "slice: no rbsp_stop_one_bit (all zero)");
  sh.stop_bit = stop;
  BitReader br(rbsp, 0, stop);

  sh.first_mb_in_slice = br.ue();
  const uint32_t type = br.ue();
  const uint32_t pps_id = br.ue();
  if (!truncated(br, err)) return false;
  if (type > 9) return fail(err, Status::kMalformed, "slice header: slice_type %u (0..9)", type);
  sh.slice_type_raw = uint8_t(type);
  sh.slice_type = uint8_t(type % 5);
  if (sh.slice_type == kSliceB || sh.slice_type == kSliceSP || sh.slice_type == kSliceSI)
    return fail(err, Status::kUnsupported, "slice_type %u: %s slices are not baseline", type, slice_type_name(uint8_t(type)));
  if (sh.idr && sh.slice_type != kSliceI)
    return fail(err, Status::kMalformed, "IDR slice with slice_type %u (%s)", type, slice_type_name(uint8_t(type)));
  if (pps_id >= uint32_t(kMaxPps)) return fail(err, Status::kMalformed, "slice header: pic_parameter_set_id %u (0..255)", pps_id);
  sh.pic_parameter_set_id = uint8_t(pps_id);
  const Pps* pps = ps.pps(pps_id);
  if (!pps) return fail(err, Status::kMissing, "slice refers to PPS %u, which has not been received", pps_id);
  const Sps* sps = ps.sps(pps->seq_parameter_set_id);
  if (!sps)
    return fail(err, Status::kMissing, "slice refers to PPS %u, whose SPS %u has not been received", pps_id,
                pps->seq_parameter_set_id);
  sh.pps = pps;
  sh.sps = sps;
  sh.pic_width_in_mbs = sps->pic_width_in_mbs;
  sh.pic_height_in_mbs = sps->pic_height_in_map_units;
  sh.pic_size_in_mbs = sps->pic_size_in_mbs();
  sh.constrained_intra_pred_flag = pps->constrained_intra_pred_flag;
  sh.num_slice_groups = pps->num_slice_groups;
  if (sh.first_mb_in_slice >= sh.pic_size_in_mbs)
    return fail(err, Status::kMalformed, "slice header: first_mb_in_slice %u past the picture (%u macroblocks)",
                sh.first_mb_in_slice, sh.pic_size_in_mbs);
  if (!check_slice_group_params(*sps, *pps, err)) return false;

  sh.frame_num = br.u(sps->log2_max_frame_num);
  sh.idr_pic_id = 0;
  if (sh.idr) {
    sh.idr_pic_id = br.ue();
    if (!truncated(br, err)) return false;
    if (sh.frame_num != 0) return fail(err, Status::kMalformed, "IDR slice with frame_num %u (must be 0)", sh.frame_num);
    if (sh.idr_pic_id > 65535) return fail(err, Status::kMalformed, "slice header: idr_pic_id %u (0..65535)", sh.idr_pic_id);
  }
  sh.pic_order_cnt_lsb = 0;
  sh.delta_pic_order_cnt_bottom = 0;
  sh.delta_pic_order_cnt[0] = sh.delta_pic_order_cnt[1] = 0;
  if (sps->pic_order_cnt_type == 0) {
    sh.pic_order_cnt_lsb = br.u(sps->log2_max_pic_order_cnt_lsb);
    if (pps->bottom_field_pic_order_in_frame_present_flag) sh.delta_pic_order_cnt_bottom = br.se();
  } else if (sps->pic_order_cnt_type == 1 && !sps->delta_pic_order_always_zero_flag) {
    sh.delta_pic_order_cnt[0] = br.se();
    if (pps->bottom_field_pic_order_in_frame_present_flag) sh.delta_pic_order_cnt[1] = br.se();
  }
  sh.redundant_pic_cnt = 0;
  if (pps->redundant_pic_cnt_present_flag) {
    sh.redundant_pic_cnt = br.ue();
    if (!truncated(br, err)) return false;
    if (sh.redundant_pic_cnt > 127)
      return fail(err, Status::kMalformed, "slice header: redundant_pic_cnt %u (0..127)", sh.redundant_pic_cnt);
  }
  sh.num_ref_idx_active_override_flag = false;
  sh.num_ref_idx_l0_active = 0;
  sh.ref_pic_list_modification_flag_l0 = false;
  sh.num_ref_pic_list_ops = 0;
  if (sh.slice_type == kSliceP) {
    sh.num_ref_idx_l0_active = pps->num_ref_idx_l0_default_active;
    sh.num_ref_idx_active_override_flag = br.flag();
    if (sh.num_ref_idx_active_override_flag) {
      const uint32_t n = br.ue();
      if (!truncated(br, err)) return false;
      if (n > 15)  // frames: 0..15 (7.4.3)
        return fail(err, Status::kMalformed, "slice header: num_ref_idx_l0_active_minus1 %u (0..15 for frames)", n);
      sh.num_ref_idx_l0_active = uint8_t(n + 1);
    } else if (sh.num_ref_idx_l0_active > 16) {
      return fail(err, Status::kMalformed,
                  "slice header: PPS %u's num_ref_idx_l0_default_active_minus1 %u is not allowed for frames (0..15)",
                  pps_id, sh.num_ref_idx_l0_active - 1u);
    }
    if (!parse_ref_pic_list_modification(br, sh, err)) return false;
  }
  // pred_weight_table(): weighted prediction is refused in the PPS.
  sh.no_output_of_prior_pics_flag = sh.long_term_reference_flag = sh.adaptive_ref_pic_marking_mode_flag = false;
  sh.num_mmco = 0;
  if (sh.nal_ref_idc != 0 && !parse_dec_ref_pic_marking(br, sh, err)) return false;
  sh.slice_qp_delta = br.se();
  if (!truncated(br, err)) return false;
  const int32_t qp = 26 + pps->pic_init_qp_minus26 + sh.slice_qp_delta;
  if (qp < 0 || qp > 51)
    return fail(err, Status::kMalformed, "slice header: slice_qp_delta %d gives QP %d (0..51)", sh.slice_qp_delta, qp);
  sh.slice_qp = uint8_t(qp);
  sh.disable_deblocking_filter_idc = 0;
  sh.slice_alpha_c0_offset_div2 = sh.slice_beta_offset_div2 = 0;
  if (pps->deblocking_filter_control_present_flag) {
    const uint32_t idc = br.ue();
    if (!truncated(br, err)) return false;
    if (idc > 2) return fail(err, Status::kMalformed, "slice header: disable_deblocking_filter_idc %u (0..2)", idc);
    sh.disable_deblocking_filter_idc = uint8_t(idc);
    if (idc != 1) {
      const int32_t a = br.se(), b = br.se();
      if (!truncated(br, err)) return false;
      if (a < -6 || a > 6 || b < -6 || b > 6)
        return fail(err, Status::kMalformed, "slice header: slice_alpha_c0_offset_div2 %d, slice_beta_offset_div2 %d (-6..6)", a, b);
      sh.slice_alpha_c0_offset_div2 = int8_t(a);
      sh.slice_beta_offset_div2 = int8_t(b);
    }
  }
  sh.slice_group_change_cycle = 0;
  sh.slice_group_change_cycle_bits = 0;
  if (pps->num_slice_groups > 1 && pps->slice_group_map_type >= 3 && pps->slice_group_map_type <= 5) {
    const int bits = slice_group_change_cycle_bits(sh.pic_size_in_mbs, pps->slice_group_change_rate);
    sh.slice_group_change_cycle_bits = uint8_t(bits);
    sh.slice_group_change_cycle = br.u(bits);
    if (!truncated(br, err)) return false;
    // 0..Ceil(PicSizeInMapUnits / SliceGroupChangeRate)
    const uint32_t rate = pps->slice_group_change_rate;
    const uint32_t max = (sh.pic_size_in_mbs + rate - 1) / rate;
    if (sh.slice_group_change_cycle > max)
      return fail(err, Status::kMalformed, "slice header: slice_group_change_cycle %u (0..%u)", sh.slice_group_change_cycle, max);
  }
  if (!truncated(br, err)) return false;
  sh.data_bit = br.pos();
  if (sh.data_bit >= stop)
    return fail(err, Status::kMalformed, "slice header: no slice data (the header reaches the rbsp_stop_one_bit)");
  return true;
}

bool first_slice_of_new_picture(const SliceHeader& prev, const SliceHeader& cur) {
  if (prev.frame_num != cur.frame_num) return true;
  if (prev.pic_parameter_set_id != cur.pic_parameter_set_id) return true;
  if ((prev.nal_ref_idc == 0) != (cur.nal_ref_idc == 0)) return true;
  if (prev.pic_order_cnt_lsb != cur.pic_order_cnt_lsb) return true;
  if (prev.delta_pic_order_cnt_bottom != cur.delta_pic_order_cnt_bottom) return true;
  if (prev.delta_pic_order_cnt[0] != cur.delta_pic_order_cnt[0]) return true;
  if (prev.delta_pic_order_cnt[1] != cur.delta_pic_order_cnt[1]) return true;
  if (prev.idr != cur.idr) return true;
  if (prev.idr && cur.idr && prev.idr_pic_id != cur.idr_pic_id) return true;
  return false;
}

}  // namespace avc
