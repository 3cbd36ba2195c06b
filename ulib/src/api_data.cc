// SPDX-License-Identifier: BSD-3-Clause
// Data movement: PtlPut, PtlPutRegion, PtlGet, PtlGetRegion, PtlGetPut, all
// through PTL_IOC_DATA. PTL_OK means "initiated".
#include <portals3.h>

#include "library.h"

namespace {

struct Target {
  ptl_process_id_t id;
  ptl_pt_index_t pt_index;
  ptl_ac_index_t ac_index;
  ptl_match_bits_t match_bits;
  ptl_size_t remote_offset;
};

int Data(ptl_ioc_data* args, const Target& t) {
  auto dev = ptl::Library::Instance().device();
  if (!dev) return PTL_NO_INIT;
  args->target_nid = t.id.nid;
  args->target_pid = t.id.pid;
  args->pt_index = t.pt_index;
  args->ac_index = t.ac_index;
  args->match_bits = t.match_bits;
  args->remote_offset = t.remote_offset;
  return dev->Call(PTL_IOC_DATA, args);
}

}  // namespace

extern "C" {

int PtlPut(ptl_handle_md_t md_handle, ptl_ack_req_t ack_req, ptl_process_id_t target_id,
           ptl_pt_index_t pt_index, ptl_ac_index_t ac_index, ptl_match_bits_t match_bits,
           ptl_size_t remote_offset, ptl_hdr_data_t hdr_data) {
  ptl_ioc_data args{};
  args.op = PTL_DATA_PUT;
  args.md_handle = md_handle;
  args.ack_req = static_cast<uint32_t>(ack_req);
  args.hdr_data = hdr_data;
  return Data(&args, {target_id, pt_index, ac_index, match_bits, remote_offset});
}

int PtlPutRegion(ptl_handle_md_t md_handle, ptl_size_t local_offset, ptl_size_t length,
                 ptl_ack_req_t ack_req, ptl_process_id_t target_id, ptl_pt_index_t pt_index,
                 ptl_ac_index_t ac_index, ptl_match_bits_t match_bits, ptl_size_t remote_offset,
                 ptl_hdr_data_t hdr_data) {
  ptl_ioc_data args{};
  args.flags = PTL_DATA_REGION;
  args.op = PTL_DATA_PUT;
  args.md_handle = md_handle;
  args.ack_req = static_cast<uint32_t>(ack_req);
  args.local_offset = local_offset;
  args.length = length;
  args.hdr_data = hdr_data;
  return Data(&args, {target_id, pt_index, ac_index, match_bits, remote_offset});
}

int PtlGet(ptl_handle_md_t md_handle, ptl_process_id_t target_id, ptl_pt_index_t pt_index,
           ptl_ac_index_t ac_index, ptl_match_bits_t match_bits, ptl_size_t remote_offset) {
  ptl_ioc_data args{};
  args.op = PTL_DATA_GET;
  args.md_handle = md_handle;
  return Data(&args, {target_id, pt_index, ac_index, match_bits, remote_offset});
}

int PtlGetRegion(ptl_handle_md_t md_handle, ptl_size_t local_offset, ptl_size_t length,
                 ptl_process_id_t target_id, ptl_pt_index_t pt_index, ptl_ac_index_t ac_index,
                 ptl_match_bits_t match_bits, ptl_size_t remote_offset) {
  ptl_ioc_data args{};
  args.flags = PTL_DATA_REGION;
  args.op = PTL_DATA_GET;
  args.md_handle = md_handle;
  args.local_offset = local_offset;
  args.length = length;
  return Data(&args, {target_id, pt_index, ac_index, match_bits, remote_offset});
}

int PtlGetPut(ptl_handle_md_t get_md_handle, ptl_handle_md_t put_md_handle,
              ptl_process_id_t target_id, ptl_pt_index_t pt_index, ptl_ac_index_t ac_index,
              ptl_match_bits_t match_bits, ptl_size_t remote_offset, ptl_hdr_data_t hdr_data) {
  ptl_ioc_data args{};
  args.op = PTL_DATA_GETPUT;
  args.md_handle = get_md_handle;
  args.put_md_handle = put_md_handle;
  args.hdr_data = hdr_data;
  return Data(&args, {target_id, pt_index, ac_index, match_bits, remote_offset});
}

}  // extern "C"
