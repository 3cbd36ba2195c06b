// SPDX-License-Identifier: BSD-3-Clause
// The struct ptl_ioc_data of every data-movement call, built in one place
// for the plain calls (api_data.cc) and the io_uring extension
// (api_uring.cc).
#pragma once

#include <linux/portals.h>
#include <portals3.h>

#include <cstdint>

namespace ptl {

// Where a data call goes.
struct DataTarget {
  ptl_process_id_t id;
  ptl_pt_index_t pt_index;
  ptl_ac_index_t ac_index;
  ptl_match_bits_t match_bits;
  ptl_size_t remote_offset;
};

// What a data call sends from (or, for a get, receives into).
struct DataLocal {
  uint32_t op;                      // PTL_DATA_*
  ptl_handle_md_t md_handle;        // the get MD of a getput
  ptl_handle_md_t put_md_handle{};  // getput only
  ptl_ack_req_t ack_req{};
  bool region = false;  // honour local_offset and length
  ptl_size_t local_offset = 0;
  ptl_size_t length = 0;
  ptl_hdr_data_t hdr_data = 0;
};

inline ptl_ioc_data DataArgs(const DataLocal& l, const DataTarget& t) {
  ptl_ioc_data args{};
  args.size = sizeof(args);
  args.flags = l.region ? PTL_DATA_REGION : 0;
  args.op = l.op;
  args.md_handle = l.md_handle;
  args.put_md_handle = l.put_md_handle;
  args.ack_req = static_cast<uint32_t>(l.ack_req);
  args.local_offset = l.local_offset;
  args.length = l.length;
  args.target_nid = t.id.nid;
  args.target_pid = t.id.pid;
  args.pt_index = t.pt_index;
  args.ac_index = t.ac_index;
  args.match_bits = t.match_bits;
  args.remote_offset = t.remote_offset;
  args.hdr_data = l.hdr_data;
  return args;
}

}  // namespace ptl
