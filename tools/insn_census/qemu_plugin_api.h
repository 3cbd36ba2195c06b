// The part of QEMU's TCG plugin API (plugin API version 1: QEMU 4.2 to
// 8.2, Debian 12 ships 7.2) that insn_census uses, declared here because
// Debian packages no qemu-plugin.h. The functions are exported by the
// qemu-system binary; a plugin declares the API version it was built for
// in qemu_plugin_version.
#ifndef PTL_INSN_CENSUS_QEMU_PLUGIN_API_H
#define PTL_INSN_CENSUS_QEMU_PLUGIN_API_H

#include <cstddef>
#include <cstdint>

extern "C" {

using qemu_plugin_id_t = uint64_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_info_t;  // not read

enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS = 0 };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 = 0 };

using qemu_plugin_vcpu_tb_trans_cb_t = void (*)(qemu_plugin_id_t, qemu_plugin_tb*);
using qemu_plugin_vcpu_udata_cb_t = void (*)(unsigned int vcpu_index, void* userdata);
using qemu_plugin_udata_cb_t = void (*)(qemu_plugin_id_t, void* userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(qemu_plugin_tb* tb, qemu_plugin_op op, void* ptr,
                                              uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(qemu_plugin_insn* insn, qemu_plugin_vcpu_udata_cb_t cb,
                                            qemu_plugin_cb_flags flags, void* userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void* userdata);
size_t qemu_plugin_tb_n_insns(const qemu_plugin_tb* tb);
qemu_plugin_insn* qemu_plugin_tb_get_insn(const qemu_plugin_tb* tb, size_t idx);
const void* qemu_plugin_insn_data(const qemu_plugin_insn* insn);
size_t qemu_plugin_insn_size(const qemu_plugin_insn* insn);
uint64_t qemu_plugin_insn_vaddr(const qemu_plugin_insn* insn);
void qemu_plugin_outs(const char* string);

}  // extern "C"

#endif
