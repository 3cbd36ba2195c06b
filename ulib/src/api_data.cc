// SPDX-License-Identifier: BSD-3-Clause
// Data movement: PtlPut, PtlPutRegion, PtlGet, PtlGetRegion, PtlGetPut, all
// through PTL_IOC_DATA. PTL_OK means "initiated".
#include <portals3.h>

#include "data_args.h"
#include "library.h"

namespace {

int Data(const ptl::DataLocal& local, const ptl::DataTarget& target) {
  auto dev = ptl::Library::Instance().device();
  if (!dev) return PTL_NO_INIT;
  ptl_ioc_data args = ptl::DataArgs(local, target);
  return dev->Call(PTL_IOC_DATA, &args);
}

}  // namespace

extern "C" {

int PtlPut(ptl_handle_md_t md_handle, ptl_ack_req_t ack_req, ptl_process_id_t target_id,
           ptl_pt_index_t pt_index, ptl_ac_index_t ac_index, ptl_match_bits_t match_bits,
           ptl_size_t remote_offset, ptl_hdr_data_t hdr_data) {
  return Data(
      {.op = PTL_DATA_PUT, .md_handle = md_handle, .ack_req = ack_req, .hdr_data = hdr_data},
      {target_id, pt_index, ac_index, match_bits, remote_offset});
}

int PtlPutRegion(ptl_handle_md_t md_handle, ptl_size_t local_offset, ptl_size_t length,
                 ptl_ack_req_t ack_req, ptl_process_id_t target_id, ptl_pt_index_t pt_index,
                 ptl_ac_index_t ac_index, ptl_match_bits_t match_bits, ptl_size_t remote_offset,
                 ptl_hdr_data_t hdr_data) {
  return Data({.op = PTL_DATA_PUT,
               .md_handle = md_handle,
               .ack_req = ack_req,
               .region = true,
               .local_offset = local_offset,
               .length = length,
               .hdr_data = hdr_data},
              {target_id, pt_index, ac_index, match_bits, remote_offset});
}

int PtlGet(ptl_handle_md_t md_handle, ptl_process_id_t target_id, ptl_pt_index_t pt_index,
           ptl_ac_index_t ac_index, ptl_match_bits_t match_bits, ptl_size_t remote_offset) {
  return Data({.op = PTL_DATA_GET, .md_handle = md_handle},
              {target_id, pt_index, ac_index, match_bits, remote_offset});
}

int PtlGetRegion(ptl_handle_md_t md_handle, ptl_size_t local_offset, ptl_size_t length,
                 ptl_process_id_t target_id, ptl_pt_index_t pt_index, ptl_ac_index_t ac_index,
                 ptl_match_bits_t match_bits, ptl_size_t remote_offset) {
  return Data({.op = PTL_DATA_GET,
               .md_handle = md_handle,
               .region = true,
               .local_offset = local_offset,
               .length = length},
              {target_id, pt_index, ac_index, match_bits, remote_offset});
}

int PtlGetPut(ptl_handle_md_t get_md_handle, ptl_handle_md_t put_md_handle,
              ptl_process_id_t target_id, ptl_pt_index_t pt_index, ptl_ac_index_t ac_index,
              ptl_match_bits_t match_bits, ptl_size_t remote_offset, ptl_hdr_data_t hdr_data) {
  return Data({.op = PTL_DATA_GETPUT,
               .md_handle = get_md_handle,
               .put_md_handle = put_md_handle,
               .hdr_data = hdr_data},
              {target_id, pt_index, ac_index, match_bits, remote_offset});
}

}  // extern "C"
